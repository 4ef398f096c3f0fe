/* A C11 consumer of quiver: only "quiver.h" and libc.
 *
 * Writes batches of every supported type through the row path and the column path,
 * from a parsed schema and from a hand-built ArrowSchema, finishes them and drains
 * streams, and reads every value back out of the ArrowArray buffers. Checks buffer
 * reuse, zeros under nulls, error codes, and that every array was released.
 *
 * Prints one line per check ("ok N - ..."); exits 1 at the first failure.
 * `--quiet` prints only failures and the final count.
 */
#include "quiver.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#ifndef ARROW_FLAG_NULLABLE
#define ARROW_FLAG_NULLABLE 2
#endif

/* ---------------------------------------------------------------- reporting */

static int n_ok;
static bool quiet;

static void ok(const char *fmt, ...) {
  n_ok++;
  if (quiet) return;
  va_list ap;
  va_start(ap, fmt);
  printf("ok %d - ", n_ok);
  vprintf(fmt, ap);
  putchar('\n');
  va_end(ap);
  fflush(stdout);
}

static _Noreturn void fail_at(int line, const char *what, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("not ok %d - ", n_ok + 1);
  vprintf(fmt, ap);
  printf("\n  (consumer.c:%d: %s)\n", line, what);
  va_end(ap);
  fflush(stdout);
  exit(1);
}

