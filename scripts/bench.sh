#!/usr/bin/env bash
# Runs every benchmark of quiver and writes docs/benchmarks.md and docs/benchmarks.svg:
#   criterion (benches/write.rs, benches/stream.rs), allocation counts (benches/alloc.rs),
#   the C API row path against nanoarrow and Arrow C++ (benches/peers/c_bench.c, benches/peers/cpp_bench.cc),
#   the C Stream into pyarrow (benches/peers/stream_pyarrow.py over benches/standalone),
#   the JVM row producers (benches/jvm/run.sh: bindings/java on Temurin 25) and the Python
#   ones (benches/peers/python_bench.py: python/quiver.py, numpy, pyarrow),
#   recycling on vs off outside criterion (benches/standalone `recycle`,
#   benches/peers/recycle_pyarrow.py; system allocator, then mimalloc and jemalloc).
# Usage: bash scripts/bench.sh [recycle | main]
#   recycle: only the recycling benchmark; its section of docs/benchmarks.md is
#   replaced and the rest of the file (the figures of the last full run) kept.
#   main: everything but the recycling benchmark (about half the time); the
#   recycling section of the last run is kept as it was, with its own date.
# QUIVER_BENCH_QUICK=1: a short smoke run (a subset, tiny measurement times) whose report
# goes to target/bench-results/benchmarks.md instead of docs/.
# Prints SKIPPED: <reason> for a part that cannot run and ends with a SUMMARY line.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
quick=${QUIVER_BENCH_QUICK:-0}
only=${1:-all}
case "$only" in all | recycle | main) ;; *) echo "usage: bash scripts/bench.sh [recycle | main]" >&2; exit 2 ;; esac
out=${QUIVER_BENCH_OUT:-$root/target/bench-results}
export QUIVER_BENCH_OUT="$out"
build=$root/target/bench
mkdir -p "$out" "$build"
rm -f "$out"/recycle.jsonl "$out"/recycle_meta.txt
[ "$only" = recycle ] || rm -f "$out"/c.txt "$out"/alloc.jsonl "$out"/meta.txt
[ "$only" = recycle ] || rm -rf "$root/target/criterion"
passed=0 failed=0 skipped=0
ok() { passed=$((passed + 1)); echo "== ok: $1"; }
bad() { failed=$((failed + 1)); echo "== FAILED: $1" >&2; }
skip() { skipped=$((skipped + 1)); echo "SKIPPED: $1"; }
meta() { echo "$1=$2" >> "$out/meta.txt"; }
cmd() { ncmd=$((ncmd + 1)); meta "cmd$(printf '%02d' "$ncmd")" "$*"; }
ncmd=0
rmeta() { echo "$1=$2" >> "$out/recycle_meta.txt"; }
rcmd() { nrcmd=$((nrcmd + 1)); rmeta "cmd$(printf '%02d' "$nrcmd")" "$*"; }
nrcmd=0

if [ "$quick" = 1 ]; then
  crit_args=(--warm-up-time 0.05 --measurement-time 0.1 --sample-size 10)
  filter='col_int64_|col_utf8_none|row_int64_|row_struct4_none|rec3_'
  md=$out/benchmarks.md svg=$out/benchmarks.svg
else
  crit_args=(--warm-up-time 0.3 --measurement-time 1)
  filter=''
  md=$root/docs/benchmarks.md svg=$root/docs/benchmarks.svg
fi

machine() { # $1: the meta function to write with
  $1 date "$(date -u '+%Y-%m-%d %H:%M UTC')"
  $1 cpu "$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
  $1 cores "$(nproc) online ($(lscpu | sed -n 's/^Thread(s) per core: *//p' | head -1) thread(s) per core)"
  $1 rustc "$(rustc --version)"
  $1 gcc "$(gcc --version | head -1)"
  $1 commit "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  $1 mode "$([ "$quick" = 1 ] && echo 'quick (QUIVER_BENCH_QUICK=1): subset, tiny measurement times' || echo full)"
  $1 load_before "$(cut -d' ' -f1-3 /proc/loadavg)"
}
[ "$only" = recycle ] || machine meta
machine rmeta

bash scripts/setup-deps.sh >/dev/null
py=$root/.venv/bin/python
[ "$only" = recycle ] || meta pyarrow "$($py -c 'import pyarrow; print(pyarrow.__version__)' 2>/dev/null || echo missing)"

if [ "$only" != recycle ]; then
# ---- the library, installed where the C programs link it ----------------------------
cargo build --release --locked
bash scripts/install.sh "$build/prefix" >/dev/null
prefix=$build/prefix
cmd "cargo build --release --locked && bash scripts/install.sh target/bench/prefix"

