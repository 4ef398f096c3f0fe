"""Type catalogue (docs/schema-text.md) and a generic row-path writer for the tests."""

import struct
from decimal import Decimal as D

import pyarrow as pa


def field(t, nullable=True, name="item"):
    return pa.field(name, t, nullable=nullable)


# (schema text of the type, the pyarrow type it must be, values with nulls)
CASES = [
    ("null", pa.null(), [None, None, None]),
    ("bool", pa.bool_(), [True, None, False, True, True, False, None, True, False]),
    ("boolean", pa.bool_(), [False, True, None]),
    ("int8", pa.int8(), [-128, None, 127, 0, -1]),
    ("int16", pa.int16(), [-32768, None, 32767, 7]),
    ("int32", pa.int32(), [-(2**31), None, 2**31 - 1, 42]),
    ("int64", pa.int64(), [-(2**63), None, 2**63 - 1, -5]),
    ("uint8", pa.uint8(), [0, None, 255, 17]),
    ("uint16", pa.uint16(), [0, None, 65535]),
    ("uint32", pa.uint32(), [0, None, 2**32 - 1]),
    ("uint64", pa.uint64(), [0, None, 2**64 - 1, 12345678901234567]),
    ("float16", pa.float16(), [1.5, None, -2.0, 65504.0, 0.0]),
    ("float32", pa.float32(), [1.5, None, -3.25, float("inf"), 0.0]),
    ("float64", pa.float64(), [1.5, None, -1e300, 2.5e-300, float("-inf")]),
    ("decimal32(7, 2)", pa.decimal32(7, 2), [D("12345.67"), None, D("-0.01"), D("-99999.99")]),
    ("decimal64(18, 3)", pa.decimal64(18, 3), [D("123456789012345.678"), None, D("-1.000")]),
    ("decimal128(38, 10)", pa.decimal128(38, 10),
     [D("1234567890123456789012345678.0123456789"), None, D("-0.0000000001"), D("0E-10")]),
    ("decimal256(76, 20)", pa.decimal256(76, 20),
     [D("-" + "9" * 56 + "." + "9" * 20), None, D("3.14159265358979323846")]),
    ("date32", pa.date32(), [0, None, 19000, -1]),
    ("date64", pa.date64(), [0, None, 86400000 * 19000, -86400000]),
    ("time32(s)", pa.time32("s"), [0, None, 86399]),
    ("time32(ms)", pa.time32("ms"), [0, None, 86399999]),
    ("time64(us)", pa.time64("us"), [0, None, 86399999999]),
    ("time64(ns)", pa.time64("ns"), [0, None, 86399999999999]),
    ("timestamp(s)", pa.timestamp("s"), [0, None, 1700000000, -1]),
    ("timestamp(ms)", pa.timestamp("ms"), [0, None, 1700000000123]),
    ("timestamp(us)", pa.timestamp("us"), [0, None, 1700000000123456]),
    ("timestamp(ns)", pa.timestamp("ns"), [0, None, 1700000000123456789]),
    ('timestamp(us, "UTC")', pa.timestamp("us", "UTC"), [1, None, 1700000000123456]),
    ('timestamp(ms, "Europe/Paris")', pa.timestamp("ms", "Europe/Paris"), [None, 1700000000123]),
    ("duration(s)", pa.duration("s"), [0, None, -5, 2**40]),
    ("duration(ms)", pa.duration("ms"), [1, None]),
    ("duration(us)", pa.duration("us"), [None, -(2**62)]),
    ("duration(ns)", pa.duration("ns"), [7, None, 2**63 - 1]),
    ("interval(month_day_nano)", pa.month_day_nano_interval(),
     [(1, 2, 3), None, (-1, -2, -(2**62)), (0, 0, 0)]),
    ("utf8", pa.utf8(), ["héllo", None, "", "x" * 100, "日本"]),
    ("large_utf8", pa.large_utf8(), ["a", None, "", "ßü" * 30]),
    ("binary", pa.binary(), [b"\x00\x01\xff", None, b"", b"abc" * 50]),
    ("large_binary", pa.large_binary(), [b"", None, b"\xde\xad\xbe\xef"]),
    ("fixed_size_binary(4)", pa.binary(4), [b"abcd", None, b"\x00\x00\x00\x01"]),
    ("list<int32>", pa.list_(pa.int32()), [[1, 2], None, [], [None, 3], [4]]),
    ("list<int32 not null>", pa.list_(field(pa.int32(), nullable=False)), [[1, 2], None, [], [3]]),
    ("large_list<utf8>", pa.large_list(pa.utf8()), [["a", None], None, [], ["bc", "d", ""]]),
    ("fixed_size_list<int16, 3>", pa.list_(pa.int16(), 3), [[1, 2, 3], None, [None, 5, 6]]),
    ("struct<x: float64, y: utf8>", pa.struct([("x", pa.float64()), ("y", pa.utf8())]),
     [{"x": 1.0, "y": "a"}, None, {"x": None, "y": "b"}, {"x": 2.5, "y": None}]),
    ("struct<a: int8 not null, b: bool>",
     pa.struct([pa.field("a", pa.int8(), nullable=False), ("b", pa.bool_())]),
     [{"a": 1, "b": True}, None, {"a": -3, "b": None}]),
    ("map<utf8, int64>", pa.map_(pa.utf8(), pa.int64()),
     [[("a", 1), ("b", None)], None, [], [("c", -7)]]),
    ("list<struct<a: int8, b: list<utf8>>>",
     pa.list_(pa.struct([("a", pa.int8()), ("b", pa.list_(pa.utf8()))])),
     [[{"a": 1, "b": ["x", None]}, None, {"a": None, "b": None}], None, [], [{"a": 5, "b": []}]]),
    ("struct<p: map<int32, list<float64>>, q: fixed_size_binary(2)>",
     pa.struct([("p", pa.map_(pa.int32(), pa.list_(pa.float64()))), ("q", pa.binary(2))]),
     [{"p": [(1, [1.5, None]), (2, None)], "q": b"ab"}, None, {"p": None, "q": None},
      {"p": [], "q": b"\x00\x01"}]),
    ("fixed_size_list<struct<u: uint32>, 2>",
     pa.list_(pa.struct([("u", pa.uint32())]), 2),
     [[{"u": 1}, None], None, [{"u": None}, {"u": 2**32 - 1}]]),
]

