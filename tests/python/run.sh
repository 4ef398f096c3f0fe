#!/usr/bin/env bash
# Python consumer tests of quiver: pytest over tests/python with the ctypes
# binding python/quiver.py. Needs `cargo build --release` and scripts/setup-deps.sh.
# Prints `SUMMARY <n> passed, <m> failed, <k> skipped` last; non-zero exit on failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export QUIVER_VENV=${QUIVER_VENV:-$root/.venv}
export QUIVER_NANOARROW=${QUIVER_NANOARROW:-$root/.deps/nanoarrow}
export QUIVER_LIB=${QUIVER_LIB:-$root/target/release/libquiver.so}
py=$QUIVER_VENV/bin/python

if [ ! -x "$py" ]; then
  echo "FAIL: no Python venv at $QUIVER_VENV (run scripts/setup-deps.sh)"
  echo "SUMMARY 0 passed, 1 failed, 0 skipped (no venv)"
  exit 1
fi
if [ ! -f "$QUIVER_LIB" ]; then
  echo "FAIL: $QUIVER_LIB not found (run cargo build --release)"
  echo "SUMMARY 0 passed, 1 failed, 0 skipped (no libquiver.so)"
  exit 1
fi

report=$(mktemp -d)
trap 'rm -rf "$report"' EXIT
"$py" -m pytest tests/python -q -rs -p no:cacheprovider --timeout=${QUIVER_PYTEST_TIMEOUT:-300} --junitxml="$report/junit.xml" "$@"
rc=$?

"$py" - "$report/junit.xml" "$rc" <<'PY'
import sys
import xml.etree.ElementTree as ET

path, rc = sys.argv[1], int(sys.argv[2])
try:
    root = ET.parse(path).getroot()
except (OSError, ET.ParseError) as e:
    print(f"FAIL: pytest wrote no report ({e})")
    print(f"SUMMARY 0 passed, 1 failed, 0 skipped (pytest exit {rc})")
    sys.exit(1)
passed = failed = skipped = 0
for case in root.iter("testcase"):
    name = f"{case.get('classname')}.{case.get('name')}"
    if case.find("failure") is not None or case.find("error") is not None:
        failed += 1
    elif case.find("skipped") is not None:
        skipped += 1
        reason = case.find("skipped").get("message", "")
        print(f"SKIPPED: {name}: {reason}")
    else:
        passed += 1
# collection errors appear as <error> without a testcase in some versions
for suite in root.iter("testsuite"):
    extra = int(suite.get("errors", 0)) + int(suite.get("failures", 0))
    counted = sum(1 for c in suite.iter("testcase")
                  if c.find("failure") is not None or c.find("error") is not None)
    failed += max(0, extra - counted)
if rc != 0 and failed == 0:
    failed = 1  # pytest failed without a failing test (usage or collection error)
print(f"SUMMARY {passed} passed, {failed} failed, {skipped} skipped (python: pyarrow, polars, duckdb, nanoarrow)")
sys.exit(1 if failed else 0)
PY
