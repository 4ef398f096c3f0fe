#!/usr/bin/env bash
# Builds and runs the C and C++ consumers of quiver:
#   consumer.c            C11 program against the installed quiver.h (shared and static)
#   records.c             row-major records through the C API (also under ASan+UBSan)
#   stream_example.c      the README example (examples/c/)
#   arrow_cpp_consumer.cc Arrow C++ (pyarrow's libarrow) importing a quiver stream
#   nanoarrow_consumer.c  nanoarrow validating every batch at full level
#   header_check/         quiver.h next to nanoarrow.h and arrow/c/abi.h, C11 and C++20
#   the C ABI             exported symbols, declarations, struct layouts vs include/quiver.symbols
#   CMake and pkg-config  examples/c built against the installed tree (find_package(quiver),
#                         shared and static; pkg-config --cflags --libs)
#   README.md             the C section's example and commands, extracted and run
#   consumer.c under ASan+UBSan, and under valgrind
# Every step prints PASS/FAIL/SKIPPED; the last line is the SUMMARY. Exit status is
# non-zero when any step failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
QUIVER_VENV=${QUIVER_VENV:-$root/.venv}
QUIVER_NANOARROW=${QUIVER_NANOARROW:-$root/.deps/nanoarrow}
build=${QUIVER_C_BUILD:-$root/target/c-tests}
CC=${CC:-gcc}
CXX=${CXX:-g++}
cd "$root"
rm -rf "$build"
mkdir -p "$build"

# shellcheck source=../lib/steps.sh
source "$root/tests/lib/steps.sh"

WARN=(-Wall -Wextra -Wpedantic -Werror)

# ---- the library, as installed ------------------------------------------------------
prefix="$build/prefix"
static_lib=""
QCFLAGS=()
QLIBS=()
install_layout() {
  bash scripts/install.sh "$prefix" || return 1
  local f
  for f in lib/libquiver.so lib/libquiver.a include/quiver.h lib/pkgconfig/quiver.pc; do
    if [ ! -e "$prefix/$f" ]; then echo "missing $prefix/$f"; return 1; fi
  done
  export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  read -r -a QCFLAGS <<<"$(pkg-config --cflags quiver)" || return 1
  read -r -a QLIBS <<<"$(pkg-config --libs quiver)" || return 1
  echo "pkg-config --cflags --libs quiver: ${QCFLAGS[*]} ${QLIBS[*]}"
  QLIBS+=("-Wl,-rpath,$prefix/lib")
  static_lib="$prefix/lib/libquiver.a"
}
fallback_layout() {
  echo "scripts/install.sh does not exist: using include/ and target/release/"
  if [ ! -f include/quiver.h ]; then echo "missing include/quiver.h"; return 1; fi
  if [ ! -f target/release/libquiver.so ]; then echo "missing target/release/libquiver.so"; return 1; fi
  QCFLAGS=(-I"$root/include")
  QLIBS=(-L"$root/target/release" -lquiver -Wl,-rpath,"$root/target/release")
  static_lib="$root/target/release/libquiver.a"
}
soname_check() {
  local so soname
  so=$(readlink -f "$prefix/lib/libquiver.so")
  soname=$(readelf -d "$so" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
  echo "soname of $so: ${soname:-<none>}"
  case "$soname" in
    libquiver.so.[0-9]*) ;;
    *) echo "expected a versioned soname libquiver.so.N"; return 1 ;;
  esac
  [ -e "$prefix/lib/$soname" ] || { echo "$prefix/lib/$soname is missing"; return 1; }
}

if [ -f scripts/install.sh ]; then
  step "install layout (scripts/install.sh $prefix, pkg-config)" install_layout && have_lib=1 || have_lib=0
  if [ "$have_lib" = 1 ]; then step "installed libquiver.so has a versioned soname" soname_check; fi
else
  step "library layout (fallback: include/ + target/release/)" fallback_layout && have_lib=1 || have_lib=0
fi

# the exported C ABI of the installed library against the committed list
abi_check() {
  python3 "$root/scripts/check-abi.py" --self-test --lib "$prefix/lib/libquiver.so" --static "$prefix/lib/libquiver.a"
}
if [ "$have_lib" = 1 ] && [ -f scripts/install.sh ]; then
  if command -v python3 >/dev/null && command -v nm >/dev/null; then
    step "exported symbols, declarations and struct layouts match include/quiver.symbols" abi_check
  else
    skip "ABI check: python3 or nm is not installed"
  fi
