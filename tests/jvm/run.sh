#!/usr/bin/env bash
# Builds and runs the JVM consumer of quiver against the jar: scripts/build-jar.sh packs the
# Java FFM binding (bindings/java, module org.quiver) with libquiver.so for linux-x86_64;
# tests/jvm/QuiverJvmTest.java is compiled against that jar and run with no library path,
# so the binding loads the library from the jar. The README's Java example is extracted
# from README.md and run by its own commands. When the jar cannot be built, the suite
# compiles the binding's sources and runs against target/release/libquiver.so (or
# $QUIVER_LIB) instead, so its results are still reported.
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

rm -rf "$build"
mkdir -p "$build/classes"
# shellcheck source=../lib/steps.sh
source "$root/tests/lib/steps.sh"
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

# ---- the jar ------------------------------------------------------------------------------
version=$(sed -n 's/^version *= *"\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
jar="$build/jars/quiver-$version.jar"
jdk_bin=$(dirname "$(readlink -f "$java_bin")")
build_jar() {
  QUIVER_TEMURIN=$(dirname "$jdk_bin") bash "$root/scripts/build-jar.sh" "$build/jars" && [ -f "$jar" ]
}
jar_contents() {
  local list desc f
  list=$("$jdk_bin/jar" --list --file "$jar") || return 1
  for f in module-info.class org/quiver/Quiver.class org/quiver/native/linux-x86_64/libquiver.so \
           META-INF/LICENSE META-INF/NOTICE; do
    grep -qx "$f" <<<"$list" || { echo "the jar lacks $f"; return 1; }
  done
  desc=$("$jdk_bin/jar" --describe-module --file "$jar") || return 1
  echo "$desc"
  grep -q "^org.quiver@$version" <<<"$desc" || { echo "expected module org.quiver@$version"; return 1; }
  grep -qx "exports org.quiver" <<<"$desc" || { echo "expected 'exports org.quiver'"; return 1; }
}
have_jar=0
if [ -x "$javac_bin" ] && [ -x "$jdk_bin/jar" ]; then
  if step "build the jar (scripts/build-jar.sh)" build_jar; then
    step "the jar: module org.quiver@$version exporting org.quiver, libquiver.so for linux-x86_64, LICENSE, NOTICE" \
      jar_contents && have_jar=1
  fi
else
  skip "jar steps: no javac/jar next to $java_bin"
fi

# ---- the JVM suite ------------------------------------------------------------------------
sources=("$root"/bindings/java/src/org/quiver/*.java)
run_env=()
lib_args=()
if [ "$have_jar" = 1 ]; then
  # against the jar: no -Dquiver.lib, no QUIVER_LIB, so the binding loads its own copy
  step "javac --release 22 compiles tests/jvm against the jar without warnings" \
    "$javac_bin" --release 22 -Xlint:all,-restricted -Werror -cp "$jar" -d "$build/classes" "$here/QuiverJvmTest.java" \
    || finish "compile failed"
  launch=(-cp "$jar:$build/classes" QuiverJvmTest)
  run_env=(env -u QUIVER_LIB)
elif [ -x "$javac_bin" ]; then
  step "javac --release 22 compiles bindings/java and tests/jvm without warnings" \
    "$javac_bin" --release 22 -Xlint:all,-restricted -Werror -d "$build/classes" "${sources[@]}" "$here/QuiverJvmTest.java" \
    || finish "compile failed"
  launch=(-cp "$build/classes" QuiverJvmTest)
  lib_args=(-Dquiver.lib="$lib")
else
  # A JRE without javac: source-launch mode, with the binding beside the test in one tree.
  skip "javac not found next to $java_bin; using source-launch mode"
  mkdir -p "$build/src"
  cp "$here/QuiverJvmTest.java" "$build/src/"
  cp -r "$root/bindings/java/src/org" "$build/src/"
  launch=("$build/src/QuiverJvmTest.java")
  lib_args=(-Dquiver.lib="$lib")
fi

out="$build/output.txt"
"${run_env[@]}" timeout 600 "$java_bin" --enable-native-access=ALL-UNNAMED -XX:ErrorFile="$build/hs_err_%p.log" \
  "${lib_args[@]}" -Dquiver.expectedVersion="$version" "${launch[@]}" 2>&1 | tee "$out"
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

if [ "$have_jar" = 1 ]; then
  from_jar() { grep -q '^quiver JVM test: .*, library jar:/org/quiver/native/linux-x86_64/libquiver.so$' "$out"; }
  step "the suite ran on the library inside the jar (no -Dquiver.lib, no QUIVER_LIB)" from_jar
fi

# ---- the README's Java section, extracted and run -----------------------------------------
readme_java() {
  local dir="$build/readme" sh rc
  rm -rf "$dir" "$root/target/example-java"
  mkdir -p "$dir"
  python3 "$root/tests/lib/readme_blocks.py" "$root/README.md" Java java "$dir" >/dev/null || return 1
  python3 "$root/tests/lib/readme_blocks.py" "$root/README.md" Java sh "$dir" >"$dir/blocks" || return 1
  [ "$(wc -l <"$dir/blocks")" = 1 ] || { echo "expected one sh block in the README's Java section"; return 1; }
  mv "$dir/1.java" "$dir/Example.java"
  # examples/java/Example.java is the README's program, byte for byte
  cmp "$dir/Example.java" "$root/examples/java/Example.java" \
    || { echo "README.md's Java example differs from examples/java/Example.java"; return 1; }
  sh=$(head -1 "$dir/blocks")
  sed -i "s|examples/java|$dir|g" "$sh"
  # from the repository root, the JDK first on PATH, no library path anywhere
  (cd "$root" && PATH="$jdk_bin:$PATH" env -u QUIVER_LIB bash -euo pipefail "$sh") >"$dir/out.txt" 2>&1
  rc=$?
  cat "$dir/out.txt"
  [ "$rc" = 0 ] || { echo "the README's Java commands failed ($rc)"; return 1; }
  grep -qx "quiver $version, library jar:/org/quiver/native/linux-x86_64/libquiver.so" "$dir/out.txt" \
    || { echo "expected the example to load libquiver.so from the jar"; return 1; }
  grep -qx 'batch 3: 1808 rows' "$dir/out.txt" || { echo "expected 'batch 3: 1808 rows'"; return 1; }
  grep -qx 'total: 10000 rows in 3 batches' "$dir/out.txt" || { echo "expected 'total: 10000 rows in 3 batches'"; return 1; }
  # a warning about restricted methods would mean native access was not granted to the module
  if grep -qi "warning" "$dir/out.txt"; then echo "the example printed a warning"; return 1; fi
}
if [ "$have_jar" = 1 ] && command -v python3 >/dev/null; then
  step "README.md Java section: the example built against the jar on the module path and run" readme_java
else
  skip "README.md Java section: needs the jar and python3"
fi
# ---- docs/jvm.md: its Java blocks as one program, built and run by its shell blocks ----------
docs_jvm() {
  local dir="$build/docs" sec i=0 sh rc
  rm -rf "$dir"; mkdir -p "$dir/blocks"
  for sec in "Writing batches" "Streams with a Java fill callback"; do
    i=$((i + 1))
    python3 "$root/tests/lib/readme_blocks.py" "$root/docs/jvm.md" "$sec" java "$dir/blocks/$i" >/dev/null || return 1
  done
  python3 "$root/tests/lib/readme_blocks.py" "$root/docs/jvm.md" "Build and run" sh "$dir/blocks/sh" >"$dir/sh-blocks" || return 1
  [ "$(wc -l <"$dir/sh-blocks")" = 2 ] || { echo "expected two sh blocks in 'Build and run'"; return 1; }
  # MyApp.java: each Java block is the body of one method; main runs them and checks nothing leaked
  {
    echo "import org.quiver.*;"
    grep -h '^import ' "$dir"/blocks/[12]/*.java | grep -vx 'import org.quiver.\*;' | sort -u
    echo "public class MyApp {"
    for i in 1 2; do
      echo "  static void block$i() throws Exception {"
      grep -hv '^import ' "$dir"/blocks/$i/*.java
      echo "  }"
    done
    echo "  public static void main(String[] args) throws Exception {"
    echo "    block1(); block2();"
    echo '    if (Quiver.liveArrays() != 0) throw new AssertionError("live arrays: " + Quiver.liveArrays());'
    echo '    System.out.println("live arrays: 0, library " + Quiver.libraryOrigin());'
    echo "  }"
    echo "}"
  } >"$dir/MyApp.java"
  # the blocks run in a directory holding MyApp.java, with the repository's paths beside it
  ln -s "$root/scripts" "$dir/scripts"; ln -s "$root/target" "$dir/target"; ln -s "$root/bindings" "$dir/bindings"
  i=0
  while read -r sh; do
    i=$((i + 1))
    rm -rf "$dir/out"
    (cd "$dir" && PATH="$jdk_bin:$PATH" env -u QUIVER_LIB bash -euo pipefail "$sh") >"$dir/out-$i.txt" 2>&1
    rc=$?
    echo "-- docs/jvm.md 'Build and run' block $i:"; cat "$dir/out-$i.txt"
    [ "$rc" = 0 ] || { echo "block $i failed ($rc)"; return 1; }
    grep -qx 'ada valid=true' "$dir/out-$i.txt" || { echo "expected 'ada valid=true'"; return 1; }
    grep -qx '100000 rows' "$dir/out-$i.txt" || { echo "expected '100000 rows'"; return 1; }
    grep -q '^live arrays: 0, library ' "$dir/out-$i.txt" || { echo "expected 'live arrays: 0'"; return 1; }
    if grep -qi "warning" "$dir/out-$i.txt"; then echo "block $i printed a warning"; return 1; fi
  done <"$dir/sh-blocks"
  grep -q '^live arrays: 0, library jar:' "$dir/out-1.txt" || { echo "block 1 did not load the jar's library"; return 1; }
  grep -q '^live arrays: 0, library .*target/release/libquiver.so (-Dquiver.lib)$' "$dir/out-2.txt" \
    || { echo "block 2 did not load target/release/libquiver.so"; return 1; }
}
if [ -x "$javac_bin" ] && command -v python3 >/dev/null; then
  step "docs/jvm.md: its Java blocks as MyApp.java, built and run by its two 'Build and run' blocks (jar, sources)" docs_jvm
else
  skip "docs/jvm.md blocks: need javac and python3"
fi
n_arrow=$(python3 "$root/tests/lib/readme_blocks.py" "$root/docs/jvm.md" "Handing a quiver stream to Arrow Java" java "$build/docs-arrow" 2>/dev/null | wc -l)
skip "docs/jvm.md 'Handing a quiver stream to Arrow Java' ($n_arrow Java block(s)): Arrow Java's C Data module (org.apache.arrow:arrow-c-data) cannot be installed here (no Maven registry)"
finish "java $(java_major "$java_bin")"
