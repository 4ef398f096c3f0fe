"""The writer's memory limit from Python: ENOMEM, nothing changed, and a
stream fill whose ENOMEM ends the batch early."""

import errno

import pyarrow as pa
import pytest

import quiver
from quiver import QuiverError


def test_memory_limit_refuses_and_changes_nothing():
    with quiver.Writer("a: int64, s: utf8", memory_limit=1 << 14) as w, \
            quiver.Writer("a: int64, s: utf8") as ref:
        for x in (w, ref):
            x.append_i64(0, 1)
        with pytest.raises(QuiverError) as info:
            w.append_bytes(1, b"x" * (1 << 15))
        assert info.value.code == errno.ENOMEM
        assert "memory limit of 16384 bytes" in info.value.message
        assert w.rows == 0
        for x in (w, ref):
            x.append_bytes(1, b"small")
            x.end_row()
        assert w.finish().equals(ref.finish())
        w.set_memory_limit(0)
        w.append_i64(0, 2)
        w.append_bytes(1, b"x" * (1 << 15))
        w.end_row()
        assert w.finish().num_rows == 1


def test_negative_memory_limit_is_einval():
    with quiver.Writer("a: int64") as w:
        with pytest.raises(QuiverError) as info:
            w.set_memory_limit(-1)
        assert info.value.code == errno.EINVAL


def test_stream_fill_enomem_ends_the_batch_early():
    total = 20000
    state = {"next": 0}

    def fill(w, max_rows):
        if state["next"] == 0:
            w.set_memory_limit(1 << 14)
        while state["next"] < total and w.rows < max_rows:
            w.append_i64(0, state["next"])
            w.end_row()
            state["next"] += 1

    table = quiver.Stream("a: int64", fill).read_all()
    assert table.column("a").to_pylist() == list(range(total))
    assert table.column("a").num_chunks > 2
