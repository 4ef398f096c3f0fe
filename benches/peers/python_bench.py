"""The Python row path: 8192-row batches of the 3-column records of
benches/peers/c_bench.c (int32 a, int64 b, float64 c; half: each value null
with probability 1/2), held as one numpy structured array (the values, then a
one-byte null flag per column), median ns per row over batches, printed as
``RESULT py_rows3_<none|half> <writer> <ns_per_row>``. Writers, in one run:

  quiver_py_values     per-value appends through python/quiver.py (append_i32 /
                       append_i64 / append_f64 / append_null, end_row), then finish
  quiver_py_slots      one Writer.append_slots per row (quiver_append_slots), then finish
  quiver_py_records    one Writer.write_records of the structured array, then finish
  pyarrow_from_arrays  pyarrow's own conversion: pa.array over each field of the
                       structured array (mask= the null flag), then pa.RecordBatch.from_arrays
  pyarrow_contiguous   the same after np.ascontiguousarray of each field (numpy
                       copies it out of the records first)

Each quiver batch is imported into pyarrow (Writer.finish) like the pyarrow
ones. Usage: python_bench.py [--quick]; needs numpy and pyarrow (prints
``SKIPPED: <reason>`` and exits 3 without them). QUIVER_LIB names the library.
"""

import os
import statistics
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "python"))

try:
    import numpy as np
    import pyarrow as pa
except ImportError as e:  # pragma: no cover - depends on the environment
    print(f"SKIPPED: Python benchmark: {e.name} is not installed")
    sys.exit(3)

import quiver  # noqa: E402

ROWS = 8192
QUICK = "--quick" in sys.argv[1:] or os.environ.get("QUIVER_BENCH_QUICK") == "1"
DTYPE = np.dtype([("a", "<i4"), ("b", "<i8"), ("c", "<f8"), ("na", "u1"), ("nb", "u1"), ("nc", "u1")])
SCHEMA = "a: int32, b: int64, c: float64"
M64 = (1 << 64) - 1


def records(half: bool):
    """c_bench.c's bench_records data: xorshift (13, 7, 17) from the same seed."""
    x = 0x9E3779B97F4A7C15
    rec = np.zeros(ROWS, dtype=DTYPE)
    a, b, c, nulls = [], [], [], []
    for _ in range(ROWS):
        x ^= (x << 13) & M64
        x ^= x >> 7
        x ^= (x << 17) & M64
        sx = x - (1 << 64) if x >> 63 else x
        a.append(((x & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000)
        b.append((((x * 31) & M64) ^ (1 << 63)) - (1 << 63))
        c.append(sx / 7.0)
        nulls.append((x >> 40) & 7 if half else 0)
    rec["a"], rec["b"], rec["c"] = a, b, c
    n = np.array(nulls, dtype=np.uint8)
    rec["na"], rec["nb"], rec["nc"] = n & 1, (n >> 1) & 1, (n >> 2) & 1
    return rec, a, b, c, nulls


def measure(f, reps: int) -> float:
    warm = 2 if QUICK else max(3, reps // 10)
    for _ in range(warm):
        f()
    t = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        f()
        t.append((time.perf_counter_ns() - t0) / ROWS)
    return statistics.median(t)


def main() -> None:
    fast_reps, slow_reps = (20, 3) if QUICK else (300, 15)
    for half in (False, True):
        name = "py_rows3_half" if half else "py_rows3_none"
        rec, a, b, c, nulls = records(half)
        W = quiver.Writer
        kinds = [W.SLOT_I32, W.SLOT_I64, W.SLOT_F64]
        with W(SCHEMA, batch_rows=ROWS) as w, quiver.RecordLayout.from_numpy(
                w, DTYPE, nulls={0: "na", 1: "nb", 2: "nc"}) as layout:

            def values():
                ai, bi, fi, nu, en = w.append_i32, w.append_i64, w.append_f64, w.append_null, w.end_row
                for i in range(ROWS):
                    n = nulls[i]
                    nu(0) if n & 1 else ai(0, a[i])
                    nu(1) if n & 2 else bi(1, b[i])
                    nu(2) if n & 4 else fi(2, c[i])
                    en()
                assert w.finish().num_rows == ROWS

            def slots():
                s = w.append_slots
                for i in range(ROWS):
                    s(0, kinds, (a[i], b[i], c[i]), nulls[i], True)
                assert w.finish().num_rows == ROWS

            def batched():
                w.write_records(layout, rec)
                assert w.finish().num_rows == ROWS

            def from_arrays():
                cols = [pa.array(rec[f], mask=rec["n" + f].view(np.bool_)) for f in ("a", "b", "c")]
                assert pa.RecordBatch.from_arrays(cols, names=["a", "b", "c"]).num_rows == ROWS

            def contiguous():
                cols = [pa.array(np.ascontiguousarray(rec[f]), mask=np.ascontiguousarray(rec["n" + f]).view(np.bool_))
                        for f in ("a", "b", "c")]
                assert pa.RecordBatch.from_arrays(cols, names=["a", "b", "c"]).num_rows == ROWS

            # quiver's batch is pyarrow's
            w.write_records(layout, rec)
            want = w.finish()
            from_arrays_batch = pa.RecordBatch.from_arrays(
                [pa.array(rec[f], mask=rec["n" + f].view(np.bool_)) for f in ("a", "b", "c")], names=["a", "b", "c"])
            assert want.to_pydict() == from_arrays_batch.to_pydict(), "quiver and pyarrow batches differ"
            for writer, f, reps in (("quiver_py_values", values, slow_reps), ("quiver_py_slots", slots, slow_reps),
                                    ("quiver_py_records", batched, fast_reps),
                                    ("pyarrow_from_arrays", from_arrays, fast_reps),
                                    ("pyarrow_contiguous", contiguous, fast_reps)):
                print(f"RESULT {name} {writer} {measure(f, reps):.3f}", flush=True)


if __name__ == "__main__":
    main()
