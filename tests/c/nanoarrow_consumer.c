/* nanoarrow as a consumer of quiver (bundled nanoarrow.c compiled in).
 *
 * The expected rows are built with nanoarrow's appenders. A fill callback writes the
 * same rows into quiver's row path by walking the expected arrays through
 * ArrowArrayView. Every batch of the stream is checked with
 * ArrowArrayViewInitFromSchema + ArrowArrayViewSetArray +
 * ArrowArrayViewValidate(NANOARROW_VALIDATION_LEVEL_FULL), value by value through the
 * ArrowArrayViewGet*Unsafe / IsNull / ListChildOffset readers, and byte for byte with
 * ArrowArrayViewCompare(NANOARROW_COMPARE_IDENTICAL) (nanoarrow also writes zeros under
 * nulls). Then the expected arrays go through quiver_write_array, whole and sliced.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nanoarrow/nanoarrow.h"
#include "quiver.h"

static int n_ok;

static void ok(const char *what) { printf("ok %d - %s\n", ++n_ok, what); }

static _Noreturn void failf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("not ok %d - ", n_ok + 1);
  vprintf(fmt, ap);
  putchar('\n');
  va_end(ap);
  fflush(stdout);
  exit(1);
}

static struct ArrowError error;

static void na_check(int rc, const char *expr) {
  if (rc != NANOARROW_OK) failf("%s failed (%d): %s", expr, rc, error.message);
}
#define NA_OK(expr) na_check((expr), #expr)

/* ------------------------------------------------------------ expected rows, by nanoarrow */

static const char *SCHEMA =
    "id: int64 not null, name: utf8, score: float64, flag: bool, small: int8, i16: int16, u16: uint16,"
    " u32: uint32, u64: uint64, half: float16, f32: float32, day: date32, ts: timestamp(ms, \"UTC\"),"
    " t64: time64(us), d32: decimal32(9, 3), d128: decimal128(20, 4), d256: decimal256(50, 0),"
    " iv: interval(month_day_nano), dt: interval(day_time), ym: interval(year_month),"
    " blob: large_binary, bin: binary, code: fixed_size_binary(2), nothing: null,"
    " tags: list<int32>, pt: struct<x: float64, label: large_utf8> not null, m: map<utf8, int16>,"
    " fsl: fixed_size_list<uint8, 2> not null, ll: large_list<utf8>,"
    " nn: list<struct<a: int32, b: list<utf8>> not null>";

enum { N_COLS = 30 };

/* Structs and fixed-size lists are never null here: nanoarrow gives a null struct valid,
   zero children where quiver gives null ones, which the byte comparison would flag. */
