#!/usr/bin/env python3
"""Writes the seed corpus of the api_sequence fuzz target
(fuzz/corpus/api_sequence/): small inputs made on purpose so that every
schema and every operation kind is exercised, valid and invalid calls
alike. The byte layout is the one fuzz/driver/api_sequence.rs reads.

    python3 fuzz/seeds.py            # rewrites the seed-* files
"""
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "api_sequence")

# Operation codes (op:: in the driver).
APPEND_NULL, APPEND, BEGIN, END, END_ROW, ABORT_ROW, ROW, FINISH = 0, 1, 3, 4, 5, 6, 7, 8
RELEASE, MOVE_CHILD, RECHECK, PULL, WRITE_COLUMN, WRITE_ARRAY = 9, 10, 11, 12, 13, 14
DROP_STREAM, NEW_WRITER, ROWS, WRITE_ARRAY_BAD = 15, 16, 17, 18
# Inputs (INPUTS in the driver).
INPUTS = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64", "bool", "bytes", "decimal"]

# The schemas as (kind, nullable, children) trees, top-level columns in order.
def n(kind, nullable=True, *children):
    return (kind, nullable, list(children))

SCHEMAS = [
    [n("i32"), n("utf8", False), n("bool"), n("dec"), n("fsb2"), n("f64"), n("u8", False)],
    [n("i64", False), n("list", True, n("i16")), n("struct", True, n("utf8"), n("i8", False), n("dec")),
     n("fsl2", True, n("u8")), n("map", True, n("struct", False, n("utf8", False), n("i32"))),
     n("list", True, n("list", True, n("i8", False)))],
    [n("f32"), n("u16", False), n("u16"), n("u32"), n("u64", False), n("bin"), n("utf8"),
     n("dec", False), n("bool", False), n("list", True, n("utf8"))],
]

def preorder(cols):
    out = []
    def walk(t):
        out.append(t)
        for c in t[2]:
            walk(c)
    for c in cols:
        walk(c)
    return out

def node_ids(s):
    """Pre-order index of every top-level column."""
    ids, i = [], 0
    for c in SCHEMAS[s]:
        ids.append(i)
        i += len(preorder([c]))
    return ids

def count(s):
    return len(preorder(SCHEMAS[s]))