fi

if [ "$have_lib" != 1 ]; then
  echo "SKIPPED: every consumer step: the library could not be found"
  skipped=$((skipped + 1))
  echo "SUMMARY $passed passed, $failed failed, $skipped skipped (no library)"
  exit 1
fi

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
VERSION_DEF=(-DQUIVER_EXPECTED_VERSION="\"$version\"")

# compile_c OUT SRC... EXTRA...: C11 program against quiver.
compile_c() {
  local out=$1; shift
  "$CC" -std=c11 -O1 -g "${WARN[@]}" "${VERSION_DEF[@]}" "${QCFLAGS[@]}" "$@" -o "$out" "${QLIBS[@]}"
}
# run PROGRAM ARGS...: runs it, and keeps its "NAME: all N checks passed" line for the summary
run() {
  echo "\$ $*"
  "$@" | tee "$build/run.out"
  local rc=${PIPESTATUS[0]}
  sed -n 's/^\([a-z_]*\): all \([0-9]*\) checks passed$/\1 \2/p' "$build/run.out" >"$build/$(basename "$1").checks"
  return "$rc"
}

# ---- 1. consumer.c, shared and static -----------------------------------------------
if step "compile consumer.c (C11, shared libquiver)" compile_c "$build/consumer" "$here/consumer.c"; then
  step "run consumer (shared)" run "$build/consumer"
fi

link_static() {
  # only the archive: no -lquiver, so the shared object cannot be picked up
  "$CC" -std=c11 -O1 -g "${WARN[@]}" "${VERSION_DEF[@]}" "${QCFLAGS[@]}" "$here/consumer.c" -o "$build/consumer-static" \
    "$static_lib" -lpthread -ldl -lm || return 1
  if ldd "$build/consumer-static" | grep -q libquiver; then
    echo "consumer-static still needs libquiver.so:"; ldd "$build/consumer-static"; return 1
  fi
}
if [ -f "$static_lib" ]; then
  if step "link consumer.c statically against libquiver.a (-lpthread -ldl -lm)" link_static; then
    step "run consumer (static)" run "$build/consumer-static"
  fi
else
  step "libquiver.a exists ($static_lib)" false
fi

# ---- 1b. records.c: row-major records through the C API, also under ASan+UBSan --------
if step "compile records.c (C11, shared libquiver)" compile_c "$build/records" "$here/records.c"; then
  step "run records" run "$build/records"
fi
compile_records_asan() {
  compile_c "$build/records-asan" "$here/records.c" -fsanitize=address,undefined -fno-omit-frame-pointer \
    -fno-sanitize-recover=undefined
}
if step "compile records.c with -fsanitize=address,undefined" compile_records_asan; then
  step "run records under ASan+UBSan" env ASAN_OPTIONS=halt_on_error=1:detect_leaks=0 "$build/records-asan"
fi

# ---- 2. the README example ----------------------------------------------------------
example_run() {
  "$build/stream_example" | tee "$build/stream_example.out" || return 1
  # the example prints one line per batch and a total; both must be there
  grep -Eq '^batch [0-9]+: [0-9]+ rows$' "$build/stream_example.out" || { echo "no 'batch N: M rows' line"; return 1; }
  # 10000 rows at batch_rows 4096: 4096 + 4096 + 1808
  [ "$(grep -c '^batch ' "$build/stream_example.out")" = 3 ] || { echo "expected 3 batch lines"; return 1; }
  grep -q '^batch 3: 1808 rows$' "$build/stream_example.out" || { echo "expected 'batch 3: 1808 rows'"; return 1; }
  grep -qx 'total: 10000 rows in 3 batches' "$build/stream_example.out" || { echo "expected 'total: 10000 rows in 3 batches'"; return 1; }
}
if step "compile examples/c/stream_example.c" compile_c "$build/stream_example" "$root/examples/c/stream_example.c"; then
  step "run stream_example" example_run
fi