static void append_row(struct ArrowArray *b, int64_t r) {
  struct ArrowArray **c = b->children;
  char s[64];
  int k = 0;
#define COL (c[k++])
#define NUL(cond) ((cond) ? (NA_OK(ArrowArrayAppendNull(COL, 1)), 1) : 0)
  NA_OK(ArrowArrayAppendInt(COL, r * 11 - 500));
  snprintf(s, sizeof s, "name %" PRId64 " \xc3\xa9", r);
  if (!NUL(r % 7 == 3)) NA_OK(ArrowArrayAppendString(COL, ArrowCharView(r % 9 == 0 ? "" : s)));
  if (!NUL(r % 5 == 0)) NA_OK(ArrowArrayAppendDouble(COL, (double)r * 0.125 - 3));
  if (!NUL(r % 11 == 5)) NA_OK(ArrowArrayAppendInt(COL, r % 2));
  if (!NUL(r % 6 == 1)) NA_OK(ArrowArrayAppendInt(COL, (int8_t)(r * 5)));
  if (!NUL(r % 4 == 2)) NA_OK(ArrowArrayAppendInt(COL, (int16_t)(r * 401)));
  if (!NUL(r % 8 == 7)) NA_OK(ArrowArrayAppendUInt(COL, (uint16_t)(r * 77)));
  if (!NUL(r % 9 == 2)) NA_OK(ArrowArrayAppendUInt(COL, 4000000000u - (uint32_t)r));
  if (!NUL(r % 10 == 4)) NA_OK(ArrowArrayAppendUInt(COL, UINT64_MAX - (uint64_t)r * 3));
  if (!NUL(r % 8 == 2)) NA_OK(ArrowArrayAppendDouble(COL, (double)(r % 64) * 0.5 - 8)); /* exact in half */
  if (!NUL(r % 12 == 7)) NA_OK(ArrowArrayAppendDouble(COL, (double)(float)((double)r * 0.3)));
  if (!NUL(r % 5 == 3)) NA_OK(ArrowArrayAppendInt(COL, 19000 + r));
  if (!NUL(r % 4 == 3)) NA_OK(ArrowArrayAppendInt(COL, 1700000000000LL + r * 999));
  if (!NUL(r % 3 == 1)) NA_OK(ArrowArrayAppendInt(COL, r * 123456789LL % 86400000000LL));
  {
    struct ArrowDecimal d;
    ArrowDecimalInit(&d, 32, 9, 3);
    ArrowDecimalSetInt(&d, r * 3001 - 100000);
    if (!NUL(r % 7 == 1)) NA_OK(ArrowArrayAppendDecimal(COL, &d));
    ArrowDecimalInit(&d, 128, 20, 4);
    ArrowDecimalSetInt(&d, r * 1234567891LL - 77);
    if (r % 2) ArrowDecimalNegate(&d);
    if (!NUL(r % 6 == 4)) NA_OK(ArrowArrayAppendDecimal(COL, &d));
    ArrowDecimalInit(&d, 256, 50, 0);
    ArrowDecimalSetInt(&d, r);
    d.words[1] = (uint64_t)r * 0x9E3779B97F4A7C15ull;
    d.words[2] = (uint64_t)r * 1000; /* |value| < 2^149 < 10^50 */
    if (r % 3 == 0) ArrowDecimalNegate(&d);
    if (!NUL(r % 7 == 0)) NA_OK(ArrowArrayAppendDecimal(COL, &d));
  }
  {
    struct ArrowInterval iv;
    ArrowIntervalInit(&iv, NANOARROW_TYPE_INTERVAL_MONTH_DAY_NANO);
    iv.months = (int32_t)(r % 12);
    iv.days = (int32_t)-r;
    iv.ns = r * 1000000007LL;
    if (!NUL(r % 6 == 1)) NA_OK(ArrowArrayAppendInterval(COL, &iv));
    ArrowIntervalInit(&iv, NANOARROW_TYPE_INTERVAL_DAY_TIME);
    iv.days = (int32_t)r;
    iv.ms = (int32_t)(r * 1000 + 1);
    if (!NUL(r % 6 == 2)) NA_OK(ArrowArrayAppendInterval(COL, &iv));
    ArrowIntervalInit(&iv, NANOARROW_TYPE_INTERVAL_MONTHS);
    iv.months = (int32_t)(r - 30);
    if (!NUL(r % 6 == 3)) NA_OK(ArrowArrayAppendInterval(COL, &iv));
  }
  {
    uint8_t bytes[8];
    for (int j = 0; j < 8; j++) bytes[j] = (uint8_t)(r * 13 + j);
    struct ArrowBufferView bv = {{bytes}, (int64_t)(r % 7)};
    if (!NUL(r % 8 == 0)) NA_OK(ArrowArrayAppendBytes(COL, bv));
    bv.size_bytes = (int64_t)(r % 4);
    if (!NUL(r % 8 == 1)) NA_OK(ArrowArrayAppendBytes(COL, bv));
    bv.size_bytes = 2;
    if (!NUL(r % 5 == 2)) NA_OK(ArrowArrayAppendBytes(COL, bv));
  }
  NA_OK(ArrowArrayAppendNull(COL, 1)); /* nothing: null */
  { /* tags: list<int32> */
    struct ArrowArray *l = COL;
    if (r % 7 == 6) NA_OK(ArrowArrayAppendNull(l, 1));
    else {
      for (int64_t j = 0; j < r % 4; j++) {
        if ((r + j) % 5 == 3) NA_OK(ArrowArrayAppendNull(l->children[0], 1));
        else NA_OK(ArrowArrayAppendInt(l->children[0], r * 10 + j));
      }
      NA_OK(ArrowArrayFinishElement(l));
    }
  }
  { /* pt: struct<x: float64, label: large_utf8> not null */
    struct ArrowArray *st = COL;
    if (r % 4 == 1) NA_OK(ArrowArrayAppendNull(st->children[0], 1));
    else NA_OK(ArrowArrayAppendDouble(st->children[0], (double)r / 8));
    snprintf(s, sizeof s, "label-%" PRId64, r);
    if (r % 5 == 2) NA_OK(ArrowArrayAppendNull(st->children[1], 1));
    else NA_OK(ArrowArrayAppendString(st->children[1], ArrowCharView(s)));
    NA_OK(ArrowArrayFinishElement(st));
  }
  { /* m: map<utf8, int16> */
    struct ArrowArray *m = COL, *e = m->children[0];
    if (r % 10 == 7) NA_OK(ArrowArrayAppendNull(m, 1));
    else {
      for (int64_t j = 0; j < r % 3; j++) {
        snprintf(s, sizeof s, "key%" PRId64, j);
        NA_OK(ArrowArrayAppendString(e->children[0], ArrowCharView(s)));
        if (j == 1) NA_OK(ArrowArrayAppendNull(e->children[1], 1));
        else NA_OK(ArrowArrayAppendInt(e->children[1], (int16_t)(r - j)));
        NA_OK(ArrowArrayFinishElement(e));
      }
      NA_OK(ArrowArrayFinishElement(m));
    }
  }
  { /* fsl: fixed_size_list<uint8, 2> not null */
    struct ArrowArray *f = COL;
    NA_OK(ArrowArrayAppendUInt(f->children[0], (uint8_t)r));
    if (r % 3 == 2) NA_OK(ArrowArrayAppendNull(f->children[0], 1));
    else NA_OK(ArrowArrayAppendUInt(f->children[0], (uint8_t)(255 - r)));
    NA_OK(ArrowArrayFinishElement(f));
  }
  { /* ll: large_list<utf8> */
    struct ArrowArray *l = COL;
    if (r % 6 == 5) NA_OK(ArrowArrayAppendNull(l, 1));
    else {
      for (int64_t j = 0; j < r % 3; j++) {
        snprintf(s, sizeof s, "ll%" PRId64 ".%" PRId64, r, j);
        if ((r + j) % 4 == 0) NA_OK(ArrowArrayAppendNull(l->children[0], 1));
        else NA_OK(ArrowArrayAppendString(l->children[0], ArrowCharView(s)));
      }
      NA_OK(ArrowArrayFinishElement(l));
    }
  }
  { /* nn: list<struct<a: int32, b: list<utf8>> not null> */
    struct ArrowArray *l = COL, *st = l->children[0];
    if (r % 9 == 8) NA_OK(ArrowArrayAppendNull(l, 1));
    else {
      for (int64_t j = 0; j < r % 3; j++) {
        if ((r + j) % 3 == 0) NA_OK(ArrowArrayAppendNull(st->children[0], 1));
        else NA_OK(ArrowArrayAppendInt(st->children[0], (int32_t)(r * 100 + j)));
        struct ArrowArray *bl = st->children[1];
        if ((r + j) % 4 == 1) NA_OK(ArrowArrayAppendNull(bl, 1));
        else {
          for (int64_t q = 0; q < (r + j) % 3; q++) {
            snprintf(s, sizeof s, "b%" PRId64, r + j + q);
            NA_OK(ArrowArrayAppendString(bl->children[0], ArrowCharView(s)));
          }
          NA_OK(ArrowArrayFinishElement(bl));
        }
        NA_OK(ArrowArrayFinishElement(st));
      }
      NA_OK(ArrowArrayFinishElement(l));
    }
  }
#undef COL
#undef NUL
  if (k != N_COLS) failf("append_row filled %d of %d columns", k, N_COLS);
  NA_OK(ArrowArrayFinishElement(b));
}

