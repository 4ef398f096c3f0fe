"""The column path: write_column from Python buffers, write_array from pyarrow."""

import struct
from array import array

import pyarrow as pa
import pytest

import quiver
from quiver import pack_validity


def test_write_column_array_q_with_validity():
    values = array("q", [10, -20, 30, -40, 50, 60, 70, 80, 90])
    valid = [True, False, True, True, False, True, True, True, False]
    with quiver.Writer("x: int64, y: float64") as w:
        w.write_column(0, values, pack_validity(valid))
        w.write_column(1, array("d", [0.5 * i for i in range(9)]))
        assert w.rows == 9
        b = w.finish()
    b.validate(full=True)
    assert b.column(0).to_pylist() == [v if ok else None for v, ok in zip(values, valid)]
    assert b.column(1).to_pylist() == [0.5 * i for i in range(9)]
    assert b.column(1).null_count == 0
    # zeros under nulls, whatever the input held there
    data = b.column(0).buffers()[1].to_pybytes()[:9 * 8]
    assert struct.unpack("<9q", data) == tuple(v if ok else 0 for v, ok in zip(values, valid))


@pytest.mark.parametrize("text,t,fmt", [
    ("int8", pa.int8(), "b"), ("uint8", pa.uint8(), "B"), ("int16", pa.int16(), "h"),
    ("uint16", pa.uint16(), "H"), ("int32", pa.int32(), "i"), ("uint32", pa.uint32(), "I"),
    ("int64", pa.int64(), "q"), ("uint64", pa.uint64(), "Q"), ("float32", pa.float32(), "f"),
    ("float64", pa.float64(), "d"), ("date32", pa.date32(), "i"), ("timestamp(ns)", pa.timestamp("ns"), "q"),
    ("duration(ms)", pa.duration("ms"), "q"), ("time32(ms)", pa.time32("ms"), "i"),
])
def test_write_column_every_fixed_width(text, t, fmt):
    n = 37
    raw = array(fmt, [(i * 7) % 100 for i in range(n)])
    valid = [i % 3 != 1 for i in range(n)]
    with quiver.Writer(f"c: {text}") as w:
        w.write_column(0, raw, pack_validity(valid))
        b = w.finish()
    b.validate(full=True)
    expected = pa.array([v if ok else None for v, ok in zip(raw, valid)], type=t)
    assert b.column(0).equals(expected)


def test_write_column_from_bytes_bytearray_memoryview_and_pyarrow_buffer():
    vals = list(range(-3, 5))
    packed = struct.pack(f"<{len(vals)}i", *vals)
    with quiver.Writer("a: int32, b: int32, c: int32, d: int32") as w:
        w.write_column(0, packed)
        w.write_column(1, bytearray(packed))
        w.write_column(2, memoryview(packed))
        w.write_column(3, pa.py_buffer(packed), length=len(vals))
        b = w.finish()
    b.validate(full=True)
    for i in range(4):
        assert b.column(i).to_pylist() == vals


def test_write_column_bool_bitmap():
    bits = [True, False, True, True, False, False, True, False, True, True]
    valid = [True, True, False, True, True, True, True, True, True, False]
    with quiver.Writer("f: bool") as w:
        w.write_column(0, pack_validity(bits), pack_validity(valid), length=len(bits))
        b = w.finish()
    b.validate(full=True)
    assert b.column(0).to_pylist() == [v if ok else None for v, ok in zip(bits, valid)]
    packed = b.column(0).buffers()[1].to_pybytes()
    assert not packed[0] >> 2 & 1, "a clear bit under the null"


def test_write_column_then_more_batches():
    with quiver.Writer("x: int64", batch_rows=100) as w:
        for k in range(4):
            w.write_column(0, array("q", range(k * 100, k * 100 + 100)))
            b = w.finish()
            assert b.column(0).to_pylist() == list(range(k * 100, k * 100 + 100))
            del b
        assert w.stats()["batches"] == 4


def test_write_column_mixed_with_write_array():
    with quiver.Writer("x: int64, s: utf8, l: list<int16>") as w:
        w.write_column(0, array("q", [1, 2, 3]))
        w.write_array(1, pa.array(["a", None, "ccc"]))
        w.write_array(2, pa.array([[1], None, [2, 3]], pa.list_(pa.int16())))
        b = w.finish()
    b.validate(full=True)
    assert b.to_pylist() == [{"x": 1, "s": "a", "l": [1]}, {"x": 2, "s": None, "l": None},
                             {"x": 3, "s": "ccc", "l": [2, 3]}]


def test_write_array_from_capsule_object():
    class OnlyCapsules:
        def __init__(self, arr):
            self.arr = arr

        def __arrow_c_array__(self, requested_schema=None):
            return self.arr.__arrow_c_array__()

    with quiver.Writer("x: int32") as w:
        w.write_array(0, OnlyCapsules(pa.array([5, None, 7], pa.int32())))
        b = w.finish()
    assert b.column(0).to_pylist() == [5, None, 7]


def test_raw_finish_consumed_by_pyarrow_and_nanoarrow():
    import nanoarrow as na

    with quiver.Writer("x: int64, s: utf8") as w:
        for i in range(5):
            w.append_i64(0, i)
            w.append_bytes(1, "v" * i)
            w.end_row()
        raw = w.finish(raw=True)
        schema_cap, array_cap = raw
        assert "arrow_array" in repr(array_cap) and "arrow_schema" in repr(schema_cap)
        b = pa.record_batch(raw)
        assert b.to_pylist() == [{"x": i, "s": "v" * i} for i in range(5)]
        for i in range(3):
            w.append_i64(0, i)
            w.append_null(1)
            w.end_row()
        a = na.Array(w.finish(raw=True))
        assert a.to_pylist() == [{"x": i, "s": None} for i in range(3)]
    del raw, schema_cap, array_cap, b, a
