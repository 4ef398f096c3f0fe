#!/usr/bin/env bash
# Runs every test of quiver: Rust tests, the C/C++ consumers, Python and JVM consumers,
# and the conformance corpus. Fails on the first failing suite. Prints a summary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
summary=()
note() { summary+=("$1"); echo "== $1"; }

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

cargo test --release --locked 2>&1 | tee target/cargo-test.log
note "rust: $(grep -E '^test result' target/cargo-test.log | awk '{p+=$4; f+=$6; i+=$8} END {print p" passed, "f" failed, "i" ignored"}')"

for suite in tests/c/run.sh tests/python/run.sh tests/jvm/run.sh tests/conformance/run.sh; do
  if [ -f "$suite" ]; then
    out=$(mktemp)
    bash "$suite" 2>&1 | tee "$out"
    note "$suite: $(grep -E '^SUMMARY' "$out" | tail -1 | cut -d' ' -f2-)"
  fi
done

echo
echo "==== summary"
printf '  %s\n' "${summary[@]}"
