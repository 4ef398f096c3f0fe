"""pyarrow step of the conformance run (tests/conformance/run.sh).

Reads the per-case results of tests/conformance.rs (target/conformance/results.json)
and, for every case whose row-path output was written as an IPC stream
(target/conformance/<version>__<case>.arrows), reads it with pyarrow, runs
`validate(full=True)` on each batch and compares it with pyarrow's reading of
the gold `.stream` file: schema with metadata, batch count, and each batch
with `equals(check_metadata=True)`.

Then it renders docs/conformance.md and checks it against the committed one:
a case the committed table lists as passed that does not pass now is a
regression (exit 1); a new pass, or any other change, asks for the table to be
regenerated with QUIVER_UPDATE_CONFORMANCE=1, which rewrites it.

Prints one line per case and last
`SUMMARY <passed> passed, <failed> failed, <unsupported> unsupported (of <n> cases)`.
"""

import gzip
import json
import os
import sys
from pathlib import Path

import pyarrow as pa

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(os.environ.get("QUIVER_CONFORMANCE_OUT", ROOT / "target" / "conformance"))
TABLE = ROOT / "docs" / "conformance.md"
REGENERATE = "QUIVER_UPDATE_CONFORMANCE=1 bash tests/conformance/run.sh"


def short(text, limit=300):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def first_invalid(batches):
    """The first message of validate(full=True) over `batches`, or None."""
    for i, b in enumerate(batches):
        try:
            b.validate(full=True)
        except pa.ArrowInvalid as e:
            return f"batch {i}: {short(e, 160)}"
    return None


def non_canonical_maps(json_path):
    """Map fields of the gold JSON schema whose entries/key/value have other names."""
    with gzip.open(json_path, "rt") as f:
        schema = json.load(f)["schema"]
    found = []

    def walk(field, path):
        if field["type"]["name"] == "map":
            entries = field["children"][0]
            names = [entries["name"]] + [c["name"] for c in entries["children"]]
            if names != ["entries", "key", "value"]:
                found.append(f"{path} ({'/'.join(names)})")
        for c in field.get("children", []):
            walk(c, f"{path}.{c['name']}")

    for field in schema["fields"]:
        walk(field, field["name"])
    return found


def first_difference(ours, gold):
    for c in range(ours.num_columns):
        a, b = ours.column(c), gold.column(c)
        if a.type != b.type:
            return f"column '{ours.schema.field(c).name}': type {a.type}, gold {b.type}"
        if a.equals(b):
            continue
        for i in range(min(len(a), len(b))):
            if not a.slice(i, 1).equals(b.slice(i, 1)):
                return (f"column '{ours.schema.field(c).name}' row {i}: "
                        f"{short(a.slice(i, 1).to_pylist(), 100)}, gold {short(b.slice(i, 1).to_pylist(), 100)}")
        return f"column '{ours.schema.field(c).name}' differs"
    return "schema metadata differs"


def has_dictionary(t):
    """Whether `t` holds a dictionary or run-end encoded type anywhere."""
    if pa.types.is_dictionary(t) or pa.types.is_run_end_encoded(t):
        return True
    return any(has_dictionary(t.field(k).type) for k in range(t.num_fields))


def equal_decoded(ours, gold):
    """Batches equal once dictionaries (and run-end encodings) are decoded:
    pyarrow's `equals` compares dictionary indices and dictionaries as they
    are, and the writer may encode them otherwise than the gold file. Other
    columns must be `equals`."""
    if ours.schema != gold.schema or ours.num_rows != gold.num_rows:
        return False
    for a, b in zip(ours.columns, gold.columns):
        if a.equals(b):
            continue
        if not has_dictionary(a.type) or a.to_pylist() != b.to_pylist():
            return False
    return True


def check_pyarrow(result):
    """(problems, notes) of comparing our row-path stream with the gold stream."""
    problems, notes = [], []
    with pa.ipc.open_stream(result["arrows"]) as r:
        ours_schema, ours = r.schema, list(r)
    with pa.ipc.open_stream(result["stream"]) as r:
        gold_schema, gold = r.schema, list(r)
    if not ours_schema.equals(gold_schema, check_metadata=True):
        problems.append(f"schema differs: ours {short(ours_schema, 150)}; gold {short(gold_schema, 150)}")
    if len(ours) != len(gold):
        problems.append(f"{len(ours)} batches, the gold stream has {len(gold)}")
    gold_invalid = first_invalid(gold)
    ours_invalid = first_invalid(ours)
    if gold_invalid:
        notes.append(f"known quirk: the gold data fails full validation ({gold_invalid}), "
                     "so pyarrow compares it by value only, not validated")
    elif ours_invalid:
        problems.append(f"validate(full=True): {ours_invalid}")
    for i, (a, b) in enumerate(zip(ours, gold)):
        if not a.equals(b, check_metadata=True) and not equal_decoded(a, b):
            problems.append(f"batch {i}: {first_difference(a, b)}")
            break
    maps = non_canonical_maps(result["json"])
    if maps:
        notes.append("known quirk: non-canonical map field names " + ", ".join(maps)
                     + ": pyarrow reads them as entries/key/value on both sides, so it compares by value; "
                     "the Rust check compares the names exactly")
    return problems, notes