# ---- 2b. examples/c through the installed CMake package and pkg-config ----------------
# checks the output of stream_example (or another program printing the same lines)
example_output() {
  grep -q '^batch 3: 1808 rows$' "$1" || { echo "expected 'batch 3: 1808 rows'"; return 1; }
  grep -qx 'total: 10000 rows in 3 batches' "$1" || { echo "expected 'total: 10000 rows in 3 batches'"; return 1; }
}
# cmake comes from apt when it is missing (as .ci/run does for valgrind)
have_cmake() {
  command -v cmake >/dev/null && return 0
  echo "cmake is not installed: trying apt-get install cmake" >&2
  { (apt-get update -qq && apt-get install -y -qq cmake) || sudo -n apt-get install -y -qq cmake; } >"$build/apt-cmake.log" 2>&1
  command -v cmake >/dev/null
}
cmake_example() {
  local b="$build/cmake-example" t
  cmake -S "$root/examples/c" -B "$b" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$CC" \
    -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >"$build/cmake-configure.log" 2>&1 || { cat "$build/cmake-configure.log"; return 1; }
  cmake --build "$b" >"$build/cmake-build.log" 2>&1 || { cat "$build/cmake-build.log"; return 1; }
  for t in stream_example stream_example_static; do
    "$b/$t" >"$b/$t.out" || { echo "$t failed"; return 1; }
    example_output "$b/$t.out" || return 1
  done
  # (ldd into a file: grep -q closing the pipe early would fail the pipeline under pipefail)
  ldd "$b/stream_example" >"$b/ldd-shared.txt" && ldd "$b/stream_example_static" >"$b/ldd-static.txt" || return 1
  grep -q "libquiver.so.0 => $prefix/lib/libquiver.so.0" "$b/ldd-shared.txt" \
    || { echo "stream_example does not load $prefix/lib/libquiver.so.0:"; cat "$b/ldd-shared.txt"; return 1; }
  if grep -q libquiver "$b/ldd-static.txt"; then
    echo "stream_example_static still needs libquiver.so"; return 1
  fi
  echo "quiver::quiver and quiver::quiver_static: both examples print 3 batches, 10000 rows"
}
# find_package with a version the installed package must refuse
cmake_version_check() {
  local b="$build/cmake-version" v
  mkdir -p "$b/src"
  for v in 1.0 0.99; do
    printf 'cmake_minimum_required(VERSION 3.16)\nproject(v C)\nfind_package(quiver %s REQUIRED CONFIG)\n' "$v" >"$b/src/CMakeLists.txt"
    rm -rf "$b/build"
    if cmake -S "$b/src" -B "$b/build" -DCMAKE_PREFIX_PATH="$prefix" >"$b/log" 2>&1; then
      echo "find_package(quiver $v) accepted version $version"; return 1
    fi
  done
  printf 'cmake_minimum_required(VERSION 3.16)\nproject(v C)\nfind_package(quiver %s EXACT REQUIRED CONFIG)\n' "$version" >"$b/src/CMakeLists.txt"
  rm -rf "$b/build"
  cmake -S "$b/src" -B "$b/build" -DCMAKE_PREFIX_PATH="$prefix" >"$b/log" 2>&1 || { cat "$b/log"; return 1; }
  echo "find_package(quiver 1.0) and (quiver 0.99) refused, (quiver $version EXACT) found"
}
if have_cmake; then
  step "CMake: examples/c with find_package(quiver), quiver::quiver and quiver::quiver_static" cmake_example
  step "CMake: the package version file (same major, not older)" cmake_version_check
else
  skip "CMake package steps: cmake is not installed and apt-get could not install it"
fi

pkgconfig_static() {
  local all=() sys=() f
  read -r -a all <<<"$(pkg-config --static --libs-only-l quiver)" || return 1
  for f in "${all[@]}"; do [ "$f" = -lquiver ] || sys+=("$f"); done
  echo "pkg-config --static --libs-only-l quiver: ${all[*]}"
  # the archive by path (not -lquiver, which would take the .so), then the system libraries
  "$CC" -std=c11 "${WARN[@]}" "${QCFLAGS[@]}" "$root/examples/c/stream_example.c" \
    -o "$build/stream_example_pc_static" "$(pkg-config --variable=libdir quiver)/libquiver.a" "${sys[@]}" || return 1
  ldd "$build/stream_example_pc_static" >"$build/ldd-pc-static.txt" || return 1
  if grep -q libquiver "$build/ldd-pc-static.txt"; then
    echo "stream_example_pc_static still needs libquiver.so"; return 1
  fi
  "$build/stream_example_pc_static" >"$build/stream_example_pc_static.out" || return 1
  example_output "$build/stream_example_pc_static.out"
}
step "pkg-config --static: examples/c linked against libquiver.a" pkgconfig_static

