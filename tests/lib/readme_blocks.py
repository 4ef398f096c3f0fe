#!/usr/bin/env python3
"""Writes the fenced code blocks of one section of a Markdown file to files, so a
test can build and run what the README says (and the README cannot go stale).

    readme_blocks.py README.md "C" sh OUTDIR      -> OUTDIR/1.sh, OUTDIR/2.sh, ...

The section is the text from the heading `## <SECTION>` (any level) to the next
heading of the same or a higher level. Prints the files written, one a line; exits
non-zero when the section or a block of that language is missing.
"""

import os
import re
import sys


def section(text, title):
    lines = text.splitlines(keepends=True)
    out, level, fence = None, 0, False
    for line in lines:
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^(#+)\s+(.*?)\s*$", line)
        if m and out is not None and len(m.group(1)) <= level:
            break
        if out is not None:
            out.append(line)
        elif m and m.group(2) == title:
            out, level = [], len(m.group(1))
    return None if out is None else "".join(out)


def blocks(text, lang):
    return [m.group(1) for m in re.finditer(r"^```" + re.escape(lang) + r"[ \t]*\n(.*?)^```[ \t]*$", text, re.S | re.M)]


def main():
    path, title, lang, outdir = sys.argv[1:5]
    with open(path) as f:
        text = section(f.read(), title)
    if text is None:
        sys.exit(f"{path}: no section '{title}'")
    found = blocks(text, lang)
    if not found:
        sys.exit(f"{path}: section '{title}' has no ```{lang} block")
    os.makedirs(outdir, exist_ok=True)
    for i, body in enumerate(found, 1):
        name = os.path.join(outdir, f"{i}.{lang}")
        with open(name, "w") as f:
            f.write(body)
        print(name)


if __name__ == "__main__":
    main()
