"""Errors: QuiverError codes and messages, and fill callables that fail."""

import ctypes
import errno
import gc

import duckdb
import polars as pl
import pyarrow as pa
import pytest

import quiver
from quiver import ArrowArray, ArrowArrayStream, QuiverError
from streams import SCHEMA_TEXT, Filler, expected_table, write_row


def raises_code(code, fn, *args):
    with pytest.raises(QuiverError) as info:
        fn(*args)
    assert info.value.code == code, f"expected {errno.errorcode[code]}, got {info.value}"
    assert info.value.message, "a failed call must leave a last-error message"
    return info.value


@pytest.mark.parametrize("text,method,args", [
    ("x: int64", "append_f64", (1.0,)),
    ("x: int64", "append_bytes", (b"12345678",)),
    ("x: int64", "append_i32", (1,)),
    ("x: utf8", "append_i64", (7,)),
    ("x: bool", "append_i8", (1,)),
    ("x: float64", "append_i64", (1,)),
    ("x: int32", "append_bool", (True,)),
    ("x: list<int32>", "append_i32", (1,)),
    ("x: struct<a: int8>", "append_i8", (1,)),
    ("x: date32", "append_i64", (1,)),
])
def test_wrong_type_append_is_einval(text, method, args):
    with quiver.Writer(text) as w:
        raises_code(errno.EINVAL, getattr(w, method), 0, *args)
        assert w.rows == 0
        w.abort_row()


def test_unknown_node_is_einval():
    with quiver.Writer("x: int64, y: list<int8>") as w:
        raises_code(errno.EINVAL, w.append_i64, 3, 1)
        raises_code(errno.EINVAL, w.append_null, 1000)
        raises_code(errno.EINVAL, w.begin, 0)  # not a nested node


def test_incomplete_row_is_einval_and_abort_drops_it():
    with quiver.Writer("a: int64, b: utf8") as w:
        w.append_i64(0, 1)
        w.append_bytes(1, "one")
        w.end_row()
        w.append_i64(0, 2)
        raises_code(errno.EINVAL, w.end_row)
        w.abort_row()
        assert w.rows == 1
        w.append_i64(0, 3)
        w.append_bytes(1, "three")
        w.end_row()
        batch = w.finish()
    batch.validate(full=True)
    assert batch.to_pylist() == [{"a": 1, "b": "one"}, {"a": 3, "b": "three"}]


def test_failed_call_changes_nothing_committed():
    with quiver.Writer("a: int64, l: list<int32>, s: struct<x: int8, y: utf8>") as w:
        for i in range(3):
            w.append_i64(0, i)
            w.begin(1)
            w.append_i32(2, i)
            w.end(1)
            w.begin(3)
            w.append_i8(4, i)
            w.append_bytes(5, str(i))
            w.end(3)
            w.end_row()
        # a half-written row with nested values, then a wrong append
        w.append_i64(0, 99)
        w.begin(1)
        w.append_i32(2, 99)
        w.append_i32(2, 98)
        raises_code(errno.EINVAL, w.append_bytes, 2, b"no")
        w.abort_row()
        assert w.rows == 3
        w.append_i64(0, 3)
        w.append_null(1)
        w.append_null(3)
        w.end_row()
        batch = w.finish()
    batch.validate(full=True)
    assert batch.to_pylist() == [
        {"a": 0, "l": [0], "s": {"x": 0, "y": "0"}},
        {"a": 1, "l": [1], "s": {"x": 1, "y": "1"}},
        {"a": 2, "l": [2], "s": {"x": 2, "y": "2"}},
        {"a": 3, "l": None, "s": None},
    ]


def test_invalid_utf8():
    with quiver.Writer("s: utf8") as w:
        raises_code(errno.EINVAL, w.append_bytes, 0, b"ok\xff\xfe")
        w.abort_row()
        w.append_bytes(0, "fine")
        w.end_row()
        assert w.finish().column(0).to_pylist() == ["fine"]
    with quiver.Writer("s: utf8", validate_utf8=False) as w:
        w.append_bytes(0, b"\xff")  # not checked when asked not to
        w.end_row()
        raw = w.finish(raw=True)
        assert raw.array.length == 1
        del raw


@pytest.mark.parametrize("text", [
    "x: int64,,", "x int64", "x: int65", "x: list<int32", ": int8", "x: struct<a int8>",
    "x: decimal128(3)", "x: fixed_size_list<int8>", "x: int64 not", "x: timestamp(weeks)",
    "",
])
def test_malformed_schema_text_is_einval(text):
    e = raises_code(errno.EINVAL, quiver.Schema, text)
    assert e.call == "quiver_schema_parse"


@pytest.mark.parametrize("t,name", [
    (pa.dictionary(pa.int32(), pa.utf8()), "dictionary"),
    (pa.dense_union([pa.field("a", pa.int8())]), "union"),
    (pa.sparse_union([pa.field("a", pa.int8())]), "union"),
])
def test_dictionary_and_union_types_are_accepted(t, name):
    # These were ENOSYS before the writer grew them; ENOSYS itself is
    # covered by the Rust error tests (a dictionary with float keys).
    with quiver.Writer(pa.schema([("v", t)])) as w:
        assert w.rows == 0, name


def test_decimal_over_precision_is_erange():
    with quiver.Writer("d: decimal32(3, 0), e: decimal128(5, 2)") as w:
        raises_code(errno.ERANGE, w.append_decimal, 0, 1000)
        raises_code(errno.ERANGE, w.append_decimal, 0, -1000)
        raises_code(errno.ERANGE, w.append_i64, 1, 100000)
        w.abort_row()
        w.append_decimal(0, 999)
        w.append_i64(1, -99999)
        w.end_row()
        b = w.finish()
    b.validate(full=True)
    assert [str(v) for v in b.column(0).to_pylist()] == ["999"]
    assert [str(v) for v in b.column(1).to_pylist()] == ["-999.99"]


