"""Renders the recycling section of docs/benchmarks.md from the results of
the recycling benchmark (benches/standalone `recycle`, benches/peers/recycle_pyarrow.py).

Inputs (under RESULTS, default target/bench-results):
  recycle.jsonl      one JSON line per case (see benches/standalone/src/bin/recycle.rs)
  recycle_meta.txt   key=value lines: machine, load, commands of that run
Usage:
  recycle_report.py MD --keep OLD   puts OLD's section (an earlier run's) into MD
  recycle_report.py MD   replaces the section between the markers in MD (or inserts
                         it before "## Allocations per batch"), keeping the rest of MD
report.py imports render() to put the same section into a full report.
"""

import json
import os
import sys

RESULTS = os.environ.get("QUIVER_BENCH_OUT", "target/bench-results")
BEGIN, END = "<!-- recycle:begin -->", "<!-- recycle:end -->"
KIB, MIB = 1024, 1024 * 1024


def load():
    recs, meta = [], {}
    path = os.path.join(RESULTS, "recycle.jsonl")
    if os.path.exists(path):
        with open(path) as f:
            recs = [json.loads(line) for line in f if line.strip().startswith("{")]
    mpath = os.path.join(RESULTS, "recycle_meta.txt")
    if os.path.exists(mpath):
        with open(mpath) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    meta[k] = v
    return recs, meta


def size(b):
    return f"{b // MIB} MiB" if b >= MIB else f"{b // KIB} KiB"


def f2(v):
    if v is None:
        return "–"
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def spread(r):
    """median (p25–p75; min–max) of ns per row."""
    mn, p25, med, p75, mx = r["ns_row"]
    return f"{f2(med)} ({f2(p25)}–{f2(p75)}; {f2(mn)}–{f2(mx)})"


def faults(r):
    mn, p25, med, p75, mx = r["faults"]
    return f"{med:.0f} ({mx:.0f})"


def bufs_fmt(r):
    b = r.get("bufs_per_batch")
    return "–" if b is None else f"{b:.2f}"


def ratio(on, off):
    if not on or not off or not on["ns_row"][2]:
        return None
    return off["ns_row"][2] / on["ns_row"][2]


def rf(v, mark=None):
    if v is None:
        return "–"
    s = f"{v:.2f}x"
    if mark is not None:
        s += " ✓" if mark(v) else " ✗"
    return s


def case_key(r):
    return (r["group"], r["kind"], r["bytes"], r["hold"], r["retain"], r["alloc"])


def variant(r):
    return (r["process"], r["run"])


def pairs(recs):
    """{case_key: {variant: {recycle: rec}}}, in first-seen order."""
    out = {}
    for r in recs:
        out.setdefault(case_key(r), {}).setdefault(variant(r), {})[r["recycle"]] = r
    return out


def variants_of(by_variant):
    order = sorted(by_variant, key=lambda v: (v[0] != "fresh", v[1]))
    return [v for v in order if True in by_variant[v] and False in by_variant[v]]


def vname(v):
    return f"fresh #{v[1]}" if v[0] == "fresh" else "one process"


def resident(r):
    if r.get("peak_mib") is None or not r.get("batch_mib"):
        return None
    return (r["peak_mib"] - r["base_mib"]) / r["batch_mib"]


def held_batches(hold, batches):
    return batches if hold == "all" else int(hold)


