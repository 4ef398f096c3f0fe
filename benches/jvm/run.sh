#!/usr/bin/env bash
# Builds and runs the JVM benchmark (benches/jvm/QuiverJvmBench.java) against the jar of
# bindings/java (scripts/build-jar.sh), on Temurin 25 at its usual path, else $JAVA_HOME, else
# `java` on PATH (22+, java.lang.foreign). Both the binding and the benchmark's own downcall
# handles use target/release/libquiver.so (-Dquiver.lib), the library the jar carries.
# Prints the benchmark's RESULT lines; without a JDK 22+ prints `SKIPPED: <reason>` and exits 3.
#   bash benches/jvm/run.sh [--quick]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
TEMURIN=${QUIVER_TEMURIN:-/usr/lib/jvm/temurin-25-jdk-amd64}
build=$root/target/bench/jvm
java_major() {
  local v
  v=$("$1" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -1)
  v=${v#1.}
  echo "${v%%[.+-]*}"
}
java_bin=""
for cand in "$TEMURIN/bin/java" "${JAVA_HOME:+$JAVA_HOME/bin/java}" "$(command -v java 2>/dev/null || true)"; do
  [ -n "$cand" ] && [ -x "$cand" ] || continue
  if [ "$(java_major "$cand")" -ge 22 ] 2>/dev/null; then java_bin=$cand; break; fi
done
if [ -z "$java_bin" ]; then
  echo "SKIPPED: JVM benchmark: no JDK 22+ (java.lang.foreign) at $TEMURIN, \$JAVA_HOME or on PATH"
  exit 3
fi
jdk_bin=$(dirname "$(readlink -f "$java_bin")")
if [ ! -x "$jdk_bin/javac" ]; then
  echo "SKIPPED: JVM benchmark: no javac next to $java_bin"
  exit 3
fi
rm -rf "$build"
mkdir -p "$build/classes"
QUIVER_TEMURIN=$(dirname "$jdk_bin") bash scripts/build-jar.sh "$build/jars" >&2
jar=$(ls "$build"/jars/quiver-*.jar)
"$jdk_bin/javac" --release 22 -Xlint:all,-restricted -Werror -cp "$jar" -d "$build/classes" benches/jvm/QuiverJvmBench.java
echo "# $("$java_bin" -version 2>&1 | head -1)"
"$java_bin" --enable-native-access=ALL-UNNAMED -Dquiver.lib="$root/target/release/libquiver.so" \
  -cp "$jar:$build/classes" QuiverJvmBench "$@"