static void build_expected(struct ArrowArray *out, const struct ArrowSchema *schema, int64_t first, int64_t n) {
  NA_OK(ArrowArrayInitFromSchema(out, schema, &error));
  NA_OK(ArrowArrayStartAppending(out));
  for (int64_t r = first; r < first + n; r++) append_row(out, r);
  NA_OK(ArrowArrayFinishBuildingDefault(out, &error));
}

/* ------------------------------------------------------------ array view -> quiver row path */

static uint32_t subtree_size(const struct ArrowSchema *s) {
  uint32_t n = 1;
  for (int64_t i = 0; i < s->n_children; i++) n += subtree_size(s->children[i]);
  return n;
}

static int append_from_view(QuiverWriter *w, const struct ArrowArrayView *v, const struct ArrowSchema *s, int64_t i,
                            uint32_t node) {
  if (ArrowArrayViewIsNull(v, i)) return quiver_append_null(w, node);
  int64_t at = v->offset + i;
  const uint8_t *data = v->buffer_views[1].data.as_uint8;
  struct ArrowSchemaView sv;
  NA_OK(ArrowSchemaViewInit(&sv, s, &error));
  int rc;
  switch (v->storage_type) {
    case NANOARROW_TYPE_BOOL: return quiver_append_bool(w, node, ArrowArrayViewGetIntUnsafe(v, i) != 0);
    case NANOARROW_TYPE_INT8: return quiver_append_i8(w, node, (int8_t)ArrowArrayViewGetIntUnsafe(v, i));
    case NANOARROW_TYPE_INT16: return quiver_append_i16(w, node, (int16_t)ArrowArrayViewGetIntUnsafe(v, i));
    case NANOARROW_TYPE_INT32: return quiver_append_i32(w, node, (int32_t)ArrowArrayViewGetIntUnsafe(v, i));
    case NANOARROW_TYPE_INT64: return quiver_append_i64(w, node, ArrowArrayViewGetIntUnsafe(v, i));
    case NANOARROW_TYPE_UINT8: return quiver_append_u8(w, node, (uint8_t)ArrowArrayViewGetUIntUnsafe(v, i));
    case NANOARROW_TYPE_UINT16: return quiver_append_u16(w, node, (uint16_t)ArrowArrayViewGetUIntUnsafe(v, i));
    case NANOARROW_TYPE_UINT32: return quiver_append_u32(w, node, (uint32_t)ArrowArrayViewGetUIntUnsafe(v, i));
    case NANOARROW_TYPE_UINT64: return quiver_append_u64(w, node, ArrowArrayViewGetUIntUnsafe(v, i));
    case NANOARROW_TYPE_HALF_FLOAT: return quiver_append_f32(w, node, (float)ArrowArrayViewGetDoubleUnsafe(v, i));
    case NANOARROW_TYPE_FLOAT: return quiver_append_f32(w, node, (float)ArrowArrayViewGetDoubleUnsafe(v, i));
    case NANOARROW_TYPE_DOUBLE: return quiver_append_f64(w, node, ArrowArrayViewGetDoubleUnsafe(v, i));
    case NANOARROW_TYPE_DECIMAL32:
    case NANOARROW_TYPE_DECIMAL64:
    case NANOARROW_TYPE_DECIMAL128:
    case NANOARROW_TYPE_DECIMAL256: {
      struct ArrowDecimal d;
      uint8_t bytes[32];
      ArrowDecimalInit(&d, sv.decimal_bitwidth, sv.decimal_precision, sv.decimal_scale);
      ArrowArrayViewGetDecimalUnsafe(v, i, &d);
      ArrowDecimalGetBytes(&d, bytes);
      return quiver_append_decimal(w, node, bytes, (size_t)sv.decimal_bitwidth / 8);
    }
    case NANOARROW_TYPE_INTERVAL_MONTHS: return quiver_append_i32(w, node, (int32_t)ArrowArrayViewGetIntUnsafe(v, i));
    case NANOARROW_TYPE_INTERVAL_DAY_TIME: return quiver_append_bytes(w, node, data + at * 8, 8);
    case NANOARROW_TYPE_INTERVAL_MONTH_DAY_NANO: return quiver_append_bytes(w, node, data + at * 16, 16);
    case NANOARROW_TYPE_STRING:
    case NANOARROW_TYPE_LARGE_STRING:
    case NANOARROW_TYPE_BINARY:
    case NANOARROW_TYPE_LARGE_BINARY:
    case NANOARROW_TYPE_FIXED_SIZE_BINARY: {
      struct ArrowBufferView b = ArrowArrayViewGetBytesUnsafe(v, i);
      return quiver_append_bytes(w, node, b.data.as_uint8, (size_t)b.size_bytes);
    }
    case NANOARROW_TYPE_LIST:
    case NANOARROW_TYPE_LARGE_LIST:
    case NANOARROW_TYPE_MAP:
    case NANOARROW_TYPE_FIXED_SIZE_LIST: {
      int64_t start, end;
      if (v->storage_type == NANOARROW_TYPE_FIXED_SIZE_LIST) start = at * sv.fixed_size, end = start + sv.fixed_size;
      else start = ArrowArrayViewListChildOffset(v, at), end = ArrowArrayViewListChildOffset(v, at + 1);
      if ((rc = quiver_begin(w, node)) != 0) return rc;
      for (int64_t k = start; k < end; k++)
        if ((rc = append_from_view(w, v->children[0], s->children[0], k, node + 1)) != 0) return rc;
      return quiver_end(w, node);
    }
    case NANOARROW_TYPE_STRUCT: {
      if ((rc = quiver_begin(w, node)) != 0) return rc;
      uint32_t child = node + 1;
      for (int64_t k = 0; k < v->n_children; k++) {
        if ((rc = append_from_view(w, v->children[k], s->children[k], at, child)) != 0) return rc;
        child += subtree_size(s->children[k]);
      }
      return quiver_end(w, node);
    }
    default: failf("append_from_view: storage type %s", ArrowTypeString(v->storage_type));
  }
}

