#!/usr/bin/env bash
# Builds and runs the JVM consumer of quiver: the Java FFM binding (bindings/java) and
# tests/jvm/QuiverJvmTest.java, against target/release/libquiver.so (or $QUIVER_LIB).
# Needs a JDK with java.lang.foreign (22+): Temurin 25 at its usual path, else $JAVA_HOME,
# else `java` on PATH. Without one the suite is skipped. Every check prints PASS/FAIL/SKIPPED;
# the last line is the SUMMARY; the exit status is non-zero when any check failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export QUIVER_VENV=${QUIVER_VENV:-$root/.venv}
export QUIVER_NANOARROW=${QUIVER_NANOARROW:-$root/.deps/nanoarrow}
lib=${QUIVER_LIB:-$root/target/release/libquiver.so}
build=${QUIVER_JVM_BUILD:-$root/target/jvm-tests}
TEMURIN=${QUIVER_TEMURIN:-/usr/lib/jvm/temurin-25-jdk-amd64}

# Major version of a `java` binary (8 for 1.8.0_x), or 0 when it does not run.
java_major() {
  local v
  v=$("$1" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -1)
  [ -n "$v" ] || { echo 0; return; }
  case $v in
    1.*) v=${v#1.} ;;
  esac
  echo "${v%%[.+-]*}"
}

java_bin=""
for cand in "$TEMURIN/bin/java" "${JAVA_HOME:+$JAVA_HOME/bin/java}" "$(command -v java 2>/dev/null)"; do
  [ -n "$cand" ] && [ -x "$cand" ] || continue
  major=$(java_major "$cand")
  if [ "${major:-0}" -ge 22 ] 2>/dev/null; then
    java_bin=$cand
    break
  fi
done
if [ -z "$java_bin" ]; then
  echo "SKIPPED: no JDK with java.lang.foreign"
  echo "SUMMARY 0 passed, 0 failed, 1 skipped"
  exit 0
fi
javac_bin="$(dirname "$(readlink -f "$java_bin")")/javac"
echo "== JDK: $java_bin ($("$java_bin" -version 2>&1 | head -1))"

passed=0 failed=0 skipped=0
finish() {
  echo "SUMMARY $passed passed, $failed failed, $skipped skipped${1:+ ($1)}"
  [ "$failed" -eq 0 ]
  exit $?
}

if [ ! -f "$lib" ]; then
  echo "FAIL: library not found at $lib (run cargo build --release, or set QUIVER_LIB)"
  failed=1
  finish "no library"
fi

rm -rf "$build"
mkdir -p "$build/classes"
sources=("$root"/bindings/java/src/org/quiver/*.java)
if [ -x "$javac_bin" ]; then
  if "$javac_bin" --release 22 -Xlint:all,-restricted -Werror -d "$build/classes" "${sources[@]}" "$here/QuiverJvmTest.java"; then
    echo "PASS: javac --release 22 compiles bindings/java and tests/jvm without warnings"
    passed=$((passed + 1))
  else
    echo "FAIL: javac of bindings/java and tests/jvm"
    failed=$((failed + 1))
    finish "compile failed"
  fi
  launch=(-cp "$build/classes" QuiverJvmTest)
else
  # A JRE without javac: source-launch mode, with the binding beside the test in one tree.
  echo "SKIPPED: javac not found next to $java_bin; using source-launch mode"
  skipped=$((skipped + 1))
  mkdir -p "$build/src"
  cp "$here/QuiverJvmTest.java" "$build/src/"
  cp -r "$root/bindings/java/src/org" "$build/src/"
  launch=("$build/src/QuiverJvmTest.java")
fi

version=$(sed -n 's/^version *= *"\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
out="$build/output.txt"
timeout 600 "$java_bin" --enable-native-access=ALL-UNNAMED -XX:ErrorFile="$build/hs_err_%p.log" \
  -Dquiver.lib="$lib" -Dquiver.expectedVersion="$version" "${launch[@]}" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}

summary=$(grep -E '^SUMMARY [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$out" | tail -1)
if [ -n "$summary" ]; then
  read -r p f s <<<"$(echo "$summary" | sed -E 's/^SUMMARY ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/')"
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "FAIL: the test program exited with status $rc"
    failed=$((failed + 1))
  fi
else
  # The JVM died before its summary (a crash in native code, a timeout): count what it printed.
  passed=$((passed + $(grep -c '^PASS: ' "$out")))
  failed=$((failed + $(grep -c '^FAIL: ' "$out")))
  skipped=$((skipped + $(grep -c '^SKIPPED: ' "$out")))
  echo "FAIL: the test program ended with status $rc before its summary$(ls "$build"/hs_err_*.log >/dev/null 2>&1 && echo "; crash log: $(ls "$build"/hs_err_*.log | head -1)")"
  failed=$((failed + 1))
fi
finish "java $(java_major "$java_bin")"