# ---- criterion -----------------------------------------------------------------------
if cargo bench --locked --bench write --bench stream -- "${crit_args[@]}" ${filter:+"$filter|stream_"} \
    > "$out/criterion.log" 2>&1; then
  ok "criterion write + stream"
else
  tail -30 "$out/criterion.log" >&2
  bad "criterion write + stream"
fi
cmd "cargo bench --bench write --bench stream -- ${crit_args[*]} ${filter:+'$filter|stream_'}"

if cargo bench --locked --bench alloc > "$out/alloc.log" 2>&1; then
  ok "allocation counts"
else
  tail -30 "$out/alloc.log" >&2
  bad "allocation counts"
fi
cmd "cargo bench --bench alloc"

# ---- C and C++ -----------------------------------------------------------------------
na=$root/.deps/nanoarrow
if [ -f "$na/src/nanoarrow.c" ]; then
  gcc -std=gnu11 -O2 -I"$na/include" -c "$na/src/nanoarrow.c" -o "$build/nanoarrow.o"
  gcc -std=gnu11 -O2 -Wall -Ibenches/peers -I"$prefix/include" -I"$na/include" benches/peers/c_bench.c "$build/nanoarrow.o" \
    -L"$prefix/lib" -lquiver -Wl,-rpath,"$prefix/lib" -o "$build/c_bench"
  cmd "gcc -std=gnu11 -O2 -Ibenches/peers -Itarget/bench/prefix/include -I.deps/nanoarrow/include benches/peers/c_bench.c nanoarrow.o -lquiver -o target/bench/c_bench && target/bench/c_bench"
  if "$build/c_bench" | tee -a "$out/c.txt"; then ok "C row path vs nanoarrow"; else bad "C row path vs nanoarrow"; fi
else
  skip "C bench: nanoarrow sources missing in $na"
fi

pa_inc=$($py -c 'import pyarrow; print(pyarrow.get_include())' 2>/dev/null || true)
pa_lib=$($py -c 'import pyarrow; print(pyarrow.get_library_dirs()[0])' 2>/dev/null || true)
if [ -n "$pa_inc" ] && [ -f "$pa_lib/libarrow.so.2600" ] &&
   g++ -std=c++20 -O2 -Ibenches/peers -I"$pa_inc" benches/peers/cpp_bench.cc -L"$pa_lib" -l:libarrow.so.2600 \
     -Wl,-rpath,"$pa_lib" -o "$build/cpp_bench" 2> "$out/cpp_build.log"; then
  cmd "g++ -std=c++20 -O2 -Ibenches/peers -I\$PYARROW_INCLUDE benches/peers/cpp_bench.cc -l:libarrow.so.2600 -o target/bench/cpp_bench && target/bench/cpp_bench"
  if "$build/cpp_bench" | tee -a "$out/c.txt"; then ok "Arrow C++ builders"; else bad "Arrow C++ builders"; fi
else
  skip "Arrow C++ bench: pyarrow headers or libarrow.so.2600 unavailable or build failed (see $out/cpp_build.log)"
fi

# ---- the C Stream into pyarrow ---------------------------------------------------------
if (cd benches/standalone && CARGO_TARGET_DIR="$build/producer" cargo build --release --locked -q) 2> "$out/producer_build.log"; then
  cmd "(cd benches/standalone && CARGO_TARGET_DIR=target/bench/producer cargo build --release) && .venv/bin/python benches/peers/stream_pyarrow.py target/bench/producer/release/libquiver_bench_producer.so"
  if QUIVER_LIB="$root/target/release/libquiver.so" "$py" benches/peers/stream_pyarrow.py \
      "$build/producer/release/libquiver_bench_producer.so" | tee -a "$out/c.txt"; then
    ok "C Stream into pyarrow"
  else
    bad "C Stream into pyarrow"
  fi
else
  cat "$out/producer_build.log" >&2
  skip "pyarrow stream: benches/standalone did not build"
fi

# ---- the JVM and Python row producers (benches/jvm, benches/peers/python_bench.py) ------
# Each prints its RESULT lines (appended to c.txt for the report), or SKIPPED with the
# reason and exit status 3 when its runtime (a JDK 22+; numpy and pyarrow) is missing.
producer() { # $1: name, $2: output file, then the command
  local name=$1 file=$2 rc=0
  shift 2
  "$@" > "$file" 2> "${file%.txt}.log" || rc=$?
  if [ "$rc" = 0 ]; then
    cat "$file"
    grep '^RESULT ' "$file" >> "$out/c.txt"
    ok "$name"
  elif [ "$rc" = 3 ]; then
    skip "$(sed -n 's/^SKIPPED: //p' "$file" | head -1)"
  else
    tail -30 "$file" "${file%.txt}.log" >&2
    bad "$name"
  fi
}
quick_arg=()
[ "$quick" = 1 ] && quick_arg=(--quick)
cmd "bash benches/jvm/run.sh ${quick_arg[*]}"
producer "JVM benchmark (Temurin 25, bindings/java)" "$out/jvm.txt" bash benches/jvm/run.sh "${quick_arg[@]}"
if [ -x "$py" ]; then
  cmd "QUIVER_LIB=target/release/libquiver.so .venv/bin/python benches/peers/python_bench.py ${quick_arg[*]}"
  producer "Python benchmark (python/quiver.py, numpy, pyarrow)" "$out/python.txt" \
    env QUIVER_LIB="$root/target/release/libquiver.so" "$py" benches/peers/python_bench.py "${quick_arg[@]}"
