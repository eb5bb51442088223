#!/usr/bin/env bash
# Runs every libFuzzer target built under PREFIX* for SECONDS each, starting
# from its seed corpus test/fuzz/corpus/<name>/ (copied to a scratch dir so the
# repository is not modified). Fails on the first crash.
set -u
prefix=$1
seconds=$2
rc=0
n=0
for f in "$prefix"*; do
  [ -x "$f" ] || continue
  name=$(basename "$f")
  work=build/fuzz-work/$name
  rm -rf "$work"
  mkdir -p "$work"
  seeds=test/fuzz/corpus/${name#fuzz_}
  [ -d "$seeds" ] && cp -r "$seeds"/. "$work"/
  echo "  FUZZ    $name (${seconds}s)"
  if ! "$f" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 \
      -artifact_prefix="$work/" "$work" >"$work.log" 2>&1; then
    tail -40 "$work.log"
    echo "!! $name: crash, reproducer in $work/"
    rc=1
  else
    grep -E '^Done|DONE' "$work.log" | tail -1
  fi
  n=$((n + 1))
done
echo "fuzz: $n targets, ${seconds}s each, $([ $rc -eq 0 ] && echo clean || echo FAILED)"
exit $rc
