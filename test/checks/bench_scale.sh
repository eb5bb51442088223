#!/usr/bin/env bash
# Keeps bench/scale from rotting: `bin/bench-scale --n 40 --pods 60` starts its devhubs and
# the operator, dispatches 40 jobs, restarts the operator with one more reserved job, and
# prints a JSON line with every field: mode devhub, the counts it was given (and the objects
# cached: 41 Workloads and Jobs, 2 x 60 pods, 40 copies), positive RSS figures (peak
# at least the final one; the settled one split into heap, JSON pool, files and the rest,
# which add up to it), ready and first-dispatch times, the baselines and the ratios
# computed from them (within 5 % plus what the printed digits can be off: the bench's own
# lists take about 9 ms at this size, printed to the millisecond); the work directory is
# removed; the same with the operator's --packed-cache=false. No figure is compared with a
# target (the targets are measured by `make bench`, docs/performance.md).
# Skipped (exit 77) when the devhub binary or jq is missing.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BENCH=$ROOT/bin/bench-scale
[ -x "$BENCH" ] || { echo "FAIL: $BENCH not built"; exit 1; }
[ -x "$ROOT/bin/kueue-ks" ] || { echo "FAIL: bin/kueue-ks not built"; exit 1; }
[ -x "$ROOT/bin/kueue-ks-devhub" ] || { echo "SKIP: bin/kueue-ks-devhub not built"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }
out=
fail() { echo "FAIL $1"; echo "---- output:"; echo "$out" | head -20; exit 1; }

# Twice: with the operator's default (packed) stores, then with --packed-cache=false
# (decoded stores): each mode's whole path, lists stored, the restart's passes, a dispatch.
for mode in packed decoded; do
  extra=()
  [ $mode = decoded ] && extra=(--packed-cache=false)
  out=$("$BENCH" --n 40 --pods 60 --timeout 120 "${extra[@]}" 2>&1)
  rc=$?
  [ $rc = 0 ] || fail "bench-scale ($mode) exit $rc"
  json=$(grep '^{"bench":"scale"' <<<"$out")
  [ -n "$json" ] || fail "no JSON line ($mode)"
  jq -e '[.workloads,.jobs,.pods_per_worker,.copies,.objects,.rss_mb,.rss_peak_mb,.rss_settled_mb,.rss_empty_mb,
          .bytes_per_object,.ready_s,.first_dispatch_s,.lists_s,.list_mb,.rss_ratio,.ready_ratio,
          .first_dispatch_ratio,.ready_cpu_s,.first_dispatch_cpu_s,.settled_heap_mb,.settled_pool_mb,
          .settled_files_mb,.settled_other_mb,.workload_list_s,.workload_list_mb,
          .first_dispatch_over_workload_list]|all(type=="number")' <<<"$json" >/dev/null ||
    fail "JSON line lacks a field: $json"
  jq -e --argjson packed "$([ $mode = packed ] && echo true || echo false)" \
    '.mode=="devhub" and .workloads==41 and .jobs==41 and .pods_per_worker==60 and
     .copies==40 and .objects==41+41+2*60+40 and
     .rss_mb>0 and .rss_settled_mb>0 and .rss_empty_mb>0 and .rss_peak_mb>=.rss_mb and .first_dispatch_s>0 and
     .settled_heap_mb>0 and .settled_pool_mb>0 and .settled_files_mb>0 and
     (.settled_heap_mb+.settled_pool_mb+.settled_files_mb+.settled_other_mb-.rss_settled_mb|fabs)<2 and
     .ready_cpu_s>0 and .first_dispatch_cpu_s>0 and
     .lists_s>0 and .list_mb>0 and .packed_cache==$packed and
     (.rss_ratio - .rss_mb/.list_mb | fabs) <
       0.05 * .rss_ratio + 0.01 + .rss_ratio * (0.05/.rss_mb + 0.0005/.list_mb) and
     (.first_dispatch_ratio - .first_dispatch_s/.lists_s | fabs) <
       0.05 * .first_dispatch_ratio + 0.01 +
       .first_dispatch_ratio * (0.0005/.lists_s + 0.0005/.first_dispatch_s) and
     .workload_list_s>0 and .workload_list_mb>0 and .workload_list_mb<.list_mb and
     (.first_dispatch_over_workload_list - .first_dispatch_s/.workload_list_s | fabs) <
       0.05 * .first_dispatch_over_workload_list + 0.01 +
       .first_dispatch_over_workload_list * (0.0005/.workload_list_s + 0.0005/.first_dispatch_s)' \
    <<<"$json" >/dev/null || fail "unexpected figures ($mode): $json"
  grep -q '^scale: 41 workloads' <<<"$out" || fail "no human line ($mode)"
  grep -q 'logs kept' <<<"$out" && fail "work directory kept after success ($mode)"
  echo "ok   bench-scale --n 40 --pods 60 ($mode): $(grep '^scale:' <<<"$out")"
done
