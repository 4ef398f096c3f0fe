#!/usr/bin/env bash
# Reliability suite of quiver, against the installed library (scripts/install.sh):
#   stress.c   the C threads stress: consumer threads release batches and moved-out
#              children while the writer writes the next ones (100,000 batches natively)
#   stress.c   again under valgrind's helgrind and drd (fewer batches; the count is printed)
#   bounds.c   writer and stream dropped with batches outstanding, under valgrind memcheck:
#              nothing definitely or indirectly lost
#   fuzzing    cargo-fuzz target api_sequence on stable (-s none) for a bounded time from
#              the committed seed corpus (fuzz/corpus/api_sequence/seed-*)
#   parser     cargo-fuzz target schema_text (the schema text parser against the writer)
#              likewise, from fuzz/corpus/schema_text/seed-*
# Every step prints PASS/FAIL/SKIPPED; the last line is the SUMMARY. Exit status is
# non-zero when any step failed.
#
# Knobs: QUIVER_STRESS_BATCHES (100000), QUIVER_HELGRIND_BATCHES (50000),
# QUIVER_DRD_BATCHES (20000), QUIVER_FUZZ_SECONDS (60), QUIVER_SCHEMA_FUZZ_SECONDS (60).
set -uo pipefail
t_start=$EPOCHREALTIME
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${QUIVER_RELIABILITY_BUILD:-$root/target/reliability}
CC=${CC:-gcc}
stress_batches=${QUIVER_STRESS_BATCHES:-100000}
helgrind_batches=${QUIVER_HELGRIND_BATCHES:-50000}
drd_batches=${QUIVER_DRD_BATCHES:-20000}
fuzz_seconds=${QUIVER_FUZZ_SECONDS:-60}
schema_fuzz_seconds=${QUIVER_SCHEMA_FUZZ_SECONDS:-60}
cd "$root"
rm -rf "$build"
mkdir -p "$build"

# shellcheck source=../lib/steps.sh
source "$root/tests/lib/steps.sh"
figures=()
# seconds since $1 (an $EPOCHREALTIME), one decimal
since() {
  awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'
}

# What a libFuzzer log says: its progress and result lines, and a panic's
# message (the line after "panicked at"): its start and its end (where the
# assertion says what failed), when it is long.
fuzz_summary() {
  grep -E '^(INFO: seed corpus|#[0-9]+[[:space:]]+(INITED|DONE))|^Done [0-9]+ runs|^stat::|^==[0-9]+== ERROR|panicked at|^SUMMARY: libFuzzer' "$1"
  grep -A1 'panicked at' "$1" | grep -v 'panicked at' | head -n 3 |
    LC_ALL=C awk '{ if (length($0) > 600) print substr($0, 1, 300) " ... " substr($0, length($0) - 299); else print }'
}

WARN=(-Wall -Wextra -Wpedantic -Werror)

