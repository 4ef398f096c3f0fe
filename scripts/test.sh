#!/usr/bin/env bash
# Runs every test of quiver: Rust tests, what a release carries (tests/package), the C/C++
# consumers with the CMake and pkg-config packages, the Python consumers against the wheel,
# the JVM consumer against the jar, the conformance corpus and the reliability suite.
# Fails on the first failing suite. Prints a summary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
summary=()
note() { summary+=("$1"); echo "== $1"; }
start=$SECONDS
elapsed() { echo "$((SECONDS - $1))s"; }
# Every suite runs under a time limit, so a hang fails loudly instead of
# eating the whole CI budget (QUIVER_SUITE_TIMEOUT seconds, default 20 min).
limit=${QUIVER_SUITE_TIMEOUT:-1200}

bash scripts/setup-deps.sh
export QUIVER_VENV="$root/.venv"
export QUIVER_NANOARROW="$root/.deps/nanoarrow"

cargo build --release --locked
if ! git diff --quiet -- include/quiver.h; then
  echo "FAIL: include/quiver.h is stale: build.rs generated a different header; commit it" >&2
  git --no-pager diff --stat -- include/quiver.h >&2
  exit 1
fi
note "header: include/quiver.h matches the generated one"

# Habits: formatting, lints (warnings are errors; Cargo.toml's [lints] add the
# unsafe-code ones) and the API docs, for the crate and for the packages of its
# own beside it (the fuzz drivers, the standalone benchmarks).
t=$SECONDS
for dir in . fuzz benches/standalone; do
  if ! (cd "$dir" && cargo fmt --check); then
    echo "FAIL: cargo fmt --check in $dir: run cargo fmt there and commit" >&2
    exit 1
  fi
done
cargo clippy --release --locked --all-targets -- -D warnings
(cd fuzz && cargo clippy --release --locked --all-targets -- -D warnings)
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --locked
note "habits ($(elapsed $t)): cargo fmt --check (crate, fuzz, benches/standalone), cargo clippy -D warnings (crate, fuzz), cargo doc without warnings"

t=$SECONDS
timeout --foreground -k 30 "$limit" cargo test --release --locked 2>&1 | tee target/cargo-test.log
note "rust ($(elapsed $t)): $(grep -E '^test result' target/cargo-test.log | awk '{p+=$4; f+=$6; i+=$8} END {print p" passed, "f" failed, "i" ignored"}')"

for suite in tests/package/run.sh tests/c/run.sh tests/python/run.sh tests/jvm/run.sh tests/conformance/run.sh tests/reliability/run.sh; do
  if [ -f "$suite" ]; then
    out=$(mktemp)
    t=$SECONDS
    rc=0
    timeout --foreground -k 30 "$limit" bash "$suite" 2>&1 | tee "$out" || rc=$?
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
      echo "FAIL: $suite did not finish within ${limit}s" >&2
    fi
    note "$suite ($(elapsed $t)): $(grep -E '^SUMMARY' "$out" | tail -1 | cut -d' ' -f2-)"
    if [ "$rc" != 0 ]; then
      echo "FAIL: $suite exited with $rc" >&2
      exit "$rc"
    fi
  fi
done

echo
echo "==== summary ($(elapsed $start) in all)"
printf '  %s\n' "${summary[@]}"