/* ------------------------------------------------------------ value comparison through the readers */

/* Value ia of `got` equals value ie of `want` (same type `s`). */
static void compare_value(const struct ArrowArrayView *got, const struct ArrowArrayView *want,
                          const struct ArrowSchema *s, int64_t ia, int64_t ie, const char *path, int64_t row) {
  int8_t gn = ArrowArrayViewIsNull(got, ia), wn = ArrowArrayViewIsNull(want, ie);
  if (gn != wn) failf("%s row %" PRId64 ": null %d, expected %d", path, row, gn, wn);
  if (gn) return;
  struct ArrowSchemaView sv;
  NA_OK(ArrowSchemaViewInit(&sv, s, &error));
  char sub[256];
  switch (got->storage_type) {
    case NANOARROW_TYPE_NA: return;
    case NANOARROW_TYPE_BOOL:
    case NANOARROW_TYPE_INT8:
    case NANOARROW_TYPE_INT16:
    case NANOARROW_TYPE_INT32:
    case NANOARROW_TYPE_INT64:
    case NANOARROW_TYPE_INTERVAL_MONTHS: {
      int64_t g = ArrowArrayViewGetIntUnsafe(got, ia), x = ArrowArrayViewGetIntUnsafe(want, ie);
      if (g != x) failf("%s row %" PRId64 ": %" PRId64 ", expected %" PRId64, path, row, g, x);
      return;
    }
    case NANOARROW_TYPE_UINT8:
    case NANOARROW_TYPE_UINT16:
    case NANOARROW_TYPE_UINT32:
    case NANOARROW_TYPE_UINT64: {
      uint64_t g = ArrowArrayViewGetUIntUnsafe(got, ia), x = ArrowArrayViewGetUIntUnsafe(want, ie);
      if (g != x) failf("%s row %" PRId64 ": %" PRIu64 ", expected %" PRIu64, path, row, g, x);
      return;
    }
    case NANOARROW_TYPE_HALF_FLOAT:
    case NANOARROW_TYPE_FLOAT:
    case NANOARROW_TYPE_DOUBLE: {
      double g = ArrowArrayViewGetDoubleUnsafe(got, ia), x = ArrowArrayViewGetDoubleUnsafe(want, ie);
      if (memcmp(&g, &x, sizeof g) != 0) failf("%s row %" PRId64 ": %.17g, expected %.17g", path, row, g, x);
      return;
    }
    case NANOARROW_TYPE_DECIMAL32:
    case NANOARROW_TYPE_DECIMAL64:
    case NANOARROW_TYPE_DECIMAL128:
    case NANOARROW_TYPE_DECIMAL256: {
      struct ArrowDecimal g, x;
      ArrowDecimalInit(&g, sv.decimal_bitwidth, sv.decimal_precision, sv.decimal_scale);
      ArrowDecimalInit(&x, sv.decimal_bitwidth, sv.decimal_precision, sv.decimal_scale);
      ArrowArrayViewGetDecimalUnsafe(got, ia, &g);
      ArrowArrayViewGetDecimalUnsafe(want, ie, &x);
      if (memcmp(g.words, x.words, sizeof g.words) != 0) failf("%s row %" PRId64 ": decimal differs", path, row);
      return;
    }
    case NANOARROW_TYPE_INTERVAL_DAY_TIME:
    case NANOARROW_TYPE_INTERVAL_MONTH_DAY_NANO: {
      struct ArrowInterval g, x;
      ArrowIntervalInit(&g, got->storage_type);
      ArrowIntervalInit(&x, got->storage_type);
      ArrowArrayViewGetIntervalUnsafe(got, ia, &g);
      ArrowArrayViewGetIntervalUnsafe(want, ie, &x);
      if (g.months != x.months || g.days != x.days || g.ms != x.ms || g.ns != x.ns)
        failf("%s row %" PRId64 ": interval differs", path, row);
      return;
    }
    case NANOARROW_TYPE_STRING:
    case NANOARROW_TYPE_LARGE_STRING:
    case NANOARROW_TYPE_BINARY:
    case NANOARROW_TYPE_LARGE_BINARY:
    case NANOARROW_TYPE_FIXED_SIZE_BINARY: {
      struct ArrowStringView g = ArrowArrayViewGetStringUnsafe(got, ia), x = ArrowArrayViewGetStringUnsafe(want, ie);
      if (g.size_bytes != x.size_bytes || memcmp(g.data, x.data, (size_t)g.size_bytes) != 0)
        failf("%s row %" PRId64 ": \"%.*s\", expected \"%.*s\"", path, row, (int)g.size_bytes, g.data,
              (int)x.size_bytes, x.data);
      return;
    }
    case NANOARROW_TYPE_LIST:
    case NANOARROW_TYPE_LARGE_LIST:
    case NANOARROW_TYPE_MAP:
    case NANOARROW_TYPE_FIXED_SIZE_LIST: {
      int64_t gs, ge, xs, xe;
      if (got->storage_type == NANOARROW_TYPE_FIXED_SIZE_LIST) {
        gs = (got->offset + ia) * sv.fixed_size, ge = gs + sv.fixed_size;
        xs = (want->offset + ie) * sv.fixed_size, xe = xs + sv.fixed_size;
      } else {
        gs = ArrowArrayViewListChildOffset(got, got->offset + ia);
        ge = ArrowArrayViewListChildOffset(got, got->offset + ia + 1);
        xs = ArrowArrayViewListChildOffset(want, want->offset + ie);
        xe = ArrowArrayViewListChildOffset(want, want->offset + ie + 1);
      }
      if (ge - gs != xe - xs) failf("%s row %" PRId64 ": %" PRId64 " items, expected %" PRId64, path, row, ge - gs, xe - xs);
      snprintf(sub, sizeof sub, "%s.%s", path, s->children[0]->name);
      for (int64_t k = 0; k < ge - gs; k++)
        compare_value(got->children[0], want->children[0], s->children[0], gs + k, xs + k, sub, row);
      return;
    }
    case NANOARROW_TYPE_STRUCT:
      for (int64_t k = 0; k < got->n_children; k++) {
        snprintf(sub, sizeof sub, "%s.%s", path, s->children[k]->name);
        compare_value(got->children[k], want->children[k], s->children[k], got->offset + ia, want->offset + ie, sub,
                      row);
      }
      return;
    default: failf("compare_value: storage type %s", ArrowTypeString(got->storage_type));
  }
}

