#!/usr/bin/env python3
"""Checks the C ABI of libquiver against the committed list include/quiver.symbols.

The list has one line per exported function (its name and its declaration in
include/quiver.h), per callback typedef, and per struct of quiver.h (size,
alignment, and each field's type and offset, measured by the C compiler). The
check derives the same lines from the built library (`nm -D` of libquiver.so,
`nm` of libquiver.a), the header and the compiler, and fails on any difference:
a symbol removed or added, a declaration changed, a struct grown or reordered.
Changing the ABI is then a deliberate act: run with --update, commit the new
list, and follow the ABI policy of docs/ffi.md (a breaking change means a new
soname).

    python3 scripts/check-abi.py [--lib target/release/libquiver.so]
                                 [--static target/release/libquiver.a] [--update]
"""

import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIST = os.path.join(ROOT, "include", "quiver.symbols")
HEADER = os.path.join(ROOT, "include", "quiver.h")

PREAMBLE = """\
# The C ABI of libquiver (include/quiver.h), as `cargo build --release` builds it.
# Checked by tests/c/run.sh (python3 scripts/check-abi.py): the exported symbols of
# libquiver.so and libquiver.a, their declarations, the callback types and the layout
# of every struct must match these lines exactly. To change the ABI on purpose, run
# `python3 scripts/check-abi.py --update` and commit this file; docs/ffi.md (ABI policy)
# says when such a change needs a new soname.
# (The Rust-only test hook `inject_panic_for_tests` is not a C symbol: it is not here.)
"""


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def norm(decl):
    decl = re.sub(r"\s+", " ", decl).strip()
    decl = re.sub(r"\s*([(),;*])\s*", r"\1", decl)
    # one canonical spacing: "int f(T *a, U b);"
    decl = decl.replace(",", ", ").replace("*", " *").replace("( *", "(*")
    decl = re.sub(r" +", " ", decl).replace(" *)", "*)")
    return re.sub(r"\* \*", "**", decl).strip()


def header_items(text):
    """Function declarations, callback typedefs and structs of quiver.h."""
    code = strip_comments(text)
    code = re.sub(r"^\s*#.*$", " ", code, flags=re.M)  # preprocessor lines
    code = re.sub(r'extern "C" \{|\}\s*//\s*extern "C"', " ", code)
    funcs = {}
    for m in re.finditer(r"[A-Za-z_][\w \t\n*]*?\b(quiver_\w+)\s*\([^;{]*\)\s*;", code):
        funcs[m.group(1)] = norm(m.group(0))
    callbacks = {}
    for m in re.finditer(r"typedef[^;{]*\(\s*\*\s*(Quiver\w+)\s*\)\s*\([^;]*\)\s*;", code):
        callbacks[m.group(1)] = norm(m.group(0))
    structs = {}
    for m in re.finditer(r"typedef struct (Quiver\w+)\s*\{(.*?)\}\s*\1\s*;", code, flags=re.S):
        fields = []
        for decl in m.group(2).split(";"):
            decl = re.sub(r"\s+", " ", decl).strip()
            if decl:
                fm = re.match(r"(.+?)\s*\b(\w+)$", decl)
                fields.append((fm.group(1).strip(), fm.group(2)))
        structs[m.group(1)] = fields
    return funcs, callbacks, structs


def exported(lib, dynamic):
    args = ["nm", "-D", "--defined-only", lib] if dynamic else ["nm", "-g", "--defined-only", lib]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] in "TtWwDdBbRrVvi":
            name = parts[2]
            if dynamic or name.startswith("quiver_"):
                names.add(name)
    return names


def layouts(structs, cc):
    """size, alignment and field offsets of each struct, from the C compiler."""
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include <stdalign.h>', '#include "quiver.h"',
             "int main(void) {"]
    for name, fields in sorted(structs.items()):
        lines.append(f'  printf("{name} %zu %zu\\n", sizeof({name}), alignof({name}));')
        for _, field in fields:
            lines.append(f'  printf("{name}.{field} %zu %zu\\n", offsetof({name}, {field}), '
                         f'sizeof((({name} *)0)->{field}));')
    lines += ["  return 0;", "}"]
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "layout.c")
        exe = os.path.join(tmp, "layout")
        with open(src, "w") as f:
            f.write("\n".join(lines) + "\n")
        subprocess.run([cc, "-std=c11", "-I", os.path.join(ROOT, "include"), src, "-o", exe], check=True)
        out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    got = dict(line.rsplit(" ", 2)[0:1] + [tuple(line.split()[1:])] for line in out.splitlines())
    result = []
    for name, fields in sorted(structs.items()):
        size, align = got[name]
        parts = [f"{ctype} {field} @{got[f'{name}.{field}'][0]}+{got[f'{name}.{field}'][1]}"
                 for ctype, field in fields]
        result.append(f"struct {name} size {size} align {align}: " + ", ".join(parts))
    return result


