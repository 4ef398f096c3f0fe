/* C API row path of libquiver (quiver_append_* + quiver_end_row per row, then
 * quiver_writer_finish and release) against nanoarrow's appenders
 * (ArrowArrayAppend* through ArrowArrayFinishBuildingDefault) and a memcpy of
 * the batch's bytes, on the data of benches/peers/bench_data.h. Each writer makes one
 * 8192-row batch per repetition; prints the median ns per row as
 *   RESULT c_<case> <writer> <ns_per_row>
 * Then row-major records (bench_records below): per-value appends and one
 * quiver_append_slots per record against one quiver_write_records per batch
 * and a memcpy of the records.                                                 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>

#include "nanoarrow/nanoarrow.h"
#include "quiver.h"
#include "bench_data.h"

#define CHECK(x)                                                                  \
  do {                                                                            \
    int rc_ = (x);                                                                \
    if (rc_ != 0) {                                                               \
      fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #x, rc_);     \
      exit(1);                                                                    \
    }                                                                             \
  } while (0)

static void quiver_rows(QuiverWriter *w, const struct bench_data *d) {
  for (int64_t i = 0; i < d->rows; i++) {
    bool ok = d->valid[i];
    switch (d->kind) {
      case K_I32: CHECK(ok ? quiver_append_i32(w, 0, d->i32s[i]) : quiver_append_null(w, 0)); break;
      case K_I64: CHECK(ok ? quiver_append_i64(w, 0, d->i64s[i]) : quiver_append_null(w, 0)); break;
      case K_F64: CHECK(ok ? quiver_append_f64(w, 0, d->f64s[i]) : quiver_append_null(w, 0)); break;
      case K_DEC18:
      case K_DEC38:
        CHECK(ok ? quiver_append_decimal(w, 0, (const uint8_t *)&d->i128s[i], 16) : quiver_append_null(w, 0));
        break;
      case K_STRUCT:
        CHECK(quiver_begin(w, 0));
        if (ok) {
          CHECK(quiver_append_i32(w, 1, d->i32s[i]));
          CHECK(quiver_append_i64(w, 2, d->i64s[i]));
          CHECK(quiver_append_f64(w, 3, d->f64s[i]));
          CHECK(quiver_append_i32(w, 4, d->dates[i]));
        } else {
          for (uint32_t c = 1; c <= 4; c++) CHECK(quiver_append_null(w, c));
        }
        CHECK(quiver_end(w, 0));
        break;
      case K_UTF8:
        if (ok) {
          int32_t s = d->str_offsets[i], e = d->str_offsets[i + 1];
          CHECK(quiver_append_bytes(w, 0, (const uint8_t *)d->str_data + s, (size_t)(e - s)));
        } else {
          CHECK(quiver_append_null(w, 0));
        }
        break;
      case K_LIST:
        if (ok) {
          CHECK(quiver_begin(w, 0));
          for (int32_t k = d->list_offsets[i]; k < d->list_offsets[i + 1]; k++)
            CHECK(quiver_append_i32(w, 1, d->list_values[k]));
          CHECK(quiver_end(w, 0));
        } else {
          CHECK(quiver_append_null(w, 0));
        }
        break;
    }
    CHECK(quiver_end_row(w));
  }
}

static void nanoarrow_rows(struct ArrowArray *a, const struct bench_data *d) {
  struct ArrowDecimal dec;
  if (d->kind == K_DEC18) ArrowDecimalInit(&dec, 128, 18, 2);
  if (d->kind == K_DEC38) ArrowDecimalInit(&dec, 128, 38, 10);
  for (int64_t i = 0; i < d->rows; i++) {
    bool ok = d->valid[i];
    switch (d->kind) {
      case K_I32: CHECK(ok ? ArrowArrayAppendInt(a, d->i32s[i]) : ArrowArrayAppendNull(a, 1)); break;
      case K_I64: CHECK(ok ? ArrowArrayAppendInt(a, d->i64s[i]) : ArrowArrayAppendNull(a, 1)); break;
      case K_F64: CHECK(ok ? ArrowArrayAppendDouble(a, d->f64s[i]) : ArrowArrayAppendNull(a, 1)); break;
      case K_DEC18:
      case K_DEC38:
        if (ok) {
          ArrowDecimalSetBytes(&dec, (const uint8_t *)&d->i128s[i]);
          CHECK(ArrowArrayAppendDecimal(a, &dec));
        } else {
          CHECK(ArrowArrayAppendNull(a, 1));
        }
        break;
      case K_STRUCT:
        if (ok) {
          CHECK(ArrowArrayAppendInt(a->children[0], d->i32s[i]));
          CHECK(ArrowArrayAppendInt(a->children[1], d->i64s[i]));
          CHECK(ArrowArrayAppendDouble(a->children[2], d->f64s[i]));
          CHECK(ArrowArrayAppendInt(a->children[3], d->dates[i]));
        } else {
          for (int c = 0; c < 4; c++) CHECK(ArrowArrayAppendNull(a->children[c], 1));
        }
        CHECK(ArrowArrayFinishElement(a));
        break;
      case K_UTF8:
        if (ok) {
          struct ArrowStringView sv;
          sv.data = d->str_data + d->str_offsets[i];
          sv.size_bytes = d->str_offsets[i + 1] - d->str_offsets[i];
          CHECK(ArrowArrayAppendString(a, sv));
        } else {
          CHECK(ArrowArrayAppendNull(a, 1));
        }
        break;
      case K_LIST:
        if (ok) {
          for (int32_t k = d->list_offsets[i]; k < d->list_offsets[i + 1]; k++)
            CHECK(ArrowArrayAppendInt(a->children[0], d->list_values[k]));
          CHECK(ArrowArrayFinishElement(a));
        } else {
          CHECK(ArrowArrayAppendNull(a, 1));
        }
        break;
    }
  }
}

struct ctx {
  const struct bench_data *d;
  struct ArrowSchema column; /* the column's schema (for nanoarrow) */
  QuiverWriter *w;
  char *src, *dst;           /* memcpy */
};

