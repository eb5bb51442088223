#!/usr/bin/env bash
# Keeps bench/placement from rotting: a small burst at the dispatch shape
# (2 clusters x 4 nodes, 200 decisions held as reservations) prints a JSON
# line with every field and places all 200. No timed assertion: the figures
# themselves are make bench's (docs/performance.md).
# Skipped (exit 77) when jq is missing.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BENCH=$ROOT/bin/bench-placement
[ -x "$BENCH" ] || { echo "FAIL: $BENCH not built"; exit 1; }
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }

out=$("$BENCH" --clusters 2 --nodes 4 --jobs 200 --node-cpu 100000 2>&1)
rc=$?
fail() { echo "FAIL $1"; echo "---- output:"; echo "$out" | head -20; exit 1; }
[ $rc = 0 ] || fail "bench-placement exit $rc"
json=$(grep '^{"bench":"placement"' <<<"$out")
[ -n "$json" ] || fail "no JSON line"
jq -e '[.clusters,.nodes_per_cluster,.jobs,.placed,.us_per_decision,.decisions_per_s,
        .us_per_decision_empty,.held_ratio]|all(type=="number")' <<<"$json" >/dev/null ||
  fail "JSON line lacks a field: $json"
jq -e '.jobs==200 and .placed==200 and .held_ratio>0' <<<"$json" >/dev/null ||
  fail "unexpected figures: $json"
grep -q '^placement, 2 clusters x 4 nodes, 200 jobs' <<<"$out" || fail "no human line"
echo "ok bench-placement smoke: $json"