/* A validity bitmap without nulls is the same as none: drop it before the byte comparison. */
static void drop_empty_validity(struct ArrowArrayView *v) {
  if (v->storage_type != NANOARROW_TYPE_NA && v->null_count == 0) {
    v->buffer_views[0].data.data = NULL;
    v->buffer_views[0].size_bytes = 0;
  }
  for (int64_t k = 0; k < v->n_children; k++) drop_empty_validity(v->children[k]);
}

/* nanoarrow's bitmap appends leave set bits past the end of the last byte; quiver zeroes
   them. Clear them in nanoarrow's (our own) buffers so the byte comparison checks the
   rest, quiver's zero tail bits included. */
static void clear_tail_bits(struct ArrowArrayView *v) {
  int64_t end = v->offset + v->length;
  for (int j = 0; j < 2; j++) {
    if (j == 1 && v->storage_type != NANOARROW_TYPE_BOOL) break;
    uint8_t *b = (uint8_t *)v->buffer_views[j].data.data;
    if (b == NULL || end % 8 == 0 || v->buffer_views[j].size_bytes < end / 8 + 1) continue;
    b[end / 8] &= (uint8_t)((1u << (end % 8)) - 1);
  }
  for (int64_t k = 0; k < v->n_children; k++) clear_tail_bits(v->children[k]);
}

