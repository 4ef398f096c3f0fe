/* Benchmark data shared by benches/peers/c_bench.c and benches/peers/cpp_bench.cc: the same
 * xorshift64* generator, seeds and shapes as benches/common/mod.rs, so the C,
 * C++ and Rust writers all get the same values and the same null pattern. */
#ifndef QUIVER_BENCH_DATA_H
#define QUIVER_BENCH_DATA_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_ROWS 8192
#define SEED_VALUES 0x9E3779B97F4A7C15ULL
#define SEED_VALID 0x0123456789ABCDEFULL
#define P18 1000000000000000000LL

enum bench_kind { K_I32, K_I64, K_F64, K_DEC18, K_DEC38, K_STRUCT, K_UTF8, K_LIST, K_COUNT };

static const char *const bench_kind_name[K_COUNT] = {"int32", "int64", "float64", "decimal18_2",
                                                     "decimal38_10", "struct4", "utf8", "list_int32"};
static const char *const bench_kind_schema[K_COUNT] = {
    "v: int32", "v: int64", "v: float64", "v: decimal128(18, 2)", "v: decimal128(38, 10)",
    "v: struct<a: int32, b: int64, c: float64, d: date32>", "v: utf8", "v: list<int32>"};

static inline uint64_t bench_next(uint64_t *s) {
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1DULL;
}

static inline double bench_unit(uint64_t r) {
  return (double)(r >> 11) * (1.0 / (double)(1ULL << 53)) * 1000.0;
}

struct bench_data {
  int kind;
  int64_t rows;
  bool nulls;
  bool *valid;
  int32_t *i32s; /* int32, struct.a */
  int64_t *i64s; /* int64, struct.b */
  double *f64s;  /* float64, struct.c */
  int32_t *dates; /* struct.d */
  __int128 *i128s; /* decimals */
  int32_t *str_offsets; /* utf8: rows + 1 */
  char *str_data;
  int32_t *list_offsets; /* list: rows + 1 */
  int32_t *list_values;
  size_t bytes; /* bytes of the column's Arrow buffers (validity when nulls) */
};

static inline void bench_data_init(struct bench_data *d, int kind, int64_t rows, bool nulls) {
  uint64_t g = SEED_VALUES, gv = SEED_VALID;
  memset(d, 0, sizeof *d);
  d->kind = kind;
  d->rows = rows;
  d->nulls = nulls;
  d->valid = (bool *)malloc((size_t)rows);
  for (int64_t i = 0; i < rows; i++) d->valid[i] = !nulls || (bench_next(&gv) >> 63) == 0;
  size_t validity = nulls ? (size_t)(rows + 7) / 8 : 0;
  switch (kind) {
    case K_I32:
      d->i32s = (int32_t *)malloc(rows * 4);
      for (int64_t i = 0; i < rows; i++) d->i32s[i] = (int32_t)bench_next(&g);
      d->bytes = rows * 4 + validity;
      break;
    case K_I64:
      d->i64s = (int64_t *)malloc(rows * 8);
      for (int64_t i = 0; i < rows; i++) d->i64s[i] = (int64_t)bench_next(&g);
      d->bytes = rows * 8 + validity;
      break;
    case K_F64:
      d->f64s = (double *)malloc(rows * 8);
      for (int64_t i = 0; i < rows; i++) d->f64s[i] = bench_unit(bench_next(&g));
      d->bytes = rows * 8 + validity;
      break;
    case K_DEC18:
    case K_DEC38:
      d->i128s = (__int128 *)malloc(rows * 16);
      for (int64_t i = 0; i < rows; i++) {
        if (kind == K_DEC18) {
          d->i128s[i] = (__int128)((int64_t)bench_next(&g) % P18);
        } else {
          __int128 hi = (int64_t)bench_next(&g) % (P18 / 10);
          __int128 lo = (__int128)(bench_next(&g) % (uint64_t)P18);
          d->i128s[i] = hi * P18 + (hi < 0 ? -lo : lo);
        }
      }
      d->bytes = rows * 16 + validity;
      break;
    case K_STRUCT:
      d->i32s = (int32_t *)malloc(rows * 4);
      d->i64s = (int64_t *)malloc(rows * 8);
      d->f64s = (double *)malloc(rows * 8);
      d->dates = (int32_t *)malloc(rows * 4);
      for (int64_t i = 0; i < rows; i++) {
        d->i32s[i] = (int32_t)bench_next(&g);
        d->i64s[i] = (int64_t)bench_next(&g);
        d->f64s[i] = bench_unit(bench_next(&g));
        d->dates[i] = (int32_t)(bench_next(&g) % 40000);
      }
      d->bytes = rows * 24 + 4 * validity;
      break;
    case K_UTF8: {
      d->str_offsets = (int32_t *)malloc((rows + 1) * 4);
      d->str_data = (char *)malloc(rows * 12 + 1);
      int32_t at = 0;
      d->str_offsets[0] = 0;
      for (int64_t i = 0; i < rows; i++) {
        uint64_t r = bench_next(&g);
        int len = d->valid[i] ? (int)(r % 12) : 0;
        for (int k = 0; k < len; k++) d->str_data[at++] = (char)('a' + (r >> (8 + 4 * k)) % 26);
        d->str_offsets[i + 1] = at;
      }
      d->bytes = (rows + 1) * 4 + at + validity;
      break;
    }
    case K_LIST: {
      d->list_offsets = (int32_t *)malloc((rows + 1) * 4);
      d->list_values = (int32_t *)malloc(rows * 8 * 4);
      int32_t at = 0;
      d->list_offsets[0] = 0;
      for (int64_t i = 0; i < rows; i++) {
        uint64_t r = bench_next(&g);
        int len = d->valid[i] ? (int)(r % 8) : 0;
        for (int k = 0; k < len; k++) d->list_values[at++] = (int32_t)bench_next(&g);
        d->list_offsets[i + 1] = at;
      }
      d->bytes = (rows + 1) * 4 + at * 4 + validity;
      break;
    }
  }
}

static inline void bench_data_free(struct bench_data *d) {
  free(d->valid);
  free(d->i32s);
  free(d->i64s);
  free(d->f64s);
  free(d->dates);
  free(d->i128s);
  free(d->str_offsets);
  free(d->str_data);
  free(d->list_offsets);
  free(d->list_values);
}

static inline double bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static inline double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(double), bench_cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static inline int bench_reps(void) {
  const char *q = getenv("QUIVER_BENCH_QUICK");
  return (q && strcmp(q, "1") == 0) ? 5 : 50;
}

#endif