def render():
    recs, meta = load()
    if not recs:
        return []
    P = pairs(recs)
    checks = {"pays": [], "faults": [], "slower": [], "rss": []}

    def note(key, variants):
        """Targets over every variant (fresh runs, one process) of a case."""
        label = f"{key[0]} {key[1]} {size(key[2])}" + (f" hold {key[3]} retain {key[4]}" if key[3] != "0" else "") + \
            (f" [{key[5]}]" if key[5] != "system" else "")
        for v, d in variants:
            on, off = d[True], d[False]
            r = ratio(on, off)
            where = f"{label} ({vname(v)})"
            if off["faults"][2] >= 1:
                checks["pays"].append((where, r, r is not None and r >= 1.5))
            checks["faults"].append((where, on["faults"][2], on["faults"][2] == 0))
            noise = on["ns_row"][2] <= off["ns_row"][2] * 1.05 or on["ns_row"][1] <= off["ns_row"][3]
            checks["slower"].append((where, r, noise))

    def table(title, keys, intro):
        rows = []
        for key in keys:
            vs = variants_of(P[key])
            if not vs:
                continue
            note(key, [(v, P[key][v]) for v in vs])
            first = P[key][vs[0]]
            on, off = first[True], first[False]
            ratios = " / ".join(rf(ratio(P[key][v][True], P[key][v][False])) for v in vs)
            peak = f"{f2(on.get('peak_mib'))} / {f2(off.get('peak_mib'))}"
            bufs = f"{bufs_fmt(on)} / {bufs_fmt(off)}"
            rows.append(f"| {size(key[2])} | {on['rows']:,} | {on['batches']} | {spread(on)} | {spread(off)} | "
                        f"{ratios} | {faults(on)} | {faults(off)} | {bufs} | {peak} |")
        if not rows:
            return []
        vs = variants_of(P[keys[0]])
        return [f"### {title}", "", intro, "",
                "| largest buffer | rows/batch | batches | on: ns/row median (p25–p75; min–max) | "
                "off: ns/row median (p25–p75; min–max) | off ÷ on: " + " / ".join(vname(v) for v in vs) +
                " | faults/batch on: median (max) | off | new buffers/batch on / off | peak RSS MiB on / off |",
                "|---:|---:|---:|---|---|---|---:|---:|---:|---:|"] + rows + [""]

    def keys_of(group, kind="int64", hold="0", alloc="system"):
        ks = [k for k in P if k[0] == group and k[1] == kind and k[3] == hold and k[5] == alloc]
        return sorted(ks, key=lambda k: k[2])

    L = [BEGIN, "## Where recycling pays: recycling on vs off outside criterion", "",
         "Measured by `benches/standalone` (the `recycle` program: `recycle plan`) and "
         "`benches/peers/recycle_pyarrow.py plan`, run by `bash scripts/bench.sh recycle` (this "
         "section only) or `bash scripts/bench.sh` (everything). Recycling on and off run in the same "
         "run, alternately, on the same data; every case once in a fresh process per run (`fresh #1`, "
         "`fresh #2`: the same case twice, to show the noise) and once more with every case in one "
         "process (`one process`: the allocator's state carries over from the cases before). "
         "The first 3 batches of a case (3 + *retain* for a consumer that holds some) are a warm-up; "
         "the figures are over the batches after them.", "",
         "- **Data**: `int64` = two int64 columns through `write_column`, `b` half null; the largest "
         "buffer is one values buffer (8 bytes per row). `utf8` = one utf8 column of 128..384-byte "
         "strings (256 on average) through `write_array`; the largest buffer is the data buffer "
         "(256 bytes per row). glibc's mmap threshold starts at 128 KiB and moves up to at most "
         "32 MiB as mmapped blocks are freed: buffers of 32 MiB and more are always their own `mmap`.",
         "- **Time per row**: the time of one batch (writes, `finish`, the consumer dropping or keeping "
         "it) divided by its rows; the median over batches with the spread (p25–p75; min–max).",
         "- **Faults per batch**: minor page faults (`getrusage` `ru_minflt`) during one batch: of "
         "the process (one writer; the consumer thread's interval between two batches), or of each "
         "writer's thread (`RUSAGE_THREAD`, two writers).",
         "- **Peak RSS**: VmHWM of /proc/self/status at the end of the case, reset when the case starts "
         "(`/proc/self/clear_refs`); it includes the input data (about two batches for int64, one for "
         "utf8).", ""]
    L += ["Run:", ""]
    for k in ("date", "cpu", "cores", "commit", "mode", "load_before", "load_after", "shared"):
        if k in meta:
            L.append(f"- **{k.replace('_', ' ')}**: {meta[k]}")
    cmds = [v for k, v in sorted(meta.items()) if k.startswith("cmd")]
    if cmds:
        L += ["", "```"] + cmds + ["```"]
    L.append("")

    body = []
    for kind, what in (("int64", "two int64 columns"), ("utf8", "large strings")):
        body += table(f"One writer, the consumer drops each batch on the same thread: {what}",
                      keys_of("sweep", kind),
                      "The sweep of buffer sizes: where a new buffer costs page faults, and where the "
                      "allocator's caches make it free.")
    body += table("A consumer on another thread: arrow-rs through the C Stream", keys_of("thread"),
                  "A producer thread writes into a bounded queue of 2 batches; the consumer thread reads "
                  "them through quiver's C Stream (`export_stream`) with arrow-rs's "
                  "`RecordBatchStreamReader` and drops each. Time: between two batches arriving.")
    body += table("A consumer on another thread: pyarrow through the C Stream", keys_of("pyarrow"),
                  "The same producer thread and queue (`bench_recycle_stream`); the Python thread reads "
                  "with `pyarrow.RecordBatchReader._import_from_c` + `read_next_batch` and drops each "
                  "batch. Faults include the Python thread's own.")
    body += table("Two writers on two threads at once", keys_of("two"),
                  "Each thread its own writer, both started together, each dropping its batches; time "
                  "and faults per batch of each thread, both threads' batches pooled.")
    allocs = sorted({k[5] for k in P} - {"system"})
    for a in allocs:
        body += table(f"On {a}: one writer, the consumer drops each batch", keys_of("sweep", alloc=a),
                      f"The same program built with `--features {a}` (the allocator of the benchmark "
                      "program only; the library does not choose one).")
        body += table(f"On {a}: two writers on two threads at once", keys_of("two", alloc=a),
                      f"As the two-writer table above, built with `--features {a}`.")
        sys_on = {k[2]: P[k] for k in keys_of("sweep")}
        rows = []
        for k in keys_of("sweep", alloc=a):
            s, m = sys_on.get(k[2]), P[k]
            if not s:
                continue
            vs = [v for v in variants_of(m) if v in s and True in s[v] and False in s[v]]
            if not vs:
                continue
            v = vs[0]
            rows.append(f"| {size(k[2])} | {f2(s[v][True]['ns_row'][2])} | {f2(m[v][True]['ns_row'][2])} | "
                        f"{f2(s[v][False]['ns_row'][2])} | {f2(m[v][False]['ns_row'][2])} | "
                        f"{rf(ratio(m[v][True], s[v][True]))} | {rf(ratio(m[v][False], s[v][False]))} |")
        if rows:
            body += [f"System allocator against {a} ({vname(vs[0])}; ns/row medians; `system ÷ {a}` > 1: "
                     f"{a} is faster):", "",
                     f"| largest buffer | on, system | on, {a} | off, system | off, {a} | "
                     f"on: system ÷ {a} | off: system ÷ {a} |", "|---:|---:|---:|---:|---:|---:|---:|"] + rows + [""]

    # consumers that hold batches
    hk = sorted([k for k in P if k[0] == "sweep" and k[3] != "0" and k[5] == "system"],
                key=lambda k: (k[2], k[3] == "all", k[3], k[4]))
    hrows = []
    for key in hk:
        vs = variants_of(P[key])
        if not vs:
            continue
        note(key, [(v, P[key][v]) for v in vs])
        on, off = P[key][vs[0]][True], P[key][vs[0]][False]
        held = held_batches(key[3], on["batches"] + 3)
        expect = held + 1
        ron, roff = resident(on), resident(off)
        ok = ron is not None and ron <= expect + 0.5
        checks["rss"].append((f"hold {key[3]} retain {key[4]} {size(key[2])}", ron, ok))
        ratios = " / ".join(rf(ratio(P[key][v][True], P[key][v][False])) for v in vs)
        bufs = on.get("bufs_per_batch")
        after = f"{f2(on['after_mib'] - on['base_mib'])} / {f2(off['after_mib'] - off['base_mib'])}"
        hrows.append(f"| {key[3]} | {key[4]} | {size(key[2])} | {on['batches']} | {spread(on)} | {spread(off)} | "
                     f"{ratios} | {faults(on)} | {faults(off)} | {'–' if bufs is None else f'{bufs:.2f}'} | "
                     f"{f2(ron)} / {f2(roff)} (≤ {expect}) | {after} |")
    if hrows:
        vs = variants_of(P[hk[0]])
        body += ["### Consumers that hold batches", "",
                 "The consumer keeps the last *hold* batches (`all`: every batch of the case) and drops "
                 "older ones after the next batch is finished. A writer reuses a buffer only when its "
                 "batch has been released and is still in the ring of the last *retain* batches, so a "
                 "consumer that holds *retain* batches or more gets no reuse. *Batches resident at "
                 "peak* = (peak RSS − RSS at the start of the case) ÷ one batch's bytes: at most "
                 "*hold* + 1 (the batches held and the one being written) when the ring keeps nothing "
                 "more than it should. *RSS after release*: over the start of the case, after the "
                 "consumer dropped what it held, the writer still alive (its ring keeps up to *retain* "
                 "batches for reuse).", "",
                 "| hold | retain | largest buffer | batches | on: ns/row median (p25–p75; min–max) | off | "
                 "off ÷ on: " + " / ".join(vname(v) for v in vs) + " | faults/batch on: median (max) | off | "
                 "new buffers/batch on | batches resident at peak on / off | RSS after release MiB on / off |",
                 "|---|---:|---:|---:|---|---|---|---:|---:|---:|---|---|"] + hrows + [""]

    def summary(name, items, what):
        if not items:
            return f"| {name} | not measured in this run | |"
        miss = [i for i in items if not i[2]]
        verdict = "**met**" if not miss else f"**missed** in {len(miss)} of {len(items)}"
        detail = ", ".join(f"{c}: {what(v)}" for c, v, _ in miss[:10]) + (" …" if len(miss) > 10 else "")
        return f"| {name} | {verdict} | {detail} |"

    T = ["### Targets (every case and variant above)", "", "| target | result | where missed |", "|---|---|---|",
         summary("≥ 1.5x over recycling off where allocation costs (recycling off takes ≥ 1 page fault "
                 "per batch, median)", checks["pays"], lambda v: rf(v)),
         summary("0 page faults per batch with recycling on (median over steady batches)", checks["faults"],
                 lambda v: f"{v:.0f} per batch"),
         summary("never slower than recycling off beyond noise (median within 5%, or p25 of on ≤ p75 of off)",
                 checks["slower"], lambda v: f"off ÷ on {rf(v)}"),
         summary("peak RSS with recycling on ≤ (hold + 1) batches", checks["rss"],
                 lambda v: f"{f2(v)} batches"), ""]
    notes = os.path.join(os.path.dirname(os.path.abspath(__file__)), "findings-recycle.md")
    if os.path.exists(notes):
        with open(notes) as f:
            T += [f.read().rstrip(), ""]
    return L + T + body + [END]


