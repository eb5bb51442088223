#!/usr/bin/env bash
# Runs every libFuzzer target built under PREFIX* for SECONDS each, starting
# from its seed corpus test/fuzz/corpus/<name>/ (copied to a scratch dir so the
# repository is not modified). Fails on the first crash.
# FUZZ_RUNS=N makes a run deterministic (fixed seed, N inputs, SECONDS as an
# upper bound): CI's smoke run, so a failure there reproduces locally.
set -u
prefix=$1
seconds=$2
rc=0
n=0
for f in "$prefix"*; do
  [ -x "$f" ] || continue
  name=$(basename "$f")
  # A binary whose source is gone (e.g. after switching branches) is stale: skip it.
  [ -f "test/fuzz/$name.c" ] || continue
  work=build/fuzz-work/$name
  rm -rf "$work"
  mkdir -p "$work"
  seeds=test/fuzz/corpus/${name#fuzz_}
  [ -d "$seeds" ] && cp -r "$seeds"/. "$work"/
  extra=()
  if [ -n "${FUZZ_RUNS:-}" ]; then
    extra=(-seed=1 -runs="$FUZZ_RUNS")
    echo "  FUZZ    $name (seed 1, ${FUZZ_RUNS} runs)"
  else
    echo "  FUZZ    $name (${seconds}s)"
  fi
  if ! "$f" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 "${extra[@]}" \
      -artifact_prefix="$work/" "$work" >"$work.log" 2>&1; then
    tail -40 "$work.log"
    echo "!! $name: crash, reproducer in $work/"
    rc=1
  else
    grep -E '^Done|DONE' "$work.log" | tail -1
  fi
  n=$((n + 1))
done
if [ $n -eq 0 ]; then
  echo "!! fuzz: no target found under ${prefix}*"
  rc=1
fi
echo "fuzz: $n targets, ${FUZZ_RUNS:+$FUZZ_RUNS runs or }${seconds}s each, $([ $rc -eq 0 ] && echo clean || echo FAILED)"
exit $rc
