"""Streams built through the C API, read by pyarrow, polars, duckdb and nanoarrow."""

import ctypes
import gc

import duckdb
import nanoarrow as na
import polars as pl
import pyarrow as pa
import pytest

import quiver
from quiver import ArrowArray, ArrowArrayStream, ArrowSchema, lib
from streams import SCHEMA, SCHEMA_TEXT, Filler, expected_table, write_row

TOTAL = 2500
BATCH = 512


def check_reader(reader, total=TOTAL, batch=BATCH):
    assert reader.schema.equals(SCHEMA)
    got = []
    for b in reader:
        b.validate(full=True)
        assert b.num_rows <= batch
        got.append(b)
    assert sum(b.num_rows for b in got) == total
    assert [b.num_rows for b in got[:-1]] == [batch] * (len(got) - 1)
    table = pa.Table.from_batches(got, schema=SCHEMA)
    expected = expected_table(total)
    assert table.to_pylist() == expected.to_pylist()
    assert table.equals(expected)
    # every batch equals the same rows built by pyarrow
    start = 0
    for b in got:
        assert b.equals(expected.slice(start, b.num_rows).combine_chunks().to_batches()[0])
        start += b.num_rows


def make_stream(total=TOTAL, batch=BATCH, **kw):
    return quiver.Stream(SCHEMA_TEXT, Filler(total), batch_rows=batch, **kw)


# -- pyarrow through the raw C API -------------------------------------------------

def test_pyarrow_import_from_c_with_c_callback():
    """quiver_stream_new called directly with a ctypes fill callback; the
    ArrowArrayStream is a ctypes struct of 5 pointers."""
    state = {"next": 0, "released": 0}

    @quiver.QUIVER_FILL
    def fill(ctx, wptr, max_rows):
        assert ctx == 1234
        w = quiver.Writer._borrow(wptr)
        n = min(max_rows, TOTAL - state["next"])
        for _ in range(n):
            write_row(w, state["next"])
            state["next"] += 1
        return 0

    @quiver.QUIVER_RELEASE_CTX
    def release_ctx(ctx):
        assert ctx == 1234
        state["released"] += 1

    schema = quiver.Schema(SCHEMA_TEXT)
    opts = quiver._options(batch_rows=BATCH)
    stream = (ctypes.c_void_p * 5)()
    rc = lib.quiver_stream_new(schema.address, ctypes.byref(opts), fill, ctypes.c_void_p(1234),
                               release_ctx, ctypes.addressof(stream))
    assert rc == 0
    assert all(stream[i] for i in range(4)), "get_schema/get_next/get_last_error/release must be set"
    reader = pa.RecordBatchReader._import_from_c(ctypes.addressof(stream))
    assert stream[3] is None, "pyarrow moved the stream: release must be NULL in the source"
    check_reader(reader)
    assert state["released"] == 0
    reader.close()
    del reader
    gc.collect()
    assert state["released"] == 1, "releasing the stream must call release_ctx once"


def test_raw_stream_protocol():
    """get_schema / get_next / get_last_error / release called by hand."""
    filler = Filler(10)
    s = quiver.Stream(SCHEMA_TEXT, filler, batch_rows=4)
    stream = ArrowArrayStream()
    s._export_to_c(ctypes.addressof(stream))
    addr = ctypes.addressof(stream)

    c_schema = ArrowSchema()
    assert quiver.STREAM_GET_SCHEMA(stream.get_schema)(addr, ctypes.addressof(c_schema)) == 0
    pa_schema = pa.Schema._import_from_c(ctypes.addressof(c_schema))
    assert pa_schema.equals(SCHEMA)
    assert filler.calls == 0, "get_schema must not pull data"

    lengths = []
    batches = []
    for _ in range(3):
        arr = ArrowArray()
        assert quiver.STREAM_GET_NEXT(stream.get_next)(addr, ctypes.addressof(arr)) == 0
        assert arr.release, "a batch before the end must not be released"
        lengths.append(arr.length)
        assert arr.n_children == 4 and arr.offset == 0
        batches.append(pa.RecordBatch._import_from_c(ctypes.addressof(arr), SCHEMA))
    assert lengths == [4, 4, 2]
    assert pa.Table.from_batches(batches).equals(expected_table(10))
    for _ in range(3):  # end of stream, and it keeps saying so
        arr = ArrowArray()
        assert quiver.STREAM_GET_NEXT(stream.get_next)(addr, ctypes.addressof(arr)) == 0
        assert not arr.release, "end of stream is a released array"
    quiver.STREAM_RELEASE(stream.release)(addr)
    assert not stream.release, "release must set release to NULL"
    # batches outlive the stream
    gc.collect()
    assert pa.Table.from_batches(batches).equals(expected_table(10))
    for b in batches:
        b.validate(full=True)


def test_pyarrow_capsule_route():
    s = make_stream()
    reader = pa.RecordBatchReader.from_stream(s)
    check_reader(reader)
    s2 = make_stream()
    capsule = s2.__arrow_c_stream__()
    assert type(capsule).__name__ == "PyCapsule"
    assert "arrow_array_stream" in repr(capsule)
    check_reader(pa.RecordBatchReader._import_from_c_capsule(capsule))


def test_unconsumed_capsule_is_released():
    filler = Filler(100)
    s = quiver.Stream(SCHEMA_TEXT, filler)
    capsule = s.__arrow_c_stream__()
    assert len(quiver._contexts) >= 1
    key = max(quiver._contexts)
    assert not quiver._token_released(key), "a live stream has not called release_ctx"
    del capsule
    gc.collect()
    assert quiver._token_released(key), "dropping the capsule must release the stream (release_ctx)"
    assert quiver._collect_released() >= 1
    assert key not in quiver._contexts, "a released stream's fill context is collected"
    assert filler.calls == 0


