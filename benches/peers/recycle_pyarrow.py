"""Recycling on vs off with a pyarrow consumer on another thread.

A producer thread in Rust (``bench_recycle_stream`` of benches/standalone)
writes batches of two int64 columns (one half null) into a bounded queue of
2 batches; this Python thread imports them through quiver's C Stream with
``pyarrow.RecordBatchReader._import_from_c`` and drops each one. Per batch:
the time between two batches arriving, per row, and the minor page faults of
the whole process in that time (``resource.getrusage``); per case the peak
RSS (VmHWM, reset per case through /proc/self/clear_refs).

Usage:
  recycle_pyarrow.py LIB plan [--quick] [--fresh-runs N]
      every case, each in a fresh Python process (N times), then all of them
      again in this one process
  recycle_pyarrow.py LIB one BYTES on|off BATCHES PROCESS RUN
Prints one JSON line per case (the fields of the ``recycle`` program).
"""

import ctypes
import json
import resource
import subprocess
import sys
import time

KIB, MIB = 1024, 1024 * 1024
WARMUP = 3
RETAIN = 3
DEPTH = 2


class ArrowArrayStream(ctypes.Structure):
    _fields_ = [("get_schema", ctypes.c_void_p), ("get_next", ctypes.c_void_p),
                ("get_last_error", ctypes.c_void_p), ("release", ctypes.c_void_p),
                ("private_data", ctypes.c_void_p)]


def batches_for(nbytes, quick):
    n = min(max((1 << 29) // nbytes, 12), 2000)
    return max(n // 8, 5) if quick else n


def plan(quick):
    sizes = [64 * KIB, 32 * MIB] if quick else [64 * KIB, MIB, 32 * MIB, 128 * MIB]
    return [(b, r, batches_for(b, quick)) for b in sizes for r in ("on", "off")]


def status_kib(field):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def quantiles(v):
    v = sorted(v)

    def q(p):
        at = p * (len(v) - 1)
        lo, hi = int(at), min(int(at) + 1, len(v) - 1)
        return v[lo] + (v[hi] - v[lo]) * (at - lo)

    return [round(q(p), 4) for p in (0.0, 0.25, 0.5, 0.75, 1.0)]


def run_one(lib, nbytes, recycle, batches, process, run):
    import pyarrow as pa

    reset = reset_peak()
    base = status_kib("VmRSS")
    s = ArrowArrayStream()
    rc = lib.bench_recycle_stream(0, ctypes.c_uint64(nbytes), 1 if recycle == "on" else 0, RETAIN,
                                  ctypes.c_uint64(WARMUP + batches), DEPTH, ctypes.byref(s))
    if rc != 0:
        sys.exit(f"bench_recycle_stream failed: {rc}")
    reader = pa.RecordBatchReader._import_from_c(ctypes.addressof(s))
    samples, rows, batch_bytes, i = [], 0, 0, 0
    last = (time.perf_counter_ns(), resource.getrusage(resource.RUSAGE_SELF).ru_minflt)
    while True:
        try:
            b = reader.read_next_batch()
        except StopIteration:
            break
        rows = b.num_rows
        if not batch_bytes:
            batch_bytes = b.get_total_buffer_size()
        del b
        now = (time.perf_counter_ns(), resource.getrusage(resource.RUSAGE_SELF).ru_minflt)
        if i >= WARMUP:
            samples.append((now[0] - last[0], now[1] - last[1]))
        last = now
        i += 1
    del reader
    if len(samples) != batches:
        sys.exit(f"expected {batches} batches after the warm-up, got {len(samples)}")
    faults = [f for _, f in samples]
    return {
        "group": "pyarrow", "kind": "int64", "bytes": nbytes, "rows": rows, "recycle": recycle == "on",
        "hold": "0", "retain": RETAIN, "alloc": "system", "process": process, "run": run,
        "batches": batches, "ns_row": quantiles([t / rows for t, _ in samples]),
        "faults": quantiles(faults), "fault_mean": round(sum(faults) / len(faults), 2),
        "bufs_per_batch": None, "batch_mib": round(batch_bytes / MIB, 2), "base_mib": round(base / 1024, 1),
        "peak_mib": round(status_kib("VmHWM") / 1024, 1) if reset or process == "fresh" else None,
        "after_mib": round(status_kib("VmRSS") / 1024, 1),
    }


def main():
    lib_path, mode = sys.argv[1], sys.argv[2]
    lib = ctypes.CDLL(lib_path)
    if mode == "one":
        nbytes, recycle, batches, process, run = sys.argv[3:8]
        print(json.dumps(run_one(lib, int(nbytes), recycle, int(batches), process, int(run))), flush=True)
        return
    quick = "--quick" in sys.argv
    runs = int(sys.argv[sys.argv.index("--fresh-runs") + 1]) if "--fresh-runs" in sys.argv else (1 if quick else 2)
    cases = plan(quick)
    for run in range(1, runs + 1):
        for nbytes, recycle, batches in cases:
            out = subprocess.run([sys.executable, __file__, lib_path, "one", str(nbytes), recycle, str(batches),
                                  "fresh", str(run)], check=True, capture_output=True, text=True)
            print(out.stdout, end="", flush=True)
    for nbytes, recycle, batches in cases:
        print(json.dumps(run_one(lib, nbytes, recycle, batches, "repeated", 1)), flush=True)


if __name__ == "__main__":
    main()
