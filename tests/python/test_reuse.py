"""Buffer recycling seen from Python: statistics, addresses, live arrays, and
bytes that do not depend on what the memory held before."""

import gc
import queue
import threading

import pyarrow as pa
import pytest

import quiver
from cases import CASE_IDS, CASES, readable_bytes, write_rows
from streams import SCHEMA, SCHEMA_TEXT, Filler, expected_table, write_row

K = 8      # batches
N = 256    # rows per batch
ARRAYS_PER_BATCH = 8  # the struct, x, s, l, l.item, p, p.a, p.b


def addresses(batch):
    """Addresses of the non-empty buffers of a batch, children included."""
    out = set()

    def visit(arr):
        for b in arr.buffers():
            if b is not None and b.size > 0:
                out.add(b.address)

    for col in batch.columns:
        visit(col)
    return out


def expected_batch(k):
    return expected_table(N, start=k * N).combine_chunks().to_batches()[0]


def after_batches(filler):
    # stats at fill call k+1 == the writer's stats once batch k was finished
    return filler.stats[1:]


def test_stream_dropping_each_batch_reuses_buffers():
    gc.collect()
    assert quiver.live_arrays() == 0
    filler = Filler(K * N)
    reader = quiver.Stream(SCHEMA_TEXT, filler, batch_rows=N).to_reader()
    addrs = []
    for k in range(K):
        b = reader.read_next_batch()
        b.validate(full=True)
        assert b.equals(expected_batch(k))
        addrs.append(addresses(b))
        assert quiver.live_arrays() == ARRAYS_PER_BATCH
        del b
        assert quiver.live_arrays() == 0, "dropping the batch must release it at once"
    with pytest.raises(StopIteration):
        reader.read_next_batch()
    after = after_batches(filler)
    assert len(after) == K
    assert [s["batches"] for s in after] == list(range(1, K + 1))
    alloc = [s["buffers_allocated"] for s in after]
    reused = [s["buffers_reused"] for s in after]
    assert alloc[0] > 0
    assert alloc == [alloc[0]] * K, f"buffers_allocated must stop growing after the first batch: {alloc}"
    assert reused[0] == 0
    assert all(reused[k] > reused[k - 1] for k in range(1, K)), f"buffers_reused must grow: {reused}"
    bytes_alloc = [s["bytes_allocated"] for s in after]
    assert bytes_alloc == [bytes_alloc[0]] * K, f"bytes_allocated must stop growing: {bytes_alloc}"
    for k in range(1, K):
        assert addrs[k] <= addrs[0], f"batch {k} must reuse the buffers of batch 0"
    del reader
    gc.collect()
    assert quiver.live_arrays() == 0


def test_stream_keeping_every_batch_allocates_and_keeps_them_intact():
    filler = Filler(K * N)
    reader = quiver.Stream(SCHEMA_TEXT, filler, batch_rows=N).to_reader()
    kept = []
    for k in range(K):
        kept.append(reader.read_next_batch())
        assert quiver.live_arrays() == ARRAYS_PER_BATCH * (k + 1)
    with pytest.raises(StopIteration):
        reader.read_next_batch()
    after = after_batches(filler)
    alloc = [s["buffers_allocated"] for s in after]
    assert all(alloc[k] > alloc[k - 1] for k in range(1, K)), f"allocations must grow: {alloc}"
    for k, b in enumerate(kept):
        b.validate(full=True)
        assert b.equals(expected_batch(k)), f"batch {k} changed while held"
    addrs = [addresses(b) for b in kept]
    for i in range(K):
        for j in range(i + 1, K):
            assert not (addrs[i] & addrs[j]), f"batches {i} and {j} share memory while both are held"
    del reader
    gc.collect()
    # the stream is gone; the batches still are valid
    for k, b in enumerate(kept):
        assert b.equals(expected_batch(k))
    assert quiver.live_arrays() == ARRAYS_PER_BATCH * K
    del kept, b
    gc.collect()
    assert quiver.live_arrays() == 0


def test_stream_holding_one_batch_reaches_steady_state():
    filler = Filler(K * N)
    reader = quiver.Stream(SCHEMA_TEXT, filler, batch_rows=N).to_reader()
    previous = None
    for k in range(K):
        b = reader.read_next_batch()
        if previous is not None:
            assert previous.equals(expected_batch(k - 1)), "a held batch must stay intact"
        previous = b
        del b
    # read the end too: the fill call that finds no more rows records the
    # stats of the last batch
    with pytest.raises(StopIteration):
        reader.read_next_batch()
    assert previous.equals(expected_batch(K - 1))
    del previous, reader
    after = after_batches(filler)
    assert len(after) == K
    alloc = [s["buffers_allocated"] for s in after]
    reused = [s["buffers_reused"] for s in after]
    assert alloc[1] > alloc[0], "the second batch cannot reuse the held first one"
    assert alloc[2:] == [alloc[2]] * (K - 2), f"no allocation once the consumer lets go: {alloc}"
    assert reused[-1] > 0


