#!/usr/bin/env bash
# Runs test programs and prints a closing "KIND: N passed, N failed" line.
#   scripts/run-tests.sh unit DIR [FILTER]   every executable test_* in DIR
#   scripts/run-tests.sh e2e  DIR [FILTER]   every *.sh in DIR (exit 77 = skipped) but the
#                                             real-stack ones; KKS_REAL=1: only real_*.sh
#   scripts/run-tests.sh checks DIR [FILTER] the same, for test/checks/
# Each test has a hard timeout so a hang fails instead of blocking CI.
# With CI set (as .ci/run does) nothing passes by skipping: exit 77 counts as a
# failure, and so does a run that found no test at all. A FILTER that matches no
# test name fails too (a typo must not pass).
set -u
kind=$1
dir=$2
filter=${3:-}
pass=0
fail=0
skip=0
failed=()
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The pinned kubectl (scripts/realstack/build.sh) comes first: the scripts must not depend on
# whatever kubectl the machine has, if any.
[ -x build/realstack/bin/kubectl ] && export PATH="$PWD/build/realstack/bin:$PATH"
logdir=build/test-logs/$kind
mkdir -p "$logdir"

run_one() {
  local name=$1
  shift
  local log="$logdir/$name.log"
  local start end rc
  start=$(date +%s)
  timeout --kill-after=10 "${KKS_TEST_TIMEOUT:-600}" "$@" >"$log" 2>&1
  rc=$?
  end=$(date +%s)
  cat "$log"
  if [ $rc -eq 0 ] && grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|definitely lost: [1-9]' "$log"; then
    echo "!! $name: sanitizer/valgrind report in output"
    rc=1
  fi
  if [ $rc -eq 77 ] && [ -n "${CI:-}" ]; then
    fail=$((fail + 1))
    failed+=("$name")
    echo "!! $name: skipped under CI, which counts as a failure (see the SKIP line above)"
  elif [ $rc -eq 77 ]; then
    skip=$((skip + 1))
    echo "-- $name: skipped ($((end - start))s)"
  elif [ $rc -eq 0 ]; then
    pass=$((pass + 1))
    echo "-- $name: ok ($((end - start))s)"
  else
    fail=$((fail + 1))
    failed+=("$name")
    [ $rc -eq 124 ] && echo "!! $name: timed out"
    echo "!! $name: FAILED (exit $rc, $((end - start))s, log $log)"
  fi
}

case "$kind" in
unit)
  for t in "$dir"/test_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    # A binary whose source is gone (e.g. after switching branches) is stale: skip it.
    [ -f "test/unit/$name.c" ] || continue
    [ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && continue
    if [ "${KKS_VALGRIND:-0}" = 1 ]; then
      run_one "$name" valgrind --quiet --error-exitcode=3 --leak-check=full \
        --errors-for-leak-kinds=definite "$t"
    else
      run_one "$name" "$t"
    fi
  done
  ;;
e2e | checks)
  for t in "$dir"/*.sh; do
    [ -f "$t" ] || continue
    name=$(basename "$t" .sh)
    [ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && continue
    # The real-stack tier runs on its own (scripts/realstack/tier.sh sets KKS_REAL=1).
    if [[ "$name" == real_* ]]; then is_real=1; else is_real=0; fi
    [ "$is_real" = "${KKS_REAL:-0}" ] || continue
    run_one "$name" bash "$t"
  done
  ;;
*)
  echo "usage: $0 unit|e2e|checks DIR [FILTER]" >&2
  exit 2
  ;;
esac

if [ $((pass + fail + skip)) -eq 0 ] && [ -z "$filter" ]; then
  echo "!! $kind: no test found in $dir"
  fail=1
elif [ $((pass + fail + skip)) -eq 0 ]; then
  # a misspelt T= must not look like a pass
  echo "!! $kind: no test name in $dir contains '$filter'"
  fail=1
fi
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
if [ $skip -gt 0 ]; then
  echo "$kind: $pass passed, $fail failed, $skip skipped"
else
  echo "$kind: $pass passed, $fail failed"
fi
[ $fail -eq 0 ]
