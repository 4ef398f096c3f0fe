"""Every type of docs/schema-text.md, nulls included, through the row path and
the column path, compared with the same data built by pyarrow itself."""

import ctypes
import struct

import pyarrow as pa
import pytest

import quiver
from cases import CASE_IDS, CASES, node_count, unscaled, write_rows


def expected_batch(t, values):
    n = len(values)
    return pa.record_batch([pa.array(values, type=t), pa.array(range(n), type=pa.int32())],
                           names=["c", "k"])


def pylist(column):
    """Python values of a column, for a readable diff. Nanosecond temporal
    values have no exact Python object without pandas: compare their int64
    storage instead."""
    t = column.type
    T = pa.types
    if (T.is_timestamp(t) or T.is_duration(t) or T.is_time64(t)) and t.unit == "ns":
        column = column.cast(pa.int64())
    return column.to_pylist()


def check_batch(batch, expected):
    batch.validate(full=True)
    assert batch.schema.equals(expected.schema), f"{batch.schema} != {expected.schema}"
    assert batch.num_rows == expected.num_rows
    for i in range(expected.num_columns):
        assert pylist(batch.column(i)) == pylist(expected.column(i))
        assert batch.column(i).equals(expected.column(i))
    assert batch.equals(expected)


@pytest.mark.parametrize("text,t,values", CASES, ids=CASE_IDS)
def test_schema_text(text, t, values):
    schema = quiver.Schema(f"c: {text}, k: int32 not null")
    expected = pa.schema([pa.field("c", t), pa.field("k", pa.int32(), nullable=False)])
    got = schema.to_pyarrow()
    assert got.equals(expected), f"{got} != {expected}"
    with quiver.Writer(schema) as w:
        assert w.arrow_schema.equals(expected)


@pytest.mark.parametrize("text,t,values", CASES, ids=CASE_IDS)
def test_row_path(text, t, values):
    expected = expected_batch(t, values)
    with quiver.Writer(f"c: {text}, k: int32") as w:
        write_rows(w, expected.schema, zip(values, range(len(values))))
        assert w.rows == len(values)
        batch = w.finish()
        assert w.rows == 0
    check_batch(batch, expected)


@pytest.mark.parametrize("text,t,values", CASES, ids=CASE_IDS)
def test_row_path_from_pyarrow_schema(text, t, values):
    expected = expected_batch(t, values)
    with quiver.Writer(expected.schema) as w:
        write_rows(w, expected.schema, zip(values, range(len(values))))
        batch = w.finish()
    check_batch(batch, expected)


@pytest.mark.parametrize("text,t,values", CASES, ids=CASE_IDS)
def test_write_array(text, t, values):
    expected = expected_batch(t, values)
    with quiver.Writer(f"c: {text}, k: int32") as w:
        # nodes are pre-order over the whole field tree: column k comes
        # after every node of column c
        w.write_array(0, expected.column(0))
        w.write_array(node_count(t), expected.column(1))
        batch = w.finish()
    check_batch(batch, expected)


@pytest.mark.parametrize("text,t,values", CASES, ids=CASE_IDS)
def test_write_array_sliced(text, t, values):
    # An input array with a non-zero offset: the copy must start at it.
    full = expected_batch(t, values + values)
    expected = expected_batch(t, values[1:] + values[:2])
    with quiver.Writer(f"c: {text}, k: int32") as w:
        w.write_array(0, full.column(0).slice(1, len(values) + 1))
        w.write_array(node_count(t), expected.column(1))
        batch = w.finish()
    check_batch(batch, expected)


@pytest.mark.parametrize("text,t,values", [c for c in CASES if pa.types.is_decimal(c[1])],
                         ids=[c[0] for c in CASES if pa.types.is_decimal(c[1])])
def test_decimal_unscaled_i64(text, t, values):
    small = [v for v in values if v is None or abs(unscaled(v, t)) < 2**63]
    small.append(None)
    expected = expected_batch(t, small)
    with quiver.Writer(f"c: {text}, k: int32") as w:
        write_rows(w, expected.schema, zip(small, range(len(small))), decimal_via_i64=True)
        batch = w.finish()
    check_batch(batch, expected)


def test_decimal_short_bytes_are_sign_extended():
    t = pa.decimal128(10, 2)
    with quiver.Writer("d: decimal128(10, 2)") as w:
        for raw in (b"\xff", b"\x01\x02", b"\x80"):
            w.append_decimal(0, raw)
            w.end_row()
        batch = w.finish()
    batch.validate(full=True)
    expected = [int.from_bytes(r, "little", signed=True) for r in (b"\xff", b"\x01\x02", b"\x80")]
    got = [int(v.scaleb(2)) for v in batch.column(0).to_pylist()]
    assert got == expected
    assert batch.column(0).type == t