def test_writer_finish_loop_reuses_buffers():
    with quiver.Writer(SCHEMA_TEXT, batch_rows=N) as w:
        stats, addrs = [], []
        for k in range(K):
            for i in range(k * N, (k + 1) * N):
                write_row(w, i)
            b = w.finish()
            b.validate(full=True)
            assert b.equals(expected_batch(k))
            addrs.append(addresses(b))
            del b
            stats.append(w.stats())
    alloc = [s["buffers_allocated"] for s in stats]
    reused = [s["buffers_reused"] for s in stats]
    assert alloc == [alloc[0]] * K, f"buffers_allocated must stop growing after the first batch: {alloc}"
    assert all(reused[k] > reused[k - 1] for k in range(1, K)), reused
    for k in range(1, K):
        assert addrs[k] <= addrs[0]


def test_writer_finish_loop_keeping_batches():
    with quiver.Writer(SCHEMA_TEXT, batch_rows=N) as w:
        kept, alloc = [], []
        for k in range(K):
            for i in range(k * N, (k + 1) * N):
                write_row(w, i)
            kept.append(w.finish())
            alloc.append(w.stats()["buffers_allocated"])
    # the writer is freed: the batches stay valid
    gc.collect()
    assert all(alloc[k] > alloc[k - 1] for k in range(1, K)), alloc
    for k, b in enumerate(kept):
        b.validate(full=True)
        assert b.equals(expected_batch(k))
    assert quiver.live_arrays() == ARRAYS_PER_BATCH * K
    del kept, b
    gc.collect()
    assert quiver.live_arrays() == 0


def test_recycle_off_never_reuses():
    with quiver.Writer(SCHEMA_TEXT, batch_rows=N, recycle=False) as w:
        alloc = []
        for k in range(4):
            for i in range(k * N, (k + 1) * N):
                write_row(w, i)
            b = w.finish()
            assert b.equals(expected_batch(k))
            del b
            s = w.stats()
            alloc.append(s["buffers_allocated"])
            assert s["buffers_reused"] == 0
    assert all(alloc[k] > alloc[k - 1] for k in range(1, 4)), alloc


def test_release_on_another_thread():
    q = queue.Queue()
    seen = []

    def consumer():
        while True:
            item = q.get()
            if item is None:
                return
            k, b = item
            seen.append((k, b.equals(expected_batch(k))))
            del item, b

    t = threading.Thread(target=consumer)
    t.start()
    reader = quiver.Stream(SCHEMA_TEXT, Filler(K * N), batch_rows=N).to_reader()
    for k, b in enumerate(reader):
        q.put((k, b))
        del b
    q.put(None)
    t.join()
    del reader
    assert seen == [(k, True) for k in range(K)]
    gc.collect()
    assert quiver.live_arrays() == 0


def _fixed_width(t):
    if t.num_fields or pa.types.is_null(t) or pa.types.is_boolean(t):
        return False
    try:
        return t.byte_width > 0
    except ValueError:
        return False


def _dirty_values(values, n):
    non_null = [v for v in values if v is not None]
    if not non_null:
        return [None] * n
    return [non_null[i % len(non_null)] for i in range(n)]


@pytest.mark.parametrize("text,t,values", CASES, ids=CASE_IDS)
def test_bytes_do_not_depend_on_reuse(text, t, values):
    """A batch written into recycled memory that held other values has the
    same readable bytes as one written by a writer that never recycles, and
    zeros under its nulls."""
    schema = pa.schema([pa.field("c", t), pa.field("k", pa.int32())])
    n = len(values)
    dirty = _dirty_values(values, 2 * n + 3)
    with quiver.Writer(f"c: {text}, k: int32") as w:
        write_rows(w, schema, zip(dirty, range(100, 100 + len(dirty))))
        b0 = w.finish()
        del b0
        write_rows(w, schema, zip(values, range(n)))
        recycled = w.finish()
        stats = w.stats()
    with quiver.Writer(f"c: {text}, k: int32", recycle=False) as w:
        write_rows(w, schema, zip(values, range(n)))
        fresh = w.finish()
    recycled.validate(full=True)
    assert recycled.equals(fresh)
    assert stats["buffers_reused"] > 0
    for i in range(2):
        assert readable_bytes(recycled.column(i)) == readable_bytes(fresh.column(i))
    col = recycled.column(0)
    if _fixed_width(t):
        width = t.byte_width
        data = col.buffers()[1].to_pybytes()
        for i, v in enumerate(values):
            if v is None:
                assert data[i * width:(i + 1) * width] == b"\0" * width, f"non-zero bytes under null {i}"
    if pa.types.is_boolean(t):
        bits = col.buffers()[1].to_pybytes()
        for i, v in enumerate(values):
            if v is None:
                assert not (bits[i // 8] >> (i % 8)) & 1, f"boolean bit set under null {i}"
