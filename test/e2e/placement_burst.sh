#!/usr/bin/env bash
# End-to-end: a burst of jobs does not count the same pods twice (issue 12; docs/design.md §8,
# "Reservations"). `kueue-ks run` (direct transport) with a hub devhub (--kueue) and two worker
# devhubs of one node each (cpu=8), whose images never pull (the node label
# devhub.kueue-ks.io/image-pull=fail: pods bound, Pending, never ready, as while a kubelet pulls
# a big image), quota 16 cpu:
#   h  8 one-cpu jobs: placed, 4 per worker; their pods bound
#   c  once the workers' ClusterMetrics count those pods, 8 more one-cpu jobs: the room the
#      first 8 hold for their pods ends with the metrics that list their copies in
#      status.countedJobs, so the 8 fit at once: all 16 placed and no NoClusterFits Warning.
#      Before countedJobs the room stayed held until 30 s after each placement (the pods
#      never get ready), the same 4 cpu counted twice per worker: the 8 waited, with a
#      NoClusterFits Warning each (40 s in that build).
# Skipped (exit 77) when the devhub binary, kubectl or jq is missing.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${KUEUE_KS_BIN:-$ROOT/bin/kueue-ks}
DEVHUB=${DEVHUB_BIN:-$ROOT/bin/kueue-ks-devhub}
[ -x "$BIN" ] || { echo "FAIL: $BIN not built"; exit 1; }
[ -x "$DEVHUB" ] || { echo "SKIP: $DEVHUB not built"; exit 77; }
command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }

WORK=$(mktemp -d /tmp/placement-burst-e2e-XXXXXX)
PIDS=()
OP=
cleanup() {
  [ -n "$OP" ] && kill "$OP" 2>/dev/null
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT
# shellcheck source=test/e2e/lib/workload_harness.sh
. "$ROOT/test/e2e/lib/workload_harness.sh"

jobs_yaml() { # FIRST LAST: one-cpu jobs burst-FIRST..burst-LAST
  local i
  for i in $(seq "$1" "$2"); do
    cat <<YAML
---
apiVersion: batch/v1
kind: Job
metadata:
  name: burst-$i
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: user-queue-ks
spec:
  parallelism: 1
  completions: 1
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: busybox
        args: ["6000s"]
        resources:
          requests:
            cpu: "1"
            memory: 100Mi
YAML
  done
}
copies_total() { # N: the workers hold N copies in all
  local a b
  a=$(k cluster1 get jobs -n default -o name | wc -l) || return 1
  b=$(k cluster2 get jobs -n default -o name | wc -l) || return 1
  [ $((a + b)) -eq "$1" ]
}
no_fits_events() {
  k hub get events -n default -o json | jq '[.items[]|select(.reason=="NoClusterFits")]|length'
}

NODE='1x cpu=8,memory=64Gi;labels=instance=spot,devhub.kueue-ks.io/image-pull=fail'
start_devhub hub --kueue
start_devhub cluster1 --run-jobs --time-scale $SCALE --nodes "$NODE"
start_devhub cluster2 --run-jobs --time-scale $SCALE --nodes "$NODE"
apply_setup || die "setup objects not applied"
"$BIN" run --kubeconfig "$WORK/hub.kc" --metrics-bind-address 0 --health-probe-bind-address 0 \
  --worker "cluster1=$WORK/cluster1.kc" --worker "cluster2=$WORK/cluster2.kc" --v 1 \
  >>"$WORK/op.log" 2>&1 &
OP=$!
wait_until 120 "ClusterMetrics for both workers" jq_ok hub \
  '[.items[]|select(.status.nodeCount==1)]|length==2' clustermetrics

# ---- h: the first half ---------------------------------------------------------------
next h
jobs_yaml 1 8 | k hub create -f - >/dev/null || die "the first 8 jobs not created"
wait_until 120 "8 copies" copies_total 8
wait_until 120 "4 pods bound per worker, never ready" jq_ok cluster1 \
  '[.items[]|select((.spec.nodeName // "")!="" and .status.phase=="Pending")]|length==4' \
  pods -n default
pass "8 jobs placed, their pods bound and Pending"

# ---- c: the second half once the metrics count the first ----------------------------------
next c
wait_until 120 "both workers' ClusterMetrics count 4 cpu (the first half's pods)" jq_ok hub \
  '[.items[]|.status.nodes[0].allocatedResourceRequests.cpu]==["4","4"]' clustermetrics
jobs_yaml 9 16 | k hub create -f - >/dev/null || die "the second 8 jobs not created"
wait_until 120 "16 copies" copies_total 16
n=$(no_fits_events) || die "cannot read the hub's Events"
[ "$n" = 0 ] || die "$n NoClusterFits Warnings: the first half's pods were counted twice" \
  "$(grep -E 'no cluster fits now|waiting for capacity' "$WORK/op.log" | head -5)"
grep -q 'no cluster fits now' "$WORK/op.log" &&
  die "a job was told no cluster fits" "$(grep 'no cluster fits now' "$WORK/op.log" | head -5)"
pass "8 more placed at once: the held room ended with the metrics that count its pods"
echo "all steps passed"
