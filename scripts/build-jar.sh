#!/usr/bin/env bash
# Builds the Java jar of quiver into target/jars/ (or OUTDIR): quiver-<version>.jar, a
# modular jar (module org.quiver, bindings/java/src/module-info.java) compiled with
# javac --release 22, carrying libquiver.so from `cargo build --release` as
# org/quiver/native/linux-x86_64/libquiver.so, plus LICENSE and NOTICE in META-INF/.
# Quiver loads that library when neither -Dquiver.lib nor QUIVER_LIB is set.
# Needs a JDK 22+: $QUIVER_TEMURIN, else $JAVA_HOME, else javac on PATH.
#   bash scripts/build-jar.sh [OUTDIR]
#   java --enable-native-access=org.quiver -p target/jars/quiver-<version>.jar ...
set -euo pipefail
root=$(cd -P "$(dirname "$0")/.." && pwd)
cd "$root"
out=${1:-$root/target/jars}
TEMURIN=${QUIVER_TEMURIN:-/usr/lib/jvm/temurin-25-jdk-amd64}

jdk_major() {
  local v
  v=$("$1" -version 2>&1 | sed -n 's/^javac \([0-9]*\).*/\1/p' | head -1)
  echo "${v:-0}"
}
javac_bin=""
for cand in "$TEMURIN/bin/javac" "${JAVA_HOME:+$JAVA_HOME/bin/javac}" "$(command -v javac 2>/dev/null)"; do
  [ -n "$cand" ] && [ -x "$cand" ] || continue
  if [ "$(jdk_major "$cand")" -ge 22 ]; then javac_bin=$cand; break; fi
done
if [ -z "$javac_bin" ]; then
  echo "build-jar: no javac 22+ found (set QUIVER_TEMURIN or JAVA_HOME)" >&2
  exit 2
fi
jar_bin=$(dirname "$javac_bin")/jar

cargo build --release --locked --lib
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
work="$root/target/jar-build"
rm -rf "$work"
mkdir -p "$work/classes/org/quiver/native/linux-x86_64" "$work/classes/META-INF" "$out"
"$javac_bin" --release 22 -Xlint:all,-restricted -Werror -d "$work/classes" \
  bindings/java/src/module-info.java bindings/java/src/org/quiver/*.java
# without the debug info of the release profile (18 MB -> about 2 MB); symbols untouched
if command -v objcopy >/dev/null; then
  objcopy --strip-debug target/release/libquiver.so "$work/classes/org/quiver/native/linux-x86_64/libquiver.so"
else
  install -m 0755 target/release/libquiver.so "$work/classes/org/quiver/native/linux-x86_64/libquiver.so"
fi
cp LICENSE NOTICE "$work/classes/META-INF/"
cat >"$work/manifest.txt" <<MF
Implementation-Title: quiver
Implementation-Version: $version
Enable-Native-Access: ALL-UNNAMED
MF
jarfile="$out/quiver-$version.jar"
rm -f "$jarfile"
"$jar_bin" --create --file "$jarfile" --manifest "$work/manifest.txt" --module-version "$version" \
  -C "$work/classes" .
echo "built $jarfile"
