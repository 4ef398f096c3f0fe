// Arrow C++ (pyarrow's libarrow) as a consumer of quiver.
//
// The expected data is built once with Arrow C++ builders. A fill callback writes the
// same rows into quiver through the row path, by walking the expected arrays value by
// value; arrow::ImportRecordBatchReader pulls the stream, every batch must pass
// ValidateFull() and equal the matching slice of the expected data. Then every
// expected column goes through quiver_write_array (exported with arrow::ExportArray,
// at a non-zero offset) and the finished batch is imported and compared the same way.
#include <arrow/api.h>
#include <arrow/c/bridge.h>
#include <arrow/util/decimal.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "quiver.h"

namespace {

int n_ok = 0;

void ok(const std::string& what) { std::printf("ok %d - %s\n", ++n_ok, what.c_str()); }

[[noreturn]] void fail(const std::string& what) {
  std::printf("not ok %d - %s\n", n_ok + 1, what.c_str());
  std::fflush(stdout);
  std::exit(1);
}

void check(bool cond, const std::string& what) {
  if (!cond) fail(what);
  ok(what);
}

void check_status(const arrow::Status& st, const std::string& what) {
  if (!st.ok()) fail(what + ": " + st.ToString());
}

template <typename T>
T value_or_fail(arrow::Result<T> r, const std::string& what) {
  if (!r.ok()) fail(what + ": " + r.status().ToString());
  return std::move(r).ValueOrDie();
}

// ---------------------------------------------------------------- the schema

const char* kSchemaText =
    "id: int64 not null, name: utf8, score: float64, flag: bool, small: int8 not null,"
    " i16: int16, i32: int32, u8: uint8, u16: uint16, u32: uint32, u64: uint64 not null,"
    " half: float16, f32: float32, d32: decimal32(7, 2), d64: decimal64(15, 1),"
    " price: decimal128(20, 3), d256: decimal256(40, 2),"
    " day: date32, dt64: date64, t32: time32(ms), t64: time64(ns),"
    " ts: timestamp(us, \"UTC\"), dur: duration(s),"
    " ym: interval(year_month), dtm: interval(day_time), iv: interval(month_day_nano),"
    " blob: binary, big: large_utf8, lb: large_binary, code: fixed_size_binary(4), nothing: null,"
    " tags: list<utf8>, ll: large_list<int32 not null>, vec: fixed_size_list<float64, 3>,"
    " pt: struct<x: int16, label: utf8>, attrs: map<utf8, float32>,"
    " nest: list<list<int8>>, deep: struct<inner: struct<v: uint16 not null>, xs: list<struct<k: utf8, n: int64>>>";

std::shared_ptr<arrow::Schema> expected_schema() {
  using namespace arrow;
  auto f = [](std::string n, std::shared_ptr<DataType> t, bool nullable = true) {
    return field(std::move(n), std::move(t), nullable);
  };
  return schema({
      f("id", int64(), false),
      f("name", utf8()),
      f("score", float64()),
      f("flag", boolean()),
      f("small", int8(), false),
      f("i16", int16()),
      f("i32", int32()),
      f("u8", uint8()),
      f("u16", uint16()),
      f("u32", uint32()),
      f("u64", uint64(), false),
      f("half", float16()),
      f("f32", float32()),
      f("d32", decimal32(7, 2)),
      f("d64", decimal64(15, 1)),
      f("price", decimal128(20, 3)),
      f("d256", decimal256(40, 2)),
      f("day", date32()),
      f("dt64", date64()),
      f("t32", time32(TimeUnit::MILLI)),
      f("t64", time64(TimeUnit::NANO)),
      f("ts", timestamp(TimeUnit::MICRO, "UTC")),
      f("dur", duration(TimeUnit::SECOND)),
      f("ym", month_interval()),
      f("dtm", day_time_interval()),
      f("iv", month_day_nano_interval()),
      f("blob", binary()),
      f("big", large_utf8()),
      f("lb", large_binary()),
      f("code", fixed_size_binary(4)),
      f("nothing", null()),
      f("tags", list(field("item", utf8()))),
      f("ll", large_list(field("item", int32(), false))),
      f("vec", fixed_size_list(field("item", float64()), 3)),
      f("pt", struct_({f("x", int16()), f("label", utf8())})),
      f("attrs", map(utf8(), float32())),
      f("nest", list(field("item", list(field("item", int8()))))),
      f("deep", struct_({f("inner", struct_({f("v", uint16(), false)})),
                         f("xs", list(field("item", struct_({f("k", utf8()), f("n", int64())}))))})),
  });
}

// ---------------------------------------------------------------- expected data, by builders

template <typename B>
B* as(arrow::ArrayBuilder* b) {
  auto* p = dynamic_cast<B*>(b);
  if (!p) fail("builder of unexpected class for " + b->type()->ToString());
  return p;
}

#define OK(expr) check_status((expr), #expr)

std::string utf8_piece(int64_t r) {
  static const char* pieces[] = {"", "a", "\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac", "\xf0\x9f\x8e\x89"};
  return pieces[r % 5];
}

void build_row(arrow::RecordBatchBuilder& rb, int64_t r) {
  using namespace arrow;
  int c = 0;
  auto next = [&]() { return rb.GetField(c++); };
  // id, name, score, flag, small
  OK(as<Int64Builder>(next())->Append(r * 7 - 3));
  if (r % 7 == 3) OK(next()->AppendNull());
  else OK(as<StringBuilder>(next())->Append("name-" + std::to_string(r) + utf8_piece(r)));
  if (r % 5 == 0) OK(next()->AppendNull());
  else OK(as<DoubleBuilder>(next())->Append(static_cast<double>(r) * 0.25 - 10));
  if (r % 11 == 5) OK(next()->AppendNull());
  else OK(as<BooleanBuilder>(next())->Append(r % 2 == 1));
  OK(as<Int8Builder>(next())->Append(static_cast<int8_t>(r % 256 - 128)));
  // i16, i32, u8, u16, u32, u64
  if (r % 4 == 1) OK(next()->AppendNull());
  else OK(as<Int16Builder>(next())->Append(static_cast<int16_t>(r * 97 % 65536 - 32768)));
  if (r % 6 == 2) OK(next()->AppendNull());
  else OK(as<Int32Builder>(next())->Append(static_cast<int32_t>(r * 100003 - 50000000)));
  if (r % 9 == 8) OK(next()->AppendNull());
  else OK(as<UInt8Builder>(next())->Append(static_cast<uint8_t>(r * 3)));
  if (r % 10 == 0) OK(next()->AppendNull());
  else OK(as<UInt16Builder>(next())->Append(static_cast<uint16_t>(r * 131)));
  if (r % 9 == 1) OK(next()->AppendNull());
  else OK(as<UInt32Builder>(next())->Append(4000000000u - static_cast<uint32_t>(r)));
  OK(as<UInt64Builder>(next())->Append(UINT64_MAX - static_cast<uint64_t>(r) * 1000003u));
  // half (raw bits), f32
  if (r % 8 == 2) OK(next()->AppendNull());
  else OK(as<HalfFloatBuilder>(next())->Append(static_cast<uint16_t>(0x3C00 + r % 1000)));
  if (r % 12 == 7) OK(next()->AppendNull());
  else OK(as<FloatBuilder>(next())->Append(static_cast<float>(r) * 0.5f - 1.25f));
  // decimals
  if (r % 7 == 1) OK(next()->AppendNull());
  else OK(as<Decimal32Builder>(next())->Append(Decimal32(static_cast<int32_t>(r * 1234 - 400000))));
  if (r % 7 == 2) OK(next()->AppendNull());
  else OK(as<Decimal64Builder>(next())->Append(Decimal64(-r * 987654321LL)));
  if (r % 6 == 4) OK(next()->AppendNull());
  else OK(as<Decimal128Builder>(next())->Append(Decimal128(r * 123457 - 5000000) * Decimal128(1000000007)));
  if (r % 7 == 0) OK(next()->AppendNull());
  else {
    Decimal256 base = value_or_fail(Decimal256::FromString("1234567890123456789012345678901234567"), "d256");
    Decimal256 v = base + Decimal256(r * 1000);
    if (r % 2) v.Negate();
    OK(as<Decimal256Builder>(next())->Append(v));
  }
  // temporal
  if (r % 5 == 3) OK(next()->AppendNull());
  else OK(as<Date32Builder>(next())->Append(static_cast<int32_t>(19000 + r)));
  if (r % 5 == 4) OK(next()->AppendNull());
  else OK(as<Date64Builder>(next())->Append((19000 + r) * 86400000LL));
  if (r % 3 == 0) OK(next()->AppendNull());
  else OK(as<Time32Builder>(next())->Append(static_cast<int32_t>(r * 1001 % 86400000)));
  if (r % 3 == 1) OK(next()->AppendNull());
  else OK(as<Time64Builder>(next())->Append(r * 987654321987LL % 86400000000000LL));
  if (r % 4 == 3) OK(next()->AppendNull());
  else OK(as<TimestampBuilder>(next())->Append(1700000000000000LL + r * 1000));
  if (r % 4 == 0) OK(next()->AppendNull());
  else OK(as<DurationBuilder>(next())->Append(-r * 60));
  if (r % 6 == 5) OK(next()->AppendNull());
  else OK(as<MonthIntervalBuilder>(next())->Append(static_cast<int32_t>(r - 24)));
  if (r % 6 == 0) OK(next()->AppendNull());
  else OK(as<DayTimeIntervalBuilder>(next())->Append({static_cast<int32_t>(r), static_cast<int32_t>(-r * 1000)}));
  if (r % 6 == 1) OK(next()->AppendNull());
  else
    OK(as<MonthDayNanoIntervalBuilder>(next())->Append(
        {static_cast<int32_t>(r % 12), static_cast<int32_t>(-r), r * 1000000007LL}));
  // variable width, fixed size binary, null
  if (r % 8 == 0) OK(next()->AppendNull());
  else {
    std::string b;
    for (int64_t k = 0; k < r % 6; k++) b.push_back(static_cast<char>((r + k) * 31));
    OK(as<BinaryBuilder>(next())->Append(b));
  }
  if (r % 9 == 3) OK(next()->AppendNull());
  else OK(as<LargeStringBuilder>(next())->Append(utf8_piece(r + 1) + "|large|" + std::to_string(r * 7)));
  if (r % 9 == 4) OK(next()->AppendNull());
  else OK(as<LargeBinaryBuilder>(next())->Append(std::string(static_cast<size_t>(r % 5), static_cast<char>(r))));
  if (r % 5 == 2) OK(next()->AppendNull());
  else {
    uint8_t code[4] = {static_cast<uint8_t>(r), 0, static_cast<uint8_t>(~r), 0x42};
    OK(as<FixedSizeBinaryBuilder>(next())->Append(code));
  }
  OK(as<NullBuilder>(next())->AppendNull());
  // tags: list<utf8>
  {
    auto* lb = as<ListBuilder>(next());
    if (r % 7 == 6) OK(lb->AppendNull());
    else {
      OK(lb->Append());
      auto* sb = as<StringBuilder>(lb->value_builder());
      for (int64_t k = 0; k < r % 4; k++) {
        if ((r + k) % 5 == 3) OK(sb->AppendNull());
        else OK(sb->Append("t" + std::to_string(r) + "." + std::to_string(k)));
      }
    }
  }
  // ll: large_list<int32 not null>
  {
    auto* lb = as<LargeListBuilder>(next());
    if (r % 6 == 3) OK(lb->AppendNull());
    else {
      OK(lb->Append());
      for (int64_t k = 0; k < r % 5; k++) OK(as<Int32Builder>(lb->value_builder())->Append(static_cast<int32_t>(r * k)));
    }
  }
  // vec: fixed_size_list<float64, 3>
  {
    auto* fb = as<FixedSizeListBuilder>(next());
    auto* db = as<DoubleBuilder>(fb->value_builder());
    if (r % 8 == 5) OK(fb->AppendNull());
    else {
      OK(fb->Append());
      for (int64_t k = 0; k < 3; k++) {
        if ((r + k) % 7 == 0) OK(db->AppendNull());
        else OK(db->Append(static_cast<double>(r) + static_cast<double>(k) / 4));
      }
    }
  }
  // pt: struct<x: int16, label: utf8>
  {
    auto* sb = as<StructBuilder>(next());
    if (r % 9 == 4) OK(sb->AppendNull());
    else {
      OK(sb->Append());
      if (r % 4 == 1) OK(sb->field_builder(0)->AppendNull());
      else OK(as<Int16Builder>(sb->field_builder(0))->Append(static_cast<int16_t>(-r)));
      OK(as<StringBuilder>(sb->field_builder(1))->Append("p" + std::to_string(r)));
    }
  }
  // attrs: map<utf8, float32>
  {
    auto* mb = as<MapBuilder>(next());
    if (r % 10 == 7) OK(mb->AppendNull());
    else {
      OK(mb->Append());
      for (int64_t k = 0; k < r % 3; k++) {
        OK(as<StringBuilder>(mb->key_builder())->Append("a" + std::to_string(k)));
        if (k == 1) OK(mb->item_builder()->AppendNull());
        else OK(as<FloatBuilder>(mb->item_builder())->Append(static_cast<float>(r) + static_cast<float>(k)));
      }
    }
  }
  // nest: list<list<int8>>
  {
    auto* ob = as<ListBuilder>(next());
    if (r % 13 == 12) OK(ob->AppendNull());
    else {
      OK(ob->Append());
      auto* ib = as<ListBuilder>(ob->value_builder());
      for (int64_t k = 0; k < r % 3; k++) {
        if ((r + k) % 4 == 3) { OK(ib->AppendNull()); continue; }
        OK(ib->Append());
        for (int64_t j = 0; j < (r + k) % 3; j++)
          OK(as<Int8Builder>(ib->value_builder())->Append(static_cast<int8_t>(r + k + j)));
      }
    }
  }
  // deep: struct<inner: struct<v: uint16 not null>, xs: list<struct<k: utf8, n: int64>>>
  {
    auto* db = as<StructBuilder>(next());
    if (r % 11 == 10) OK(db->AppendNull());
    else {
      OK(db->Append());
      auto* inner = as<StructBuilder>(db->field_builder(0));
      OK(inner->Append());
      OK(as<UInt16Builder>(inner->field_builder(0))->Append(static_cast<uint16_t>(r)));
      auto* xs = as<ListBuilder>(db->field_builder(1));
      if (r % 5 == 1) OK(xs->AppendNull());
      else {
        OK(xs->Append());
        auto* eb = as<StructBuilder>(xs->value_builder());
        for (int64_t k = 0; k < r % 3; k++) {
          OK(eb->Append());
          OK(as<StringBuilder>(eb->field_builder(0))->Append("k" + std::to_string(k)));
          if (k == 1) OK(eb->field_builder(1)->AppendNull());
          else OK(as<Int64Builder>(eb->field_builder(1))->Append(r * 10 + k));
        }
      }
    }
  }
  if (c != rb.num_fields()) fail("build_row filled " + std::to_string(c) + " of " + std::to_string(rb.num_fields()));
}

std::shared_ptr<arrow::RecordBatch> build_expected(const std::shared_ptr<arrow::Schema>& schema, int64_t rows) {
  auto rb = value_or_fail(arrow::RecordBatchBuilder::Make(schema, arrow::default_memory_pool()), "builder");
  for (int64_t r = 0; r < rows; r++) build_row(*rb, r);
  return value_or_fail(rb->Flush(), "flush");
}

// ---------------------------------------------------------------- Arrow array -> quiver row path

struct NodeTree {
  uint32_t node = 0;
  std::vector<NodeTree> kids;
};

// node numbers: pre-order walk of the field tree, as docs/design.md §6 defines them
NodeTree number(const arrow::DataType& t, uint32_t& next) {
  NodeTree n;
  n.node = next++;
  for (const auto& f : t.fields()) n.kids.push_back(number(*f->type(), next));
  return n;
}

int append_value(QuiverWriter* w, const arrow::Array& a, int64_t i, const NodeTree& nt) {
  using namespace arrow;
  const uint32_t n = nt.node;
  if (a.type_id() == Type::NA || a.IsNull(i)) return quiver_append_null(w, n);
  auto fixed_bytes = [&](int width) {
    const auto* base = a.data()->GetValues<uint8_t>(1, 0);
    return quiver_append_bytes(w, n, base + (a.offset() + i) * width, static_cast<size_t>(width));
  };
  auto decimal_bytes = [&](int width) {
    const auto& d = static_cast<const FixedSizeBinaryArray&>(a);
    return quiver_append_decimal(w, n, d.GetValue(i), static_cast<size_t>(width));
  };
  int rc = 0;
  switch (a.type_id()) {
    case Type::BOOL: return quiver_append_bool(w, n, static_cast<const BooleanArray&>(a).Value(i));
    case Type::INT8: return quiver_append_i8(w, n, static_cast<const Int8Array&>(a).Value(i));
    case Type::INT16: return quiver_append_i16(w, n, static_cast<const Int16Array&>(a).Value(i));
    case Type::INT32: return quiver_append_i32(w, n, static_cast<const Int32Array&>(a).Value(i));
    case Type::INT64: return quiver_append_i64(w, n, static_cast<const Int64Array&>(a).Value(i));
    case Type::UINT8: return quiver_append_u8(w, n, static_cast<const UInt8Array&>(a).Value(i));
    case Type::UINT16: return quiver_append_u16(w, n, static_cast<const UInt16Array&>(a).Value(i));
    case Type::UINT32: return quiver_append_u32(w, n, static_cast<const UInt32Array&>(a).Value(i));
    case Type::UINT64: return quiver_append_u64(w, n, static_cast<const UInt64Array&>(a).Value(i));
    case Type::HALF_FLOAT: return quiver_append_u16(w, n, static_cast<const HalfFloatArray&>(a).Value(i));
    case Type::FLOAT: return quiver_append_f32(w, n, static_cast<const FloatArray&>(a).Value(i));
    case Type::DOUBLE: return quiver_append_f64(w, n, static_cast<const DoubleArray&>(a).Value(i));
    case Type::DECIMAL32: return decimal_bytes(4);
    case Type::DECIMAL64: return decimal_bytes(8);
    case Type::DECIMAL128: return decimal_bytes(16);
    case Type::DECIMAL256: return decimal_bytes(32);
    case Type::DATE32: return quiver_append_i32(w, n, static_cast<const Date32Array&>(a).Value(i));
    case Type::DATE64: return quiver_append_i64(w, n, static_cast<const Date64Array&>(a).Value(i));
    case Type::TIME32: return quiver_append_i32(w, n, static_cast<const Time32Array&>(a).Value(i));
    case Type::TIME64: return quiver_append_i64(w, n, static_cast<const Time64Array&>(a).Value(i));
    case Type::TIMESTAMP: return quiver_append_i64(w, n, static_cast<const TimestampArray&>(a).Value(i));
    case Type::DURATION: return quiver_append_i64(w, n, static_cast<const DurationArray&>(a).Value(i));
    case Type::INTERVAL_MONTHS: return quiver_append_i32(w, n, static_cast<const MonthIntervalArray&>(a).Value(i));
    case Type::INTERVAL_DAY_TIME: return fixed_bytes(8);
    case Type::INTERVAL_MONTH_DAY_NANO: return fixed_bytes(16);
    case Type::STRING:
    case Type::BINARY: {
      auto v = static_cast<const BinaryArray&>(a).GetView(i);
      return quiver_append_bytes(w, n, reinterpret_cast<const uint8_t*>(v.data()), v.size());
    }
    case Type::LARGE_STRING:
    case Type::LARGE_BINARY: {
      auto v = static_cast<const LargeBinaryArray&>(a).GetView(i);
      return quiver_append_bytes(w, n, reinterpret_cast<const uint8_t*>(v.data()), v.size());
    }
    case Type::FIXED_SIZE_BINARY: {
      const auto& f = static_cast<const FixedSizeBinaryArray&>(a);
      return quiver_append_bytes(w, n, f.GetValue(i), static_cast<size_t>(f.byte_width()));
    }
    case Type::LIST:
    case Type::LARGE_LIST:
    case Type::FIXED_SIZE_LIST: {
      int64_t start, len;
      std::shared_ptr<Array> values;
      if (a.type_id() == Type::LIST) {
        const auto& l = static_cast<const ListArray&>(a);
        start = l.value_offset(i), len = l.value_length(i), values = l.values();
      } else if (a.type_id() == Type::LARGE_LIST) {
        const auto& l = static_cast<const LargeListArray&>(a);
        start = l.value_offset(i), len = l.value_length(i), values = l.values();
      } else {
        const auto& l = static_cast<const FixedSizeListArray&>(a);
        start = l.value_offset(i), len = l.value_length(i), values = l.values();
      }
      if ((rc = quiver_begin(w, n)) != 0) return rc;
      for (int64_t k = 0; k < len; k++)
        if ((rc = append_value(w, *values, start + k, nt.kids[0])) != 0) return rc;
      return quiver_end(w, n);
    }
    case Type::STRUCT: {
      const auto& s = static_cast<const StructArray&>(a);
      if ((rc = quiver_begin(w, n)) != 0) return rc;
      for (int k = 0; k < s.num_fields(); k++)
        if ((rc = append_value(w, *s.field(k), i, nt.kids[static_cast<size_t>(k)])) != 0) return rc;
      return quiver_end(w, n);
    }
    case Type::MAP: {
      const auto& m = static_cast<const MapArray&>(a);
      const NodeTree& entries = nt.kids[0];
      if ((rc = quiver_begin(w, n)) != 0) return rc;
      for (int64_t k = m.value_offset(i); k < m.value_offset(i) + m.value_length(i); k++) {
        if ((rc = quiver_begin(w, entries.node)) != 0) return rc;
        if ((rc = append_value(w, *m.keys(), k, entries.kids[0])) != 0) return rc;
        if ((rc = append_value(w, *m.items(), k, entries.kids[1])) != 0) return rc;
        if ((rc = quiver_end(w, entries.node)) != 0) return rc;
      }
      return quiver_end(w, n);
    }
    default: fail("append_value: unhandled type " + a.type()->ToString());
  }
}

struct FillCtx {
  std::shared_ptr<arrow::RecordBatch> expected;
  std::vector<NodeTree> nodes;
  int64_t next = 0;
  int calls = 0;
  int released = 0;
};

int fill(void* vctx, QuiverWriter* w, int64_t max_rows) {
  auto* ctx = static_cast<FillCtx*>(vctx);
  ctx->calls++;
  int64_t end = std::min(ctx->expected->num_rows(), ctx->next + max_rows);
  for (; ctx->next < end; ctx->next++) {
    for (int c = 0; c < ctx->expected->num_columns(); c++) {
      int rc = append_value(w, *ctx->expected->column(c), ctx->next, ctx->nodes[static_cast<size_t>(c)]);
      if (rc != 0) {
        std::string m = "append of row " + std::to_string(ctx->next) + " column " +
                        ctx->expected->schema()->field(c)->name() + " failed: " + std::to_string(rc) + " " +
                        (quiver_writer_last_error(w) ? quiver_writer_last_error(w) : "");
        quiver_writer_set_error(w, m.c_str());
        return rc;
      }
    }
    if (int rc = quiver_end_row(w); rc != 0) {
      quiver_writer_set_error(w, "end_row failed");
      return rc;
    }
  }
  return 0;
}

void release_ctx(void* vctx) { static_cast<FillCtx*>(vctx)->released++; }

// column by column: a readable report of the first column that differs
void compare_batch(const arrow::RecordBatch& got, const arrow::RecordBatch& want, const std::string& what) {
  if (got.num_rows() != want.num_rows())
    fail(what + ": " + std::to_string(got.num_rows()) + " rows, expected " + std::to_string(want.num_rows()));
  for (int c = 0; c < want.num_columns(); c++) {
    if (!got.column(c)->Equals(*want.column(c))) {
      auto diff = got.column(c)->Diff(*want.column(c));
      fail(what + ": column " + want.schema()->field(c)->name() + " differs\n" + diff);
    }
  }
}

}  // namespace

