#!/usr/bin/env bash
# Installs what the consumer tests need, into the repo (idempotent):
#   .venv/            Python venv with pyarrow, polars, duckdb, nanoarrow, pytest, numpy (the records
#                     call takes a structured array; quiver itself does not need numpy) and hatchling
#                     (the build backend of the wheel, scripts/build-wheel.sh)
#   .deps/nanoarrow/  nanoarrow's bundled C sources (include/nanoarrow/nanoarrow.h, src/nanoarrow.c)
# Prints where things are. Fails loudly.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.quiver-deps-4
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet "pyarrow==26.*" "polars==2.1.*" "duckdb==2.0.*" "nanoarrow==0.9.0" "pytest==9.*" pytest-timeout "hatchling==1.*" "numpy==2.*"
  touch "$stamp"
fi
if [ ! -f .deps/nanoarrow/src/nanoarrow.c ]; then
  mkdir -p .deps/tmp
  (cd .deps/tmp && ../../.venv/bin/python -m pip download --quiet --no-deps --no-binary nanoarrow nanoarrow==0.9.0 \
     && tar xzf nanoarrow-0.9.0.tar.gz)
  .venv/bin/python .deps/tmp/nanoarrow-0.9.0/subprojects/arrow-nanoarrow/ci/scripts/bundle.py --output-dir .deps/nanoarrow >/dev/null
  rm -rf .deps/tmp
fi
test -f .deps/nanoarrow/include/nanoarrow/nanoarrow.h
test -f .deps/nanoarrow/src/nanoarrow.c
echo "deps: venv=$root/.venv nanoarrow=$root/.deps/nanoarrow pyarrow=$(.venv/bin/python -c 'import pyarrow;print(pyarrow.__version__)')"