static void run_quiver(struct ctx *c) {
  struct ArrowArray out;
  quiver_rows(c->w, c->d);
  CHECK(quiver_writer_finish(c->w, &out));
  if (out.length != c->d->rows) { fprintf(stderr, "quiver: wrong length\n"); exit(1); }
  out.release(&out);
}

static void run_nanoarrow(struct ctx *c) {
  struct ArrowArray a;
  struct ArrowError err;
  CHECK(ArrowArrayInitFromSchema(&a, &c->column, &err));
  CHECK(ArrowArrayStartAppending(&a));
  CHECK(ArrowArrayReserve(&a, c->d->rows));
  nanoarrow_rows(&a, c->d);
  CHECK(ArrowArrayFinishBuildingDefault(&a, &err));
  if (a.length != c->d->rows) { fprintf(stderr, "nanoarrow: wrong length\n"); exit(1); }
  a.release(&a);
}

static void run_memcpy(struct ctx *c) {
  memcpy(c->dst, c->src, c->d->bytes);
  __asm__ volatile("" : : "r"(c->dst) : "memory");
}

static double measure(void (*f)(struct ctx *), struct ctx *c) {
  int reps = bench_reps();
  double *t = (double *)malloc(sizeof(double) * (size_t)reps);
  for (int i = 0; i < 5; i++) f(c);
  for (int i = 0; i < reps; i++) {
    double t0 = bench_now_ns();
    f(c);
    t[i] = (bench_now_ns() - t0) / (double)c->d->rows;
  }
  double m = bench_median(t, reps);
  free(t);
  return m;
}

/* The quiver and nanoarrow batches of fixed-width cases have the same value bytes. */
static void check_same(struct ctx *c) {
  if (c->d->kind > K_DEC38) return;
  struct ArrowArray q, n;
  struct ArrowError err;
  quiver_rows(c->w, c->d);
  CHECK(quiver_writer_finish(c->w, &q));
  CHECK(ArrowArrayInitFromSchema(&n, &c->column, &err));
  CHECK(ArrowArrayStartAppending(&n));
  nanoarrow_rows(&n, c->d);
  CHECK(ArrowArrayFinishBuildingDefault(&n, &err));
  size_t width = c->d->kind == K_I32 ? 4 : c->d->kind <= K_F64 ? 8 : 16;
  const struct ArrowArray *qc = q.children[0];
  if (memcmp(qc->buffers[1], n.buffers[1], width * (size_t)c->d->rows) != 0 || qc->null_count != n.null_count) {
    fprintf(stderr, "quiver and nanoarrow batches differ for %s\n", bench_kind_name[c->d->kind]);
    exit(1);
  }
  q.release(&q);
  n.release(&n);
}