def test_all_types_in_one_schema():
    n = max(len(c[2]) for c in CASES)
    names = [f"c{i}" for i in range(len(CASES))]
    text = ", ".join(f"{name}: {c[0]}" for name, c in zip(names, CASES))
    columns = [c[2] + [None] * (n - len(c[2])) for c in CASES]
    expected = pa.record_batch([pa.array(col, type=c[1]) for col, c in zip(columns, CASES)], names=names)
    with quiver.Writer(text) as w:
        write_rows(w, expected.schema, zip(*columns))
        first = w.finish()
        # a second batch in the same writer, rows reversed
        write_rows(w, expected.schema, reversed(list(zip(*columns))))
        second = w.finish()
        assert w.stats()["batches"] == 2
    check_batch(first, expected)
    rev = pa.record_batch([pa.array(col[::-1], type=c[1]) for col, c in zip(columns, CASES)],
                          names=names)
    check_batch(second, rev)


def test_not_null_columns():
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False),
                        pa.field("name", pa.utf8(), nullable=False)])
    with quiver.Writer("id: int64 not null, name: utf8 not null") as w:
        assert w.arrow_schema.equals(schema)
        for i in range(20):
            w.append_i64(0, i * 11)
            w.append_bytes(1, f"n{i}")
            w.end_row()
        batch = w.finish()
    batch.validate(full=True)
    assert batch.equals(pa.record_batch([pa.array([i * 11 for i in range(20)]),
                                         pa.array([f"n{i}" for i in range(20)])], schema=schema))
    assert batch.column(0).null_count == 0


def test_float16_raw_bits():
    values = [1.5, -0.25, 65504.0, 0.0]
    with quiver.Writer("h: float16") as w:
        for v in values:
            (bits,) = struct.unpack("<H", struct.pack("<e", v))
            w.append_u16(0, bits)
            w.end_row()
        w.append_null(0)
        w.end_row()
        w.append_f32(0, 1.0 / 3.0)  # rounded to nearest float16
        w.end_row()
        batch = w.finish()
    batch.validate(full=True)
    third = struct.unpack("<e", struct.pack("<e", 1.0 / 3.0))[0]
    assert batch.column(0).equals(pa.array(values + [None, third], type=pa.float16()))


def _c_buffer(batch_raw, column, index, size):
    top = batch_raw.array
    child = top.children[column].contents
    assert child.n_buffers >= index + 1
    ptr = child.buffers[index]
    return ctypes.string_at(ptr, size) if ptr else None, child


@pytest.mark.parametrize("text,fmt,values,append", [
    ("interval(year_month)", "tiM", [14, None, -3, 0], "i32"),
    ("interval(day_time)", "tiD", [(1, 1000), None, (-2, -5), (0, 0)], "bytes"),
])
def test_intervals_without_python_arrays(text, fmt, values, append):
    # pyarrow has no Python array class for these two: check the C struct's
    # bytes, and have pyarrow validate the batch and nanoarrow read it.
    width = 4 if append == "i32" else 8
    with quiver.Writer(f"v: {text}") as w:
        for v in values:
            if v is None:
                w.append_null(0)
            elif append == "i32":
                w.append_i32(0, v)
            else:
                w.append_bytes(0, struct.pack("<ii", *v))
            w.end_row()
        raw = w.finish(raw=True)
        c_schema = quiver.ArrowSchema.from_address(quiver.capsule_pointer(raw.schema_capsule, b"arrow_schema"))
        assert c_schema.children[0].contents.format.decode() == fmt
        n = len(values)
        data, child = _c_buffer(raw, 0, 1, n * width)
        assert child.length == n and child.null_count == 1
        want = b"".join(
            b"\0" * width if v is None else
            (struct.pack("<i", v) if append == "i32" else struct.pack("<ii", *v)) for v in values)
        assert data == want  # zeros under the null
        validity, _ = _c_buffer(raw, 0, 0, 1)
        assert validity == bytes([0b1101])
        batch = pa.record_batch(raw)
        batch.validate(full=True)
        assert batch.num_rows == n
        assert str(batch.schema.field(0).type) == ("month_interval" if fmt == "tiM" else "day_time_interval")
        del batch, raw, c_schema, child