/* got: a batch from quiver. Validates it at full level, compares it with want (rows
   [0, n) of want, starting at want_first) through the readers, and, when the rows line
   up, byte for byte. */
static void check_batch(const struct ArrowArray *got, const struct ArrowSchema *schema, const struct ArrowArray *want,
                        int64_t want_first, const char *what, int64_t row0, int identical) {
  struct ArrowArrayView gv, wv;
  NA_OK(ArrowArrayViewInitFromSchema(&gv, schema, &error));
  NA_OK(ArrowArrayViewInitFromSchema(&wv, schema, &error));
  if (ArrowArrayViewSetArray(&gv, got, &error) != NANOARROW_OK) failf("%s: ArrowArrayViewSetArray: %s", what, error.message);
  if (ArrowArrayViewValidate(&gv, NANOARROW_VALIDATION_LEVEL_FULL, &error) != NANOARROW_OK)
    failf("%s: ArrowArrayViewValidate(FULL): %s", what, error.message);
  NA_OK(ArrowArrayViewSetArray(&wv, want, &error));
  if (gv.length + want_first > wv.length) failf("%s: %" PRId64 " rows, more than expected", what, gv.length);
  for (int64_t c = 0; c < gv.n_children; c++)
    for (int64_t i = 0; i < gv.length; i++)
      compare_value(gv.children[c], wv.children[c], schema->children[c], i, want_first + i, schema->children[c]->name,
                    row0 + i);
  if (identical) {
    clear_tail_bits(&wv);
    drop_empty_validity(&gv);
    drop_empty_validity(&wv);
    int same = 0;
    NA_OK(ArrowArrayViewCompare(&gv, &wv, NANOARROW_COMPARE_IDENTICAL, &same, &error));
    if (!same) failf("%s: not byte-identical to nanoarrow's build of the same rows: %s", what, error.message);
  }
  ArrowArrayViewReset(&gv);
  ArrowArrayViewReset(&wv);
}

