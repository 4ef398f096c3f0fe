#!/usr/bin/env bash
# Mutation testing of the core (not part of scripts/test.sh: it takes hours on two cores).
# Each mutant of the named files is built and run against the tests that exercise the
# buffer life cycle, the zeroing and rollback code and the exporter; a mutant no test
# fails on is listed in mutants.out/missed.txt.
# Usage: bash scripts/mutants.sh [FILE...]   (default: the files below)
# Needs cargo-mutants (cargo install cargo-mutants --locked). Runs in place: commit or
# stash your work first (cargo-mutants restores every file it mutates).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo-mutants >/dev/null || { echo "cargo-mutants is not installed: cargo install cargo-mutants --locked" >&2; exit 1; }
files=("$@")
if [ "${#files[@]}" -eq 0 ]; then
  files=(src/export.rs 'src/buffer/*.rs' src/writer/position.rs)
fi
args=()
for f in "${files[@]}"; do args+=(--file "$f"); done
exec cargo mutants --in-place "${args[@]}" --profile release --baseline skip --timeout 300 -- \
  --test lifecycle --test stress --test determinism --test smoke --test errors --test bad_input \
  --test atomicity --test refused_nested --test row_path_commit --test stats --test column_copy