# ---- 2c. the README's C section, extracted from README.md and run -----------------------
readme_c() {
  local dir="$build/readme" sh rc=0 n=0
  rm -rf "$dir" "$root/target/example-cmake"; mkdir -p "$dir/home"
  python3 "$root/tests/lib/readme_blocks.py" "$root/README.md" C c "$dir" >/dev/null || return 1
  python3 "$root/tests/lib/readme_blocks.py" "$root/README.md" C sh "$dir" >"$dir/blocks" || return 1
  # the README's example stands in for examples/c/stream_example.c, beside the CMakeLists.txt
  mv "$dir/1.c" "$dir/stream_example.c"
  cp "$root/examples/c/CMakeLists.txt" "$dir/"
  while read -r sh; do
    n=$((n + 1))
    sed -i "s|examples/c|$dir|g" "$sh"
    echo "-- README block $n: $(head -1 "$sh")"
    # each block runs from the repository root, as the README says, with HOME in the build dir
    (cd "$root" && export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" \
       && HOME="$dir/home" bash -euo pipefail "$sh") >"$sh.out" 2>&1
    rc=$?
    if [ "$rc" -ne 0 ]; then echo "README block $n failed ($rc):"; tail -20 "$sh.out"; return 1; fi
    example_output "$sh.out" || { echo "README block $n: unexpected output"; cat "$sh.out"; return 1; }
    [ "$(grep -cx 'total: 10000 rows in 3 batches' "$sh.out")" = "$(grep -Ec '^target/[a-z_/-]*stream_example' "$sh")" ] \
      || { echo "README block $n: not every program it runs printed its total"; return 1; }
  done <"$dir/blocks"
  [ "$n" -ge 3 ] || { echo "expected 3 sh blocks in the README's C section, found $n"; return 1; }
  echo "README C section: the example and $n command blocks ran, every program printed 10000 rows in 3 batches"
}
if command -v python3 >/dev/null; then
  if have_cmake; then
    step "README.md C section: its example built and run by its own commands (cargo, pkg-config, CMake)" readme_c
  else
    skip "README.md C section: its CMake block needs cmake"
  fi
else
  skip "README.md C section: python3 is not installed"
fi

# ---- 3. Arrow C++ -------------------------------------------------------------------
py="$QUIVER_VENV/bin/python"
pa_inc="" pa_lib=""
if [ -x "$py" ] && "$py" -c 'import pyarrow' 2>/dev/null; then
  pa_inc=$("$py" -c 'import pyarrow; print(pyarrow.get_include())')
  pa_lib=$("$py" -c 'import pyarrow; print(pyarrow.get_library_dirs()[0])')
fi
compile_arrow_cpp() {
  "$CXX" -std=c++20 -O1 -g -Wall -Wextra -Werror "${QCFLAGS[@]}" -isystem "$pa_inc" "$here/arrow_cpp_consumer.cc" \
    -o "$build/arrow_cpp_consumer" "${QLIBS[@]}" -L"$pa_lib" -l:libarrow.so.2600 -Wl,-rpath,"$pa_lib"
}
if [ -n "$pa_inc" ] && [ -f "$pa_lib/libarrow.so.2600" ]; then
  if step "compile arrow_cpp_consumer.cc (C++20, pyarrow's libarrow.so.2600)" compile_arrow_cpp; then
    step "run arrow_cpp_consumer" run "$build/arrow_cpp_consumer"
  fi
else
  skip "Arrow C++ consumer: pyarrow with libarrow.so.2600 not found in $QUIVER_VENV"
fi

# ---- 4. nanoarrow -------------------------------------------------------------------
na_inc="$QUIVER_NANOARROW/include"
na_src="$QUIVER_NANOARROW/src/nanoarrow.c"
compile_nanoarrow() {
  # nanoarrow.c is not -Wpedantic clean in every release; it is compiled apart
  "$CC" -std=c11 -O1 -g -I"$na_inc" -c "$na_src" -o "$build/nanoarrow.o" || return 1
  "$CC" -std=c11 -O1 -g "${WARN[@]}" "${QCFLAGS[@]}" -I"$na_inc" "$here/nanoarrow_consumer.c" "$build/nanoarrow.o" \
    -o "$build/nanoarrow_consumer" "${QLIBS[@]}"
}
if [ -f "$na_inc/nanoarrow/nanoarrow.h" ] && [ -f "$na_src" ]; then
  if step "compile nanoarrow_consumer.c with bundled nanoarrow.c" compile_nanoarrow; then
    step "run nanoarrow_consumer" run "$build/nanoarrow_consumer"
  fi
else
  skip "nanoarrow consumer: bundled nanoarrow not found in $QUIVER_NANOARROW"
fi

# ---- 5. header check ----------------------------------------------------------------
hc="$here/header_check"
header_tu() {
  local tu=$1 lang=$2 inc=$3 obj
  obj="$build/hc-$(basename "$tu" .c)-$lang.o"
  if [ "$lang" = c11 ]; then
    "$CC" -std=c11 "${WARN[@]}" "${QCFLAGS[@]}" -I"$inc" -c "$tu" -o "$obj"
  else
    "$CXX" -std=c++20 "${WARN[@]}" "${QCFLAGS[@]}" -I"$inc" -x c++ -c "$tu" -o "$obj" || return 1
    # the quiver functions must have C linkage in C++ (extern "C" in the header)
    if nm -u "$obj" | grep -q '_Z.*quiver_'; then
      echo "quiver.h declares C++-mangled functions (no extern \"C\"):"; nm -u "$obj" | grep quiver_; return 1
    fi
  fi
}
for tu in "$hc"/*.c; do
  case "$(basename "$tu")" in
    *nanoarrow*) inc="$na_inc"; have=$([ -f "$na_inc/nanoarrow/nanoarrow.h" ] && echo 1) ;;
    *abi*) inc="$pa_inc"; have=$([ -n "$pa_inc" ] && [ -f "$pa_inc/arrow/c/abi.h" ] && echo 1) ;;
    *) inc="$root"; have=1 ;;
  esac
  for lang in c11 c++20; do
    if [ "$have" = 1 ]; then
      step "header check $(basename "$tu") as $lang (-Wall -Wextra -Wpedantic -Werror)" header_tu "$tu" "$lang" "$inc"
    else
      skip "header check $(basename "$tu") as $lang: its other header is not installed"
    fi
  done
done

# ---- 6. sanitizers and valgrind -----------------------------------------------------
compile_asan() {
  compile_c "$build/consumer-asan" "$here/consumer.c" -fsanitize=address,undefined -fno-omit-frame-pointer \
    -fno-sanitize-recover=undefined
}
# LeakSanitizer works for the Rust shared object too (its allocations go through malloc).
# It needs ptrace, which some sandboxes forbid: then it runs again with detect_leaks=0 and
# leaks are left to the valgrind step.
run_asan() {
  local opts="halt_on_error=1:detect_leaks=1" rc
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  echo "\$ ASAN_OPTIONS=$opts UBSAN_OPTIONS=$UBSAN_OPTIONS $build/consumer-asan"
  ASAN_OPTIONS=$opts "$build/consumer-asan" 2>&1 | tee "$build/asan.out"
  rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ] && grep -q 'LeakSanitizer does not work under ptrace\|LeakSanitizer has encountered a fatal error' "$build/asan.out"; then
    opts="halt_on_error=1:detect_leaks=0"
    echo "note: LeakSanitizer cannot run here; again with $opts, leaks are checked by valgrind"
    ASAN_OPTIONS=$opts "$build/consumer-asan"
    rc=$?
  fi
  return "$rc"
}
if step "compile consumer.c with -fsanitize=address,undefined -fno-omit-frame-pointer" compile_asan; then
  step "run consumer under ASan+UBSan" run_asan
fi

run_valgrind() {
  valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
    --log-file="$build/valgrind.log" "$build/consumer" --quiet
  local rc=$?
  tail -n 15 "$build/valgrind.log"
  [ $rc -eq 0 ] || return $rc
  grep -q 'ERROR SUMMARY: 0 errors' "$build/valgrind.log" || return 1
  # "definitely lost: 0 bytes" / "indirectly lost: 0 bytes", or no leak summary at all
  if grep -Eq '(definitely|indirectly) lost: [1-9]' "$build/valgrind.log"; then return 1; fi
}
if command -v valgrind >/dev/null && [ -x "$build/consumer" ]; then
  step "run consumer under valgrind (0 errors, nothing definitely/indirectly lost)" run_valgrind
elif [ -x "$build/consumer" ]; then
  skip "valgrind run: valgrind is not installed"
else
  skip "valgrind run: consumer did not build"
fi

echo
if [ "$failed" -gt 0 ]; then
  echo "failed steps:"; printf '  %s\n' "${failures[@]}"
fi
checks=$(cat "$build"/*.checks 2>/dev/null | sort -u | paste -sd, - | sed "s/,/, /g")
echo "SUMMARY $passed passed, $failed failed, $skipped skipped (C/C++ consumer steps${checks:+; checks: $checks})"
[ "$failed" -eq 0 ]