def test_requested_schema_is_accepted():
    s = make_stream()
    reader = pa.RecordBatchReader.from_stream(s, schema=SCHEMA)
    check_reader(reader)


def test_to_reader_and_read_all():
    check_reader(make_stream().to_reader())
    assert make_stream(total=700, batch=100).read_all().equals(expected_table(700))


def test_fill_writing_fewer_rows_than_max():
    # A fill that writes fewer rows than asked still continues the stream.
    s = quiver.Stream(SCHEMA_TEXT, Filler(1000, per_call=300), batch_rows=512)
    batches = list(s.to_reader())
    assert [b.num_rows for b in batches] == [300, 300, 300, 100]
    assert pa.Table.from_batches(batches).equals(expected_table(1000))


def test_max_rows_is_batch_capacity():
    filler = Filler(1000)
    list(quiver.Stream(SCHEMA_TEXT, filler, batch_rows=256).to_reader())
    assert filler.max_rows[0] == 256
    assert all(m >= 1 for m in filler.max_rows)


def test_empty_stream():
    s = quiver.Stream(SCHEMA_TEXT, Filler(0))
    reader = s.to_reader()
    assert reader.schema.equals(SCHEMA)
    assert list(reader) == []


def test_one_shot_stream_cannot_be_read_twice():
    s = make_stream(total=10)
    assert s.read_all().num_rows == 10
    with pytest.raises(RuntimeError, match="factory"):
        s.__arrow_c_stream__()


def test_factory_stream_reads_again():
    s = quiver.Stream(SCHEMA_TEXT, factory=lambda: Filler(TOTAL), batch_rows=BATCH)
    check_reader(s.to_reader())
    check_reader(s.to_reader())
    assert s.streams_created == 2


# -- polars ------------------------------------------------------------------------

def test_polars_dataframe_from_capsule():
    df = pl.DataFrame(make_stream())
    expected = expected_table(TOTAL)
    assert df.height == TOTAL
    assert df.columns == SCHEMA.names
    assert df.to_arrow().to_pylist() == expected.to_pylist()
    assert df["x"].sum() == sum(v for v in expected["x"].to_pylist() if v is not None)
    assert df["s"].null_count() == expected["s"].null_count
    del df


def test_polars_from_arrow_reader():
    df = pl.from_arrow(make_stream().to_reader())
    assert df.to_arrow().to_pylist() == expected_table(TOTAL).to_pylist()
    del df


# -- duckdb ------------------------------------------------------------------------

def expected_sums(n):
    t = expected_table(n)
    xs = [v for v in t["x"].to_pylist() if v is not None]
    return sum(xs), n, len(xs), t["s"].null_count


QUERY = "select sum(x), count(*), count(x), count(*) - count(s) from tbl"


def test_duckdb_over_factory_stream():
    tbl = quiver.Stream(SCHEMA_TEXT, factory=lambda: Filler(TOTAL), batch_rows=BATCH)  # noqa: F841
    con = duckdb.connect()
    assert con.sql(QUERY).fetchall()[0] == expected_sums(TOTAL)
    con.close()


def test_duckdb_over_one_shot_stream():
    # duckdb asks for the stream more than once; only one reads it.
    tbl = make_stream()  # noqa: F841
    con = duckdb.connect()
    assert con.sql(QUERY).fetchall()[0] == expected_sums(TOTAL)
    con.close()


def test_duckdb_over_pyarrow_reader():
    tbl = make_stream().to_reader()  # noqa: F841
    con = duckdb.connect()
    assert con.sql(QUERY).fetchall()[0] == expected_sums(TOTAL)
    con.close()


def test_duckdb_nested_values():
    tbl = quiver.Stream(SCHEMA_TEXT, factory=lambda: Filler(300), batch_rows=64)  # noqa: F841
    con = duckdb.connect()
    rows = con.sql("select x, s, l, p.a, p.b from tbl").fetchall()
    con.close()
    want = []
    for r in expected_table(300).to_pylist():
        p = r["p"] or {"a": None, "b": None}
        want.append((r["x"], r["s"], r["l"], p["a"], p["b"]))
    assert sorted(rows, key=repr) == sorted(want, key=repr)


# -- nanoarrow ---------------------------------------------------------------------

def test_nanoarrow_array_stream():
    stream = na.ArrayStream(make_stream())
    assert stream.schema.type == na.Type.STRUCT
    assert [stream.schema.field(i).name for i in range(4)] == SCHEMA.names
    arrays = list(stream)
    assert sum(len(a) for a in arrays) == TOTAL
    got = []
    for a in arrays:
        got.extend(a.to_pylist())
    assert got == expected_table(TOTAL).to_pylist()
    stream.close()
    del arrays, a, stream


def test_nanoarrow_c_array_stream():
    c_stream = na.c_array_stream(make_stream(total=100, batch=32))
    assert c_stream.get_schema().format == "+s"
    lengths = []
    x_sum = 0
    for c_array in c_stream:
        lengths.append(c_array.length)
        view = c_array.view()
        assert view.n_children == 4
        x_sum += sum(v for v in na.Array(c_array).child(0).to_pylist() if v is not None)
    assert lengths == [32, 32, 32, 4]
    assert x_sum == expected_sums(100)[0]
    c_stream.release()
    del c_array, view, c_stream
