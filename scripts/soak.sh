#!/usr/bin/env bash
# Runs the whole CI suite several times at once, each in a fresh clone, so that each run has
# the others as load (issue 11's bar: `make test` passes 5 times in a row while other work
# keeps both cores busy).
#
#   scripts/soak.sh [-n RUNS] [-c COMMIT] [-d DIR] [--hog]
#     -n RUNS    how many runs at once (default 5)
#     -c COMMIT  what to test (default HEAD of this checkout)
#     -d DIR     where the clones and logs go (default /tmp/kks-soak)
#     --hog      also keep two busy loops running for as long as the runs last
#
# Each clone gets a copy of build/realstack (the pinned real-stack binaries, when built here)
# so the runs do not rebuild them, then `CI=true bash .ci/run`. One line per run is appended
# to DIR/summary: "NAME COMMIT rc=RC SECONDS HH:MM"; DIR/load.txt samples the load average
# every 60 s. Exit 0 when every run passed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
runs=5 commit=HEAD dir=/tmp/kks-soak hog=0
while [ $# -gt 0 ]; do
  case $1 in
  -n) runs=$2; shift 2 ;;
  -c) commit=$2; shift 2 ;;
  -d) dir=$2; shift 2 ;;
  --hog) hog=1; shift ;;
  *) echo "usage: scripts/soak.sh [-n RUNS] [-c COMMIT] [-d DIR] [--hog]" >&2; exit 2 ;;
  esac
done
src=$PWD
commit=$(git rev-parse --short "$commit") || exit 2
mkdir -p "$dir"
pids=()
# shellcheck disable=SC2317 # called by the trap
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
}
trap cleanup EXIT

(while :; do echo "$(date -u +%H:%M:%S) $(cut -d' ' -f1-3 /proc/loadavg)" >>"$dir/load.txt"; sleep 60; done) &
pids+=($!)
if [ "$hog" = 1 ]; then
  for _ in 1 2; do
    (while :; do :; done) &
    pids+=($!)
  done
fi

run_one() { # name
  local d=$dir/$1 start rc
  rm -rf "$d"
  git clone -q "$src" "$d" && git -C "$d" checkout -q "$commit" || return 1
  if [ -d "$src/build/realstack" ]; then
    mkdir -p "$d/build" && cp -a "$src/build/realstack" "$d/build/"
  fi
  start=$(date +%s)
  (cd "$d" && CI=true bash .ci/run) >"$dir/$1.log" 2>&1 </dev/null
  rc=$?
  echo "$1 $commit rc=$rc $(($(date +%s) - start))s $(date -u +%H:%M)" >>"$dir/summary"
  return $rc
}

runners=()
for i in $(seq 1 "$runs"); do
  run_one "run$i" &
  runners+=($!)
done
fail=0
for p in "${runners[@]}"; do
  wait "$p" || fail=1
done
cat "$dir/summary"
exit $fail
