#!/usr/bin/env python3
"""Writes the seed corpus of the schema_text fuzz target
(fuzz/corpus/schema_text/seed-*) from the grammar in docs/schema-text.md:
every spelling in the first column of its type tables, with its
placeholders (T, U, V, K, R, n, p, s, unit, "tz", alternatives a|b) filled
in, alone, not null, nested in every nesting spelling, at the nesting bound
and one over it, several columns at once, with quoted names, and cut short
or misspelt (inputs the parser must refuse).

    python3 fuzz/schema_seeds.py            # rewrites the seed-* files
"""
import os
import random
import re

HERE = os.path.dirname(os.path.abspath(__file__))
DOC = os.path.join(HERE, "..", "docs", "schema-text.md")
OUT = os.path.join(HERE, "corpus", "schema_text")
MAX_DEPTH = 64  # quiver::MAX_DEPTH, docs/schema-text.md "Bounds"


def spellings():
    """The backticked spellings of the first column of every table row."""
    out = []
    with open(DOC) as f:
        for line in f:
            if not line.startswith("| `"):
                continue
            first = line.split(" | ")[0]
            for s in re.findall(r"`([^`]+)`", first):
                out.append(s.replace("\\|", "|"))
    return out


ALL = spellings()
assert len(ALL) > 40, ALL
NESTED = [s for s in ALL if "<" in s]
LEAVES = [s for s in ALL if "<" not in s]
assert any(s.startswith("dictionary") for s in NESTED) and any("union" in s for s in NESTED), NESTED

rng = random.Random(16)


def fill_leaf(s):
    """A leaf spelling with its parameters chosen."""
    s = re.sub(r"\(([a-z_]+(?:\|[a-z_]+)+)\)", lambda m: "(" + rng.choice(m.group(1).split("|")) + ")", s)
    s = s.replace("(p, s)", "(%d, %d)" % rng.choice([(9, 2), (5, 0), (18, 4), (38, 10), (1, 0), (76, 76)]))
    s = s.replace("unit", rng.choice(["s", "ms", "us", "ns"]))
    s = s.replace('"tz"', rng.choice(['"UTC"', '"+05:30"', "UTC"]))
    s = s.replace("(n)", "(%d)" % rng.choice([0, 1, 4, 16]))
    return s


def leaf():
    return fill_leaf(rng.choice(LEAVES))


def fill_nested(s, inner):
    """A nesting spelling around `inner` (its T, U or V), other slots leaves."""
    s = s.replace("<K, V", "<%s, %s" % ("int32" if s.startswith("dictionary") else leaf(), inner))
    s = s.replace("<R, V", "<int32, %s" % inner)
    s = s.replace("<T, n>", "<%s, %d>" % (inner, rng.choice([1, 2, 3])))
    s = s.replace("a: T", "a: " + inner).replace("b: U", "b: " + leaf())
    s = s.replace("<T>", "<%s>" % inner)
    return s


def nest(spelling, depth, leaf_text="int32"):
    """`spelling` wrapped around itself so the text is `depth` wraps deep."""
    out = leaf_text
    for _ in range(depth):
        out = fill_nested(spelling, out)
    return out


seeds = {}


def add(name, text):
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:48]
    seeds["seed-%03d-%s" % (len(seeds), slug)] = text


for s in ALL:
    t = fill_leaf(s) if s in LEAVES else fill_nested(s, leaf())
    add("alone " + s, "x: " + t)
    add("not null " + s, "x: %s not null" % t)
for outer in NESTED:
    for inner in NESTED:
        add("nested %s in %s" % (inner, outer), "x: " + fill_nested(outer, fill_nested(inner, leaf())))
for s in NESTED:
    # At the bound (64 levels for one-level wraps) and one over it; the
    # two-level ones (map, dictionary of a list, ...) count their own way,
    # so both sides of the bound are there for the one-level spellings.
    add("depth bound " + s, "x: " + nest(s, MAX_DEPTH - 1))
    add("depth over " + s, "x: " + nest(s, MAX_DEPTH))
add("many columns", ", ".join("c%d: %s" % (i, leaf()) for i in range(40)))
add("quoted names", '"a b": int8, "q\\"uote": utf8, "": bool, "x": struct<"in ner": int8>')
add("named children", "x: list<element: int32>, y: map<k: utf8, v: int8>, z: run_end_encoded<int16, vals: utf8>")
add("union ids", "x: dense_union<a@5: int8, b@2: utf8, c: int64>, y: sparse_union<a@127: null>")
add("struct empty", "x: struct<>")
add("big fixed sizes", "x: fixed_size_list<float32, 4194304>, y: fixed_size_binary(16777217)")
# Inputs the parser must refuse.
good = list(seeds.values())
for i in range(30):
    t = rng.choice(good)
    add("cut %d" % i, t[: rng.randrange(1, max(2, len(t)))])
for bad in ["x: ut8", "x int32", "x: list<int32", "x: dictionary<utf8, utf8>", "x: run_end_encoded<uint8, int8>",
            "x: sparse_union<a@1: int8, b: int8>", "x: dense_union<>", "x: decimal128(39, 0)", "x: time32(us)",
            "x: fixed_size_list<int8, -1>", "x: map<int8>", "x: timestamp(ms, )", ", x: int8", "x: int8,,"]:
    add("bad " + bad, bad)

os.makedirs(OUT, exist_ok=True)
for f in os.listdir(OUT):
    if f.startswith("seed-"):
        os.remove(os.path.join(OUT, f))
total = 0
for name, text in seeds.items():
    with open(os.path.join(OUT, name), "w") as f:
        f.write(text)
    total += len(text)
print("%d seeds, %d bytes, in %s" % (len(seeds), total, OUT))
