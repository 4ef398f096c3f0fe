"""Row-major records in one call per batch: raw buffers, numpy structured
arrays (when numpy is installed), UnsafeRows by pointer, a bad record."""

import ctypes
import struct

import pytest

import quiver
from quiver import RecordLayout, RecordsError

L = RecordLayout


def _records(n, bad_at=None):
    """int32 a @0 (null flag byte @4), float64 b @8, utf8 s as u32 offset @16
    and u32 length @20 (bytes @24..32); 32-byte records."""
    out = bytearray()
    for i in range(n):
        text = f"r{i}".encode() if i != bad_at else b"\xff"
        rec = struct.pack("<iB3xdII", i * 10, 1 if i % 3 == 1 else 0, i / 4, 24, len(text))
        out += rec + text.ljust(8, b"\x00")
    return bytes(out)


def _layout(w):
    layout = L(w)
    layout.set(0, L.FIXED, 0, null=L.NULL_BYTE, null_at=4)
    layout.set(1, L.FIXED, 8)
    layout.set(2, L.REL_LEN, 16, 20)
    return layout


def test_buffer_of_records():
    with quiver.Writer("a: int32, b: float64, s: utf8") as w, _layout(w) as layout:
        assert w.write_records(layout, _records(10), stride=32) == 10
        assert w.write_records(layout, bytearray(_records(5)), stride=32, n=2) == 2
        b = w.finish()
    assert b.num_rows == 12
    assert b.column(0).to_pylist() == [None if i % 3 == 1 else i * 10 for i in list(range(10)) + [0, 1]]
    assert b.column(1).to_pylist() == [i / 4 for i in list(range(10)) + [0, 1]]
    assert b.column(2).to_pylist() == [f"r{i}" for i in list(range(10)) + [0, 1]]
    # zeros under nulls
    assert struct.unpack("<i", b.column(0).buffers()[1].to_pybytes()[4:8]) == (0,)


@pytest.mark.parametrize("bad_at", range(5))
def test_bad_record_commits_the_ones_before(bad_at):
    with quiver.Writer("a: int32, b: float64, s: utf8") as w, _layout(w) as layout:
        with pytest.raises(RecordsError) as e:
            w.write_records(layout, _records(5, bad_at), stride=32)
        assert e.value.written == bad_at
        assert e.value.code == quiver._errno.EINVAL
        assert f"record {bad_at}" in e.value.message
        assert w.rows == bad_at
        b = w.finish()
    assert b.column(2).to_pylist() == [f"r{i}" for i in range(bad_at)]


def test_numpy_structured_array():
    np = pytest.importorskip("numpy")
    dt = np.dtype([("a", "<i4"), ("a_null", "u1"), ("b", "<f8"), ("c", "?")], align=True)
    arr = np.zeros(100, dtype=dt)
    arr["a"] = np.arange(100)
    arr["a_null"] = np.arange(100) % 7 == 0
    arr["b"] = np.arange(100) * 0.5
    arr["c"] = np.arange(100) % 2 == 0
    with quiver.Writer("a: int32, b: float64, c: bool") as w, L.from_numpy(w, dt, {0: "a_null"}) as layout:
        assert w.write_records(layout, arr) == 100
        b = w.finish()
    assert b.column(0).to_pylist() == [None if i % 7 == 0 else i for i in range(100)]
    assert b.column(1).to_pylist() == [i * 0.5 for i in range(100)]
    assert b.column(2).to_pylist() == [i % 2 == 0 for i in range(100)]


def _unsafe_row(i, s):
    """An UnsafeRow of (int64, utf8): bitset word, two slots, the string."""
    data = s.encode()
    padded = data.ljust((len(data) + 7) // 8 * 8, b"\x00")
    return struct.pack("<QqQ", 0, i, (24 << 32) | len(data)) + padded


def test_unsafe_rows_by_pointer():
    rows = [ctypes.create_string_buffer(_unsafe_row(i, "x" * i), len(_unsafe_row(i, "x" * i))) for i in range(6)]
    with quiver.Writer("k: int64, s: utf8") as w, L.unsafe_row(w) as layout:
        ptrs = [ctypes.addressof(r) for r in rows]
        sizes = [ctypes.sizeof(r) for r in rows]
        assert w.write_record_ptrs(layout, ptrs, sizes) == 6
        # a size that cuts the string off: a bad record
        sizes[2] = 24
        with pytest.raises(RecordsError) as e:
            w.write_record_ptrs(layout, ptrs, sizes)
        assert e.value.written == 2
        b = w.finish()
    assert b.column(0).to_pylist() == [0, 1, 2, 3, 4, 5, 0, 1]
    assert b.column(1).to_pylist() == ["x" * i for i in range(6)] + ["", "x"]


def test_layout_refusals():
    with quiver.Writer("a: int32, l: list<int32>") as w:
        with L(w) as layout:
            with pytest.raises(quiver.QuiverError) as e:
                layout.set(0, L.PTR_LEN, 0, 8)
            assert e.value.code == quiver._errno.EINVAL
            with pytest.raises(quiver.QuiverError) as e:
                layout.set(1, L.FIXED, 0)
            assert e.value.code == quiver._errno.ENOSYS
        with pytest.raises(quiver.QuiverError):
            L.unsafe_row(w)


def test_append_slots_one_call_per_row():
    """quiver_append_slots: a row's fixed-width values in one call, nulls from
    the mask, the same values as the per-value appends; a wrong kind raises
    the per-value append's error and leaves the values before it."""
    W = quiver.Writer
    kinds = [W.SLOT_I32, W.SLOT_I64, W.SLOT_F64, W.SLOT_F32]
    with W("a: int32, b: int64, c: float64, d: float32") as w:
        for i in range(10):
            w.append_slots(0, kinds, [-i, 1 << 40 | i, i / 4, i * 0.5], nulls=0b0010 if i % 3 == 0 else 0, end_row=True)
        b = w.finish()
    assert b.column(0).to_pylist() == [-i for i in range(10)]
    assert b.column(1).to_pylist() == [None if i % 3 == 0 else 1 << 40 | i for i in range(10)]
    assert b.column(2).to_pylist() == [i / 4 for i in range(10)]
    assert b.column(3).to_pylist() == [i * 0.5 for i in range(10)]
    with W("a: int32, b: int64, c: int32") as w:
        with pytest.raises(quiver.QuiverError) as e:
            w.append_slots(0, [W.SLOT_I32, W.SLOT_I64, W.SLOT_I64], [1, 2, 3], end_row=True)
        assert e.value.code == quiver._errno.EINVAL
        assert e.value.message.startswith("append_i64: node 2")
        w.append_slots(2, [W.SLOT_I32], [3], end_row=True)
        b = w.finish()
    assert [c.to_pylist() for c in b.columns] == [[1], [2], [3]]
