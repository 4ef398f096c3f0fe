#!/usr/bin/env bash
# Python consumer tests of quiver, run against the installed wheel:
#   1. scripts/build-wheel.sh builds the wheel (libquiver.so inside, type hints, py.typed);
#   2. a fresh venv gets it with `pip install`, and `import quiver` works there with no
#      environment variable, from outside the repository;
#   3. pytest over tests/python runs with that venv's quiver (the test libraries, pyarrow,
#      polars, duckdb, nanoarrow, pytest, come from $QUIVER_VENV through a .pth file).
# When the wheel cannot be built the packaging steps fail and pytest runs against
# python/quiver.py and target/release/libquiver.so (QUIVER_LIB) instead, so the
# consumer results are still reported. QUIVER_PY_SOURCE=1 skips the wheel on purpose.
# Needs `cargo build --release` and scripts/setup-deps.sh.
# Prints `SUMMARY <n> passed, <m> failed, <k> skipped` last; non-zero exit on failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export QUIVER_VENV=${QUIVER_VENV:-$root/.venv}
export QUIVER_NANOARROW=${QUIVER_NANOARROW:-$root/.deps/nanoarrow}
build=${QUIVER_PY_BUILD:-$root/target/python-tests}
py=$QUIVER_VENV/bin/python

if [ ! -x "$py" ]; then
  echo "FAIL: no Python venv at $QUIVER_VENV (run scripts/setup-deps.sh)"
  echo "SUMMARY 0 passed, 1 failed, 0 skipped (no venv)"
  exit 1
fi
rm -rf "$build"
mkdir -p "$build"
# shellcheck source=../lib/steps.sh
source "$root/tests/lib/steps.sh"

venv="$build/venv"
wheel=""
build_wheel() {
  PYTHON="$py" bash scripts/build-wheel.sh "$build/wheels" || return 1
  wheel=$(ls "$build"/wheels/quiver_arrow-*-py3-none-linux_x86_64.whl) || return 1
}
wheel_contents() {
  "$py" - "$wheel" <<'PY'
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
want = {"quiver/__init__.py", "quiver/__init__.pyi", "quiver/py.typed", "quiver/libquiver.so",
        "quiver/LICENSE", "quiver/NOTICE"}
missing = want - names
info = [n for n in names if n.endswith(".dist-info/WHEEL")]
if missing:
    sys.exit(f"the wheel lacks {sorted(missing)}")
wheel_file = zipfile.ZipFile(sys.argv[1]).read(info[0]).decode()
if "Root-Is-Purelib: false" not in wheel_file or "Tag: py3-none-linux_x86_64" not in wheel_file:
    sys.exit(f"unexpected WHEEL file:\n{wheel_file}")
print(f"{len(names)} files: {', '.join(sorted(names))}")
PY
}
fresh_venv_import() {
  "$py" -m venv --without-pip "$venv" || return 1
  # pip of the test venv installs into the fresh one (no pip bootstrap, no network)
  "$py" -m pip --python "$venv/bin/python" install --quiet --no-deps --no-index "$wheel" || return 1
  # no QUIVER_LIB, not in the repository, nothing on PYTHONPATH
  (cd / && env -u QUIVER_LIB -u PYTHONPATH -u LD_LIBRARY_PATH "$venv/bin/python" -c '
import os, quiver
pkg = os.path.dirname(quiver.__file__)
assert quiver.LIBRARY_PATH == os.path.join(pkg, "libquiver.so"), quiver.LIBRARY_PATH
assert os.path.isfile(os.path.join(pkg, "py.typed"))
with quiver.Writer("id: int64 not null, name: utf8") as w:
    w.append_i64(0, 7); w.append_bytes(1, "ada"); w.end_row()
    batch = w.finish(raw=True)
    assert batch.array.length == 1
del batch
assert quiver.live_arrays() == 0
print(f"import quiver {quiver.version()} from {pkg}: a one-row batch written and released")
')
}

installed=0
if [ "${QUIVER_PY_SOURCE:-0}" = 1 ]; then
  skip "wheel steps: QUIVER_PY_SOURCE=1 (the suite runs against python/quiver.py)"
elif step "build the wheel (scripts/build-wheel.sh)" build_wheel; then
  step "the wheel carries quiver/ with libquiver.so, __init__.pyi, py.typed, LICENSE, NOTICE; tag py3-none-linux_x86_64" wheel_contents
  if step "pip install the wheel into a fresh venv; import quiver there with no environment variable" fresh_venv_import; then
    # the test libraries of $QUIVER_VENV, after the fresh venv's own site-packages
    site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    vsite=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    echo "$site" >"$vsite/zz-quiver-test-deps.pth"
    installed=1
  fi
fi

report="$build/report"
mkdir -p "$report"
if [ "$installed" = 1 ]; then
  echo "== pytest against the installed wheel ($venv)"
  (cd "$build" && env -u QUIVER_LIB QUIVER_TEST_INSTALLED=1 "$venv/bin/python" -m pytest "$root/tests/python" -q -rs \
    -p no:cacheprovider --rootdir "$root/tests/python" --timeout=${QUIVER_PYTEST_TIMEOUT:-300} \
    --junitxml="$report/junit.xml" "$@")
  rc=$?
  mode="installed wheel"
else
  export QUIVER_LIB=${QUIVER_LIB:-$root/target/release/libquiver.so}
  if [ ! -f "$QUIVER_LIB" ]; then
    echo "FAIL: $QUIVER_LIB not found (run cargo build --release)"
    echo "SUMMARY $passed passed, $((failed + 1)) failed, $skipped skipped (no libquiver.so)"
    exit 1
  fi
  echo "== pytest against python/quiver.py and $QUIVER_LIB"
  "$py" -m pytest tests/python -q -rs -p no:cacheprovider --timeout=${QUIVER_PYTEST_TIMEOUT:-300} \
    --junitxml="$report/junit.xml" "$@"
  rc=$?
  mode="source tree"
fi

"$py" - "$report/junit.xml" "$rc" "$passed" "$failed" "$skipped" "$mode" <<'PY'
import sys
import xml.etree.ElementTree as ET

path, rc = sys.argv[1], int(sys.argv[2])
passed, failed, skipped = (int(x) for x in sys.argv[3:6])
mode = sys.argv[6]
try:
    root = ET.parse(path).getroot()
except (OSError, ET.ParseError) as e:
    print(f"FAIL: pytest wrote no report ({e})")
    print(f"SUMMARY {passed} passed, {failed + 1} failed, {skipped} skipped (pytest exit {rc})")
    sys.exit(1)
pytest_failed = 0
for case in root.iter("testcase"):
    name = f"{case.get('classname')}.{case.get('name')}"
    if case.find("failure") is not None or case.find("error") is not None:
        pytest_failed += 1
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
    pytest_failed += max(0, extra - counted)
if rc != 0 and pytest_failed == 0:
    pytest_failed = 1  # pytest failed without a failing test (usage or collection error)
failed += pytest_failed
print(f"SUMMARY {passed} passed, {failed} failed, {skipped} skipped "
      f"(python: pyarrow, polars, duckdb, nanoarrow; {mode})")
sys.exit(1 if failed else 0)
PY