def final(result):
    """(status, reason) of a case, from the Rust checks and the pyarrow step."""
    status, reasons, notes = result["status"], [], []
    if result["reason"]:
        reasons.append(result["reason"])
    if result.get("arrows"):
        try:
            problems, notes = check_pyarrow(result)
        except Exception as e:  # a file pyarrow cannot read is a failure of the case
            problems = [f"cannot read the streams: {short(e)}"]
        if problems:
            reasons.append("pyarrow: " + "; ".join(problems))
            if status == "passed":
                status = "failed"
    elif status == "passed":
        status, reasons = "failed", ["harness: the Rust checks passed but wrote no row-path IPC file"]
    return status, "; ".join(reasons + notes)


def render(rows):
    counts = {s: sum(1 for _, st, _ in rows if st == s) for s in ("passed", "failed", "unsupported")}
    lines = [
        "# Conformance with Arrow's integration gold files",
        "",
        "<!-- Generated by tests/conformance/run.sh (tests/conformance.rs, then tests/conformance/compare.py). "
        f"Do not edit: {REGENERATE} rewrites it. -->",
        "",
        f"**{counts['passed']} of {len(rows)} cases passed**; {counts['failed']} failed, "
        f"{counts['unsupported']} unsupported.",
        "",
        "The cases are the files of Arrow's integration corpus (`tests/data/arrow-gold/`, from "
        "`apache/arrow-testing`): `<version>/<case>` stands for `<version>/generated_<case>.json.gz` and "
        "`.stream`. For each case `tests/conformance.rs` reads the JSON with `arrow-integration-test`, creates "
        "an `ArrowWriter` from its schema (`ENOSYS` there makes the case *unsupported*, with the writer's "
        "message), and writes every batch twice into fresh writers: value by value through the row path "
        "(`append_*`, `begin`/`end`, `append_null`, `end_row`) and column by column through `write_array`. "
        "Both are exported through the C Stream (`WriterStream::into_ffi`), imported with arrow-rs "
        "(`RecordBatchStreamReader`), checked with `validate_full` and compared with the expected batches: "
        "schema, field names, types, nullability, field and schema metadata, values and nulls, batch by batch "
        "(zero-length batches and streams of no batch included). Then `tests/conformance/compare.py` reads the "
        "row-path output, saved as an IPC stream, with pyarrow, runs `validate(full=True)` on it and compares it "
        "with pyarrow's reading of the gold `.stream` (`equals`, metadata included). Dictionary and run-end "
        "encoded columns are compared by their decoded values on both sides, since the writer may encode them "
        "otherwise than the gold file. A case passes when all of that holds.",
        "",
        "The row path takes each type through the append docs/schema-text.md names for it. A dictionary or run-end encoded column is one node "
        "that takes the appends of its value type, one logical value per row (a null key or null value: "
        "`append_null`), with the value type's child nodes under it; `utf8_view` / `binary_view` take "
        "`append_bytes`; a list view takes `begin`, its child values, `end`, like a list; a union value is "
        "`begin(union)`, the value (or `append_null`) of the member it selects, `end(union)`, with one child node "
        "per member in order. The harness checks its node numbering against the writer's (`node_count`, "
        "`node(path)`) and fails the case if they differ.",
        "",
        "A case listed here as passed that fails makes the run fail; a new pass asks for this table to be "
        f"regenerated (`{REGENERATE}`).",
        "",
        "| case | status | reason / notes |",
        "| --- | --- | --- |",
    ]
    for case, status, reason in rows:
        cell = reason.replace("|", "\\|")
        lines.append(f"| `{case}` | {status} | {cell} |")
    return "\n".join(lines) + "\n", counts


def committed():
    """case -> status of the committed table, or None when there is none."""
    if not TABLE.exists():
        return None
    rows = {}
    for line in TABLE.read_text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) >= 4 and cells[1].startswith("`"):
            rows[cells[1].strip("`")] = cells[2]
    return rows


def main():
    results_path = OUT / "results.json"
    if not results_path.exists():
        print(f"FAIL: {results_path} not found: the Rust step (cargo test --release --test conformance) did not run")
        print("SUMMARY 0 passed, 1 failed, 0 unsupported (no results)")
        return 1
    results = json.loads(results_path.read_text())
    rows = []
    for r in results:
        status, reason = final(r)
        rows.append((r["case"], status, reason))
        print(f"{r['case']:<48} {status:<12} {short(reason, 200)}")
    text, counts = render(rows)

    rc = 0
    table = committed()
    update = os.environ.get("QUIVER_UPDATE_CONFORMANCE") == "1"
    if table is None:
        print(f"NOTE: {TABLE.relative_to(ROOT)} does not exist yet")
    else:
        for case, status, reason in rows:
            listed = table.get(case)
            if listed == "passed" and status != "passed":
                print(f"REGRESSION: {case} is listed as passed in docs/conformance.md but is {status}: {reason}")
                rc = 1
            elif status == "passed" and listed != "passed":
                print(f"NEW PASS: {case} passes now (listed as {listed or 'missing'}): regenerate the table: {REGENERATE}")
        for case in table:
            if case not in {c for c, _, _ in rows}:
                print(f"REGRESSION: docs/conformance.md lists {case}, which this run did not check")
                rc = 1
    if update:
        TABLE.write_text(text)
        print(f"updated {TABLE.relative_to(ROOT)}" + (" (the regressions above are now recorded; this run still fails)" if rc else ""))
    elif table is None or TABLE.read_text() != text:
        print(f"NOTE: {TABLE.relative_to(ROOT)} differs from this run: regenerate it with {REGENERATE}")
    print(f"SUMMARY {counts['passed']} passed, {counts['failed']} failed, "
          f"{counts['unsupported']} unsupported (of {len(rows)} cases)")
    return rc


if __name__ == "__main__":
    sys.exit(main())