/* ---- records: 3 columns (int32, int64, float64) from row-major records, 8192 per batch:
 * per-value appends (quiver_append_* + quiver_end_row per record), one
 * quiver_append_slots per record (the JVM binding's Writer.appendRow), one
 * quiver_write_records per batch, and a memcpy of the records' bytes. Prints
 *   RESULT c_records3_<none|half> <quiver_c_values|quiver_c_slots|quiver_c_records|memcpy> <ns_per_row> */
struct rec3 {
  int64_t b;
  double c;
  int32_t a;
  uint8_t nulls; /* bit k: column k is null */
};

struct rctx {
  struct rec3 *recs;
  int64_t rows;
  QuiverWriter *w;
  QuiverLayout *l;
  char *dst;
};

static void rec_values(struct rctx *c) {
  struct ArrowArray out;
  for (int64_t i = 0; i < c->rows; i++) {
    const struct rec3 *r = &c->recs[i];
    CHECK(r->nulls & 1 ? quiver_append_null(c->w, 0) : quiver_append_i32(c->w, 0, r->a));
    CHECK(r->nulls & 2 ? quiver_append_null(c->w, 1) : quiver_append_i64(c->w, 1, r->b));
    CHECK(r->nulls & 4 ? quiver_append_null(c->w, 2) : quiver_append_f64(c->w, 2, r->c));
    CHECK(quiver_end_row(c->w));
  }
  CHECK(quiver_writer_finish(c->w, &out));
  if (out.length != c->rows) { fprintf(stderr, "records: wrong length\n"); exit(1); }
  out.release(&out);
}

static void rec_slots(struct rctx *c) {
  static const uint8_t kinds[3] = {QUIVER_SLOT_I32, QUIVER_SLOT_I64, QUIVER_SLOT_F64};
  struct ArrowArray out;
  uint64_t slots[3];
  for (int64_t i = 0; i < c->rows; i++) {
    const struct rec3 *r = &c->recs[i];
    slots[0] = (uint64_t)(int64_t)r->a;
    slots[1] = (uint64_t)r->b;
    memcpy(&slots[2], &r->c, 8);
    CHECK(quiver_append_slots(c->w, 0, 3, kinds, slots, r->nulls, true));
  }
  CHECK(quiver_writer_finish(c->w, &out));
  if (out.length != c->rows) { fprintf(stderr, "records: wrong length\n"); exit(1); }
  out.release(&out);
}

static void rec_batch(struct rctx *c) {
  struct ArrowArray out;
  int64_t written;
  CHECK(quiver_write_records(c->w, c->l, c->recs, sizeof(struct rec3), c->rows, &written));
  CHECK(quiver_writer_finish(c->w, &out));
  if (out.length != c->rows) { fprintf(stderr, "records: wrong length\n"); exit(1); }
  out.release(&out);
}

static void rec_memcpy(struct rctx *c) {
  memcpy(c->dst, c->recs, sizeof(struct rec3) * (size_t)c->rows);
  __asm__ volatile("" : : "r"(c->dst) : "memory");
}

static double rmeasure(void (*f)(struct rctx *), struct rctx *c) {
  int reps = bench_reps();
  double *t = (double *)malloc(sizeof(double) * (size_t)reps);
  for (int i = 0; i < 5; i++) f(c);
  for (int i = 0; i < reps; i++) {
    double t0 = bench_now_ns();
    f(c);
    t[i] = (bench_now_ns() - t0) / (double)c->rows;
  }
  double m = bench_median(t, reps);
  free(t);
  return m;
}