int main() {
  auto schema = expected_schema();
  const int64_t kRows = 1000, kBatch = 128;
  auto expected = build_expected(schema, kRows);
  check_status(expected->ValidateFull(), "expected data");
  ok("expected data: " + std::to_string(kRows) + " rows of " + std::to_string(schema->num_fields()) +
     " columns built with Arrow C++ builders");

  // ---- stream: row path, imported as a RecordBatchReader
  struct ArrowSchema cs;
  if (quiver_schema_parse(kSchemaText, &cs) != 0) fail(std::string("quiver_schema_parse: ") + quiver_last_error());
  auto parsed = value_or_fail(arrow::ImportSchema(&cs), "ImportSchema");
  if (!parsed->Equals(*schema, false))
    fail("quiver_schema_parse gives\n" + parsed->ToString() + "\nexpected\n" + schema->ToString());
  ok("quiver_schema_parse gives the schema Arrow C++ expects (" + std::to_string(schema->num_fields()) + " fields)");

  FillCtx ctx;
  ctx.expected = expected;
  uint32_t next_node = 0;
  for (const auto& f : schema->fields()) ctx.nodes.push_back(number(*f->type(), next_node));
  struct QuiverOptions opts;
  quiver_options_default(&opts);
  opts.batch_rows = kBatch;
  if (quiver_schema_parse(kSchemaText, &cs) != 0) fail("quiver_schema_parse");
  struct ArrowArrayStream stream;
  int rc = quiver_stream_new(&cs, &opts, fill, &ctx, release_ctx, &stream);
  cs.release(&cs);
  if (rc != 0) fail(std::string("quiver_stream_new: ") + quiver_last_error());
  {
    auto reader = value_or_fail(arrow::ImportRecordBatchReader(&stream), "ImportRecordBatchReader");
    check(reader->schema()->Equals(*schema, false), "reader schema equals the expected schema");
    int64_t seen = 0;
    int batches = 0;
    for (;;) {
      std::shared_ptr<arrow::RecordBatch> batch;
      check_status(reader->ReadNext(&batch), "ReadNext");
      if (!batch) break;
      batches++;
      std::string what = "stream batch " + std::to_string(batches);
      check_status(batch->ValidateFull(), what + ": ValidateFull");
      compare_batch(*batch, *expected->Slice(seen, batch->num_rows()), what);
      seen += batch->num_rows();
      if (batch->num_rows() != std::min(kBatch, kRows - (seen - batch->num_rows())))
        fail(what + ": " + std::to_string(batch->num_rows()) + " rows");
    }
    check(seen == kRows && batches == (kRows + kBatch - 1) / kBatch,
          "row path stream: " + std::to_string(batches) + " batches, " + std::to_string(seen) +
              " rows, each ValidateFull() and Equals the builders' data");
    std::shared_ptr<arrow::RecordBatch> more;
    check_status(reader->ReadNext(&more), "ReadNext after the end");
    check(!more, "ReadNext after the end gives no batch again");
  }
  check(ctx.released == 1, "dropping the reader released the stream and its ctx once");

  // ---- column path: every expected column through quiver_write_array, at an offset
  {
    QuiverWriter* w = nullptr;
    if (quiver_schema_parse(kSchemaText, &cs) != 0) fail("quiver_schema_parse");
    rc = quiver_writer_new(&cs, nullptr, &w);
    cs.release(&cs);
    if (rc != 0) fail(std::string("quiver_writer_new: ") + quiver_last_error());
    const int64_t off = 37, len = 300;
    auto slice = expected->Slice(off, len);
    for (int c = 0; c < slice->num_columns(); c++) {
      struct ArrowArray ca;
      struct ArrowSchema cf;
      check_status(arrow::ExportArray(*slice->column(c), &ca, &cf), "ExportArray");
      rc = quiver_write_array(w, ctx.nodes[static_cast<size_t>(c)].node, &ca, &cf);
      if (rc != 0)
        fail("quiver_write_array of " + schema->field(c)->name() + ": " + std::to_string(rc) + " " +
             (quiver_writer_last_error(w) ? quiver_writer_last_error(w) : ""));
      if (ca.release == nullptr || cf.release == nullptr) fail("quiver_write_array released its borrowed inputs");
      ca.release(&ca);
      cf.release(&cf);
    }
    check(quiver_writer_rows(w) == len, "quiver_write_array of every column: quiver_writer_rows = " +
                                            std::to_string(quiver_writer_rows(w)));
    struct ArrowArray out;
    struct ArrowSchema out_schema;
    if (quiver_writer_finish(w, &out) != 0) fail(std::string("finish: ") + quiver_writer_last_error(w));
    if (quiver_writer_export_schema(w, &out_schema) != 0) fail("export_schema");
    auto batch = value_or_fail(arrow::ImportRecordBatch(&out, &out_schema), "ImportRecordBatch");
    check_status(batch->ValidateFull(), "column path batch: ValidateFull");
    compare_batch(*batch, *slice, "column path batch");
    ok("column path: rows 37..336 of every column copied by quiver_write_array, ValidateFull() and Equals");
    quiver_writer_free(w);
    check(batch.use_count() == 1, "batch still owned here after quiver_writer_free");
    check_status(batch->ValidateFull(), "column path batch after quiver_writer_free");
  }
  check(quiver_live_arrays() == 0, "quiver_live_arrays() == 0 at the end (" + std::to_string(quiver_live_arrays()) + ")");
  std::printf("arrow_cpp_consumer: all %d checks passed\n", n_ok);
  return 0;
}
