#!/usr/bin/env bash
# Keeps `bench-scale --real` from rotting (issue 12, goal 5 on the real stack): a real stack
# without the operator (REAL_NO_OPERATOR=1), then `bin/bench-scale --real DIR --n 30 --pods 30`:
# the bench starts the operator, real Kueue reserves the 30 jobs, the operator dispatches
# them, is restarted with one more reserved job, and the bench prints its JSON line with
# every field (mode real, the counts it was given, positive RSS figures, ready and
# first-dispatch times, the baselines and the ratios computed from them). Then, on the stack:
# every job has exactly one copy on a worker (all 31 placed), the 60 bare pods are Running
# (kwok), and the bench removed its work directory. No figure is compared with a target
# (the targets are measured by `make bench`, docs/performance.md).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=test/e2e/lib/real_harness.sh
. "$ROOT/test/e2e/lib/real_harness.sh"
N=30
P=30
[ -x "$ROOT/bin/bench-scale" ] || { echo "FAIL: $ROOT/bin/bench-scale not built"; exit 1; }

# shellcheck disable=SC2119 # real_up passes operator flags; the bench starts the operator
REAL_NO_OPERATOR=1 real_up

next bench
# generous: the machine is shared; a slow run is not a failure, a missing figure is
out=$("$ROOT/bin/bench-scale" --real "$WORK" --n $N --pods $P --timeout 600 2>&1)
rc=$?
[ $rc = 0 ] || die "bench-scale --real exit $rc" "$out"
json=$(grep '^{"bench":"scale"' <<<"$out")
[ -n "$json" ] || die "no JSON line" "$out"
jq -e '[.workloads,.jobs,.pods_per_worker,.copies,.objects,.rss_mb,.rss_peak_mb,.rss_settled_mb,.rss_empty_mb,
        .bytes_per_object,.ready_s,.first_dispatch_s,.lists_s,.list_mb,.rss_ratio,.ready_ratio,
        .first_dispatch_ratio,.ready_cpu_s,.first_dispatch_cpu_s,.workload_list_s,.workload_list_mb,
        .first_dispatch_over_workload_list]|all(type=="number")' <<<"$json" >/dev/null ||
  die "JSON line lacks a field" "$json"
# the ratios within 5 % plus what the printed digits can be off (test/checks/bench_scale.sh)
# objects: N+1 Workloads and Jobs on the hub, 2P bare pods, N copies and their pods (the
# workers' Job controllers create those on their own time: up to N)
jq -e --argjson n $N --argjson p $P \
  '.mode=="real" and .workloads==$n+1 and .jobs==$n+1 and .pods_per_worker==$p and
   .copies==$n and .objects>=($n+1)*2+2*$p+$n and .objects<=($n+1)*2+2*$p+2*$n and
   .rss_mb>0 and .rss_settled_mb>0 and .rss_empty_mb>0 and .rss_peak_mb>=.rss_mb and .first_dispatch_s>0 and
     .ready_cpu_s>0 and .first_dispatch_cpu_s>0 and
   .lists_s>0 and .list_mb>0 and .packed_cache==true and
   (.rss_ratio - .rss_mb/.list_mb | fabs) <
     0.05 * .rss_ratio + 0.01 + .rss_ratio * (0.05/.rss_mb + 0.0005/.list_mb) and
   (.first_dispatch_ratio - .first_dispatch_s/.lists_s | fabs) <
     0.05 * .first_dispatch_ratio + 0.01 +
     .first_dispatch_ratio * (0.0005/.lists_s + 0.0005/.first_dispatch_s) and
   .workload_list_s>0 and .workload_list_mb>0 and .workload_list_mb<.list_mb and
   (.first_dispatch_over_workload_list - .first_dispatch_s/.workload_list_s | fabs) <
     0.05 * .first_dispatch_over_workload_list + 0.01 +
     .first_dispatch_over_workload_list * (0.0005/.workload_list_s + 0.0005/.first_dispatch_s)' \
  <<<"$json" >/dev/null || die "unexpected figures" "$json"
grep -q "^scale: $((N + 1)) workloads + jobs on the real stack" <<<"$out" || die "no human line" "$out"
grep -q 'logs kept' <<<"$out" && die "work directory kept after success" "$out"
pass "bench-scale --real --n $N --pods $P: $(grep '^scale:' <<<"$out")"

next placed
# every hub job scale-0..N has one copy, on either worker
names() { k "$1" get jobs -n default -o json | jq -r '.items[].metadata.name|select(startswith("scale-"))'; }
all=$( (names cluster1; names cluster2) | sort)
want=$(for i in $(seq 0 $N); do echo "scale-$i"; done | sort)
[ "$all" = "$want" ] || die "copies on the workers are not scale-0..$N once each" "$all"
pass "all $((N + 1)) jobs placed, one copy each"

next pods
for c in cluster1 cluster2; do
  jq_ok "$c" "[.items[]|select(.metadata.name|startswith(\"load-\"))|
    select(.status.phase==\"Running\" and .spec.nodeName==\"$c-bench-node\")]|length==$P" \
    pods -n default >/dev/null || die "$c: not $P bare pods Running on $c-bench-node" \
    "$(k "$c" get pods -n default 2>&1 | head -20)"
done
pass "$P bare pods Running on each worker's bench node"
echo "real_bench_scale: all steps passed"
