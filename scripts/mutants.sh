#!/usr/bin/env bash
# Mutation testing of the core (not part of scripts/test.sh: it takes hours on two cores).
# Each mutant of the named files is built and run against the tests that exercise that
# file (the buffer life cycle, the zeroing and rollback code, the exporter); a mutant no
# test fails on is listed in mutants.out/missed.txt.
# Usage: bash scripts/mutants.sh [FILE...]   (default: every file of the lists below)
#   QUIVER_MUTANTS_ALL=1   run every file against every test of the lists (to check that
#                          a mutant missed by its own file's tests is missed by all)
#   QUIVER_MUTANTS_ARGS    more cargo-mutants arguments, e.g. "--re PATTERN" or "--list"
# Needs cargo-mutants (cargo install cargo-mutants --locked). Runs in place: commit or
# stash your work first (cargo-mutants restores every file it mutates), and do not edit
# the mutated files while it runs.
# The build uses the `mutants` profile of Cargo.toml (release without debug info,
# incremental, 256 codegen units), which has its own target/mutants directory: the
# first mutant builds the dependencies there once.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo-mutants >/dev/null || { echo "cargo-mutants is not installed: cargo install cargo-mutants --locked" >&2; exit 1; }

# The tests that exercise each file (`lib`: the library's unit tests, which
# test the buffer helpers directly). cargo test runs the binaries in name order and
# stops at the first that fails, so a caught mutant costs little; a missed one runs
# them all. tests/atomicity.rs (45 s) is in no file's list, only in the full one: a
# mutant its file's tests miss is run again with QUIVER_MUTANTS_ALL=1 (and --re).
declare -A tests_of=(
  [src/export.rs]="lifecycle stress determinism smoke errors bad_input"
  [src/buffer/mod.rs]="lib lifecycle stress determinism smoke stats memory_limit column_copy row_path_commit refused_nested errors fuzz_replay bad_input"
  [src/buffer/bits.rs]="lib lifecycle determinism smoke column_copy row_path_commit refused_nested errors fuzz_replay bad_input"
  [src/buffer/offsets.rs]="lib lifecycle determinism smoke column_copy row_path_commit refused_nested errors fuzz_replay bad_input"
  [src/buffer/masks.rs]="lib lifecycle determinism smoke column_copy row_path_commit refused_nested errors fuzz_replay bad_input"
  [src/writer/position.rs]="lifecycle errors positions row_path_commit refused_nested stats memory_limit fuzz_replay bad_input"
)
order=(src/export.rs src/buffer/mod.rs src/buffer/bits.rs src/buffer/offsets.rs src/buffer/masks.rs src/writer/position.rs)
all="lib lifecycle stress determinism smoke errors positions stats column_copy row_path_commit refused_nested memory_limit fuzz_replay bad_input atomicity"

files=("$@")
[ "${#files[@]}" -gt 0 ] || files=("${order[@]}")
extra=()
[ -z "${QUIVER_MUTANTS_ARGS:-}" ] || read -r -a extra <<<"$QUIVER_MUTANTS_ARGS"
for f in "${files[@]}"; do
  list=${tests_of[$f]:-$all}
  [ -z "${QUIVER_MUTANTS_ALL:-}" ] || list=$all
  targs=()
  # --cargo-arg, not the arguments after `--`: those reach only `cargo test`, and the
  # build step would build every test target of the crate for each mutant.
  for t in $list; do
    if [ "$t" = lib ]; then targs+=(--cargo-arg=--lib); else targs+=(--cargo-arg=--test="$t"); fi
  done
  out="mutants.out/${f//\//_}"
  mkdir -p "$out"
  echo "== $f: cargo mutants --file $f ${targs[*]}"
  cargo mutants --in-place --file "$f" --output "$out" --profile mutants --baseline skip \
    --timeout 120 --build-timeout 900 "${targs[@]}" "${extra[@]}" || true
  if [ -f "$out/mutants.out/outcomes.json" ]; then
    for k in caught missed unviable timeout; do
      printf '%s %s: %s\n' "$f" "$k" "$(wc -l <"$out/mutants.out/$k.txt" 2>/dev/null || echo 0)"
    done
  fi
done