static void bench_records(void) {
  for (int nulls = 0; nulls < 2; nulls++) {
    struct rctx c = {0};
    c.rows = BENCH_ROWS;
    c.recs = (struct rec3 *)calloc((size_t)c.rows, sizeof(struct rec3));
    c.dst = (char *)malloc(sizeof(struct rec3) * (size_t)c.rows);
    uint64_t x = SEED_VALUES;
    for (int64_t i = 0; i < c.rows; i++) {
      x ^= x << 13; x ^= x >> 7; x ^= x << 17;
      c.recs[i].a = (int32_t)x;
      c.recs[i].b = (int64_t)(x * 31);
      c.recs[i].c = (double)(int64_t)x / 7.0;
      c.recs[i].nulls = nulls ? (uint8_t)((x >> 40) & 7) : 0;
    }
    struct ArrowSchema schema;
    CHECK(quiver_schema_parse("a: int32, b: int64, c: float64", &schema));
    struct QuiverOptions opts;
    quiver_options_default(&opts);
    opts.batch_rows = BENCH_ROWS;
    CHECK(quiver_writer_new(&schema, &opts, &c.w));
    CHECK(quiver_layout_new(c.w, &c.l));
    CHECK(quiver_layout_set(c.l, 0, QUIVER_RECORD_FIXED, offsetof(struct rec3, a), 0, QUIVER_NULL_BIT,
                            offsetof(struct rec3, nulls), 0));
    CHECK(quiver_layout_set(c.l, 1, QUIVER_RECORD_FIXED, offsetof(struct rec3, b), 0, QUIVER_NULL_BIT,
                            offsetof(struct rec3, nulls), 1));
    CHECK(quiver_layout_set(c.l, 2, QUIVER_RECORD_FIXED, offsetof(struct rec3, c), 0, QUIVER_NULL_BIT,
                            offsetof(struct rec3, nulls), 2));
    const char *name = nulls ? "c_records3_half" : "c_records3_none";
    printf("RESULT %s quiver_c_values %.3f\n", name, rmeasure(rec_values, &c));
    printf("RESULT %s quiver_c_slots %.3f\n", name, rmeasure(rec_slots, &c));
    printf("RESULT %s quiver_c_records %.3f\n", name, rmeasure(rec_batch, &c));
    printf("RESULT %s memcpy %.3f\n", name, rmeasure(rec_memcpy, &c));
    fflush(stdout);
    quiver_layout_free(c.l);
    quiver_writer_free(c.w);
    schema.release(&schema);
    free(c.recs);
    free(c.dst);
  }
}

int main(void) {
  for (int kind = 0; kind < K_COUNT; kind++) {
    for (int nulls = 0; nulls < 2; nulls++) {
      struct bench_data d;
      bench_data_init(&d, kind, BENCH_ROWS, nulls);
      struct ctx c = {0};
      c.d = &d;
      struct ArrowSchema schema;
      CHECK(quiver_schema_parse(bench_kind_schema[kind], &schema));
      CHECK(ArrowSchemaDeepCopy(schema.children[0], &c.column));
      char name[64];
      snprintf(name, sizeof name, "c_%s_%s", bench_kind_name[kind], nulls ? "half" : "none");

      struct QuiverOptions opts;
      quiver_options_default(&opts);
      opts.batch_rows = BENCH_ROWS;
      CHECK(quiver_writer_new(&schema, &opts, &c.w));
      check_same(&c);
      printf("RESULT %s quiver_c %.3f\n", name, measure(run_quiver, &c));
      quiver_writer_free(c.w);

      opts.recycle = false;
      CHECK(quiver_writer_new(&schema, &opts, &c.w));
      printf("RESULT %s quiver_c_norecycle %.3f\n", name, measure(run_quiver, &c));
      quiver_writer_free(c.w);

      printf("RESULT %s nanoarrow %.3f\n", name, measure(run_nanoarrow, &c));

      c.src = (char *)malloc(d.bytes);
      c.dst = (char *)malloc(d.bytes);
      memset(c.src, 1, d.bytes);
      memset(c.dst, 0, d.bytes);
      printf("RESULT %s memcpy %.3f\n", name, measure(run_memcpy, &c));
      fflush(stdout);
      free(c.src);
      free(c.dst);
      c.column.release(&c.column);
      schema.release(&schema);
      bench_data_free(&d);
    }
  }
  bench_records();
  return 0;
}
