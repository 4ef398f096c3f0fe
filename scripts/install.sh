#!/usr/bin/env bash
# Installs libquiver into PREFIX: lib/libquiver.so.X.Y.Z (+ .so.X and .so
# links; soname libquiver.so.X), lib/libquiver.a, include/quiver.h,
# lib/pkgconfig/quiver.pc and the CMake package lib/cmake/quiver/
# (find_package(quiver): targets quiver::quiver and quiver::quiver_static).
# Builds the release library first.
#   bash scripts/install.sh /usr/local
set -euo pipefail
prefix=${1:?usage: scripts/install.sh PREFIX}
root=$(cd -P "$(dirname "$0")/.." && pwd)
cd "$root"
cargo build --release --locked --lib
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
major=${version%%.*}
mkdir -p "$prefix/lib/pkgconfig" "$prefix/lib/cmake/quiver" "$prefix/include"
prefix=$(cd "$prefix" && pwd)
install -m 0755 target/release/libquiver.so "$prefix/lib/libquiver.so.$version"
ln -sf "libquiver.so.$version" "$prefix/lib/libquiver.so.$major"
ln -sf "libquiver.so.$major" "$prefix/lib/libquiver.so"
install -m 0644 target/release/libquiver.a "$prefix/lib/libquiver.a"
install -m 0644 include/quiver.h "$prefix/include/quiver.h"
sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" quiver.pc.in > "$prefix/lib/pkgconfig/quiver.pc"
for f in quiverConfig.cmake quiverConfigVersion.cmake; do
  sed -e "s|@VERSION@|$version|g" -e "s|@MAJOR@|$major|g" "cmake/$f.in" > "$prefix/lib/cmake/quiver/$f"
done
echo "installed quiver $version into $prefix"
