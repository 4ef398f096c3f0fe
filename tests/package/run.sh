#!/usr/bin/env bash
# What a release carries: the crate as `cargo package` builds it (no warnings, no test data,
# venv or fuzz corpora; the files a user needs), LICENSE, NOTICE and CHANGELOG, and the
# versions of the Python and Java packages. The wheel and the jar themselves are built and
# tested by tests/python/run.sh and tests/jvm/run.sh. Every step prints PASS/FAIL/SKIPPED;
# the last line is the SUMMARY; the exit status is non-zero when any step failed.
set -uo pipefail
root=$(cd -P "$(dirname "$0")/../.." && pwd)
build=${QUIVER_PACKAGE_BUILD:-$root/target/package-tests}
cd "$root"
rm -rf "$build"
mkdir -p "$build"
# shellcheck source=../lib/steps.sh
source "$root/tests/lib/steps.sh"

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)

# ---- the crate ------------------------------------------------------------------------------
crate_package() {
  # --no-verify: the verify build compiles every dependency again in debug (about 25 minutes
  # here); --offline when the registry cache has everything, else with the index.
  cargo package --allow-dirty --no-verify --locked --offline >"$build/package.log" 2>&1 \
    || cargo package --allow-dirty --no-verify --locked >"$build/package.log" 2>&1 || { cat "$build/package.log"; return 1; }
  cat "$build/package.log"
  if grep -q '^warning' "$build/package.log"; then echo "cargo package warned"; return 1; fi
  [ -f "target/package/quiver-$version.crate" ] || { echo "no target/package/quiver-$version.crate"; return 1; }
}
crate_contents() {
  local list bytes f
  list=$(tar -tzf "target/package/quiver-$version.crate" | sed "s|^quiver-$version/||") || return 1
  printf '%s\n' "$list" >"$build/crate-files.txt"
  for f in Cargo.toml Cargo.lock README.md LICENSE NOTICE CHANGELOG.md build.rs cbindgen.toml include/quiver.h \
           src/lib.rs src/ffi/mod.rs examples/demo.rs docs/ffi.md; do
    grep -qx "$f" <<<"$list" || { echo "the crate lacks $f"; return 1; }
  done
  # every test and bench target the manifest declares, with the sources it pulls in (but
  # fuzz/driver: fuzz/ is a package of its own, which cargo leaves out of this crate)
  for f in tests/*.rs benches/*.rs tests/all_types/mod.rs tests/exact/mod.rs tests/reliability/exported.rs; do
    grep -qx "$f" <<<"$list" || { echo "the crate lacks $f (a declared target or its module)"; return 1; }
  done
  if grep -E '^(tests/data|\.venv|\.deps|fuzz/corpus|fuzz/target|target|bindings|python|scripts|bench)/' <<<"$list"; then
    echo "the crate carries repository-only files (above)"; return 1
  fi
  bytes=$(stat -c %s "target/package/quiver-$version.crate")
  echo "$(wc -l <<<"$list") files, $bytes bytes compressed"
  [ "$bytes" -lt 1000000 ] || { echo "the crate is over 1 MB"; return 1; }
}
crate_metadata() {
  local meta
  meta=$(cargo metadata --no-deps --format-version 1 --offline 2>/dev/null || cargo metadata --no-deps --format-version 1) || return 1
  python3 - "$meta" <<'PY'
import json, sys
pkg = json.loads(sys.argv[1])["packages"][0]
need = ["description", "license", "repository", "documentation", "readme", "keywords", "categories", "rust_version"]
missing = [k for k in need if not pkg.get(k)]
if missing:
    sys.exit(f"Cargo.toml lacks {missing}")
if pkg["license"] != "Apache-2.0":
    sys.exit(f"license is {pkg['license']}, LICENSE holds Apache-2.0")
if len(pkg["keywords"]) > 5 or any(len(k) > 20 for k in pkg["keywords"]):
    sys.exit("crates.io takes at most 5 keywords of at most 20 characters")
print(", ".join(f"{k}: {pkg[k]}" for k in need))
PY
}
step "cargo package --no-verify: no warnings" crate_package && step "the crate: what a user needs, no test data, venv, corpora or bindings, under 1 MB" crate_contents
step "Cargo.toml metadata: description, license, repository, documentation, readme, keywords, categories, rust-version" crate_metadata

# ---- LICENSE, NOTICE, CHANGELOG ------------------------------------------------------------
license_text() {
  # the Apache License 2.0 exactly as the ASF publishes it (apache.org/licenses/LICENSE-2.0.txt)
  local sum
  sum=$(sha256sum LICENSE | cut -d' ' -f1)
  echo "sha256 $sum"
  [ "$sum" = cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30 ] \
    || { echo "LICENSE is not the verbatim Apache License 2.0 text"; return 1; }
}
notice() {
  grep -q 'tests/data/arrow-gold' NOTICE && grep -q 'arrow-testing' NOTICE && grep -q 'The Apache Software Foundation' NOTICE \
    || { echo "NOTICE must name tests/data/arrow-gold, its origin (arrow-testing) and its copyright holder"; return 1; }
  # the vendored data and its own note are there
  [ -f tests/data/arrow-gold/README.md ] || { echo "tests/data/arrow-gold/README.md is missing"; return 1; }
  grep -q 'Apache License' tests/data/arrow-gold/README.md || { echo "the gold files' README names no licence"; return 1; }
}
changelog() {
  grep -Eq "^## \[$version\]" CHANGELOG.md || { echo "CHANGELOG.md has no section for $version (Cargo.toml)"; return 1; }
  grep -Eq '^## \[Unreleased\]' CHANGELOG.md || { echo "CHANGELOG.md has no [Unreleased] section"; return 1; }
}
step "LICENSE is the Apache License 2.0 text the manifest names" license_text
step "NOTICE names the vendored Arrow test data (tests/data/arrow-gold)" notice
step "CHANGELOG.md has [Unreleased] and a section for $version" changelog

# ---- one version everywhere ----------------------------------------------------------------
versions() {
  local py
  py=$(sed -n 's/^version = "\(.*\)"/\1/p' python/pyproject.toml | head -1)
  [ "$py" = "$version" ] || { echo "python/pyproject.toml says $py, Cargo.toml $version"; return 1; }
  grep -q "quiver_arrow-$version-py3-none-linux_x86_64.whl" README.md || { echo "README's wheel name is not $version"; return 1; }
  grep -q "target/jars/quiver-$version.jar" README.md || { echo "README's jar name is not $version"; return 1; }
  grep -q "target/jars/quiver-$version.jar" docs/jvm.md || { echo "docs/jvm.md's jar name is not $version"; return 1; }
  echo "Cargo.toml, python/pyproject.toml, README.md and docs/jvm.md agree on $version"
}
step "one version in Cargo.toml, python/pyproject.toml, README.md and docs/jvm.md" versions

echo
if [ "$failed" -gt 0 ]; then
  echo "failed steps:"; printf '  %s\n' "${failures[@]}"
fi
echo "SUMMARY $passed passed, $failed failed, $skipped skipped (release contents)"
[ "$failed" -eq 0 ]