/* EXPECT: silent on success. CHECK: prints the check on success. */
#define EXPECT(cond, ...) \
  do { if (!(cond)) fail_at(__LINE__, #cond, __VA_ARGS__); } while (0)
#define CHECK(cond, ...) \
  do { if (!(cond)) fail_at(__LINE__, #cond, __VA_ARGS__); ok(__VA_ARGS__); } while (0)

static const char *werr(const QuiverWriter *w) {
  const char *m = w ? quiver_writer_last_error(w) : quiver_last_error();
  return m ? m : "(no message)";
}

/* OKW: a call on writer w that must succeed. */
#define OKW(w, call)                                                                     \
  do {                                                                                   \
    int rc_ = (call);                                                                    \
    if (rc_ != 0)                                                                        \
      fail_at(__LINE__, #call, "%s returned %d (%s): %s", #call, rc_, strerror(rc_), werr(w)); \
  } while (0)

/* ------------------------------------------------------------ type model */

enum Kind { K_NULL, K_BOOL, K_INT, K_UINT, K_F16, K_F32, K_F64, K_DEC, K_FIXED, K_VAR, K_LIST, K_FSL, K_STRUCT, K_MAP };

typedef struct Type {
  enum Kind kind;
  int width; /* value bytes (INT..FIXED), offset bytes (VAR, LIST, MAP), list size (FSL) */
  const char *name;
  const char *format;
  const char *alt_format; /* an equivalent spelling the spec allows, or NULL */
  bool nullable;
  bool utf8; /* VAR: utf8 rather than binary */
  uint32_t node;
  int nchild;
  struct Type *child[8];
} Type;

static Type type_pool[256];
static int type_used;

static Type *ty(enum Kind kind, int width, const char *name, const char *format, bool nullable) {
  EXPECT(type_used < (int)(sizeof type_pool / sizeof type_pool[0]), "type pool exhausted");
  Type *t = &type_pool[type_used++];
  memset(t, 0, sizeof *t);
  t->kind = kind;
  t->width = width;
  t->name = name;
  t->format = format;
  t->nullable = nullable;
  t->utf8 = kind == K_VAR && (strcmp(format, "u") == 0 || strcmp(format, "U") == 0);
  return t;
}
static Type *with(Type *t, Type *c) {
  t->child[t->nchild++] = c;
  return t;
}
static Type *list_of(enum Kind kind, int width, const char *name, const char *format, bool nullable, Type *item) {
  return with(ty(kind, width, name, format, nullable), item);
}
static Type *map_of(const char *name, bool nullable, Type *key, Type *value) {
  Type *entries = with(with(ty(K_STRUCT, 0, "entries", "+s", false), key), value);
  return with(ty(K_MAP, 4, name, "+m", nullable), entries);
}

/* Node numbers: pre-order walk of the field tree (docs/design.md §6, "Nodes"). */
static void number_nodes(Type *t, uint32_t *next) {
  t->node = (*next)++;
  for (int i = 0; i < t->nchild; i++) number_nodes(t->child[i], next);
}
static void number_columns(Type **cols, int ncols) {
  uint32_t next = 0;
  for (int i = 0; i < ncols; i++) number_nodes(cols[i], &next);
}

/* ------------------------------------------------------------ value model */

typedef struct Val {
  bool null;
  int how; /* which append function writes it, for types that have two */
  int64_t i;
  uint64_t u;
  double f;
  uint8_t raw[40];
  size_t len;
  int n;
  struct Val *items;
} Val;

static Val arena[1 << 15];
static size_t arena_used;
static const Val null_val = {.null = true};

static Val *new_vals(int n) {
  EXPECT(arena_used + (size_t)n <= sizeof arena / sizeof arena[0], "value arena exhausted");
  Val *v = &arena[arena_used];
  memset(v, 0, sizeof *v * (size_t)n);
  arena_used += (size_t)n;
  return v;
}

static void set_bytes(Val *v, const void *p, size_t n) {
  EXPECT(n <= sizeof v->raw, "value too long");
  memcpy(v->raw, p, n);
  v->len = n;
}
static void set_str(Val *v, const char *fmt, ...) {
  char buf[64];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  EXPECT(n >= 0 && (size_t)n < sizeof v->raw, "string too long");
  set_bytes(v, buf, (size_t)n);
}

static void le_store(uint8_t *out, uint64_t x, int width) {
  for (int k = 0; k < width; k++) out[k] = (uint8_t)(x >> (8 * k));
}

/* IEEE half bits of a value that half represents exactly (normal or zero). */
static uint16_t half_bits_exact(double f) {
  if (f == 0) return 0;
  uint16_t sign = f < 0 ? 0x8000 : 0;
  double a = f < 0 ? -f : f;
  int e = 0;
  while (a >= 2) a /= 2, e++;
  while (a < 1) a *= 2, e--;
  double mant = (a - 1) * 1024; /* a in [1, 2) */
  uint16_t m = (uint16_t)mant;
  EXPECT((double)m == mant, "%g is not exact in half", f);
  EXPECT(e + 15 >= 1 && e + 15 <= 30, "%g is out of the normal half range", f);
  return (uint16_t)(sign | (e + 15) << 10 | m);
}

/* ------------------------------------------------------------ row path */

static int append_val(QuiverWriter *w, const Type *t, const Val *v) {
  uint32_t n = t->node;
  if (v->null) return quiver_append_null(w, n);
  int rc;
  switch (t->kind) {
    case K_NULL: return quiver_append_null(w, n);
    case K_BOOL: return quiver_append_bool(w, n, v->i != 0);
    case K_INT:
      switch (t->width) {
        case 1: return quiver_append_i8(w, n, (int8_t)v->i);
        case 2: return quiver_append_i16(w, n, (int16_t)v->i);
        case 4: return quiver_append_i32(w, n, (int32_t)v->i);
        default: return quiver_append_i64(w, n, v->i);
      }
    case K_UINT:
      switch (t->width) {
        case 1: return quiver_append_u8(w, n, (uint8_t)v->u);
        case 2: return quiver_append_u16(w, n, (uint16_t)v->u);
        case 4: return quiver_append_u32(w, n, (uint32_t)v->u);
        default: return quiver_append_u64(w, n, v->u);
      }
    case K_F16: return v->how ? quiver_append_u16(w, n, (uint16_t)v->u) : quiver_append_f32(w, n, (float)v->f);
    case K_F32: return quiver_append_f32(w, n, (float)v->f);
    case K_F64: return quiver_append_f64(w, n, v->f);
    case K_DEC: return v->how ? quiver_append_decimal(w, n, v->raw, v->len) : quiver_append_i64(w, n, v->i);
    case K_FIXED:
    case K_VAR: return quiver_append_bytes(w, n, v->raw, v->len);
    case K_LIST:
    case K_FSL:
    case K_MAP:
      if ((rc = quiver_begin(w, n)) != 0) return rc;
      for (int k = 0; k < v->n; k++)
        if ((rc = append_val(w, t->child[0], &v->items[k])) != 0) return rc;
      return quiver_end(w, n);
    case K_STRUCT:
      if ((rc = quiver_begin(w, n)) != 0) return rc;
      for (int k = 0; k < t->nchild; k++)
        if ((rc = append_val(w, t->child[k], &v->items[k])) != 0) return rc;
      return quiver_end(w, n);
  }
  return -1;
}

/* ------------------------------------------------------------ reading arrays */

static bool bit(const void *bitmap, int64_t i) {
  return (((const uint8_t *)bitmap)[i >> 3] >> (i & 7)) & 1;
}
static bool is_valid(const struct ArrowArray *a, int64_t i) {
  return a->buffers[0] == NULL || bit(a->buffers[0], a->offset + i);
}
static int64_t offset_at(const struct ArrowArray *a, int width, int64_t i) {
  const void *o = a->buffers[1];
  return width == 8 ? ((const int64_t *)o)[a->offset + i] : ((const int32_t *)o)[a->offset + i];
}

static int expected_buffers(const Type *t) {
  switch (t->kind) {
    case K_NULL: return 0;
    case K_VAR: return 3;
    case K_FSL:
    case K_STRUCT: return 1;
    default: return 2;
  }
}

/* Structure of one array and its children: buffer and child counts, alignment,
   null_count equal to the bitmap, zero bits past the end of every bitmap. */
static void check_shape(const struct ArrowArray *a, const Type *t, const char *path) {
  EXPECT(a->release != NULL, "%s: array is released", path);
  EXPECT(a->length >= 0 && a->offset >= 0, "%s: length %" PRId64 " offset %" PRId64, path, a->length, a->offset);
  EXPECT(a->n_buffers == expected_buffers(t), "%s: n_buffers %" PRId64 ", expected %d", path, a->n_buffers,
         expected_buffers(t));
  int nchild = (t->kind == K_LIST || t->kind == K_FSL || t->kind == K_MAP) ? 1 : t->nchild;
  EXPECT(a->n_children == nchild, "%s: n_children %" PRId64 ", expected %d", path, a->n_children, nchild);
  EXPECT(a->dictionary == NULL, "%s: unexpected dictionary", path);
  int64_t end = a->offset + a->length;
  for (int64_t j = 0; j < a->n_buffers; j++) {
    const void *b = a->buffers[j];
    if (j == 0 && b == NULL) continue; /* no validity bitmap: no nulls */
    EXPECT(b != NULL, "%s: buffers[%" PRId64 "] is NULL", path, j);
    EXPECT((uintptr_t)b % 64 == 0, "%s: buffers[%" PRId64 "] = %p is not 64-byte aligned", path, j, b);
  }
  if (t->kind == K_NULL) {
    EXPECT(a->null_count == a->length, "%s: null array null_count %" PRId64 " != length", path, a->null_count);
    return;
  }
  int64_t nulls = 0;
  for (int64_t i = 0; i < a->length; i++) nulls += !is_valid(a, i);
  EXPECT(a->null_count == nulls, "%s: null_count %" PRId64 ", bitmap has %" PRId64 " nulls", path, a->null_count, nulls);
  /* the unused bits of the last byte of a bitmap are zero (deterministic bytes) */
  for (int j = 0; j < 2; j++) {
    if (j == 1 && t->kind != K_BOOL) break;
    const void *b = a->buffers[j];
    if (b == NULL) continue;
    for (int64_t i = end; i % 8 != 0; i++)
      EXPECT(!bit(b, i), "%s: %s bit %" PRId64 " past the end (length %" PRId64 ") is set", path,
             j ? "value" : "validity", i, end);
  }
  char sub[256];
  for (int c = 0; c < nchild; c++) {
    const struct ArrowArray *ch = a->children[c];
    EXPECT(ch != NULL, "%s: child %d is NULL", path, c);
    snprintf(sub, sizeof sub, "%s.%s", path, t->child[c]->name);
    int64_t need = 0;
    switch (t->kind) {
      case K_LIST:
      case K_MAP: need = a->length ? offset_at(a, t->width, a->length) : 0; break;
      case K_FSL: need = end * t->width; break;
      default: need = end; break;
    }
    EXPECT(ch->offset + ch->length >= need, "%s: child length %" PRId64 " < %" PRId64, sub, ch->length, need);
    check_shape(ch, t->child[c], sub);
  }
}

static void hex(char *out, size_t cap, const uint8_t *p, size_t n) {
  size_t k = 0;
  out[0] = 0;
  for (; k < n && 2 * k + 3 < cap; k++) snprintf(out + 2 * k, cap - 2 * k, "%02x", p[k]);
}

/* Expected stored bytes of a fixed-width value. */
static void expected_bytes(const Type *t, const Val *v, uint8_t *out) {
  memset(out, 0, (size_t)t->width);
  if (v->null) return;
  switch (t->kind) {
    case K_INT: le_store(out, (uint64_t)v->i, t->width); break;
    case K_UINT: le_store(out, v->u, t->width); break;
    case K_F16: le_store(out, v->u, 2); break;
    case K_F32: { float f = (float)v->f; memcpy(out, &f, 4); break; }
    case K_F64: memcpy(out, &v->f, 8); break;
    case K_DEC:
      if (v->how) {
        memcpy(out, v->raw, v->len);
        uint8_t ext = (v->raw[v->len - 1] & 0x80) ? 0xff : 0;
        memset(out + v->len, ext, (size_t)t->width - v->len);
      } else {
        le_store(out, (uint64_t)v->i, t->width < 8 ? t->width : 8);
        if (t->width > 8) memset(out + 8, v->i < 0 ? 0xff : 0, (size_t)t->width - 8);
      }
      break;
    case K_FIXED: memcpy(out, v->raw, (size_t)t->width); break;
    default: break;
  }
}

/* Value i of array a (type t) equals v; a null v must be a null slot holding zeros. */
static void check_val(const struct ArrowArray *a, const Type *t, int64_t i, const Val *v, const char *path,
                      int64_t row) {
  EXPECT(i >= 0 && i < a->length, "%s row %" PRId64 ": index %" PRId64 " outside length %" PRId64, path, row, i,
         a->length);
  if (t->kind == K_NULL) return; /* no buffers; every slot is null (check_shape) */
  bool valid = is_valid(a, i);
  EXPECT(valid == !v->null, "%s row %" PRId64 ": %s, expected %s", path, row, valid ? "valid" : "null",
         v->null ? "null" : "valid");
  int64_t at = a->offset + i;
  char sub[256], h1[100], h2[100];
  switch (t->kind) {
    case K_BOOL: {
      bool got = bit(a->buffers[1], at), want = !v->null && v->i;
      EXPECT(got == want, "%s row %" PRId64 ": bool %d, expected %d%s", path, row, got, want,
             v->null ? " (zero under null)" : "");
      return;
    }
    case K_INT: case K_UINT: case K_F16: case K_F32: case K_F64: case K_DEC: case K_FIXED: {
      uint8_t want[64];
      const uint8_t *got = (const uint8_t *)a->buffers[1] + at * t->width;
      expected_bytes(t, v, want);
      if (memcmp(got, want, (size_t)t->width) != 0) {
        hex(h1, sizeof h1, got, (size_t)t->width);
        hex(h2, sizeof h2, want, (size_t)t->width);
        fail_at(__LINE__, "value bytes", "%s row %" PRId64 ": bytes %s, expected %s%s", path, row, h1, h2,
                v->null ? " (zero under null)" : "");
      }
      return;
    }
    case K_VAR: {
      int64_t s = offset_at(a, t->width, i), e = offset_at(a, t->width, i + 1);
      size_t want = v->null ? 0 : v->len;
      EXPECT(s >= 0 && e >= s, "%s row %" PRId64 ": offsets %" PRId64 "..%" PRId64, path, row, s, e);
      EXPECT((size_t)(e - s) == want, "%s row %" PRId64 ": length %" PRId64 ", expected %zu%s", path, row, e - s,
             want, v->null ? " (null repeats the previous offset)" : "");
      EXPECT(memcmp((const uint8_t *)a->buffers[2] + s, v->raw, want) == 0, "%s row %" PRId64 ": bytes differ",
             path, row);
      return;
    }
    case K_LIST:
    case K_MAP: {
      int64_t s = offset_at(a, t->width, i), e = offset_at(a, t->width, i + 1);
      int want = v->null ? 0 : v->n;
      EXPECT(s >= 0 && e >= s, "%s row %" PRId64 ": offsets %" PRId64 "..%" PRId64, path, row, s, e);
      EXPECT(e - s == want, "%s row %" PRId64 ": %" PRId64 " items, expected %d%s", path, row, e - s, want,
             v->null ? " (null repeats the previous offset)" : "");
      snprintf(sub, sizeof sub, "%s.%s", path, t->child[0]->name);
      for (int k = 0; k < want; k++) check_val(a->children[0], t->child[0], s + k, &v->items[k], sub, row);
      return;
    }
    case K_FSL: {
      snprintf(sub, sizeof sub, "%s.%s", path, t->child[0]->name);
      for (int k = 0; k < t->width; k++)
        check_val(a->children[0], t->child[0], at * t->width + k, v->null ? &null_val : &v->items[k], sub, row);
      return;
    }
    case K_STRUCT: {
      for (int k = 0; k < t->nchild; k++) {
        snprintf(sub, sizeof sub, "%s.%s", path, t->child[k]->name);
        check_val(a->children[k], t->child[k], at, v->null ? &null_val : &v->items[k], sub, row);
      }
      return;
    }
    default: return;
  }
}

/* A record batch: struct array of ncols columns, rows [first, first + n) of gen. */
typedef void (*GenFn)(int col, int64_t row, Val *out);

static void check_batch(const struct ArrowArray *b, Type **cols, int ncols, GenFn gen, int64_t first, int64_t n,
                        const char *what) {
  EXPECT(b->release != NULL, "%s: batch is released", what);
  EXPECT(b->length == n, "%s: length %" PRId64 ", expected %" PRId64, what, b->length, n);
  EXPECT(b->n_children == ncols, "%s: %" PRId64 " columns, expected %d", what, b->n_children, ncols);
  EXPECT(b->null_count == 0, "%s: record batch null_count %" PRId64, what, b->null_count);
  char path[256];
  for (int c = 0; c < ncols; c++) {
    snprintf(path, sizeof path, "%s: %s", what, cols[c]->name);
    EXPECT(b->children[c]->length >= n, "%s: child length %" PRId64, path, b->children[c]->length);
    check_shape(b->children[c], cols[c], path);
    for (int64_t r = 0; r < n; r++) {
      size_t mark = arena_used;
      Val v;
      gen(c, first + r, &v);
      check_val(b->children[c], cols[c], r, &v, path, first + r);
      arena_used = mark;
    }
  }
}

static int64_t count_arrays(const struct ArrowArray *a) {
  int64_t n = 1;
  for (int64_t i = 0; i < a->n_children; i++) n += count_arrays(a->children[i]);
  if (a->dictionary) n += count_arrays(a->dictionary);
  return n;
}

/* Every buffer address of a batch, depth first. */
typedef struct Addrs {
  const void *p[256];
  int n;
} Addrs;
static void collect(const struct ArrowArray *a, Addrs *out) {
  for (int64_t j = 0; j < a->n_buffers; j++) {
    EXPECT(out->n < 256, "too many buffers");
    out->p[out->n++] = a->buffers[j];
  }
  for (int64_t i = 0; i < a->n_children; i++) collect(a->children[i], out);
}
static bool same_addrs(const Addrs *x, const Addrs *y, int *first_diff) {
  if (x->n != y->n) { *first_diff = -1; return false; }
  for (int k = 0; k < x->n; k++)
    if (x->p[k] != y->p[k]) { *first_diff = k; return false; }
  return true;
}
/* no non-NULL buffer of x is a buffer of y */
static bool disjoint_addrs(const Addrs *x, const Addrs *y) {
  for (int k = 0; k < x->n; k++)
    for (int m = 0; m < y->n; m++)
      if (x->p[k] && x->p[k] == y->p[m]) return false;
  return true;
}

/* ------------------------------------------------------------ schemas */

static void check_schema(const struct ArrowSchema *s, const Type *t, const char *path) {
  EXPECT(s != NULL && s->release != NULL, "%s: schema missing or released", path);
  EXPECT(s->format != NULL, "%s: NULL format", path);
  EXPECT(strcmp(s->format, t->format) == 0 || (t->alt_format && strcmp(s->format, t->alt_format) == 0),
         "%s: format \"%s\", expected \"%s\"", path, s->format, t->format);
  EXPECT(s->name != NULL && strcmp(s->name, t->name) == 0, "%s: name \"%s\", expected \"%s\"", path,
         s->name ? s->name : "(null)", t->name);
  EXPECT(((s->flags & ARROW_FLAG_NULLABLE) != 0) == t->nullable, "%s: nullable flag %d, expected %d", path,
         (int)((s->flags & ARROW_FLAG_NULLABLE) != 0), t->nullable);
  EXPECT(s->dictionary == NULL, "%s: unexpected dictionary", path);
  int nchild = t->nchild;
  EXPECT(s->n_children == nchild, "%s: %" PRId64 " children, expected %d", path, s->n_children, nchild);
  char sub[256];
  for (int c = 0; c < nchild; c++) {
    snprintf(sub, sizeof sub, "%s.%s", path, t->child[c]->name);
    check_schema(s->children[c], t->child[c], sub);
  }
}

static void check_record_schema(const struct ArrowSchema *s, Type **cols, int ncols, const char *what) {
  EXPECT(s->release != NULL, "%s: released", what);
  EXPECT(strcmp(s->format, "+s") == 0, "%s: top-level format \"%s\", expected \"+s\"", what, s->format);
  EXPECT(s->n_children == ncols, "%s: %" PRId64 " fields, expected %d", what, s->n_children, ncols);
  for (int c = 0; c < ncols; c++) check_schema(s->children[c], cols[c], what);
}

/* ============================================================ the all-types schema */

static const char *ALL_TYPES =
    "b: bool, i8: int8 not null, i16: int16, i32: int32, i64: int64 not null,\n"
    "u8: uint8, u16: uint16, u32: uint32, u64: uint64 not null,\n"
    "f16: float16, f32: float32, f64: float64,\n"
    "d32: decimal32(9, 2), d64: decimal64(18, 3), d128: decimal128(38, 4), d256: decimal256(76, 5),\n"
    "dt32: date32, dt64: date64, t32s: time32(s), t32ms: time32(ms), t64us: time64(us), t64ns: time64(ns),\n"
    "ts_s: timestamp(s), ts: timestamp(us), tstz: timestamp(ns, \"Europe/Paris\"),\n"
    "dur_ms: duration(ms), dur_ns: duration(ns),\n"
    "iym: interval(year_month), idt: interval(day_time), imdn: interval(month_day_nano),\n"
    "s: utf8, ls: large_utf8 not null, bin: binary, lbin: large_binary, fsb: fixed_size_binary(3),\n"
    "nul: null,\n"
    "l: list<int32>, ll: large_list<utf8 not null>, fsl: fixed_size_list<int16, 2>,\n"
    "st: struct<x: float64, y: list<int16>, z: utf8>,\n"
    "st2: struct<a: int32 not null, b: boolean> not null,\n"
    "m: map<utf8, int64>,\n"
    "nest: list<list<int8 not null>>,\n"
    "\"a \\\"quoted\\\" name\": uint16";

enum {
  C_B, C_I8, C_I16, C_I32, C_I64, C_U8, C_U16, C_U32, C_U64, C_F16, C_F32, C_F64,
  C_D32, C_D64, C_D128, C_D256, C_DT32, C_DT64, C_T32S, C_T32MS, C_T64US, C_T64NS,
  C_TS_S, C_TS, C_TSTZ, C_DUR_MS, C_DUR_NS, C_IYM, C_IDT, C_IMDN,
  C_S, C_LS, C_BIN, C_LBIN, C_FSB, C_NUL, C_L, C_LL, C_FSL, C_ST, C_ST2, C_M, C_NEST, C_QUOTED,
  N_ALL
};
static Type *all_cols[N_ALL];

static void build_all_types(void) {
  Type **c = all_cols;
  c[C_B] = ty(K_BOOL, 0, "b", "b", true);
  c[C_I8] = ty(K_INT, 1, "i8", "c", false);
  c[C_I16] = ty(K_INT, 2, "i16", "s", true);
  c[C_I32] = ty(K_INT, 4, "i32", "i", true);
  c[C_I64] = ty(K_INT, 8, "i64", "l", false);
  c[C_U8] = ty(K_UINT, 1, "u8", "C", true);
  c[C_U16] = ty(K_UINT, 2, "u16", "S", true);
  c[C_U32] = ty(K_UINT, 4, "u32", "I", true);
  c[C_U64] = ty(K_UINT, 8, "u64", "L", false);
  c[C_F16] = ty(K_F16, 2, "f16", "e", true);
  c[C_F32] = ty(K_F32, 4, "f32", "f", true);
  c[C_F64] = ty(K_F64, 8, "f64", "g", true);
  c[C_D32] = ty(K_DEC, 4, "d32", "d:9,2,32", true);
  c[C_D64] = ty(K_DEC, 8, "d64", "d:18,3,64", true);
  c[C_D128] = ty(K_DEC, 16, "d128", "d:38,4", true);
  c[C_D128]->alt_format = "d:38,4,128";
  c[C_D256] = ty(K_DEC, 32, "d256", "d:76,5,256", true);
  c[C_DT32] = ty(K_INT, 4, "dt32", "tdD", true);
  c[C_DT64] = ty(K_INT, 8, "dt64", "tdm", true);
  c[C_T32S] = ty(K_INT, 4, "t32s", "tts", true);
  c[C_T32MS] = ty(K_INT, 4, "t32ms", "ttm", true);
  c[C_T64US] = ty(K_INT, 8, "t64us", "ttu", true);
  c[C_T64NS] = ty(K_INT, 8, "t64ns", "ttn", true);
  c[C_TS_S] = ty(K_INT, 8, "ts_s", "tss:", true);
  c[C_TS] = ty(K_INT, 8, "ts", "tsu:", true);
  c[C_TSTZ] = ty(K_INT, 8, "tstz", "tsn:Europe/Paris", true);
  c[C_DUR_MS] = ty(K_INT, 8, "dur_ms", "tDm", true);
  c[C_DUR_NS] = ty(K_INT, 8, "dur_ns", "tDn", true);
  c[C_IYM] = ty(K_INT, 4, "iym", "tiM", true);
  c[C_IDT] = ty(K_FIXED, 8, "idt", "tiD", true);
  c[C_IMDN] = ty(K_FIXED, 16, "imdn", "tin", true);
  c[C_S] = ty(K_VAR, 4, "s", "u", true);
  c[C_LS] = ty(K_VAR, 8, "ls", "U", false);
  c[C_BIN] = ty(K_VAR, 4, "bin", "z", true);
  c[C_LBIN] = ty(K_VAR, 8, "lbin", "Z", true);
  c[C_FSB] = ty(K_FIXED, 3, "fsb", "w:3", true);
  c[C_NUL] = ty(K_NULL, 0, "nul", "n", true);
  c[C_L] = list_of(K_LIST, 4, "l", "+l", true, ty(K_INT, 4, "item", "i", true));
  c[C_LL] = list_of(K_LIST, 8, "ll", "+L", true, ty(K_VAR, 4, "item", "u", false));
  c[C_FSL] = list_of(K_FSL, 2, "fsl", "+w:2", true, ty(K_INT, 2, "item", "s", true));
  c[C_ST] = with(with(with(ty(K_STRUCT, 0, "st", "+s", true), ty(K_F64, 8, "x", "g", true)),
                      list_of(K_LIST, 4, "y", "+l", true, ty(K_INT, 2, "item", "s", true))),
                 ty(K_VAR, 4, "z", "u", true));
  c[C_ST2] = with(with(ty(K_STRUCT, 0, "st2", "+s", false), ty(K_INT, 4, "a", "i", false)),
                  ty(K_BOOL, 0, "b", "b", true));
  c[C_M] = map_of("m", true, ty(K_VAR, 4, "key", "u", false), ty(K_INT, 8, "value", "l", true));
  c[C_NEST] = list_of(K_LIST, 4, "nest", "+l", true,
                      list_of(K_LIST, 4, "item", "+l", true, ty(K_INT, 1, "item", "c", false)));
  c[C_QUOTED] = ty(K_UINT, 2, "a \"quoted\" name", "S", true);
  number_columns(all_cols, N_ALL);
}

static const char *const UTF8_PIECES[] = {"", "a", "\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac", "x\xc3\xa9y\xf0\x9f\x8e\x89"};

/* Deterministic value of column col at row r. Nullable columns get nulls. */
static void gen_all(int col, int64_t r, Val *v) {
  memset(v, 0, sizeof *v);
  const Type *t = all_cols[col];
  v->null = t->nullable && (r + col * 3) % 7 == 3;
  if (v->null) return;
  int ri = (int)r;
  switch (col) {
    case C_B: v->i = (r * 5 + 1) % 3 == 0; break;
    case C_I8: v->i = (r * 37) % 256 - 128; break;
    case C_I16: v->i = (r * 1000) % 65536 - 32768; break;
    case C_I32: v->i = r * 100003 - 5000000; break;
    case C_I64: v->i = (r % 2 ? -1 : 1) * r * 1000000007LL + INT64_MIN / 4; break;
    case C_U8: v->u = (uint64_t)(r * 7 % 256); break;
    case C_U16: v->u = (uint64_t)(r * 301 % 65536); break;
    case C_U32: v->u = 4000000000u - (uint64_t)r * 12345u; break;
    case C_U64: v->u = UINT64_MAX - (uint64_t)r * 99991u; break;
    case C_F16:
      v->how = r % 2;
      if (r % 10 == 3) { v->how = 0; v->f = 0.1; v->u = 0x2E66; } /* rounded to nearest half */
      else { v->f = (double)((r % 41) - 20) * 0.125; v->u = half_bits_exact(v->f); }
      break;
    case C_F32: v->f = (double)r * 0.5 - 3.25; break;
    case C_F64: v->f = (double)r / 3.0 - 7.0; break;
    case C_D32: v->how = 0; v->i = r * 12345 - 600000; break;
    case C_D64: {
      /* minimal little-endian two's complement bytes of a negative value: sign-extended */
      int64_t x = -(r * 987654321LL) - 5;
      v->how = 1;
      uint8_t b[8];
      le_store(b, (uint64_t)x, 8);
      size_t n = 8;
      while (n > 1 && b[n - 1] == 0xff && (b[n - 2] & 0x80)) n--;
      set_bytes(v, b, n);
      break;
    }
    case C_D128:
      if (r % 3 == 0) { v->how = 0; v->i = -r * 3 - 1; }
      else {
        uint8_t b[16];
        v->how = 1;
        le_store(b, (uint64_t)r * 0x0123456789ABCDEFull, 8);
        le_store(b + 8, (uint64_t)(int64_t)(r - 10), 8);
        set_bytes(v, b, 16);
      }
      break;
    case C_D256: {
      uint8_t b[32];
      v->how = 1;
      if (r % 2 == 0) { /* 5 bytes, negative: sign-extended to 32 */
        le_store(b, (uint64_t)(-(int64_t)r * 1000003 - 7), 5);
        b[4] |= 0x80;
        set_bytes(v, b, 5);
      } else {
        le_store(b, (uint64_t)r * 0x9E3779B97F4A7C15ull, 8);
        le_store(b + 8, ~(uint64_t)r, 8);
        le_store(b + 16, (uint64_t)r << 3, 8);
        le_store(b + 24, (uint64_t)(int64_t)(r - 20), 8);
        set_bytes(v, b, 32);
      }
      break;
    }
    case C_DT32: v->i = 18000 + r; break;
    case C_DT64: v->i = (18000 + r) * 86400000LL; break;
    case C_T32S: v->i = r * 61 % 86400; break;
    case C_T32MS: v->i = r * 1001 % 86400000; break;
    case C_T64US: v->i = r * 123456789LL % 86400000000LL; break;
    case C_T64NS: v->i = r * 987654321987LL % 86400000000000LL; break;
    case C_TS_S: v->i = 1700000000 + r * 3600; break;
    case C_TS: v->i = 1700000000000000LL + r * 1000003; break;
    case C_TSTZ: v->i = 1700000000000000000LL + r * 7; break;
    case C_DUR_MS: v->i = -r * 500; break;
    case C_DUR_NS: v->i = r * 1000000000000LL; break;
    case C_IYM: v->i = r - 12; break;
    case C_IDT: {
      uint8_t b[8];
      le_store(b, (uint64_t)(int64_t)r, 4);
      le_store(b + 4, (uint64_t)(int64_t)(-(r * 1000 + 1)), 4);
      set_bytes(v, b, 8);
      break;
    }
    case C_IMDN: {
      uint8_t b[16];
      le_store(b, (uint64_t)(r % 12), 4);
      le_store(b + 4, (uint64_t)(int64_t)-r, 4);
      le_store(b + 8, (uint64_t)(r * 1000000007LL), 8);
      set_bytes(v, b, 16);
      break;
    }
    case C_S: /* empty strings are valid values, not nulls */
      if (r % 11 == 0) v->len = 0;
      else set_str(v, "row%d%s", ri, UTF8_PIECES[r % 5]);
      break;
    case C_LS: set_str(v, "%s|large|%d", UTF8_PIECES[(r + 2) % 5], ri * 7); break;
    case C_BIN:
    case C_LBIN: {
      uint8_t b[8];
      size_t n = (size_t)(r % 6);
      for (size_t k = 0; k < n; k++) b[k] = (uint8_t)((r + (int64_t)k) * (col == C_BIN ? 31 : 17)); /* zeros too */
      set_bytes(v, b, n);
      break;
    }
    case C_FSB: {
      uint8_t b[3] = {(uint8_t)r, (uint8_t)(r >> 8), (uint8_t)(0xA5 ^ r)};
      set_bytes(v, b, 3);
      break;
    }
    case C_NUL: v->null = true; break;
    case C_L:
      v->n = (int)(r % 4);
      v->items = new_vals(v->n);
      for (int k = 0; k < v->n; k++) {
        v->items[k].null = (r + k) % 5 == 2;
        v->items[k].i = v->items[k].null ? 0 : r * 10 + k;
      }
      break;
    case C_LL:
      v->n = (int)(r % 3);
      v->items = new_vals(v->n);
      for (int k = 0; k < v->n; k++) set_str(&v->items[k], "ll%d.%d%s", ri, k, UTF8_PIECES[k % 5]);
      break;
    case C_FSL:
      v->n = 2;
      v->items = new_vals(2);
      v->items[0].i = r * 3;
      v->items[1].null = r % 4 == 1;
      v->items[1].i = v->items[1].null ? 0 : -r;
      break;
    case C_ST: {
      v->n = 3;
      v->items = new_vals(3);
      Val *x = &v->items[0], *y = &v->items[1], *z = &v->items[2];
      x->null = r % 6 == 1;
      x->f = x->null ? 0 : (double)r * 0.25;
      y->null = r % 5 == 4;
      if (!y->null) {
        y->n = (int)(r % 3);
        y->items = new_vals(y->n);
        for (int k = 0; k < y->n; k++) y->items[k].i = r + k;
      }
      set_str(z, "z%d", ri);
      break;
    }
    case C_ST2:
      v->n = 2;
      v->items = new_vals(2);
      v->items[0].i = -r;
      v->items[1].null = r % 3 == 0;
      v->items[1].i = !v->items[1].null && r % 2;
      break;
    case C_M:
      v->n = (int)(r % 3);
      v->items = new_vals(v->n);
      for (int k = 0; k < v->n; k++) {
        Val *e = &v->items[k];
        e->n = 2;
        e->items = new_vals(2);
        set_str(&e->items[0], "k%d", k);
        e->items[1].null = k == 1;
        e->items[1].i = k == 1 ? 0 : r * 100 + k;
      }
      break;
    case C_NEST:
      v->n = (int)(r % 3);
      v->items = new_vals(v->n);
      for (int k = 0; k < v->n; k++) {
        Val *in = &v->items[k];
        in->null = (r + k) % 4 == 3;
        if (in->null) continue;
        in->n = (int)((r + k) % 3);
        in->items = new_vals(in->n);
        for (int j = 0; j < in->n; j++) in->items[j].i = (int8_t)(r + k + j);
      }
      break;
    case C_QUOTED: v->u = (uint64_t)(r % 200); break;
    default: break;
  }
}

static int write_row(QuiverWriter *w, Type **cols, int ncols, GenFn gen, int64_t r) {
  for (int c = 0; c < ncols; c++) {
    size_t mark = arena_used;
    Val v;
    gen(c, r, &v);
    int rc = append_val(w, cols[c], &v);
    arena_used = mark;
    if (rc != 0) return rc;
  }
  return quiver_end_row(w);
}

static void release_batch(struct ArrowArray *a) {
  EXPECT(a->release != NULL, "release of a released batch");
  a->release(a);
  EXPECT(a->release == NULL, "release callback did not set release = NULL");
}

/* ------------------------------------------------------------ sections */

static void test_basics(void) {
  struct QuiverOptions o;
  memset(&o, 0xAB, sizeof o);
  quiver_options_default(&o);
  CHECK(o.batch_rows == 8192 && o.recycle && o.retain == 3 && o.validate_utf8,
        "quiver_options_default: batch_rows 8192, recycle, retain 3, validate_utf8 (got %" PRId64 ", %d, %d, %d)",
        o.batch_rows, o.recycle, o.retain, o.validate_utf8);
  const char *v = quiver_version();
  CHECK(v != NULL && v[0] >= '0' && v[0] <= '9', "quiver_version() = \"%s\"", v ? v : "(null)");
#ifdef QUIVER_EXPECTED_VERSION
  CHECK(strcmp(v, QUIVER_EXPECTED_VERSION) == 0, "quiver_version() matches Cargo.toml (%s)", QUIVER_EXPECTED_VERSION);
#endif
  CHECK(quiver_live_arrays() == 0, "no live arrays at start");
}

static void test_schema_parse(void) {
  struct ArrowSchema s;
  memset(&s, 0, sizeof s);
  OKW(NULL, quiver_schema_parse(ALL_TYPES, &s));
  check_record_schema(&s, all_cols, N_ALL, "parsed all-types schema");
  ok("quiver_schema_parse: %d fields of every type, formats, names, nullability, children", N_ALL);
  s.release(&s);
  CHECK(s.release == NULL, "parsed schema release sets release = NULL");

  /* the node example of docs/schema-text.md: appends are accepted exactly at those nodes */
  QuiverWriter *w = NULL;
  OKW(NULL, quiver_schema_parse("a: int32, m: map<utf8, int64>, b: struct<x: int8, y: list<int16>>", &s));
  OKW(NULL, quiver_writer_new(&s, NULL, &w));
  s.release(&s);
  const uint8_t k[] = "key";
  OKW(w, quiver_append_i32(w, 0, 1));
  OKW(w, quiver_begin(w, 1));
  OKW(w, quiver_begin(w, 2));
  OKW(w, quiver_append_bytes(w, 3, k, 3));
  OKW(w, quiver_append_i64(w, 4, 7));
  OKW(w, quiver_end(w, 2));
  OKW(w, quiver_end(w, 1));
  OKW(w, quiver_begin(w, 5));
  OKW(w, quiver_append_i8(w, 6, -1));
  OKW(w, quiver_begin(w, 7));
  CHECK(quiver_append_i16(w, 7, 5) == EINVAL, "node 7 (b.y, a list) rejects append_i16 with EINVAL");
  OKW(w, quiver_append_i16(w, 8, 5));
  OKW(w, quiver_end(w, 7));
  OKW(w, quiver_end(w, 5));
  OKW(w, quiver_end_row(w));
  CHECK(quiver_writer_rows(w) == 1, "docs example nodes a=0, m=1, m.entries=2, m.key=3, m.value=4, b=5, b.x=6, "
                                    "b.y=7, b.y.item=8 take their appends");
  quiver_writer_free(w);

  memset(&s, 0, sizeof s);
  int rc = quiver_schema_parse("id int64", &s);
  const char *msg = quiver_last_error();
  CHECK(rc == EINVAL && msg && *msg, "quiver_schema_parse(\"id int64\") -> EINVAL (%d), message \"%s\"", rc,
        msg ? msg : "(null)");
  rc = quiver_schema_parse("x: list<int32", &s);
  CHECK(rc == EINVAL, "quiver_schema_parse(\"x: list<int32\") -> EINVAL (%d)", rc);
  rc = quiver_schema_parse(NULL, &s);
  CHECK(rc == EINVAL, "quiver_schema_parse(NULL) -> EINVAL (%d)", rc);
}

static void test_row_path(void) {
  struct ArrowSchema s;
  QuiverWriter *w = NULL;
  OKW(NULL, quiver_schema_parse(ALL_TYPES, &s));
  OKW(NULL, quiver_writer_new(&s, NULL, &w));
  s.release(&s);
  ok("quiver_writer_new from the parsed all-types schema");

  struct ArrowSchema es;
  OKW(w, quiver_writer_export_schema(w, &es));
  check_record_schema(&es, all_cols, N_ALL, "quiver_writer_export_schema");
  es.release(&es);
  ok("quiver_writer_export_schema matches the parsed schema");

  /* rows 0..49, with two aborted partial rows in the middle */
  for (int64_t r = 0; r < 50; r++) {
    if (r == 20 || r == 33) {
      /* a partial row: scalar columns, an open list with an item, an open struct */
      OKW(w, quiver_append_bool(w, all_cols[C_B]->node, true));
      OKW(w, quiver_append_i8(w, all_cols[C_I8]->node, 99));
      OKW(w, quiver_append_bytes(w, all_cols[C_S]->node, (const uint8_t *)"aborted", 7));
      OKW(w, quiver_begin(w, all_cols[C_L]->node));
      OKW(w, quiver_append_i32(w, all_cols[C_L]->child[0]->node, 12345));
      if (r == 33) {
        OKW(w, quiver_end(w, all_cols[C_L]->node));
        OKW(w, quiver_begin(w, all_cols[C_ST]->node));
        OKW(w, quiver_append_f64(w, all_cols[C_ST]->child[0]->node, 99.5));
      }
      OKW(w, quiver_abort_row(w));
      EXPECT(quiver_writer_rows(w) == r, "abort_row changed the row count");
    }
    OKW(w, write_row(w, all_cols, N_ALL, gen_all, r));
    EXPECT(quiver_writer_rows(w) == r + 1, "quiver_writer_rows %" PRId64 " after %" PRId64 " rows",
           quiver_writer_rows(w), r + 1);
  }
  ok("row path: 50 rows of %d columns appended, quiver_writer_rows counts them, abort_row drops partial rows", N_ALL);

  int64_t live0 = quiver_live_arrays();
  struct ArrowArray b1;
  OKW(w, quiver_writer_finish(w, &b1));
  CHECK(quiver_writer_rows(w) == 0, "quiver_writer_finish starts the next batch (rows 0)");
  int64_t n1 = count_arrays(&b1);
  CHECK(quiver_live_arrays() == live0 + n1, "quiver_live_arrays counts the batch and its %" PRId64 " arrays", n1);
  check_batch(&b1, all_cols, N_ALL, gen_all, 0, 50, "row batch 1");
  ok("row batch 1: every value of every column read back from the buffers; nulls are zero bytes");

  /* second batch while the first is held: both stay intact */
  for (int64_t r = 50; r < 87; r++) OKW(w, write_row(w, all_cols, N_ALL, gen_all, r));
  struct ArrowArray b2;
  OKW(w, quiver_writer_finish(w, &b2));
  check_batch(&b2, all_cols, N_ALL, gen_all, 50, 37, "row batch 2");
  check_batch(&b1, all_cols, N_ALL, gen_all, 0, 50, "row batch 1 (held)");
  ok("row batch 2 (rows 50..86) correct; batch 1, still held, unchanged");

  /* an empty batch */
  struct ArrowArray b3;
  OKW(w, quiver_writer_finish(w, &b3));
  check_batch(&b3, all_cols, N_ALL, gen_all, 0, 0, "empty batch");
  release_batch(&b3);
  ok("quiver_writer_finish with no rows gives a valid empty batch");

  /* a child moved out of its parent outlives it (C Data Interface: move semantics) */
  struct ArrowArray moved = *b1.children[C_ST];
  b1.children[C_ST]->release = NULL;
  release_batch(&b1);
  int64_t n2 = count_arrays(&b2), nm = count_arrays(&moved);
  CHECK(quiver_live_arrays() == live0 + n2 + nm,
        "after releasing batch 1 with column st moved out, st and its %" PRId64 " arrays are still live", nm);
  {
    char path[] = "moved st";
    check_shape(&moved, all_cols[C_ST], path);
    for (int64_t r = 0; r < 50; r++) {
      size_t mark = arena_used;
      Val v;
      gen_all(C_ST, r, &v);
      check_val(&moved, all_cols[C_ST], r, &v, path, r);
      arena_used = mark;
    }
  }
  ok("moved-out struct column st is intact after its batch was released");
  release_batch(&moved);
  release_batch(&b2);
  CHECK(quiver_live_arrays() == live0, "every array of the row batches released (live %" PRId64 ")",
        quiver_live_arrays());
  quiver_writer_free(w);
}

static void test_errors(void) {
  struct ArrowSchema s;
  QuiverWriter *w = NULL;
  OKW(NULL, quiver_schema_parse(ALL_TYPES, &s));
  OKW(NULL, quiver_writer_new(&s, NULL, &w));
  s.release(&s);
  for (int64_t r = 0; r < 5; r++) OKW(w, write_row(w, all_cols, N_ALL, gen_all, r));

  int rc = quiver_append_bytes(w, all_cols[C_I64]->node, (const uint8_t *)"x", 1);
  const char *m = quiver_writer_last_error(w);
  CHECK(rc == EINVAL && m && *m, "append_bytes on an int64 node -> EINVAL (%d), last_error \"%s\"", rc, m ? m : "");
  rc = quiver_append_i64(w, all_cols[C_S]->node, 1);
  CHECK(rc == EINVAL, "append_i64 on a utf8 node -> EINVAL (%d)", rc);
  rc = quiver_append_i32(w, all_cols[C_L]->node, 1);
  CHECK(rc == EINVAL, "append_i32 on a list node -> EINVAL (%d)", rc);
  rc = quiver_append_i16(w, all_cols[C_I32]->node, 1);
  CHECK(rc == EINVAL, "append_i16 on an int32 node -> EINVAL (%d)", rc);
  rc = quiver_begin(w, all_cols[C_I32]->node);
  CHECK(rc == EINVAL, "begin on an int32 node -> EINVAL (%d)", rc);
  rc = quiver_append_i32(w, 100000, 1);
  CHECK(rc == EINVAL, "append on unknown node 100000 -> EINVAL (%d)", rc);
  rc = quiver_append_bytes(w, all_cols[C_S]->node, (const uint8_t *)"\xff\xfe", 2);
  CHECK(rc == EINVAL, "invalid UTF-8 on a utf8 node -> EINVAL (%d)", rc);
  rc = quiver_append_bytes(w, all_cols[C_FSB]->node, (const uint8_t *)"ab", 2);
  CHECK(rc == EINVAL, "2 bytes on fixed_size_binary(3) -> EINVAL (%d)", rc);
  rc = quiver_append_i64(w, all_cols[C_D32]->node, 1000000000);
  CHECK(rc == ERANGE, "10^9 on decimal32(9, 2) -> ERANGE (%d)", rc);
  rc = quiver_append_i64(NULL, 0, 1);
  CHECK(rc == EINVAL, "append_i64 on a NULL writer -> EINVAL (%d)", rc);
  OKW(w, quiver_abort_row(w));

  /* end_row with a missing column */
  for (int c = 0; c < N_ALL; c++) {
    if (c == C_F64) continue;
    size_t mark = arena_used;
    Val v;
    gen_all(c, 5, &v);
    OKW(w, append_val(w, all_cols[c], &v));
    arena_used = mark;
  }
  rc = quiver_end_row(w);
  m = quiver_writer_last_error(w);
  CHECK(rc == EINVAL && m && *m, "end_row with column f64 missing -> EINVAL (%d), \"%s\"", rc, m ? m : "");
  CHECK(quiver_writer_rows(w) == 5, "the failed end_row committed nothing (rows %" PRId64 ")", quiver_writer_rows(w));
  OKW(w, quiver_abort_row(w));

  /* a fixed-size list with one item instead of two */
  OKW(w, quiver_begin(w, all_cols[C_FSL]->node));
  OKW(w, quiver_append_i16(w, all_cols[C_FSL]->child[0]->node, 1));
  rc = quiver_end(w, all_cols[C_FSL]->node);
  CHECK(rc == EINVAL, "end of fixed_size_list<int16, 2> after one item -> EINVAL (%d)", rc);
  OKW(w, quiver_abort_row(w));
  rc = quiver_end(w, all_cols[C_L]->node);
  CHECK(rc == EINVAL, "end of a list that was not begun -> EINVAL (%d)", rc);
  OKW(w, quiver_abort_row(w));

  /* earlier rows are intact after all of that */
  OKW(w, write_row(w, all_cols, N_ALL, gen_all, 5));
  struct ArrowArray b;
  OKW(w, quiver_writer_finish(w, &b));
  check_batch(&b, all_cols, N_ALL, gen_all, 0, 6, "batch after errors");
  ok("failed calls changed nothing committed: the 6 rows read back intact");
  release_batch(&b);
  quiver_writer_free(w);
  quiver_writer_free(NULL);
  ok("quiver_writer_free(NULL) is a no-op");

  w = (QuiverWriter *)&b; /* must be left alone on failure */
  rc = quiver_writer_new(NULL, NULL, &w);
  m = quiver_last_error();
  CHECK(rc == EINVAL && m && *m, "quiver_writer_new(NULL schema) -> EINVAL (%d), quiver_last_error \"%s\"", rc,
        m ? m : "");
}

/* ------------------------------------------------------------ hand-built schema and arrays */

typedef struct HandSchema {
  struct ArrowSchema top;
  struct ArrowSchema *kids[16];
  int nkids;
} HandSchema;

static int hand_schema_releases;

static void hand_schema_release(struct ArrowSchema *s) {
  for (int64_t i = 0; i < s->n_children; i++)
    if (s->children[i]->release) s->children[i]->release(s->children[i]);
  free(s->children);
  hand_schema_releases++;
  s->release = NULL;
  free(s->private_data); /* a heap node is its own private_data: free it last */
}

static struct ArrowSchema *hs_new(const char *format, const char *name, bool nullable, int nchild) {
  struct ArrowSchema *s = calloc(1, sizeof *s);
  EXPECT(s != NULL, "calloc");
  s->format = format;
  s->name = name;
  s->flags = nullable ? ARROW_FLAG_NULLABLE : 0;
  s->n_children = nchild;
  s->children = nchild ? calloc((size_t)nchild, sizeof *s->children) : NULL;
  s->release = hand_schema_release;
  s->private_data = s; /* the heap node itself, freed by its release */
  return s;
}
/* the top-level struct lives on the stack: its private_data is NULL */
static void hs_top(struct ArrowSchema *top, int nchild) {
  memset(top, 0, sizeof *top);
  top->format = "+s";
  top->name = "";
  top->n_children = nchild;
  top->children = calloc((size_t)nchild, sizeof *top->children);
  top->release = hand_schema_release;
}

enum { H_A, H_B, H_C, H_D, H_E, H_F, H_G, H_H, H_U16, N_HAND };
static Type *hand_cols[N_HAND];

static void build_hand_schema(struct ArrowSchema *top) {
  hs_top(top, N_HAND);
  top->children[H_A] = hs_new("i", "a", false, 0);
  top->children[H_B] = hs_new("g", "b", true, 0);
  top->children[H_C] = hs_new("u", "c", true, 0);
  top->children[H_D] = hs_new("+l", "d", true, 1);
  top->children[H_D]->children[0] = hs_new("l", "item", true, 0);
  top->children[H_E] = hs_new("b", "e", true, 0);
  top->children[H_F] = hs_new("tsm:UTC", "f", true, 0);
  top->children[H_G] = hs_new("w:4", "g", true, 0);
  top->children[H_H] = hs_new("+s", "h", true, 1);
  top->children[H_H]->children[0] = hs_new("s", "p", true, 0);
  top->children[H_U16] = hs_new("S", "u16", true, 0);

  Type **c = hand_cols;
  c[H_A] = ty(K_INT, 4, "a", "i", false);
  c[H_B] = ty(K_F64, 8, "b", "g", true);
  c[H_C] = ty(K_VAR, 4, "c", "u", true);
  c[H_D] = list_of(K_LIST, 4, "d", "+l", true, ty(K_INT, 8, "item", "l", true));
  c[H_E] = ty(K_BOOL, 0, "e", "b", true);
  c[H_F] = ty(K_INT, 8, "f", "tsm:UTC", true);
  c[H_G] = ty(K_FIXED, 4, "g", "w:4", true);
  c[H_H] = with(ty(K_STRUCT, 0, "h", "+s", true), ty(K_INT, 2, "p", "s", true));
  c[H_U16] = ty(K_UINT, 2, "u16", "S", true);
  number_columns(hand_cols, N_HAND);
}

static bool hand_null(int col, int64_t r) {
  switch (col) {
    case H_A: return false;
    case H_B: return r % 4 == 1;
    case H_C: return r % 5 == 2;
    case H_D: return r % 6 == 3;
    case H_E: return r % 3 == 0;
    case H_F: return false; /* written without a validity bitmap */
    case H_G: return r % 4 == 0;
    case H_H: return r % 5 == 1;
    default: return r % 7 == 6;
  }
}

static void gen_hand(int col, int64_t r, Val *v) {
  memset(v, 0, sizeof *v);
  v->null = hand_null(col, r);
  if (v->null) return;
  switch (col) {
    case H_A: v->i = r * 3 - 7; break;
    case H_B: v->f = (double)r * 1.5 + 0.25; break;
    case H_C: set_str(v, "c%d%s", (int)r, UTF8_PIECES[r % 5]); break;
    case H_D:
      v->n = (int)(r % 3);
      v->items = new_vals(v->n);
      for (int k = 0; k < v->n; k++) {
        v->items[k].null = (r + k) % 4 == 2;
        v->items[k].i = v->items[k].null ? 0 : r * 1000 + k;
      }
      break;
    case H_E: v->i = r % 2; break;
    case H_F: v->i = 1600000000000LL + r; break;
    case H_G: { uint8_t b[4] = {(uint8_t)r, 0xEE, (uint8_t)~r, 0x01}; set_bytes(v, b, 4); break; }
    case H_H:
      v->n = 1;
      v->items = new_vals(1);
      v->items[0].null = r % 3 == 2;
      v->items[0].i = v->items[0].null ? 0 : 300 - r;
      break;
    default: v->u = (uint64_t)(r * 1111 % 65536); break;
  }
}

/* A hand-built ArrowArray: all of it in one heap block owned through private_data. */
typedef struct HandArray {
  struct ArrowArray arr;
  const void *bufs[3];
  struct ArrowArray *kids[1];
  uint8_t mem[4096];
  size_t used;
} HandArray;

static int hand_array_releases;
static void hand_array_release(struct ArrowArray *a) {
  for (int64_t i = 0; i < a->n_children; i++)
    if (a->children[i]->release) a->children[i]->release(a->children[i]);
  hand_array_releases++;
  a->release = NULL;
  free(a->private_data); /* may hold *a itself: free it last */
}
static HandArray *ha_new(int64_t length, int64_t offset, int nbuf) {
  HandArray *h = calloc(1, sizeof *h);
  EXPECT(h != NULL, "calloc");
  h->arr.length = length;
  h->arr.offset = offset;
  h->arr.n_buffers = nbuf;
  h->arr.buffers = h->bufs;
  h->arr.children = h->kids;
  h->arr.release = hand_array_release;
  h->arr.private_data = h;
  return h;
}
static void *ha_buf(HandArray *h, int j, size_t n) {
  size_t at = (h->used + 63) & ~(size_t)63;
  EXPECT(at + n <= sizeof h->mem, "hand array too big");
  h->used = at + n;
  memset(h->mem + at, 0, n);
  h->bufs[j] = h->mem + at;
  return h->mem + at;
}
static void set_bit(uint8_t *b, int64_t i, bool on) {
  if (on) b[i >> 3] |= (uint8_t)(1u << (i & 7));
  else b[i >> 3] &= (uint8_t)~(1u << (i & 7));
}

/* Build the input array of column col, rows [0, n), at array offset `off`,
   with non-zero garbage under every null slot (the copy must zero it). */
static struct ArrowArray *hand_input(int col, int64_t n, int64_t off) {
  int64_t total = n + off;
  HandArray *h = NULL;
  uint8_t *valid;
  int64_t nulls = 0;
  switch (col) {
    case H_C: { /* utf8 */
      h = ha_new(n, off, 3);
      valid = ha_buf(h, 0, (size_t)(total + 7) / 8);
      int32_t *o = ha_buf(h, 1, sizeof(int32_t) * (size_t)(total + 1));
      char *d = ha_buf(h, 2, 2048);
      int32_t pos = 0;
      for (int64_t i = 0; i < total; i++) {
        o[i] = pos;
        if (i < off) { memcpy(d + pos, "skipped", 7); pos += 7; continue; }
        size_t mark = arena_used;
        Val v;
        gen_hand(col, i - off, &v);
        set_bit(valid, i, !v.null);
        nulls += v.null;
        if (v.null) { memcpy(d + pos, "GARBAGE", 7); pos += 7; } /* bytes under a null */
        else { memcpy(d + pos, v.raw, v.len); pos += (int32_t)v.len; }
        arena_used = mark;
      }
      o[total] = pos;
      break;
    }
    case H_D: { /* list<int64>, null lists with items under them */
      h = ha_new(n, off, 2);
      valid = ha_buf(h, 0, (size_t)(total + 7) / 8);
      int32_t *o = ha_buf(h, 1, sizeof(int32_t) * (size_t)(total + 1));
      HandArray *ch = ha_new(0, 0, 2);
      uint8_t *cv = ha_buf(ch, 0, 64);
      int64_t *cval = ha_buf(ch, 1, 8 * 256);
      int32_t pos = 0;
      int64_t cnulls = 0;
      for (int64_t i = 0; i < total; i++) {
        o[i] = pos;
        size_t mark = arena_used;
        Val v;
        if (i < off) { v = (Val){.n = 0}; v.null = true; }
        else gen_hand(col, i - off, &v);
        if (i >= off) { set_bit(valid, i, !v.null); nulls += v.null; }
        int items = v.null ? 2 : v.n; /* two garbage items under a null list */
        for (int k = 0; k < items; k++, pos++) {
          bool inull = v.null ? false : v.items[k].null;
          set_bit(cv, pos, !inull);
          cnulls += inull;
          cval[pos] = v.null ? 0x7777 : (inull ? 0x5555 : v.items[k].i);
        }
        arena_used = mark;
      }
      o[total] = pos;
      ch->arr.length = pos;
      ch->arr.null_count = cnulls;
      h->arr.n_children = 1;
      h->kids[0] = &ch->arr;
      break;
    }
    case H_E: { /* bool, value bits set under nulls */
      h = ha_new(n, off, 2);
      valid = ha_buf(h, 0, (size_t)(total + 7) / 8);
      uint8_t *bits = ha_buf(h, 1, (size_t)(total + 7) / 8);
      for (int64_t i = off; i < total; i++) {
        Val v;
        gen_hand(col, i - off, &v);
        set_bit(valid, i, !v.null);
        nulls += v.null;
        set_bit(bits, i, v.null ? true : v.i != 0);
      }
      break;
    }
    case H_G: { /* fixed_size_binary(4) */
      h = ha_new(n, off, 2);
      valid = ha_buf(h, 0, (size_t)(total + 7) / 8);
      uint8_t *vals = ha_buf(h, 1, 4 * (size_t)total);
      memset(vals, 0x99, 4 * (size_t)total);
      for (int64_t i = off; i < total; i++) {
        Val v;
        gen_hand(col, i - off, &v);
        set_bit(valid, i, !v.null);
        nulls += v.null;
        if (!v.null) memcpy(vals + 4 * i, v.raw, 4);
      }
      break;
    }
    case H_H: { /* struct<p: int16>, valid children under null structs */
      h = ha_new(n, off, 1);
      valid = ha_buf(h, 0, (size_t)(total + 7) / 8);
      HandArray *ch = ha_new(total, 0, 2);
      uint8_t *cv = ha_buf(ch, 0, (size_t)(total + 7) / 8);
      int16_t *cval = ha_buf(ch, 1, 2 * (size_t)total);
      int64_t cnulls = 0;
      for (int64_t i = 0; i < total; i++) {
        size_t mark = arena_used;
        Val v;
        if (i < off) { set_bit(cv, i, true); cval[i] = -1; continue; }
        gen_hand(col, i - off, &v);
        set_bit(valid, i, !v.null);
        nulls += v.null;
        bool pnull = !v.null && v.items[0].null;
        set_bit(cv, i, !pnull);
        cnulls += pnull;
        cval[i] = v.null ? 77 : (int16_t)v.items[0].i;
        arena_used = mark;
      }
      ch->arr.null_count = cnulls;
      h->arr.n_children = 1;
      h->kids[0] = &ch->arr;
      break;
    }
    default: fail_at(__LINE__, "hand_input", "no hand input for column %d", col);
  }
  h->arr.null_count = nulls;
  return &h->arr;
}

static void test_hand_schema_columns(void) {
  struct ArrowSchema top;
  build_hand_schema(&top);
  QuiverWriter *w = NULL;
  struct QuiverOptions o;
  quiver_options_default(&o);
  o.batch_rows = 64;
  hand_schema_releases = 0;
  OKW(NULL, quiver_writer_new(&top, &o, &w));
  CHECK(top.release != NULL && hand_schema_releases == 0,
        "quiver_writer_new borrows the hand-built ArrowSchema (not released, not moved)");
  top.release(&top);
  CHECK(hand_schema_releases == 12 && top.release == NULL, "our release callback freed the hand-built schema (%d)",
        hand_schema_releases);

  struct ArrowSchema es;
  OKW(w, quiver_writer_export_schema(w, &es));
  check_record_schema(&es, hand_cols, N_HAND, "export of the hand-built schema");
  es.release(&es);
  ok("the writer's schema equals the hand-built one (formats incl. \"tsm:UTC\", \"w:4\", \"+l\", \"+s\")");

  const int64_t N = 21;
  int32_t a[21];
  double bv[21];
  int64_t f[21];
  uint16_t u16[21];
  uint8_t bvalid[3] = {0}, uvalid[3] = {0};
  for (int64_t i = 0; i < N; i++) {
    Val v;
    a[i] = (int32_t)(i * 3 - 7);
    gen_hand(H_B, i, &v);
    bv[i] = v.null ? 1e300 : v.f; /* garbage under nulls */
    set_bit(bvalid, i, !v.null);
    f[i] = 1600000000000LL + i;
    gen_hand(H_U16, i, &v);
    u16[i] = v.null ? 0xBEEF : (uint16_t)v.u;
    set_bit(uvalid, i, !v.null);
  }
  bvalid[2] |= 0xE0; /* bits past the end: must be ignored */
  /* bad column writes first: they must leave the writer as it was */
  int rc = quiver_write_column(w, hand_cols[H_C]->node, a, NULL, N);
  CHECK(rc == EINVAL, "quiver_write_column on a utf8 column -> EINVAL (%d)", rc);
  rc = quiver_write_column(w, hand_cols[H_D]->child[0]->node, a, NULL, N);
  CHECK(rc == EINVAL, "quiver_write_column on a nested node (d.item) -> EINVAL (%d)", rc);
  rc = quiver_write_column(w, hand_cols[H_A]->node, a, NULL, -1);
  CHECK(rc == EINVAL, "quiver_write_column with length -1 -> EINVAL (%d)", rc);
  rc = quiver_write_column(w, hand_cols[H_A]->node, NULL, NULL, N);
  CHECK(rc == EINVAL, "quiver_write_column with NULL values -> EINVAL (%d)", rc);
  {
    struct ArrowSchema tmp;
    build_hand_schema(&tmp);
    struct ArrowArray *in = hand_input(H_C, N, 0);
    rc = quiver_write_array(w, hand_cols[H_A]->node, in, tmp.children[H_C]);
    CHECK(rc == EINVAL, "quiver_write_array of a utf8 array into an int32 column -> EINVAL (%d)", rc);
    in->release(in);
    tmp.release(&tmp);
  }
  CHECK(quiver_writer_rows(w) == 0, "the failed column writes wrote nothing");

  OKW(w, quiver_write_column(w, hand_cols[H_A]->node, a, NULL, N));
  OKW(w, quiver_write_column(w, hand_cols[H_B]->node, bv, bvalid, N));
  OKW(w, quiver_write_column(w, hand_cols[H_F]->node, f, NULL, N));
  OKW(w, quiver_write_column(w, hand_cols[H_U16]->node, u16, uvalid, N));
  ok("quiver_write_column: int32 and timestamp without validity, float64 and uint16 with validity");

  /* the node of the hand schema's list item, struct child */
  hand_array_releases = 0;
  struct ArrowSchema *cs[N_HAND];
  struct ArrowSchema tmp_top;
  build_hand_schema(&tmp_top); /* per-column schemas to pass next to the arrays */
  for (int c = 0; c < N_HAND; c++) cs[c] = tmp_top.children[c];
  int cols_by_array[] = {H_C, H_D, H_E, H_G, H_H};
  for (size_t k = 0; k < sizeof cols_by_array / sizeof cols_by_array[0]; k++) {
    int c = cols_by_array[k];
    struct ArrowArray *in = hand_input(c, N, c == H_C || c == H_G ? 3 : 0);
    OKW(w, quiver_write_array(w, hand_cols[c]->node, in, cs[c]));
    EXPECT(in->release != NULL, "quiver_write_array released or moved the input array of %s", hand_cols[c]->name);
    in->release(in);
  }
  int expect_releases = 5 + 2; /* d and h have a child each */
  CHECK(hand_array_releases == expect_releases,
        "quiver_write_array borrows: the hand-built arrays were released by us only (%d)", hand_array_releases);
  tmp_top.release(&tmp_top);
  ok("quiver_write_array: utf8 and fixed_size_binary at offset 3, list<int64>, bool, struct<p: int16>");

  CHECK(quiver_writer_rows(w) == N, "after writing every column of %" PRId64 " rows, quiver_writer_rows = %" PRId64,
        N, quiver_writer_rows(w));
  struct ArrowArray b;
  OKW(w, quiver_writer_finish(w, &b));
  check_batch(&b, hand_cols, N_HAND, gen_hand, 0, N, "column batch");
  ok("column batch: values equal the inputs; garbage under input nulls became zeros (values, bits, offsets, "
     "struct children)");
  release_batch(&b);

  /* the same writer through the row path */
  for (int64_t r = 0; r < 30; r++) OKW(w, write_row(w, hand_cols, N_HAND, gen_hand, r));
  OKW(w, quiver_writer_finish(w, &b));
  check_batch(&b, hand_cols, N_HAND, gen_hand, 0, 30, "hand-schema row batch");
  ok("row path on the writer made from the hand-built schema");
  release_batch(&b);
  quiver_writer_free(w);

  /* a dense union from a hand-built schema is accepted */
  struct ArrowSchema un;
  hs_top(&un, 1);
  un.children[0] = hs_new("+ud:0", "u", true, 1);
  un.children[0]->children[0] = hs_new("i", "i", true, 0);
  w = NULL;
  rc = quiver_writer_new(&un, NULL, &w);
  CHECK(rc == 0 && w != NULL, "writer for a dense union (\"+ud:0\") -> 0 (%d)", rc);
  quiver_writer_free(w);
  un.release(&un);
}

/* ------------------------------------------------------------ streams */

typedef struct FillCtx {
  Type **cols;
  int ncols;
  GenFn gen;
  int64_t next_row, total_rows;
  int calls;
  int64_t max_rows_seen;
  int fail_on_call; /* 0: never */
  const char *fail_message;
  /* stats read from the writer at the end of each fill call */
  struct QuiverStats after[64];
  int released;
} FillCtx;

static int fill(void *vctx, QuiverWriter *w, int64_t max_rows) {
  FillCtx *ctx = vctx;
  ctx->calls++;
  if (max_rows > ctx->max_rows_seen) ctx->max_rows_seen = max_rows;
  if (ctx->fail_on_call && ctx->calls == ctx->fail_on_call) {
    if (ctx->fail_message) quiver_writer_set_error(w, ctx->fail_message);
    return 1;
  }
  int64_t n = ctx->total_rows - ctx->next_row;
  if (n > max_rows) n = max_rows;
  for (int64_t k = 0; k < n; k++) {
    int rc = write_row(w, ctx->cols, ctx->ncols, ctx->gen, ctx->next_row);
    if (rc != 0) {
      quiver_writer_set_error(w, "fill: write_row failed");
      return rc;
    }
    ctx->next_row++;
  }
  if (ctx->calls <= 64 && quiver_writer_stats(w, &ctx->after[ctx->calls - 1]) != 0) return 1;
  return 0;
}
static void release_ctx(void *vctx) { ((FillCtx *)vctx)->released++; }

static void open_stream(const char *schema_text, int64_t batch_rows, bool recycle, FillCtx *ctx,
                        struct ArrowArrayStream *st) {
  struct ArrowSchema s;
  struct QuiverOptions o;
  quiver_options_default(&o);
  o.batch_rows = batch_rows;
  o.recycle = recycle;
  OKW(NULL, quiver_schema_parse(schema_text, &s));
  memset(st, 0, sizeof *st);
  OKW(NULL, quiver_stream_new(&s, &o, fill, ctx, release_ctx, st));
  s.release(&s);
  EXPECT(st->release && st->get_next && st->get_schema && st->get_last_error, "stream callbacks missing");
}

static int next(struct ArrowArrayStream *st, struct ArrowArray *out) {
  memset(out, 0, sizeof *out);
  int rc = st->get_next(st, out);
  if (rc != 0) {
    const char *m = st->get_last_error(st);
    fail_at(__LINE__, "get_next", "get_next returned %d (%s): %s", rc, strerror(rc), m ? m : "(no message)");
  }
  return rc;
}

static void test_stream_all_types(void) {
  FillCtx ctx = {.cols = all_cols, .ncols = N_ALL, .gen = gen_all, .total_rows = 150};
  struct ArrowArrayStream st;
  open_stream(ALL_TYPES, 40, true, &ctx, &st);
  struct ArrowSchema s;
  int rc = st.get_schema(&st, &s);
  CHECK(rc == 0, "stream get_schema -> 0 (%d)", rc);
  check_record_schema(&s, all_cols, N_ALL, "stream schema");
  s.release(&s);
  ok("stream schema matches the parsed all-types schema");

  int64_t first = 0;
  int batches = 0;
  for (;;) {
    struct ArrowArray b;
    next(&st, &b);
    if (b.release == NULL) break;
    int64_t want = ctx.total_rows - first < 40 ? ctx.total_rows - first : 40;
    char what[64];
    snprintf(what, sizeof what, "stream batch %d", batches + 1);
    check_batch(&b, all_cols, N_ALL, gen_all, first, want, what);
    first += b.length;
    batches++;
    release_batch(&b);
  }
  CHECK(batches == 4 && first == 150, "stream of 150 rows, batch_rows 40: 4 batches (%d), every value read back",
        batches);
  CHECK(ctx.max_rows_seen > 0 && ctx.max_rows_seen <= 40, "fill callback asked for at most batch_rows rows (%" PRId64 ")",
        ctx.max_rows_seen);
  struct ArrowArray end;
  next(&st, &end);
  CHECK(end.release == NULL, "get_next after the end: 0 and a released array, again");
  CHECK(ctx.released == 0, "release_ctx not called before the stream is released");
  st.release(&st);
  CHECK(ctx.released == 1 && st.release == NULL, "stream release calls release_ctx once (%d) and sets release = NULL",
        ctx.released);
}

/* the schema of the reuse loops: every kind of buffer, lengths repeat per batch */
static const char *REUSE =
    "id: int64 not null, name: utf8, score: float64, tags: list<utf8>, flag: bool,"
    " pt: struct<x: float32, y: int16>, m: map<utf8, int32>, big: large_binary";
enum { R_ID, R_NAME, R_SCORE, R_TAGS, R_FLAG, R_PT, R_M, R_BIG, N_REUSE };
static Type *reuse_cols[N_REUSE];
#define REUSE_BATCH 256

static void build_reuse(void) {
  Type **c = reuse_cols;
  c[R_ID] = ty(K_INT, 8, "id", "l", false);
  c[R_NAME] = ty(K_VAR, 4, "name", "u", true);
  c[R_SCORE] = ty(K_F64, 8, "score", "g", true);
  c[R_TAGS] = list_of(K_LIST, 4, "tags", "+l", true, ty(K_VAR, 4, "item", "u", true));
  c[R_FLAG] = ty(K_BOOL, 0, "flag", "b", true);
  c[R_PT] = with(with(ty(K_STRUCT, 0, "pt", "+s", true), ty(K_F32, 4, "x", "f", true)), ty(K_INT, 2, "y", "s", true));
  c[R_M] = map_of("m", true, ty(K_VAR, 4, "key", "u", false), ty(K_INT, 4, "value", "i", true));
  c[R_BIG] = ty(K_VAR, 8, "big", "Z", true);
  number_columns(reuse_cols, N_REUSE);
}

/* Values vary with the row; lengths and null positions only with the row within its batch. */
static void gen_reuse(int col, int64_t r, Val *v) {
  memset(v, 0, sizeof *v);
  int64_t q = (int64_t)((uint64_t)r % REUSE_BATCH);
  v->null = col != R_ID && (q + col) % 7 == 2;
  if (v->null) return;
  switch (col) {
    case R_ID: v->i = r; break;
    case R_NAME: set_str(v, "n%07d%.*s", (int)(r % 10000000), (int)(q % 4), "xyzw"); break;
    case R_SCORE: v->f = (double)r * 0.75; break;
    case R_TAGS:
      v->n = (int)(q % 3);
      v->items = new_vals(v->n);
      for (int k = 0; k < v->n; k++) {
        v->items[k].null = (q + k) % 5 == 4;
        if (!v->items[k].null) set_str(&v->items[k], "t%05d", (int)((r + k) % 100000));
      }
      break;
    case R_FLAG: v->i = r % 3 == 1; break;
    case R_PT:
      v->n = 2;
      v->items = new_vals(2);
      v->items[0].f = (double)(float)((double)r * 0.5);
      v->items[1].null = q % 4 == 0;
      v->items[1].i = v->items[1].null ? 0 : (int16_t)r;
      break;
    case R_M:
      v->n = (int)(q % 2) + 1;
      v->items = new_vals(v->n);
      for (int k = 0; k < v->n; k++) {
        Val *e = &v->items[k];
        e->n = 2;
        e->items = new_vals(2);
        set_str(&e->items[0], "key%d", k);
        e->items[1].i = (int32_t)(r * 2 + k);
      }
      break;
    case R_BIG: {
      uint8_t b[32];
      size_t n = (size_t)((uint64_t)q % 16) + 1;
      for (size_t k = 0; k < n; k++) b[k] = (uint8_t)(r + (int64_t)k);
      set_bytes(v, b, n);
      break;
    }
    default: break;
  }
}

static void test_reuse_release_each(void) {
  enum { NB = 8 };
  FillCtx ctx = {.cols = reuse_cols, .ncols = N_REUSE, .gen = gen_reuse, .total_rows = NB * REUSE_BATCH};
  struct ArrowArrayStream st;
  open_stream(REUSE, REUSE_BATCH, true, &ctx, &st);
  Addrs first, cur;
  memset(&first, 0, sizeof first);
  int64_t live0 = quiver_live_arrays();
  for (int k = 0; k < NB; k++) {
    struct ArrowArray b;
    next(&st, &b);
    EXPECT(b.release != NULL, "stream ended early at batch %d", k + 1);
    char what[64];
    snprintf(what, sizeof what, "reuse batch %d", k + 1);
    check_batch(&b, reuse_cols, N_REUSE, gen_reuse, (int64_t)k * REUSE_BATCH, REUSE_BATCH, what);
    memset(&cur, 0, sizeof cur);
    collect(&b, &cur);
    if (k == 0) first = cur;
    else {
      int d = 0;
      if (!same_addrs(&first, &cur, &d))
        fail_at(__LINE__, "same_addrs", "batch %d: buffer %d at %p, batch 1 had it at %p (released before get_next)",
                k + 1, d, d >= 0 ? cur.p[d] : NULL, d >= 0 ? first.p[d] : NULL);
    }
    release_batch(&b);
    EXPECT(quiver_live_arrays() == live0, "batch %d: arrays still live after release", k + 1);
  }
  ok("release before get_next: batches 2..%d reuse every buffer address of batch 1 (%d buffers, children included)",
     NB, first.n);
  for (int k = 1; k < NB; k++)
    EXPECT(ctx.after[k].buffers_allocated == ctx.after[0].buffers_allocated,
           "fill %d: buffers_allocated %" PRIu64 ", after fill 1 it was %" PRIu64, k + 1,
           ctx.after[k].buffers_allocated, ctx.after[0].buffers_allocated);
  CHECK(ctx.after[0].buffers_allocated > 0, "buffers_allocated stops growing after batch 1 (%" PRIu64 " buffers)",
        ctx.after[0].buffers_allocated);
  CHECK(ctx.after[NB - 1].buffers_reused > ctx.after[1].buffers_reused && ctx.after[1].buffers_reused > 0,
        "buffers_reused grows with every batch (%" PRIu64 " after fill 2, %" PRIu64 " after fill %d)",
        ctx.after[1].buffers_reused, ctx.after[NB - 1].buffers_reused, NB);
  CHECK(ctx.after[NB - 1].batches == NB - 1, "stats.batches counts finished batches (%" PRIu64 " during fill %d)",
        ctx.after[NB - 1].batches, NB);
  st.release(&st);
  CHECK(ctx.released == 1, "release_ctx called once");
}

static void test_no_recycle(void) {
  FillCtx ctx = {.cols = reuse_cols, .ncols = N_REUSE, .gen = gen_reuse, .total_rows = 3 * REUSE_BATCH};
  struct ArrowArrayStream st;
  open_stream(REUSE, REUSE_BATCH, false, &ctx, &st);
  for (int k = 0; k < 3; k++) {
    struct ArrowArray b;
    next(&st, &b);
    check_batch(&b, reuse_cols, N_REUSE, gen_reuse, (int64_t)k * REUSE_BATCH, REUSE_BATCH, "recycle=false batch");
    release_batch(&b);
  }
  CHECK(ctx.after[2].buffers_reused == 0 && ctx.after[2].buffers_allocated > ctx.after[0].buffers_allocated,
        "recycle = false: no buffer reused, every batch allocates (%" PRIu64 " -> %" PRIu64 ")",
        ctx.after[0].buffers_allocated, ctx.after[2].buffers_allocated);
  st.release(&st);
}

static void test_reuse_hold(void) {
  FillCtx ctx = {.cols = reuse_cols, .ncols = N_REUSE, .gen = gen_reuse, .total_rows = 10 * REUSE_BATCH};
  struct ArrowArrayStream st;
  open_stream(REUSE, REUSE_BATCH, true, &ctx, &st);
  struct ArrowArray b, held;
  Addrs a_held, a;
  static Addrs seen[11]; /* buffer addresses of batch k */
  /* batch 1: released. batch 2: held while 3, 4, 5 are written. */
  next(&st, &b);
  collect(&b, &seen[1]);
  release_batch(&b);
  next(&st, &held);
  memset(&a_held, 0, sizeof a_held);
  collect(&held, &a_held);
  for (int k = 3; k <= 5; k++) {
    next(&st, &b);
    char what[64];
    snprintf(what, sizeof what, "batch %d (batch 2 held)", k);
    check_batch(&b, reuse_cols, N_REUSE, gen_reuse, (int64_t)(k - 1) * REUSE_BATCH, REUSE_BATCH, what);
    memset(&a, 0, sizeof a);
    collect(&b, &a);
    EXPECT(disjoint_addrs(&a, &a_held), "batch %d shares a buffer with held batch 2", k);
    seen[k] = a;
    release_batch(&b);
    check_batch(&held, reuse_cols, N_REUSE, gen_reuse, REUSE_BATCH, REUSE_BATCH, "held batch 2");
  }
  ok("holding batch 2: batches 3..5 get buffers at other addresses, batch 2 reads back unchanged after each");
  CHECK(ctx.after[2].buffers_allocated > ctx.after[1].buffers_allocated,
        "while batch 2 is held, batch 3 allocated new buffers (%" PRIu64 " -> %" PRIu64 ")",
        ctx.after[1].buffers_allocated, ctx.after[2].buffers_allocated);
  release_batch(&held);
  /* after the release: batches 6.. allocate nothing, every buffer is one seen before */
  seen[2] = a_held;
  for (int k = 6; k <= 10; k++) {
    next(&st, &b);
    char what[64];
    snprintf(what, sizeof what, "batch %d (after release)", k);
    check_batch(&b, reuse_cols, N_REUSE, gen_reuse, (int64_t)(k - 1) * REUSE_BATCH, REUSE_BATCH, what);
    memset(&seen[k], 0, sizeof seen[k]);
    collect(&b, &seen[k]);
    for (int x = 0; x < seen[k].n; x++) {
      const void *p = seen[k].p[x];
      bool found = p == NULL;
      for (int j = 1; j < k && !found; j++)
        for (int y = 0; y < seen[j].n && !found; y++) found = seen[j].p[y] == p;
      EXPECT(found, "batch %d: buffer %d at %p is new, although released buffers were available", k, x, p);
    }
    release_batch(&b);
  }
  for (int k = 6; k <= 10; k++)
    EXPECT(ctx.after[k - 1].buffers_allocated == ctx.after[4].buffers_allocated,
           "fill %d allocated buffers (%" PRIu64 " -> %" PRIu64 ") although released ones were available", k,
           ctx.after[4].buffers_allocated, ctx.after[k - 1].buffers_allocated);
  ok("after releasing batch 2, reuse resumes: batches 6..10 allocate nothing and reuse earlier buffer addresses");
  st.release(&st);
}

/* A consumer keeps one column of a batch and releases the rest: the other columns are
   reused, the kept one is left alone. */
static void test_keep_one_column(void) {
  FillCtx ctx = {.cols = reuse_cols, .ncols = N_REUSE, .gen = gen_reuse, .total_rows = 4 * REUSE_BATCH};
  struct ArrowArrayStream st;
  open_stream(REUSE, REUSE_BATCH, true, &ctx, &st);
  struct ArrowArray b1, b;
  next(&st, &b1);
  Addrs cols1[N_REUSE];
  for (int c = 0; c < N_REUSE; c++) {
    memset(&cols1[c], 0, sizeof cols1[c]);
    collect(b1.children[c], &cols1[c]);
  }
  struct ArrowArray kept = *b1.children[R_TAGS]; /* move the column out */
  b1.children[R_TAGS]->release = NULL;
  release_batch(&b1);
  for (int k = 2; k <= 4; k++) {
    next(&st, &b);
    char what[64];
    snprintf(what, sizeof what, "batch %d (tags of batch 1 kept)", k);
    check_batch(&b, reuse_cols, N_REUSE, gen_reuse, (int64_t)(k - 1) * REUSE_BATCH, REUSE_BATCH, what);
    for (int c = 0; c < N_REUSE; c++) {
      Addrs now;
      memset(&now, 0, sizeof now);
      collect(b.children[c], &now);
      int d;
      if (c == R_TAGS)
        EXPECT(disjoint_addrs(&now, &cols1[c]), "batch %d: column tags shares a buffer with the kept one", k);
      else
        EXPECT(same_addrs(&now, &cols1[c], &d), "batch %d: column %s buffer %d not reused from batch 1", k,
               reuse_cols[c]->name, d);
    }
    release_batch(&b);
    /* the kept column is intact */
    check_shape(&kept, reuse_cols[R_TAGS], "kept tags");
    for (int64_t r = 0; r < REUSE_BATCH; r++) {
      size_t mark = arena_used;
      Val v;
      gen_reuse(R_TAGS, r, &v);
      check_val(&kept, reuse_cols[R_TAGS], r, &v, "kept tags", r);
      arena_used = mark;
    }
  }
  ok("keeping one column (tags) of batch 1: the other columns reuse their buffers, tags gets new ones, the kept "
     "column reads back unchanged");
  release_batch(&kept);
  st.release(&st);
  CHECK(quiver_live_arrays() == 0, "kept column released: nothing live");
}

static void test_stream_errors(void) {
  FillCtx ctx = {.cols = reuse_cols, .ncols = N_REUSE, .gen = gen_reuse, .total_rows = 1000, .fail_on_call = 2,
                 .fail_message = "disk on fire at row 256"};
  struct ArrowArrayStream st;
  open_stream(REUSE, REUSE_BATCH, true, &ctx, &st);
  struct ArrowArray b, held;
  next(&st, &held);
  memset(&b, 0, sizeof b);
  int rc = st.get_next(&st, &b);
  const char *m = st.get_last_error(&st);
  CHECK(rc == EIO, "fill returning non-zero: get_next -> EIO (%d)", rc);
  CHECK(m && strstr(m, "disk on fire at row 256"), "get_last_error carries the message of quiver_writer_set_error "
                                                   "(\"%s\")", m ? m : "(null)");
  CHECK(b.release == NULL, "no array is handed out on error");
  memset(&b, 0, sizeof b);
  rc = st.get_next(&st, &b);
  CHECK(rc == EIO && ctx.calls == 2, "the error is sticky: a second get_next -> EIO (%d) without calling fill (%d calls)",
        rc, ctx.calls);
  st.release(&st);
  CHECK(ctx.released == 1, "release_ctx called on an errored stream");
  check_batch(&held, reuse_cols, N_REUSE, gen_reuse, 0, REUSE_BATCH, "batch held across the stream's release");
  ok("a batch from get_next stays valid after the stream is released");
  release_batch(&held);

  /* failure without a message */
  FillCtx c2 = {.cols = reuse_cols, .ncols = N_REUSE, .gen = gen_reuse, .total_rows = 10, .fail_on_call = 1};
  open_stream(REUSE, 16, true, &c2, &st);
  memset(&b, 0, sizeof b);
  rc = st.get_next(&st, &b);
  CHECK(rc == EIO, "fill failing without quiver_writer_set_error: get_next -> EIO (%d)", rc);
  st.release(&st);

  /* bad arguments of quiver_stream_new */
  struct ArrowSchema s;
  OKW(NULL, quiver_schema_parse("a: int32", &s));
  memset(&st, 0, sizeof st);
  rc = quiver_stream_new(&s, NULL, NULL, NULL, NULL, &st);
  CHECK(rc == EINVAL && st.release == NULL, "quiver_stream_new with a NULL fill -> EINVAL (%d)", rc);
  rc = quiver_stream_new(&s, NULL, fill, &c2, NULL, NULL);
  CHECK(rc == EINVAL, "quiver_stream_new with a NULL out -> EINVAL (%d)", rc);
  s.release(&s);
}

static void test_more_contract(void) {
  struct ArrowSchema s;
  QuiverWriter *w = NULL;
  OKW(NULL, quiver_schema_parse(REUSE, &s));
  OKW(NULL, quiver_writer_new(&s, NULL, &w));
  CHECK(quiver_writer_last_error(w) == NULL, "a fresh writer has no last error (NULL)");
  quiver_writer_free(w);

  struct QuiverOptions o;
  quiver_options_default(&o);
  o.batch_rows = 0;
  w = NULL;
  int rc = quiver_writer_new(&s, &o, &w);
  CHECK(rc == EINVAL && w == NULL, "batch_rows = 0 -> EINVAL (%d)", rc);
  s.release(&s);

  /* a stream whose first fill writes nothing is empty */
  FillCtx ctx = {.cols = reuse_cols, .ncols = N_REUSE, .gen = gen_reuse, .total_rows = 0};
  struct ArrowArrayStream st;
  open_stream(REUSE, 16, true, &ctx, &st);
  struct ArrowArray b;
  next(&st, &b);
  CHECK(b.release == NULL && ctx.calls == 1, "empty stream: the first get_next is the end (0, released array)");
  st.release(&st);
}

/* Batches released on another thread while the main thread pulls the next one. */
typedef struct Releaser {
  struct ArrowArray batch;
} Releaser;
static int release_on_thread(void *arg) {
  Releaser *r = arg;
  r->batch.release(&r->batch);
  return r->batch.release == NULL ? 0 : 1;
}

static void test_release_on_other_thread(void) {
  enum { NB = 40 };
  FillCtx ctx = {.cols = reuse_cols, .ncols = N_REUSE, .gen = gen_reuse, .total_rows = NB * REUSE_BATCH};
  struct ArrowArrayStream st;
  open_stream(REUSE, REUSE_BATCH, true, &ctx, &st);
  static Releaser rel[NB];
  thrd_t t[NB];
  for (int k = 0; k < NB; k++) {
    next(&st, &rel[k].batch);
    EXPECT(rel[k].batch.release != NULL, "stream ended early at batch %d", k + 1);
    check_batch(&rel[k].batch, reuse_cols, N_REUSE, gen_reuse, (int64_t)k * REUSE_BATCH, REUSE_BATCH,
                "batch released on another thread");
    /* the moved struct is released on a thread while get_next runs here */
    EXPECT(thrd_create(&t[k], release_on_thread, &rel[k]) == thrd_success, "thrd_create");
    if (k >= 2) {
      int res = 1;
      EXPECT(thrd_join(t[k - 2], &res) == thrd_success && res == 0, "release thread %d failed", k - 1);
    }
  }
  for (int k = NB - 2; k < NB; k++) {
    int res = 1;
    EXPECT(thrd_join(t[k], &res) == thrd_success && res == 0, "release thread %d failed", k + 1);
  }
  struct ArrowArray end;
  next(&st, &end);
  EXPECT(end.release == NULL, "stream did not end");
  st.release(&st);
  CHECK(quiver_live_arrays() == 0, "%d batches released on other threads, concurrently with get_next: values intact, "
                                   "nothing live (%" PRId64 ")", NB, quiver_live_arrays());
  CHECK(ctx.after[NB - 1].buffers_reused > 0, "buffers released on other threads were reused (%" PRIu64 ")",
        ctx.after[NB - 1].buffers_reused);
}

static void test_writer_free_keeps_batches(void) {
  struct ArrowSchema s;
  QuiverWriter *w;
  OKW(NULL, quiver_schema_parse(REUSE, &s));
  OKW(NULL, quiver_writer_new(&s, NULL, &w));
  s.release(&s);
  for (int64_t r = 0; r < 100; r++) OKW(w, write_row(w, reuse_cols, N_REUSE, gen_reuse, r));
  struct ArrowArray b;
  OKW(w, quiver_writer_finish(w, &b));
  quiver_writer_free(w);
  check_batch(&b, reuse_cols, N_REUSE, gen_reuse, 0, 100, "batch after quiver_writer_free");
  ok("a finished batch stays valid after quiver_writer_free");
  release_batch(&b);
}

/* The memory limit: a value past it is ENOMEM with a message naming it, the
   row goes on with a small value, and the batch holds what was committed. */
static void test_memory_limit(void) {
  struct ArrowSchema s;
  QuiverWriter *w = NULL;
  OKW(NULL, quiver_schema_parse("a: int64, s: utf8", &s));
  OKW(NULL, quiver_writer_new(&s, NULL, &w));
  s.release(&s);
  int rc = quiver_writer_set_memory_limit(w, -1);
  CHECK(rc == EINVAL, "quiver_writer_set_memory_limit(-1) -> EINVAL (%d)", rc);
  OKW(w, quiver_writer_set_memory_limit(w, 1 << 16));
  static uint8_t big[1 << 17];
  memset(big, 'x', sizeof big);
  OKW(w, quiver_append_i64(w, 0, 7));
  rc = quiver_append_bytes(w, 1, big, sizeof big);
  CHECK(rc == ENOMEM && strstr(werr(w), "memory limit of 65536 bytes") != NULL,
        "a value past the memory limit -> ENOMEM naming the limit (%d: %s)", rc, werr(w));
  OKW(w, quiver_append_bytes(w, 1, big, 10));
  OKW(w, quiver_end_row(w));
  struct ArrowArray b;
  OKW(w, quiver_writer_finish(w, &b));
  const struct ArrowArray *col = b.children[1];
  const int32_t *off = (const int32_t *)col->buffers[1];
  CHECK(b.length == 1 && off[col->offset + 1] - off[col->offset] == 10,
        "after the refusal the row holds the small value (length %" PRId64 ")", b.length);
  b.release(&b);
  quiver_writer_free(w);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--quiet") == 0) quiet = true;
  build_all_types();
  build_reuse();

  test_basics();
  test_schema_parse();
  test_row_path();
  test_errors();
  test_hand_schema_columns();
  test_stream_all_types();
  test_reuse_release_each();
  test_no_recycle();
  test_reuse_hold();
  test_keep_one_column();
  test_stream_errors();
  test_writer_free_keeps_batches();
  test_more_contract();
  test_release_on_other_thread();
  test_memory_limit();

  CHECK(quiver_live_arrays() == 0, "quiver_live_arrays() == 0 at the end (%" PRId64 ")", quiver_live_arrays());
  printf("consumer: all %d checks passed\n", n_ok);
  return 0;
}