/* ------------------------------------------------------------ the stream */

struct Ctx {
  struct ArrowArray expected; /* all rows */
  struct ArrowArrayView view;
  const struct ArrowSchema *schema;
  int64_t next;
  int released;
};

static int fill(void *vctx, QuiverWriter *w, int64_t max_rows) {
  struct Ctx *ctx = vctx;
  int64_t end = ctx->next + max_rows < ctx->view.length ? ctx->next + max_rows : ctx->view.length;
  for (; ctx->next < end; ctx->next++) {
    uint32_t node = 0;
    for (int64_t c = 0; c < ctx->view.n_children; c++) {
      int rc = append_from_view(w, ctx->view.children[c], ctx->schema->children[c], ctx->next, node);
      if (rc != 0) return rc;
      node += subtree_size(ctx->schema->children[c]);
    }
    int rc = quiver_end_row(w);
    if (rc != 0) return rc;
  }
  return 0;
}

static void release_ctx(void *vctx) { ((struct Ctx *)vctx)->released++; }

int main(void) {
  const int64_t rows = 700, batch_rows = 100;
  struct ArrowSchema schema;
  if (quiver_schema_parse(SCHEMA, &schema) != 0) failf("quiver_schema_parse: %s", quiver_last_error());
  {
    struct ArrowSchemaView sv;
    NA_OK(ArrowSchemaViewInit(&sv, schema.children[12], &error));
    if (sv.type != NANOARROW_TYPE_TIMESTAMP || sv.time_unit != NANOARROW_TIME_UNIT_MILLI || strcmp(sv.timezone, "UTC"))
      failf("ts: not timestamp(ms, UTC)");
    NA_OK(ArrowSchemaViewInit(&sv, schema.children[15], &error));
    if (sv.type != NANOARROW_TYPE_DECIMAL128 || sv.decimal_precision != 20 || sv.decimal_scale != 4)
      failf("d128: not decimal128(20, 4)");
    NA_OK(ArrowSchemaViewInit(&sv, schema.children[27], &error));
    if (sv.type != NANOARROW_TYPE_FIXED_SIZE_LIST || sv.fixed_size != 2) failf("fsl: not fixed_size_list<_, 2>");
    if (schema.n_children != N_COLS) failf("%" PRId64 " columns, expected %d", schema.n_children, N_COLS);
    ok("quiver_schema_parse: ArrowSchemaViewInit reads every field (timestamp unit and zone, decimal, fixed size)");
  }

  struct Ctx ctx = {.schema = &schema};
  build_expected(&ctx.expected, &schema, 0, rows);
  NA_OK(ArrowArrayViewInitFromSchema(&ctx.view, &schema, &error));
  NA_OK(ArrowArrayViewSetArray(&ctx.view, &ctx.expected, &error));
  ok("expected rows built with nanoarrow's appenders");

  struct QuiverOptions opts;
  quiver_options_default(&opts);
  opts.batch_rows = batch_rows;
  struct ArrowArrayStream stream;
  if (quiver_stream_new(&schema, &opts, fill, &ctx, release_ctx, &stream) != 0)
    failf("quiver_stream_new: %s", quiver_last_error());

  struct ArrowSchema stream_schema;
  NA_OK(ArrowArrayStreamGetSchema(&stream, &stream_schema, &error));
  int64_t seen = 0;
  int batches = 0;
  for (;;) {
    struct ArrowArray batch;
    if (ArrowArrayStreamGetNext(&stream, &batch, &error) != NANOARROW_OK)
      failf("get_next: %s", stream.get_last_error(&stream));
    if (batch.release == NULL) break;
    char what[64];
    snprintf(what, sizeof what, "stream batch %d", ++batches);
    if (batch.length != batch_rows) failf("%s: %" PRId64 " rows", what, batch.length);
    struct ArrowArray want;
    build_expected(&want, &schema, seen, batch.length);
    check_batch(&batch, &stream_schema, &want, 0, what, seen, 1);
    want.release(&want);
    seen += batch.length;
    batch.release(&batch);
  }
  if (seen != rows || batches != 7) failf("stream gave %" PRId64 " rows in %d batches", seen, batches);
  ok("7 stream batches: ArrowArrayViewValidate(FULL) passes, every value equal through the Get*Unsafe readers, "
     "buffers byte-identical to nanoarrow's");
  stream_schema.release(&stream_schema);
  stream.release(&stream);
  if (ctx.released != 1) failf("release_ctx called %d times", ctx.released);
  ok("stream released, release_ctx called once");

  /* column path: nanoarrow's arrays through quiver_write_array, whole and sliced */
  for (int pass = 0; pass < 2; pass++) {
    const int64_t off = pass ? 123 : 0, len = pass ? 250 : rows;
    QuiverWriter *w = NULL;
    if (quiver_writer_new(&schema, NULL, &w) != 0) failf("quiver_writer_new: %s", quiver_last_error());
    uint32_t node = 0;
    for (int64_t c = 0; c < schema.n_children; c++) {
      struct ArrowArray in = *ctx.expected.children[c]; /* borrowed view of the column */
      in.offset += off;
      in.length = len;
      if (pass) in.null_count = -1; /* unknown: the writer must count */
      int rc = quiver_write_array(w, node, &in, schema.children[c]);
      if (rc != 0) failf("quiver_write_array(%s): %d %s", schema.children[c]->name, rc, quiver_writer_last_error(w));
      node += subtree_size(schema.children[c]);
    }
    struct ArrowArray batch;
    if (quiver_writer_finish(w, &batch) != 0) failf("finish: %s", quiver_writer_last_error(w));
    check_batch(&batch, &schema, &ctx.expected, off, pass ? "sliced column batch" : "column batch", off, !pass);
    batch.release(&batch);
    quiver_writer_free(w);
    ok(pass ? "quiver_write_array of every column at offset 123 with null_count -1: valid, values equal"
            : "quiver_write_array of every column: valid at full level, values equal, byte-identical");
  }

  ArrowArrayViewReset(&ctx.view);
  ctx.expected.release(&ctx.expected);
  schema.release(&schema);
  if (quiver_live_arrays() != 0) failf("quiver_live_arrays() = %" PRId64 " at the end", quiver_live_arrays());
  ok("quiver_live_arrays() == 0 at the end");
  printf("nanoarrow_consumer: all %d checks passed\n", n_ok);
  return 0;
}