def derive(lib, static, cc):
    with open(HEADER) as f:
        funcs, callbacks, structs = header_items(f.read())
    problems = []
    dyn = exported(lib, dynamic=True)
    lines = []
    for name in sorted(dyn | set(funcs)):
        if name not in dyn:
            problems.append(f"{name} is declared in quiver.h but libquiver.so does not export it")
        if name not in funcs:
            problems.append(f"libquiver.so exports {name}, which quiver.h does not declare")
        lines.append(f"symbol {name}  {funcs.get(name, '<not in quiver.h>')}")
    if static:
        st = exported(static, dynamic=False)
        for name in sorted(st ^ dyn):
            where = "libquiver.a only" if name in st else "libquiver.so only"
            problems.append(f"{name}: exported by {where}")
    for name, decl in sorted(callbacks.items()):
        lines.append(f"callback {name}  {decl}")
    lines += layouts(structs, cc)
    return lines, problems


def compare(want, got):
    """The differences of two lists of ABI lines, as a unified diff (empty: equal)."""
    if want == got:
        return []
    return list(difflib.unified_diff([w + "\n" for w in want], [g + "\n" for g in got],
                                     "include/quiver.symbols", "built", n=0)) or ["(order differs)\n"]


def self_test(lines):
    """Every one-line change of the list (a line dropped, doubled, or with one character
    changed) must be reported; returns the number of mutations checked."""
    n = 0
    for i, line in enumerate(lines):
        edited = line[:-1] + chr(ord(line[-1]) ^ 1)
        for mutated in (lines[:i] + lines[i + 1:], lines[:i + 1] + lines[i:], lines[:i] + [edited] + lines[i + 1:]):
            n += 1
            if not compare(mutated, lines):
                raise AssertionError(f"a change of line {i + 1} went unnoticed: {line}")
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", default=os.path.join(ROOT, "target", "release", "libquiver.so"))
    ap.add_argument("--static", default=os.path.join(ROOT, "target", "release", "libquiver.a"))
    ap.add_argument("--update", action="store_true", help="rewrite include/quiver.symbols")
    ap.add_argument("--self-test", action="store_true",
                    help="also check that removing, adding or editing any one line of the list is caught")
    args = ap.parse_args()
    cc = os.environ.get("CC", "cc")
    if not shutil.which("nm"):
        print("SKIPPED: nm (binutils) is not installed")
        return 0
    static = args.static if os.path.exists(args.static) else None
    lines, problems = derive(args.lib, static, cc)
    for p in problems:
        print(f"problem: {p}")
    if args.update:
        with open(LIST, "w") as f:
            f.write(PREAMBLE + "\n".join(lines) + "\n")
        print(f"wrote {os.path.relpath(LIST, ROOT)}: {len(lines)} lines")
        return 1 if problems else 0
    try:
        with open(LIST) as f:
            want = [line for line in f.read().splitlines() if line and not line.startswith("#")]
    except FileNotFoundError:
        print(f"{LIST} is missing: run python3 scripts/check-abi.py --update")
        return 1
    diff = compare(want, lines)
    if diff:
        print("the C ABI differs from include/quiver.symbols (- committed, + built):")
        sys.stdout.writelines(diff)
        print("if the change is intended: python3 scripts/check-abi.py --update, commit, "
              "and see docs/ffi.md (ABI policy)")
        return 1
    if args.self_test:
        print(f"self-test: all {self_test(lines)} one-line changes of the list are reported")
    n_sym = sum(1 for line in lines if line.startswith("symbol "))
    n_struct = sum(1 for line in lines if line.startswith("struct "))
    print(f"ABI matches include/quiver.symbols: {n_sym} symbols (libquiver.so"
          f"{' and libquiver.a' if static else ''}), {len(lines) - n_sym - n_struct} callback types, "
          f"{n_struct} struct layouts")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
