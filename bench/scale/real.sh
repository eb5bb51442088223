#!/usr/bin/env bash
# make bench: `bin/bench-scale --real` (issue 12, goal 5 on the real stack) on a fresh real
# stack without the operator (`REAL_NO_OPERATOR=1 scripts/realstack/stack.sh up` in a
# temporary directory), taken down afterwards. Arguments go to bench-scale (its --real
# defaults: N = 1,000, 1,000 pods per worker, minutes of set-up: real Kueue reserves about 3
# workloads/s here). Without the real-stack components (scripts/realstack/build.sh) it prints
# SKIP and succeeds. On a failure the stack's directory (its logs) is kept and named.
set -u
cd "$(dirname "$0")/../.." || exit 1
if ! scripts/realstack/build.sh --check >/dev/null 2>&1; then
  echo "SKIP: bench-scale --real: real-stack components not built (scripts/realstack/build.sh)"
  exit 0
fi
DIR=$(mktemp -d /tmp/bench-scale-real-XXXXXX)
rc=1
# shellcheck disable=SC2317 # run by the EXIT trap
finish() {
  REAL_DIR=$DIR scripts/realstack/stack.sh down >/dev/null 2>&1
  if [ "$rc" = 0 ]; then
    rm -rf "$DIR"
  else
    echo "bench-scale --real: stack logs kept in $DIR" >&2
  fi
}
trap finish EXIT
if ! REAL_DIR=$DIR REAL_NO_OPERATOR=1 scripts/realstack/stack.sh up >"$DIR/up.log" 2>&1; then
  tail -20 "$DIR/up.log"
  echo "bench-scale --real: the real stack did not start" >&2
  exit 1
fi
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
bin/bench-scale --real "$DIR" "$@"
rc=$?
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $rc