def i64(v):
    """The driver's Input::i64 encoding of v."""
    if -16 <= v < 48:
        return bytes([v + 16])
    if v % 1000 == 0 and 0 <= v // 1000 + 128 < 256:
        return bytes([0x40, v // 1000 + 128])
    b = struct.pack("<q", v)
    assert b[0] >= 0x80, "a full 8-byte value needs a low byte >= 0x80"
    return b

def byts(data, utf8=True):
    """Input::bytes: length (< 6), utf8 flag, then the bytes (letters: a + b % 26)."""
    assert len(data) < 6
    if utf8:
        return bytes([len(data), 1]) + bytes((ord(ch) - ord("a")) for ch in data)
    return bytes([len(data), 0]) + bytes(data)

def gen_value(t, rng, nulls=True):
    """Bytes gen_value reads for one value of node t."""
    kind, nullable, children = t
    out = b""
    if nullable:
        if nulls and rng.random() < 0.25:
            return b"\x00"
        out += b"\x01"
    out += i64(rng.choice([-16, -3, 0, 1, 2, 7, 31, 47, -128000, 5000, 0x7fff_0000_0000_0080 - (1 << 63)]))
    if kind in ("list", "map"):
        k = rng.randrange(4)
        out += bytes([k])
        for _ in range(k):
            out += gen_value(children[0], rng, nulls)
    elif kind == "fsl2":
        for _ in range(2):
            out += gen_value(children[0], rng, nulls)
    elif kind == "struct":
        for c in children:
            out += gen_value(c, rng, nulls)
    return out

def gen_row(s, rng, nulls=True):
    return b"".join(gen_value(c, rng, nulls) for c in SCHEMAS[s])

def row(s, rng, nulls=True):
    return bytes([ROW]) + gen_row(s, rng, nulls)

def append(node, inp, v=1, data=b"\x00\x00", dec_sel=0x42):
    return bytes([APPEND, node, INPUTS.index(inp)]) + i64(v) + data + bytes([dec_sel])

def end_node(node):
    return bytes([END, node * 4])

END_INNER = bytes([END, 1])

def knobs(batch_rows=4, retain=1, recycle=True):
    return ((batch_rows - 1) % 8) | ((retain % 4) << 3) | (0 if recycle else 0x80)

SEEDS = {}

def seed(name, s, body, **kw):
    SEEDS[name] = bytes([s, knobs(**kw)]) + body

def rows_and_finish(s):
    rng = random.Random(100 + s)
    body = b"".join(row(s, rng) for _ in range(3)) + bytes([FINISH])
    body += b"".join(row(s, rng) for _ in range(2)) + bytes([FINISH, RECHECK, 0])
    body += bytes([FINISH])  # a batch of no rows
    body += bytes([RELEASE, 1, RELEASE, 0]) + row(s, rng) + bytes([FINISH, RELEASE, 0])
    seed(f"s{s}-rows-finish-release", s, body)

def appends_of_every_kind(s):
    """Every input kind into every top-level column (most are the wrong type)."""
    body = b""
    for node in node_ids(s):
        for inp in INPUTS:
            body += append(node, inp, v=3, data=byts("ab"))
        body += bytes([ABORT_ROW])
    body += append(count(s), "i64")  # unknown node
    seed(f"s{s}-appends-every-kind", s, body)

def by_hand_rows(s):
    """A row value by value, nulls, a second value for a column, end_row too early."""
    ids = node_ids(s)
    rng = random.Random(200 + s)
    body = bytes([APPEND_NULL, ids[0], APPEND_NULL, ids[0], END_ROW])
    body += bytes([ABORT_ROW]) + row(s, rng) + bytes([APPEND_NULL, count(s), FINISH, RELEASE, 0])
    seed(f"s{s}-nulls-and-early-end-row", s, body)

def column_path(s):
    """write_column on every node, with and without validity, some nulls, len 0 with NULL."""
    rng = random.Random(300 + s)
    kinds = preorder(SCHEMAS[s])
    width = {"i8": 1, "u8": 1, "i16": 2, "u16": 2, "i32": 4, "u32": 4, "f32": 4,
             "i64": 8, "u64": 8, "f64": 8, "dec": 16, "fsb2": 2}
    body = b""
    for node, (kind, nullable, _) in enumerate(kinds):
        for flags, validity, length in ((0, 0, 3), (1, 0b101, 3), (3, 0, 0), (5, 0xff, 2)):
            body += bytes([WRITE_COLUMN, node, length, flags, validity])
            if kind == "dec":
                body += b"".join(i64(rng.choice([1, -7, 31, 5000, -128000])) for _ in range(length))
            elif kind == "bool":
                body += bytes([0b110])
            else:
                body += bytes(rng.randrange(256) for _ in range(length * width.get(kind, 0)))
    body += bytes([FINISH, ABORT_ROW, FINISH])
    seed(f"s{s}-write-column", s, body)

def column_then_rows(s):
    """Column path and row path mixed in one batch: a column ahead, rows evening up."""
    rng = random.Random(400 + s)
    first = node_ids(s)[0]
    kind = SCHEMAS[s][0][0]
    w = {"i32": 4, "i64": 8, "f32": 4}[kind]
    body = bytes([WRITE_COLUMN, first, 2, 0, 0]) + bytes(rng.randrange(256) for _ in range(2 * w))
    # the row path may not write the column that is ahead
    body += bytes([APPEND_NULL, first, FINISH, END_ROW])
    # write_array for the other columns, two rows each, from the second writer
    for col in range(1, len(SCHEMAS[s])):
        body += bytes([WRITE_ARRAY, 2, 0, 2, col, 0]) + gen_row(s, rng, nulls=False) + gen_row(s, rng, nulls=False)
    body += bytes([FINISH, RECHECK, 0]) + row(s, rng) + bytes([FINISH, RELEASE, 1, RELEASE, 0])
    seed(f"s{s}-column-and-row-paths", s, body)

def write_array(s):
    """write_array: slices of every column into its own node and into others."""
    rng = random.Random(500 + s)
    body = b""
    for col in range(len(SCHEMAS[s])):
        for nodesel in (0, 1 + 2 * ((col + 1) % count(s)), 1 + 2 * count(s)):
            body += bytes([WRITE_ARRAY, 4, 1, 2, col, nodesel]) + b"".join(gen_row(s, rng) for _ in range(4))
        body += bytes([ABORT_ROW])
    body += bytes([WRITE_ARRAY, 0, 0, 0, 0, 0, FINISH])
    seed(f"s{s}-write-array", s, body)

def stream(s, plan, name, extra_pulls=3):
    rng = random.Random(600 + s)
    seed_bytes = bytes(rng.randrange(1, 256) for _ in range(32))
    body = bytes([PULL]) + bytes(plan) + seed_bytes + bytes([PULL] * extra_pulls)
    body += bytes([RELEASE, 0]) + row(s, rng) + bytes([FINISH, MOVE_CHILD, 0, 0, DROP_STREAM, PULL]) + bytes(8) + seed_bytes
    seed(f"s{s}-stream-{name}", s, body, batch_rows=3)

def streams(s):
    stream(s, [2, 3, 4, 1, 0, 0, 0, 0], "rows-then-end", 6)  # 4 is capped at max_rows 3
    stream(s, [1, 7, 0, 0, 0, 0, 0, 0], "fill-fails", 2)  # no message set
    stream(s, [1, 15, 0, 0, 0, 0, 0, 0], "fill-fails-with-message", 2)
    stream(s, [5, 0, 0, 0, 0, 0, 0, 0], "too-many-rows", 2)
    stream(s, [2, 6 | 8, 0, 0, 0, 0, 0, 0], "partial-row-after-rows", 2)
    stream(s, [6, 1, 0, 0, 0, 0, 0, 0], "partial-row-only", 2)

def held_and_moved(s):
    """Batches held across later writes, children moved out, the writer replaced."""
    rng = random.Random(700 + s)
    body = b""
    for k in range(4):
        body += row(s, rng) + row(s, rng) + bytes([FINISH, MOVE_CHILD, k, k % len(SCHEMAS[s])])
    body += bytes([MOVE_CHILD, 0, 1, RECHECK, 2, NEW_WRITER]) + row(s, rng) + bytes([FINISH])
    body += bytes([RELEASE, 3, RECHECK, 1, RELEASE, 0]) + row(s, rng) + bytes([NEW_WRITER, FINISH])
    seed(f"s{s}-held-moved-new-writer", s, body, batch_rows=2, retain=0)
    seed(f"s{s}-held-moved-no-recycle", s, body, batch_rows=8, retain=3, recycle=False)

def finish_incomplete(s):
    rng = random.Random(800 + s)
    body = row(s, rng) + bytes([APPEND_NULL, node_ids(s)[0], FINISH, ABORT_ROW, FINISH, FINISH, RELEASE, 1])
    seed(f"s{s}-finish-incomplete", s, body)

def long_writes(s):
    """Batches and column writes past 8 and 64 rows: seeded rows, every fixed-width
    column in each validity mode, long slices of every column at odd offsets."""
    kinds = preorder(SCHEMAS[s])
    body = bytes([ROWS, 63, 1, FINISH, ROWS, 9, 2, ROWS, 0, 3, FINISH, RELEASE, 0])
    for node, (kind, nullable, _) in enumerate(kinds):
        if kind in ("list", "map", "struct", "fsl2", "utf8", "bin") or node not in node_ids(s):
            continue
        # 70 rows with given validity (mode 0), 127 all valid, 64 all null, 9 sparse
        for length, flags in ((70, 1), (127, 1 | 8), (64, 1 | 16), (9, 1 | 24), (100, 0)):
            body += bytes([WRITE_COLUMN, node, 0x80 | (length - 6), flags, node + length, length])
        body += bytes([ABORT_ROW])
        body += bytes([WRITE_COLUMN, node, 0x80 | (70 - 6), 4, 0, 7])  # decimals scaled past the precision
    for col in range(len(SCHEMAS[s])):
        body += bytes([WRITE_ARRAY, 0x80 | 70, col + 1, 3, 66, col, 0])  # 75 rows, [3, 3+66)
        body += bytes([ABORT_ROW])
    for col in range(len(SCHEMAS[s])):
        body += bytes([WRITE_ARRAY, 0x80 | 60, 40 + col, 0, 65, col, 0])  # 65 rows, all of them
    body += bytes([FINISH, RECHECK, 0, MOVE_CHILD, 0, 0, ROWS, 40, 5, FINISH, RELEASE, 0, RELEASE, 0])
    seed(f"s{s}-long-writes", s, body, batch_rows=8)

def broken_arrays(s, kind):
    """write_array of each column with one value broken at any level (kind 0
    invalid UTF-8, 1 a null where the field cannot be null, 2 a decimal over
    its precision), from 16 seeded rows sliced [1, 1+14); after each, abort_row and 16 rows
    of the row path (nulls among them) and a finish, so that the next batch
    shows what a refusal left behind (validity bits, null counts, offsets)."""
    rng = random.Random(400 + 3 * s + kind)
    body = b""
    for col in range(len(SCHEMAS[s])):
        for pick in range(2):
            body += bytes([WRITE_ARRAY_BAD, 0x80 | 11, 11 * col + pick, 1, 14, col, 0, kind, pick,
                           rng.randrange(256), rng.randrange(2)])
            # abort_row drops the column if it was taken (the other columns
            # have none yet), so the 16 rows start where it did.
            body += bytes([ABORT_ROW, ROWS, 15, rng.randrange(256), FINISH])
    # A broken value among rows given in the input.
    body += bytes([WRITE_ARRAY_BAD, 4, 1, 2, 0, 0, kind, 0, 5, 0]) + b"".join(gen_row(s, rng) for _ in range(4))
    body += bytes([ABORT_ROW, ROWS, 6, 3, FINISH])
    seed(f"s{s}-broken-{['utf8', 'non-null', 'decimal'][kind]}", s, body, batch_rows=8)

for s in range(3):
    for kind in range(3):
        broken_arrays(s, kind)
    long_writes(s)
    rows_and_finish(s)
    appends_of_every_kind(s)
    by_hand_rows(s)
    column_path(s)
    column_then_rows(s)
    write_array(s)
    streams(s)
    held_and_moved(s)
    finish_incomplete(s)

# Schema-specific calls.
# 0: utf8 (invalid UTF-8 too), fixed-size binary widths, decimal precision and byte counts.
seed("s0-bytes-and-decimals", 0,
     append(1, "bytes", data=byts([0xc3, 0x28], utf8=False)) + append(1, "bytes", data=byts("ok"))
     + append(4, "bytes", data=byts("abc")) + append(4, "bytes", data=byts([0xff, 0xfe], utf8=False))
     + append(3, "decimal", v=5, dec_sel=0x00) + append(3, "decimal", v=5, dec_sel=0x01)
     + append(3, "i64", v=-128000) + append(3, "decimal", v=47, dec_sel=0x12)
     + append(3, "decimal", v=5000, dec_sel=0xe2)
     + append(0, "i32", v=7) + append(2, "bool", v=1) + append(5, "f64", v=-3) + append(6, "u8", v=47)
     + bytes([END_ROW, FINISH]))
# 1: begin/end of every nested node, in and out of order, missing struct children, short fixed-size lists.
seed("s1-begin-end", 1,
     append(0, "i64", v=5)
     + bytes([BEGIN, 1]) + append(2, "i16", v=3) + bytes([APPEND_NULL, 2]) + END_INNER
     + bytes([BEGIN, 3]) + append(5, "i8", v=1) + end_node(3) + bytes([APPEND_NULL, 5]) + bytes([APPEND_NULL, 4])
     + bytes([APPEND_NULL, 6]) + END_INNER
     + bytes([BEGIN, 7]) + append(8, "u8", v=1) + END_INNER + append(8, "u8", v=2) + append(8, "u8", v=3) + END_INNER
     + bytes([BEGIN, 9, BEGIN, 10]) + bytes([APPEND_NULL, 11]) + append(11, "bytes", data=byts("k"))
     + append(12, "i32", v=9) + end_node(9) + END_INNER + END_INNER
     + bytes([BEGIN, 13, BEGIN, 14]) + append(15, "i8", v=-1) + bytes([APPEND_NULL, 15, BEGIN, 15, END_ROW])
     + END_INNER + END_INNER + bytes([BEGIN, 0, END_ROW, FINISH, END, 0]))
seed("s1-abort-inside-nested", 1,
     append(0, "i64", v=1) + bytes([BEGIN, 13, BEGIN, 14]) + append(15, "i8", v=2)
     + bytes([ABORT_ROW, END_ROW]) + row(1, random.Random(9)) + bytes([FINISH]))
# 2: the other widths, binary and large types, wide decimals.
seed("s2-widths", 2,
     append(0, "f32", v=-3) + append(1, "u16", v=47) + append(2, "u16", v=-16) + append(3, "u32", v=31)
     + append(4, "u64", v=-1) + append(5, "bytes", data=byts([0xff, 0], utf8=False))
     + append(6, "bytes", data=byts("xyz")) + append(7, "decimal", v=0x7fff_0000_0000_0080, dec_sel=0xf2)
     + append(7, "decimal", v=-128000, dec_sel=0x12) + append(8, "bool", v=1)
     + bytes([BEGIN, 9]) + append(10, "bytes", data=byts("q")) + bytes([APPEND_NULL, 10]) + END_INNER
     + bytes([END_ROW, FINISH]))

if __name__ == "__main__":
    # Only seed-* files are committed (fuzz/.gitignore); inputs a fuzz run
    # adds next to them are left alone.
    os.makedirs(OUT, exist_ok=True)
    for old in os.listdir(OUT):
        if old.startswith("seed-"):
            os.remove(os.path.join(OUT, old))
    for name, data in sorted(SEEDS.items()):
        with open(os.path.join(OUT, "seed-" + name), "wb") as f:
            f.write(data)
    print(f"{len(SEEDS)} seeds, {sum(map(len, SEEDS.values()))} bytes, in {OUT}")
