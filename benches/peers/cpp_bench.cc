// Arrow C++ builders (Int32Builder, Int64Builder, DoubleBuilder,
// Decimal128Builder, StructBuilder, StringBuilder, ListBuilder: Reserve,
// Append / AppendNull per value, Finish) on the data of benches/peers/bench_data.h,
// one 8192-row batch per repetition; prints the median ns per row as
//   RESULT c_<case> arrow_cpp <ns_per_row>
#include <arrow/api.h>
#include <arrow/util/decimal.h>

#include <cstdio>
#include <memory>
#include <vector>

extern "C" {
#include "bench_data.h"
}

#define OK(x)                                                                     \
  do {                                                                            \
    arrow::Status st_ = (x);                                                      \
    if (!st_.ok()) {                                                              \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, st_.ToString().c_str()); \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)

static arrow::Decimal128 dec(__int128 v) {
  return arrow::Decimal128(static_cast<int64_t>(v >> 64), static_cast<uint64_t>(v));
}

static int64_t build(const bench_data &d) {
  const int64_t n = d.rows;
  std::shared_ptr<arrow::Array> out;
  auto *pool = arrow::default_memory_pool();
  switch (d.kind) {
    case K_I32: {
      arrow::Int32Builder b(pool);
      OK(b.Reserve(n));
      for (int64_t i = 0; i < n; i++) d.valid[i] ? b.UnsafeAppend(d.i32s[i]) : b.UnsafeAppendNull();
      OK(b.Finish(&out));
      break;
    }
    case K_I64: {
      arrow::Int64Builder b(pool);
      OK(b.Reserve(n));
      for (int64_t i = 0; i < n; i++) d.valid[i] ? b.UnsafeAppend(d.i64s[i]) : b.UnsafeAppendNull();
      OK(b.Finish(&out));
      break;
    }
    case K_F64: {
      arrow::DoubleBuilder b(pool);
      OK(b.Reserve(n));
      for (int64_t i = 0; i < n; i++) d.valid[i] ? b.UnsafeAppend(d.f64s[i]) : b.UnsafeAppendNull();
      OK(b.Finish(&out));
      break;
    }
    case K_DEC18:
    case K_DEC38: {
      auto type = d.kind == K_DEC18 ? arrow::decimal128(18, 2) : arrow::decimal128(38, 10);
      arrow::Decimal128Builder b(type, pool);
      OK(b.Reserve(n));
      for (int64_t i = 0; i < n; i++) {
        if (d.valid[i]) b.UnsafeAppend(dec(d.i128s[i])); else b.UnsafeAppendNull();
      }
      OK(b.Finish(&out));
      break;
    }
    case K_STRUCT: {
      auto a = std::make_shared<arrow::Int32Builder>(pool);
      auto bb = std::make_shared<arrow::Int64Builder>(pool);
      auto c = std::make_shared<arrow::DoubleBuilder>(pool);
      auto e = std::make_shared<arrow::Date32Builder>(pool);
      auto type = arrow::struct_({arrow::field("a", arrow::int32()), arrow::field("b", arrow::int64()),
                                  arrow::field("c", arrow::float64()), arrow::field("d", arrow::date32())});
      arrow::StructBuilder b(type, pool, {a, bb, c, e});
      OK(b.Reserve(n));
      OK(a->Reserve(n));
      OK(bb->Reserve(n));
      OK(c->Reserve(n));
      OK(e->Reserve(n));
      for (int64_t i = 0; i < n; i++) {
        OK(b.Append());
        if (d.valid[i]) {
          a->UnsafeAppend(d.i32s[i]);
          bb->UnsafeAppend(d.i64s[i]);
          c->UnsafeAppend(d.f64s[i]);
          e->UnsafeAppend(d.dates[i]);
        } else {
          a->UnsafeAppendNull();
          bb->UnsafeAppendNull();
          c->UnsafeAppendNull();
          e->UnsafeAppendNull();
        }
      }
      OK(b.Finish(&out));
      break;
    }
    case K_UTF8: {
      arrow::StringBuilder b(pool);
      OK(b.Reserve(n));
      OK(b.ReserveData(d.str_offsets[n]));
      for (int64_t i = 0; i < n; i++) {
        if (d.valid[i]) {
          b.UnsafeAppend(d.str_data + d.str_offsets[i], d.str_offsets[i + 1] - d.str_offsets[i]);
        } else {
          b.UnsafeAppendNull();
        }
      }
      OK(b.Finish(&out));
      break;
    }
    case K_LIST: {
      auto values = std::make_shared<arrow::Int32Builder>(pool);
      arrow::ListBuilder b(pool, values);
      OK(b.Reserve(n));
      OK(values->Reserve(d.list_offsets[n]));
      for (int64_t i = 0; i < n; i++) {
        if (d.valid[i]) {
          OK(b.Append());
          for (int32_t k = d.list_offsets[i]; k < d.list_offsets[i + 1]; k++) values->UnsafeAppend(d.list_values[k]);
        } else {
          OK(b.AppendNull());
        }
      }
      OK(b.Finish(&out));
      break;
    }
  }
  return out->length();
}

int main() {
  int reps = bench_reps();
  for (int kind = 0; kind < K_COUNT; kind++) {
    for (int nulls = 0; nulls < 2; nulls++) {
      bench_data d;
      bench_data_init(&d, kind, BENCH_ROWS, nulls);
      std::vector<double> t(reps);
      for (int i = 0; i < 5; i++) build(d);
      for (int i = 0; i < reps; i++) {
        double t0 = bench_now_ns();
        if (build(d) != d.rows) std::exit(1);
        t[i] = (bench_now_ns() - t0) / static_cast<double>(d.rows);
      }
      std::printf("RESULT c_%s_%s arrow_cpp %.3f\n", bench_kind_name[kind], nulls ? "half" : "none",
                  bench_median(t.data(), reps));
      std::fflush(stdout);
      bench_data_free(&d);
    }
  }
  return 0;
}