# ---- the library, as installed ------------------------------------------------------
prefix="$build/prefix"
QCFLAGS=()
QLIBS=()
install_layout() {
  bash scripts/install.sh "$prefix" || return 1
  export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  read -r -a QCFLAGS <<<"$(pkg-config --cflags quiver)" || return 1
  read -r -a QLIBS <<<"$(pkg-config --libs quiver)" || return 1
  echo "pkg-config --cflags --libs quiver: ${QCFLAGS[*]} ${QLIBS[*]}"
  QLIBS+=("-Wl,-rpath,$prefix/lib")
}
fallback_layout() {
  # A copy under $build (with its soname link), so a rebuild of target/ mid-run
  # does not change the library under test.
  echo "scripts/install.sh does not exist: using include/ and target/release/"
  cargo build --release --locked --lib || return 1
  local so=target/release/libquiver.so soname
  [ -f include/quiver.h ] && [ -f "$so" ] || { echo "missing include/quiver.h or $so"; return 1; }
  mkdir -p "$prefix/lib"
  cp "$so" "$prefix/lib/libquiver.so"
  soname=$(readelf -d "$so" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
  if [ -n "$soname" ] && [ "$soname" != libquiver.so ]; then ln -sf libquiver.so "$prefix/lib/$soname"; fi
  QCFLAGS=(-I"$root/include")
  QLIBS=(-L"$prefix/lib" -lquiver -Wl,-rpath,"$prefix/lib")
}
if [ -f scripts/install.sh ]; then
  step "install layout (scripts/install.sh $prefix, pkg-config)" install_layout && have_lib=1 || have_lib=0
else
  step "library layout (fallback: include/ + target/release/)" fallback_layout && have_lib=1 || have_lib=0
fi

# compile_c OUT SRC EXTRA...: C11 program against quiver, with threads.
compile_c() {
  local out=$1 src=$2; shift 2
  "$CC" -std=c11 -O1 -g "${WARN[@]}" "${QCFLAGS[@]}" "$@" "$src" -o "$out" "${QLIBS[@]}" -lpthread
}

have_valgrind=0
command -v valgrind >/dev/null && have_valgrind=1

if [ "$have_lib" = 1 ]; then
  # ---- (a) stress.c natively ----------------------------------------------------------
  run_stress() {
    local t0=$EPOCHREALTIME secs
    echo "\$ $build/stress $stress_batches"
    "$build/stress" "$stress_batches" | tee "$build/stress.out"
    local rc=${PIPESTATUS[0]}
    secs=$(since "$t0")
    [ "$rc" -eq 0 ] || return "$rc"
    grep -q "^stress.c: $stress_batches batches" "$build/stress.out" || { echo "no 'stress.c: $stress_batches batches' line"; return 1; }
    echo "stress: $stress_batches batches natively in ${secs}s"
    figures+=("stress $stress_batches batches in ${secs}s")
  }
  if step "compile stress.c (C11, pthreads)" compile_c "$build/stress" "$here/stress.c"; then
    step "run stress natively: $stress_batches batches, values checked before every release" run_stress
  fi

  # ---- (b) stress.c under helgrind and drd --------------------------------------------
  # run_vg_threads TOOL BIN BATCHES: the tool must report 0 errors and the program pass.
  run_vg_threads() {
    local tool=$1 bin=$2 n=$3 t0=$EPOCHREALTIME secs rc
    echo "$tool: $n batches (chosen to stay well under 2 minutes on 2 cores; natively $stress_batches)"
    echo "\$ valgrind --tool=$tool --error-exitcode=99 $bin $n"
    valgrind --tool="$tool" --error-exitcode=99 --log-file="$build/$tool.log" "$bin" "$n" | tee "$build/$tool.out"
    rc=${PIPESTATUS[0]}
    secs=$(since "$t0")
    tail -n 3 "$build/$tool.log"
    [ "$rc" -eq 0 ] || return "$rc"
    grep -q 'ERROR SUMMARY: 0 errors' "$build/$tool.log" || return 1
    grep -q "^stress.c: $n batches" "$build/$tool.out" || { echo "no 'stress.c: $n batches' line"; return 1; }
    echo "$tool: $n batches in ${secs}s, 0 errors"
    figures+=("$tool $n batches in ${secs}s, 0 errors")
  }
  if [ "$have_valgrind" = 1 ]; then
    if step "compile stress.c for helgrind (-DVG_HELGRIND)" compile_c "$build/stress-helgrind" "$here/stress.c" -DVG_HELGRIND; then
      step "run stress under valgrind --tool=helgrind: $helgrind_batches batches, 0 errors" \
        run_vg_threads helgrind "$build/stress-helgrind" "$helgrind_batches"
    fi
    if step "compile stress.c for drd (-DVG_DRD)" compile_c "$build/stress-drd" "$here/stress.c" -DVG_DRD; then
      step "run stress under valgrind --tool=drd: $drd_batches batches, 0 errors" \
        run_vg_threads drd "$build/stress-drd" "$drd_batches"
    fi
  else
    skip "stress under helgrind and drd: valgrind is not installed"
  fi

  # ---- (c) bounds.c under memcheck ----------------------------------------------------
  run_bounds() {
    valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
      --log-file="$build/bounds-valgrind.log" "$build/bounds" | tee "$build/bounds.out"
    local rc=${PIPESTATUS[0]}
    tail -n 12 "$build/bounds-valgrind.log"
    [ "$rc" -eq 0 ] || return "$rc"
    grep -q '^bounds.c: ' "$build/bounds.out" || { echo "no 'bounds.c:' line"; return 1; }
    grep -q 'ERROR SUMMARY: 0 errors' "$build/bounds-valgrind.log" || return 1
    if grep -Eq '(definitely|indirectly) lost: [1-9]' "$build/bounds-valgrind.log"; then return 1; fi
    local heap
    heap=$(grep -Eo 'in use at exit: [0-9,]+ bytes in [0-9,]+ blocks' "$build/bounds-valgrind.log")
    echo "bounds: $heap"
    figures+=("bounds: ${heap:-leak summary missing}")
  }
  if step "compile bounds.c (C11)" compile_c "$build/bounds" "$here/bounds.c"; then
    if [ "$have_valgrind" = 1 ]; then
      step "run bounds under valgrind memcheck (writer and stream dropped first; 0 bytes lost)" run_bounds
    else
      skip "bounds under valgrind: valgrind is not installed"
    fi
  fi
else
  skip "C stress and bounds steps: the library could not be installed"
fi

# ---- (d) fuzzing --------------------------------------------------------------------
fuzz_ready=0
if command -v cargo-fuzz >/dev/null 2>&1 || cargo fuzz --version >/dev/null 2>&1; then
  fuzz_ready=1
else
  echo "== cargo-fuzz is not installed: cargo install cargo-fuzz --locked"
  t0=$EPOCHREALTIME
  if cargo install cargo-fuzz --locked >"$build/cargo-fuzz-install.log" 2>&1; then
    echo "installed cargo-fuzz in $(since "$t0")s"
    fuzz_ready=1
  else
    tail -n 5 "$build/cargo-fuzz-install.log"
    skip "fuzzing: cargo install cargo-fuzz --locked failed (log: $build/cargo-fuzz-install.log)"
  fi
fi
if [ "$fuzz_ready" = 1 ]; then
  # Without libFuzzer's comparison tracing (--no-trace-compares): its callbacks took
  # 37% of the target's time, and a 90 s run without them reached the same coverage
  # (docs/reliability.md, "Throughput"). The run passes the same flags, or it rebuilds.
  fuzz_flags=(-s none --no-trace-compares)
  echo "== build the fuzz target (cargo fuzz build ${fuzz_flags[*]} api_sequence)"
  t0=$EPOCHREALTIME
  if cargo fuzz build "${fuzz_flags[@]}" api_sequence >"$build/fuzz-build.log" 2>&1; then
    fuzz_build_secs=$(since "$t0")
    echo "fuzz target built in ${fuzz_build_secs}s"
    figures+=("fuzz build ${fuzz_build_secs}s")
    lock_current() {
      # the build resolves fuzz/Cargo.lock anew (cargo fuzz has no --locked)
      if ! git diff --quiet -- fuzz/Cargo.lock; then
        echo "fuzz/Cargo.lock changed in the build: commit it"; git --no-pager diff --stat -- fuzz/Cargo.lock; return 1
      fi
    }
    step "fuzz/Cargo.lock is current" lock_current
    scratch="$build/fuzz-corpus" seeds_dir="$build/fuzz-seeds" artifacts="$build/fuzz-artifacts"
    mkdir -p "$scratch" "$seeds_dir" "$artifacts"
    fuzz_run() {
      local seeds rc
      # Exactly the committed seeds (a local fuzz run leaves other, ignored,
      # files beside them); new inputs go to the scratch corpus, the first
      # directory, not into the tree.
      find fuzz/corpus/api_sequence -maxdepth 1 -type f -name 'seed-*' -exec cp {} "$seeds_dir/" \;
      seeds=$(find "$seeds_dir" -type f | wc -l)
      [ "$seeds" -gt 0 ] || { echo "no seed-* files in fuzz/corpus/api_sequence"; return 1; }
      echo "\$ cargo fuzz run ${fuzz_flags[*]} api_sequence $scratch $seeds_dir -- -max_total_time=$fuzz_seconds ..."
      cargo fuzz run "${fuzz_flags[@]}" api_sequence "$scratch" "$seeds_dir" -- \
        -max_total_time="$fuzz_seconds" -timeout=10 -print_final_stats=1 -artifact_prefix="$artifacts/" \
        >"$build/fuzz.log" 2>&1
      rc=$?
      fuzz_summary "$build/fuzz.log"
      local execs secs slowest
      execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/fuzz.log")
      secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$build/fuzz.log")
      slowest=$(sed -n 's/^stat::slowest_unit_time_sec: *//p' "$build/fuzz.log")
      if [ "$rc" -ne 0 ] || ls "$artifacts"/* >/dev/null 2>&1; then
        echo "the fuzz run failed (exit $rc); log: $build/fuzz.log; crash inputs:"
        ls -l "$artifacts"
        echo "reduce with: cargo fuzz tmin ${fuzz_flags[*]} api_sequence <input>; then add it to fuzz/regressions/api_sequence/"
        return 1
      fi
      [ -n "$execs" ] || { echo "no final stats in the fuzz log"; return 1; }
      echo "fuzz: $execs executions in ${secs}s, 0 crashes; slowest input per libFuzzer: ${slowest}s (whole seconds)"
      figures+=("fuzz $execs execs in ${secs}s, 0 crashes")
      # The slowest input of the corpus, to the millisecond: every kept input once.
      local bin=fuzz/target/x86_64-unknown-linux-gnu/release/api_sequence
      if [ -x "$bin" ]; then
        find "$scratch" "$seeds_dir" -maxdepth 1 -type f ! -name '.*' -print0 |
          xargs -0 "$bin" -runs=1 >"$build/fuzz-replay.log" 2>&1 || { echo "replaying the corpus failed"; tail "$build/fuzz-replay.log"; return 1; }
        local slow
        slow=$(sed -n 's/^Executed \(.*\) in \([0-9]*\) ms$/\2 ms (\1)/p' "$build/fuzz-replay.log" | sort -n | tail -1)
        echo "slowest corpus input, each kept input run once: ${slow:-none}"
        figures+=("slowest corpus input ${slow%% (*}")
        echo "corpus after the run: $(find "$scratch" -type f | wc -l) new inputs + $seeds seeds"
      fi
    }
    step "fuzz api_sequence for ${fuzz_seconds}s from the seed corpus (-s none, stable)" fuzz_run
  else
    tail -n 20 "$build/fuzz-build.log"
    skip "fuzzing: cargo fuzz build ${fuzz_flags[*]} api_sequence failed (log: $build/fuzz-build.log)"
  fi

  # ---- (e) the schema text parser ---------------------------------------------------
  echo "== build the parser fuzz target (cargo fuzz build -s none schema_text)"
  t0=$EPOCHREALTIME
  if cargo fuzz build -s none schema_text >"$build/schema-fuzz-build.log" 2>&1; then
    echo "parser fuzz target built in $(since "$t0")s"
    s_scratch="$build/schema-fuzz-corpus" s_seeds="$build/schema-fuzz-seeds" s_artifacts="$build/schema-fuzz-artifacts"
    mkdir -p "$s_scratch" "$s_seeds" "$s_artifacts"
    schema_fuzz_run() {
      local seeds rc execs secs
      find fuzz/corpus/schema_text -maxdepth 1 -type f -name 'seed-*' -exec cp {} "$s_seeds/" \;
      seeds=$(find "$s_seeds" -type f | wc -l)
      [ "$seeds" -gt 0 ] || { echo "no seed-* files in fuzz/corpus/schema_text"; return 1; }
      echo "\$ cargo fuzz run -s none schema_text $s_scratch $s_seeds -- -max_total_time=$schema_fuzz_seconds ..."
      cargo fuzz run -s none schema_text "$s_scratch" "$s_seeds" -- \
        -max_total_time="$schema_fuzz_seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$s_artifacts/" >"$build/schema-fuzz.log" 2>&1
      rc=$?
      fuzz_summary "$build/schema-fuzz.log"
      execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/schema-fuzz.log")
      secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$build/schema-fuzz.log")
      if [ "$rc" -ne 0 ] || ls "$s_artifacts"/* >/dev/null 2>&1; then
        echo "the parser fuzz run failed (exit $rc); log: $build/schema-fuzz.log; crash inputs:"
        ls -l "$s_artifacts"
        echo "reduce with: cargo fuzz tmin -s none schema_text <input>; then add it to fuzz/regressions/schema_text/"
        return 1
      fi
      [ -n "$execs" ] || { echo "no final stats in the parser fuzz log"; return 1; }
      echo "parser fuzz: $execs executions in ${secs}s, 0 crashes; corpus after the run: $(find "$s_scratch" -type f | wc -l) new inputs + $seeds seeds"
      figures+=("parser fuzz $execs execs in ${secs}s, 0 crashes")
    }
    step "fuzz schema_text for ${schema_fuzz_seconds}s from the seed corpus (-s none, stable)" schema_fuzz_run
  else
    tail -n 20 "$build/schema-fuzz-build.log"
    skip "parser fuzzing: cargo fuzz build -s none schema_text failed (log: $build/schema-fuzz-build.log)"
  fi
fi

echo
if [ "$failed" -gt 0 ]; then
  echo "failed steps:"; printf '  %s\n' "${failures[@]}"
fi
wall=$(since "$t_start")
echo "reliability suite wall time: ${wall}s"
summary=$(printf '%s; ' "${figures[@]}")
echo "SUMMARY $passed passed, $failed failed, $skipped skipped (reliability steps; ${summary}wall ${wall}s)"
[ "$failed" -eq 0 ]
