# Step counting shared by the suite scripts (tests/c/run.sh,
# tests/reliability/run.sh). Source it after `build` is set and made:
#   step NAME CMD...   runs CMD, prints PASS:/FAIL: NAME, counts the result
#   skip REASON        prints SKIPPED: REASON, counts it (never as passed)
# The counts are in passed, failed, skipped; failed step names in failures;
# every command run is logged to $build/steps.log.
passed=0 failed=0 skipped=0
failures=()
log="$build/steps.log"
: >"$log"

step() {
  local name=$1; shift
  echo "== $name"
  echo "\$ $*" >>"$log"
  if "$@"; then
    echo "PASS: $name"
    passed=$((passed + 1))
    return 0
  else
    local rc=$?
    echo "FAIL: $name (exit $rc)"
    failed=$((failed + 1))
    failures+=("$name")
    return 1
  fi
}

skip() {
  echo "SKIPPED: $1"
  skipped=$((skipped + 1))
}
