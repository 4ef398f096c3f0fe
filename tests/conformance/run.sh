#!/usr/bin/env bash
# Conformance of quiver with Arrow's integration gold files
# (tests/data/arrow-gold, see its README): the Rust checks of
# tests/conformance.rs, then the pyarrow step tests/conformance/compare.py,
# which renders and checks docs/conformance.md.
#
# Exits non-zero when a case that docs/conformance.md lists as passed fails
# (or a step cannot run). QUIVER_UPDATE_CONFORMANCE=1 rewrites the table.
# Prints last: SUMMARY <passed> passed, <failed> failed, <unsupported> unsupported (of <n> cases)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export QUIVER_VENV=${QUIVER_VENV:-$root/.venv}
py=$QUIVER_VENV/bin/python
out=${QUIVER_CONFORMANCE_OUT:-$root/target/conformance}
rm -f "$out/results.json"

if [ ! -d tests/data/arrow-gold ]; then
  echo "FAIL: tests/data/arrow-gold not found (relative to $root)"
  echo "SUMMARY 0 passed, 1 failed, 0 unsupported (no gold files)"
  exit 1
fi

cargo test --release --test conformance -- --nocapture
rust_rc=$?
if [ "$rust_rc" -ne 0 ]; then
  echo "FAIL: cargo test --release --test conformance exited $rust_rc"
fi

if [ ! -x "$py" ]; then
  echo "SKIPPED: pyarrow step: no Python venv at $QUIVER_VENV (run scripts/setup-deps.sh)"
  echo "FAIL: the cases listed as passed cannot be confirmed without the pyarrow step"
  echo "SUMMARY 0 passed, 1 failed, 0 unsupported (no venv)"
  exit 1
fi
"$py" tests/conformance/compare.py
py_rc=$?
if [ "$py_rc" -ne 0 ] || [ "$rust_rc" -ne 0 ]; then
  exit 1
fi
