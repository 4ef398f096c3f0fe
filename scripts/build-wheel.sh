#!/usr/bin/env bash
# Builds the Python wheel of quiver into target/wheels/ (or OUTDIR):
#   quiver_arrow-<version>-py3-none-linux_x86_64.whl
# carrying the ctypes binding (import quiver), its type hints and libquiver.so from
# `cargo build --release`. The build backend is hatchling (python/pyproject.toml,
# python/hatch_build.py): taken from the Python's own site-packages when it has it,
# else pip fetches it from PyPI into an isolated build environment.
#   bash scripts/build-wheel.sh [OUTDIR]         PYTHON=... picks the interpreter
#   pip install target/wheels/quiver_arrow-*.whl
set -euo pipefail
root=$(cd -P "$(dirname "$0")/.." && pwd)
cd "$root"
out=${1:-$root/target/wheels}
py=${PYTHON:-}
if [ -z "$py" ]; then
  if [ -x "$root/.venv/bin/python" ]; then py=$root/.venv/bin/python; else py=python3; fi
fi
cargo build --release --locked --lib
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
pyversion=$(sed -n 's/^version = "\(.*\)"/\1/p' python/pyproject.toml | head -1)
if [ "$version" != "$pyversion" ]; then
  echo "version mismatch: Cargo.toml says $version, python/pyproject.toml says $pyversion" >&2
  exit 1
fi
mkdir -p "$out"
rm -f "$out"/quiver_arrow-"$version"-*.whl
isolation=()
if "$py" -c 'import hatchling' 2>/dev/null; then
  isolation=(--no-build-isolation)
fi
# The release profile keeps debug info (debug = 1, for backtraces and profiling): the
# wheel gets a copy without it (18 MB -> about 2 MB); its symbols are untouched.
lib=${QUIVER_LIB:-$root/target/release/libquiver.so}
if command -v objcopy >/dev/null; then
  mkdir -p "$root/target/package-lib"
  objcopy --strip-debug "$lib" "$root/target/package-lib/libquiver.so"
  lib=$root/target/package-lib/libquiver.so
fi
# pip builds in a copy-free in-tree build; hatchling writes nothing into python/.
QUIVER_LIB=$lib "$py" -m pip wheel --quiet --no-deps "${isolation[@]}" --wheel-dir "$out" "$root/python"
wheel=$(ls "$out"/quiver_arrow-"$version"-*.whl)
echo "built $wheel"