CASE_IDS = [c[0] for c in CASES]


def node_count(t):
    """Nodes of one field of type ``t`` (itself and its subtree), pre-order."""
    if pa.types.is_map(t):
        return 2 + node_count(t.key_type) + node_count(t.item_type)
    if pa.types.is_struct(t):
        return 1 + sum(node_count(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return 1 + node_count(t.value_type)
    return 1


def unscaled(value, t):
    """The unscaled integer of a Decimal at the scale of ``t``, exactly.
    (Decimal arithmetic such as ``scaleb`` rounds to the context precision,
    28 digits by default, which would change wide decimal128/256 values.)"""
    sign, digits, exponent = value.as_tuple()
    coefficient = int("".join(map(str, digits)) or "0")
    shift = exponent + t.scale
    if shift >= 0:
        n = coefficient * 10**shift
    else:
        n, rest = divmod(coefficient, 10**-shift)
        assert rest == 0, f"{value} has more than {t.scale} fractional digits"
    return -n if sign else n


def append_value(w, node, t, v, decimal_via_i64=False):
    """Append one value of type ``t`` at ``node`` through the row path."""
    if v is None:
        w.append_null(node)
        return
    T = pa.types
    if T.is_null(t):
        w.append_null(node)
    elif T.is_boolean(t):
        w.append_bool(node, v)
    elif T.is_integer(t):
        bits = t.bit_width
        kind = "i" if T.is_signed_integer(t) else "u"
        getattr(w, f"append_{kind}{bits}")(node, v)
    elif T.is_float16(t):
        w.append_f32(node, v)
    elif T.is_float32(t):
        w.append_f32(node, v)
    elif T.is_float64(t):
        w.append_f64(node, v)
    elif T.is_decimal(t):
        if decimal_via_i64:
            w.append_i64(node, unscaled(v, t))
        else:
            w.append_decimal(node, unscaled(v, t), width=t.byte_width)
    elif T.is_date32(t) or T.is_time32(t):
        w.append_i32(node, v)
    elif T.is_date64(t) or T.is_time64(t) or T.is_timestamp(t) or T.is_duration(t):
        w.append_i64(node, v)
    elif t == pa.month_day_nano_interval():
        w.append_bytes(node, struct.pack("<iiq", *v))
    elif (T.is_string(t) or T.is_large_string(t) or T.is_binary(t) or T.is_large_binary(t)
          or T.is_fixed_size_binary(t)):
        w.append_bytes(node, v)
    elif T.is_map(t):
        key_node = node + 2
        item_node = key_node + node_count(t.key_type)
        w.begin(node)
        for k, x in v:
            w.begin(node + 1)
            append_value(w, key_node, t.key_type, k, decimal_via_i64)
            append_value(w, item_node, t.item_type, x, decimal_via_i64)
            w.end(node + 1)
        w.end(node)
    elif T.is_struct(t):
        w.begin(node)
        child = node + 1
        for i in range(t.num_fields):
            f = t.field(i)
            append_value(w, child, f.type, v[f.name], decimal_via_i64)
            child += node_count(f.type)
        w.end(node)
    elif T.is_list(t) or T.is_large_list(t) or T.is_fixed_size_list(t):
        w.begin(node)
        for x in v:
            append_value(w, node + 1, t.value_type, x, decimal_via_i64)
        w.end(node)
    else:
        raise NotImplementedError(str(t))


def write_rows(w, schema, rows, decimal_via_i64=False):
    """Append ``rows`` (tuples, one value per top-level field) and commit each."""
    for row in rows:
        node = 0
        for f, v in zip(schema, row):
            append_value(w, node, f.type, v, decimal_via_i64)
            node += node_count(f.type)
        w.end_row()


def readable_bytes(arr):
    """The bytes of a pyarrow array that must be deterministic (docs/design.md §2),
    for its own buffers and every child's, as a list."""
    out = []
    t = arr.type
    n = len(arr)
    bufs = arr.buffers()
    T = pa.types

    def cut(buf, size):
        return None if buf is None else buf.to_pybytes()[:size]

    off = arr.offset
    assert off == 0, "readable_bytes expects unsliced arrays"
    out.append(cut(bufs[0], (n + 7) // 8))
    if T.is_boolean(t):
        out.append(cut(bufs[1], (n + 7) // 8))
    elif T.is_string(t) or T.is_binary(t) or T.is_large_string(t) or T.is_large_binary(t):
        w = 8 if (T.is_large_string(t) or T.is_large_binary(t)) else 4
        offs = cut(bufs[1], (n + 1) * w)
        out.append(offs)
        last = int.from_bytes(offs[-w:], "little") if n else 0
        out.append(cut(bufs[2], last))
    elif T.is_list(t) or T.is_large_list(t) or T.is_map(t):
        w = 8 if T.is_large_list(t) else 4
        out.append(cut(bufs[1], (n + 1) * w))
        out.extend(readable_bytes(arr.values))
    elif T.is_fixed_size_list(t):
        out.extend(readable_bytes(arr.values))
    elif T.is_struct(t):
        for i in range(t.num_fields):
            out.extend(readable_bytes(arr.field(i)))
    elif T.is_null(t):
        pass
    else:
        out.append(cut(bufs[1], n * t.byte_width))
    return out

