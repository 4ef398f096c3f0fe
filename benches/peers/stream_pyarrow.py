"""The C Stream end to end into pyarrow: rows per second pulled with
``RecordBatchReader.read_next_batch`` from endless streams of
``a: int32, b: int64, c: float64, s: utf8`` (8192-row batches, half nulls).

Producers:
  quiver          quiver's WriterStream::into_ffi (benches/standalone)
  arrow_builder   arrow-rs builders behind FFI_ArrowArrayStream::new (benches/standalone)
  quiver_py       (column path only) python/quiver.py's Stream, whose Python fill
                  copies the same four pyarrow arrays with write_array

Usage: stream_pyarrow.py PRODUCER_SO; prints ``RESULT py_stream_<path> <producer> <ns_per_row>``.
"""

import ctypes
import os
import statistics
import sys
import time

import pyarrow as pa

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "python"))

ROWS = 8192
QUICK = os.environ.get("QUIVER_BENCH_QUICK") == "1"
REPS = 20 if QUICK else 300


class ArrowArrayStream(ctypes.Structure):
    _fields_ = [("get_schema", ctypes.c_void_p), ("get_next", ctypes.c_void_p),
                ("get_last_error", ctypes.c_void_p), ("release", ctypes.c_void_p),
                ("private_data", ctypes.c_void_p)]


def reader_from(lib, fn, rows_path):
    s = ArrowArrayStream()
    getattr(lib, fn)(ctypes.c_int(rows_path), ctypes.byref(s))
    reader = pa.RecordBatchReader._import_from_c(ctypes.addressof(s))
    return reader, s


def ns_per_row(reader):
    for _ in range(5):
        reader.read_next_batch()
    times = []
    for _ in range(REPS):
        t0 = time.perf_counter_ns()
        batch = reader.read_next_batch()
        n = batch.num_rows
        del batch
        times.append((time.perf_counter_ns() - t0) / n)
    return statistics.median(times)


def main():
    lib = ctypes.CDLL(sys.argv[1])
    reference = {}
    for rows_path, path in ((0, "col"), (1, "row")):
        for name, fn in (("quiver", "bench_quiver_stream"), ("arrow_builder", "bench_builder_stream")):
            reader, keep = reader_from(lib, fn, rows_path)
            first = reader.read_next_batch()
            if path in reference and not first.equals(reference[path]):
                sys.exit(f"py_stream_{path}: {name} batch differs from the other producer's")
            reference[path] = first
            print(f"RESULT py_stream_{path} {name} {ns_per_row(reader):.3f}", flush=True)
            del reader, keep
    try:
        import quiver
    except Exception as e:  # noqa: BLE001
        print(f"SKIPPED: quiver_py: python/quiver.py not loadable: {e}")
        return
    columns = reference["col"].columns

    def fill(w, max_rows):
        for i, col in enumerate(columns):
            w.write_array(i, col)

    stream = quiver.Stream(reference["col"].schema, fill=fill, batch_rows=ROWS)
    reader = pa.RecordBatchReader.from_stream(stream)
    first = reader.read_next_batch()
    if not first.equals(reference["col"]):
        sys.exit("py_stream_col: quiver_py batch differs")
    print(f"RESULT py_stream_col quiver_py {ns_per_row(reader):.3f}", flush=True)


if __name__ == "__main__":
    main()