def splice(md_path, section=None):
    """Puts the recycling section into MD: rendered from the results, or
    `section` (the text of an earlier one, markers included)."""
    if section is None:
        lines = render()
        if not lines:
            sys.exit(f"no recycling results in {RESULTS}/recycle.jsonl")
        section = "\n".join(lines) + "\n"
    with open(md_path) as f:
        text = f.read()
    if BEGIN in text and END in text:
        a = text.index(BEGIN)
        b = text.index(END) + len(END) + 1
        text = text[:a] + section + text[b:]
    elif "## Allocations per batch" in text:
        a = text.index("## Allocations per batch")
        text = text[:a] + section + "\n" + text[a:]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    with open(md_path, "w") as f:
        f.write(text)
    print(f"wrote the recycling section of {md_path}")


def kept_section(md_path):
    """The recycling section of MD, markers included, or None."""
    with open(md_path) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        return None
    return text[text.index(BEGIN):text.index(END) + len(END)] + "\n"


if __name__ == "__main__":
    # recycle_report.py MD            the section from the results
    # recycle_report.py MD --keep OLD the section of OLD (an earlier report), unchanged
    if len(sys.argv) == 4 and sys.argv[2] == "--keep":
        old = kept_section(sys.argv[3])
        if old is None:
            sys.exit(f"no recycling section in {sys.argv[3]}")
        splice(sys.argv[1], old)
    else:
        splice(sys.argv[1])