else
  skip "Python benchmark: no Python at $py (run scripts/setup-deps.sh)"
fi

fi # only != recycle

if [ "$only" != main ]; then
# ---- recycling on vs off, outside criterion -------------------------------------------
# One Cargo package (benches/standalone) builds the producer cdylib above and the
# recycle program.
sa=$build/producer
rquick=$([ "$quick" = 1 ] && echo --quick || true)
# Each build of the program is copied aside (target/bench/recycle-system, -mimalloc):
# the two feature sets share one target directory and overwrite release/recycle.
if (cd benches/standalone && CARGO_TARGET_DIR="$sa" cargo build --release --locked -q) 2> "$out/recycle_build.log" &&
   cp "$sa/release/recycle" "$build/recycle-system"; then
  rcmd "(cd benches/standalone && CARGO_TARGET_DIR=target/bench/producer cargo build --release) && cp target/bench/producer/release/recycle target/bench/recycle-system && target/bench/recycle-system plan $rquick"
  if "$build/recycle-system" plan $rquick > "$out/recycle.jsonl"; then ok "recycle (system allocator)"; else bad "recycle (system allocator)"; fi
  rcmd ".venv/bin/python benches/peers/recycle_pyarrow.py target/bench/producer/release/libquiver_bench_producer.so plan $rquick"
  if "$py" -c 'import pyarrow' 2>/dev/null; then
    if "$py" benches/peers/recycle_pyarrow.py "$sa/release/libquiver_bench_producer.so" plan $rquick \
        >> "$out/recycle.jsonl"; then ok "recycle into pyarrow"; else bad "recycle into pyarrow"; fi
  else
    skip "recycle into pyarrow: pyarrow not importable by $py"
  fi
else
  cat "$out/recycle_build.log" >&2
  bad "recycle: benches/standalone did not build"
fi
# The builds on other allocators share the target directory: only the allocator and the
# program are rebuilt.
for alloc in mimalloc jemalloc; do
  if (cd benches/standalone && CARGO_TARGET_DIR="$sa" cargo build --release --locked -q --features "$alloc" --bin recycle) \
      2> "$out/recycle_${alloc}_build.log" && cp "$sa/release/recycle" "$build/recycle-$alloc"; then
    rcmd "(cd benches/standalone && CARGO_TARGET_DIR=target/bench/producer cargo build --release --features $alloc --bin recycle) && cp target/bench/producer/release/recycle target/bench/recycle-$alloc && target/bench/recycle-$alloc plan --allocator-subset $rquick"
    if "$build/recycle-$alloc" plan --allocator-subset $rquick >> "$out/recycle.jsonl"; then
      ok "recycle ($alloc)"
    else
      bad "recycle ($alloc)"
    fi
  else
    skip "recycle on $alloc: the build failed (no network for the $alloc crate?), see $out/recycle_${alloc}_build.log"
  fi
done
rmeta load_after "$(cut -d' ' -f1-3 /proc/loadavg)"
rmeta shared "${QUIVER_BENCH_SHARED:-not recorded}"
fi # only != main

if [ "$only" = recycle ]; then
  [ -f "$md" ] || cp docs/benchmarks.md "$md"
  if python3 benches/recycle_report.py "$md"; then ok "recycling section of $md"; else bad "recycling report"; fi
else
  meta load_after "$(cut -d' ' -f1-3 /proc/loadavg)"
  meta shared "${QUIVER_BENCH_SHARED:-not recorded}"
  if [ "$only" = all ]; then
    if python3 benches/report.py "$md" "$svg"; then ok "report $md"; else bad "report"; fi
  else
    # main: the new report, with the recycling section of the last run put back.
    kept=$(mktemp)
    cp "$md" "$kept" 2>/dev/null || cp docs/benchmarks.md "$kept"
    if python3 benches/report.py "$md" "$svg" && python3 benches/recycle_report.py "$md" --keep "$kept"; then
      ok "report $md (the recycling section of the last run kept)"
    else
      bad "report"
    fi
    rm -f "$kept"
  fi
fi

echo "SUMMARY $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
