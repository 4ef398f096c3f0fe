"""A deterministic data set and the fill callables that write it."""

import pyarrow as pa

SCHEMA_TEXT = "x: int64, s: utf8, l: list<int32>, p: struct<a: float64, b: bool>"
SCHEMA = pa.schema([
    ("x", pa.int64()),
    ("s", pa.utf8()),
    ("l", pa.list_(pa.int32())),
    ("p", pa.struct([("a", pa.float64()), ("b", pa.bool_())])),
])


def row(i):
    x = None if i % 5 == 3 else i * 3 - 7
    s = None if i % 7 == 2 else f"row-{i:06d}"
    l = None if i % 11 == 4 else [(i + j) % 97 for j in range(i % 4)]
    p = None if i % 13 == 6 else {"a": i / 4.0, "b": None if i % 3 == 0 else (i % 2 == 0)}
    return x, s, l, p


def expected_table(n, start=0):
    rows = [row(i) for i in range(start, start + n)]
    cols = list(zip(*rows)) if rows else [[], [], [], []]
    return pa.table([pa.array(list(c), type=f.type) for c, f in zip(cols, SCHEMA)], schema=SCHEMA)


def write_row(w, i):
    x, s, l, p = row(i)
    if x is None:
        w.append_null(0)
    else:
        w.append_i64(0, x)
    if s is None:
        w.append_null(1)
    else:
        w.append_bytes(1, s)
    if l is None:
        w.append_null(2)
    else:
        w.begin(2)
        for v in l:
            w.append_i32(3, v)
        w.end(2)
    if p is None:
        w.append_null(4)
    else:
        w.begin(4)
        w.append_f64(5, p["a"])
        if p["b"] is None:
            w.append_null(6)
        else:
            w.append_bool(6, p["b"])
        w.end(4)
    w.end_row()


class Filler:
    """fill(writer, max_rows) writing rows 0..total-1, recording the writer's
    stats at every call and the max_rows it was given."""

    def __init__(self, total, per_call=None):
        self.total = total
        self.per_call = per_call
        self.next = 0
        self.calls = 0
        self.stats = []
        self.max_rows = []

    def __call__(self, w, max_rows):
        self.calls += 1
        self.stats.append(w.stats())
        self.max_rows.append(max_rows)
        n = min(max_rows, self.total - self.next)
        if self.per_call is not None:
            n = min(n, self.per_call)
        for _ in range(n):
            write_row(w, self.next)
            self.next += 1
        assert w.rows == n