def test_fixed_size_binary_and_list_lengths():
    with quiver.Writer("f: fixed_size_binary(4), l: fixed_size_list<int8, 2>") as w:
        raises_code(errno.EINVAL, w.append_bytes, 0, b"abc")
        raises_code(errno.EINVAL, w.append_bytes, 0, b"abcde")
        w.append_bytes(0, b"abcd")
        w.begin(1)
        w.append_i8(2, 1)
        raises_code(errno.EINVAL, w.end, 1)  # one of two values
        w.abort_row()
        w.append_bytes(0, b"wxyz")
        w.begin(1)
        w.append_i8(2, 1)
        w.append_i8(2, 2)
        w.end(1)
        w.end_row()
        b = w.finish()
    b.validate(full=True)
    assert b.to_pylist() == [{"f": b"wxyz", "l": [1, 2]}]


def test_column_path_errors():
    with quiver.Writer("x: int64, s: utf8, l: list<int32>") as w:
        raises_code(errno.EINVAL, w.write_column, 1, b"\0" * 8, None, 1)  # not fixed width
        raises_code(errno.EINVAL, w.write_column, 3, b"\0" * 4, None, 1)  # not top-level
        raises_code(errno.EINVAL, w.write_array, 0, pa.array([1, 2], pa.int32()))  # wrong type
        raises_code(errno.EINVAL, w.write_array, 1, pa.array([1], pa.int64()))
        assert w.rows == 0


def test_closed_writer_raises():
    w = quiver.Writer("x: int64")
    w.close()
    with pytest.raises(ValueError):
        w.append_i64(0, 1)
    w.close()  # twice is fine


# -- fill callables that fail --------------------------------------------------------

class Boom(Exception):
    pass


def failing_fill(after_batches, message="boom 42"):
    state = {"calls": 0, "next": 0}

    def fill(w, max_rows):
        if state["calls"] == after_batches:
            raise Boom(message)
        state["calls"] += 1
        for _ in range(min(max_rows, 10)):
            write_row(w, state["next"])
            state["next"] += 1
    return fill


def test_fill_raising_fails_the_pyarrow_reader():
    s = quiver.Stream(SCHEMA_TEXT, failing_fill(2), batch_rows=10)
    reader = s.to_reader()
    first = reader.read_next_batch()
    second = reader.read_next_batch()
    with pytest.raises(Exception, match="boom 42") as info:
        reader.read_next_batch()
    assert not isinstance(info.value, StopIteration)
    assert "Boom" in str(info.value)
    assert isinstance(s.exception, Boom)
    # the batches already given out stay valid
    assert pa.Table.from_batches([first, second]).equals(expected_table(20))
    del first, second, reader


def test_fill_raising_through_raw_stream_is_eio_and_sticky():
    s = quiver.Stream(SCHEMA_TEXT, failing_fill(1, "exploded at batch 2"), batch_rows=10)
    stream = ArrowArrayStream()
    s._export_to_c(ctypes.addressof(stream))
    addr = ctypes.addressof(stream)
    get_next = quiver.STREAM_GET_NEXT(stream.get_next)
    arr = ArrowArray()
    assert get_next(addr, ctypes.addressof(arr)) == 0
    assert arr.release and arr.length == 10
    batch = pa.RecordBatch._import_from_c(ctypes.addressof(arr), expected_table(0).schema)
    for _ in range(2):
        arr = ArrowArray()
        assert get_next(addr, ctypes.addressof(arr)) == errno.EIO
        assert not arr.release, "no array on error"
        msg = quiver.stream_get_last_error(stream)
        assert msg is not None and "exploded at batch 2" in msg
    quiver.STREAM_RELEASE(stream.release)(addr)
    assert batch.equals(expected_table(10).to_batches()[0])
    del batch


def test_fill_raising_base_exception_does_not_crash():
    class Stop(BaseException):
        pass

    def fill(w, max_rows):
        raise Stop("base exception in fill")

    s = quiver.Stream(SCHEMA_TEXT, fill)
    with pytest.raises(Exception, match="base exception in fill"):
        s.read_all()


def test_quiver_error_inside_fill_reaches_the_reader():
    def fill(w, max_rows):
        w.append_bytes(0, b"not an int64")  # x is int64

    s = quiver.Stream(SCHEMA_TEXT, fill)
    with pytest.raises(Exception, match="EINVAL") as info:
        s.read_all()
    assert "QuiverError" in str(info.value)
    assert isinstance(s.exception, QuiverError) and s.exception.code == errno.EINVAL


def test_borrowed_writer_dies_with_the_call():
    kept = []

    def fill(w, max_rows):
        kept.append(w)

    quiver.Stream(SCHEMA_TEXT, fill).read_all()
    with pytest.raises(ValueError):
        kept[0].append_i64(0, 1)


def test_fill_error_in_polars_and_duckdb():
    with pytest.raises(Exception, match="boom in polars"):
        pl.DataFrame(quiver.Stream(SCHEMA_TEXT, failing_fill(1, "boom in polars")))
    tbl = quiver.Stream(SCHEMA_TEXT, factory=lambda: failing_fill(1, "boom in duckdb"))  # noqa: F841
    con = duckdb.connect()
    with pytest.raises(Exception, match="boom in duckdb"):
        con.sql("select count(*) from tbl").fetchall()
    con.close()
    gc.collect()


def test_writer_new_error_uses_thread_local_message():
    e = raises_code(errno.EINVAL, quiver.Schema, "x: nosuchtype")
    assert "nosuchtype" in e.message or "type" in e.message.lower()
