#!/usr/bin/env bash
# End-to-end test of recovery when a worker cannot run the copy it got (issue 15, point 4):
# `kueue-ks run` (direct transport, --unschedulable-timeout 8s) with a hub devhub (--kueue)
# and two worker devhubs (--run-jobs), 2 nodes cpu=8,memory=32Gi, instance=spot each.
# Placement is tricked by stale metrics: cluster1's ClusterMetrics is edited to show its
# nodes labelled recovery=yes (the agent rewrites it only when something changes there), so
# a Job with the required node affinity recovery In [yes] is placed on cluster1, where the
# devhub runner leaves its pod Pending with PodScheduled=False/Unschedulable, as
# kube-scheduler would. Then cluster2's nodes get the label. Asserted:
#   u  the copy on cluster1 has an unschedulable pod, the agent reports it
#      (status.unschedulableJobs of ClusterMetrics cluster1)
#   m  the copy is moved within the timeout (+ slack for the agent's write interval and
#      Kueue's requeue): Warning Event UnschedulableOnWorker naming the worker's reason,
#      kueue-ks.io/excluded-clusters on the hub job names cluster1, the job completes on
#      cluster2, and never were there copies on both workers at once (both polled every
#      0.2 s while it moved)
#   x  `kueue-ks explain` says cluster1 is excluded and until when
# Skipped (exit 77) when the devhub binary, kubectl or jq is missing.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${KUEUE_KS_BIN:-$ROOT/bin/kueue-ks}
DEVHUB=${DEVHUB_BIN:-$ROOT/bin/kueue-ks-devhub}
[ -x "$BIN" ] || { echo "FAIL: $BIN not built"; exit 1; }
[ -x "$DEVHUB" ] || { echo "SKIP: $DEVHUB not built"; exit 77; }
command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }

WORK=$(mktemp -d /tmp/placement-recovery-e2e-XXXXXX)
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

TIMEOUT_S=8

start_devhub hub --kueue
start_devhub cluster1 --run-jobs --time-scale $SCALE --nodes '2x cpu=8,memory=32Gi;labels=instance=spot'
start_devhub cluster2 --run-jobs --time-scale $SCALE --nodes '2x cpu=8,memory=32Gi;labels=instance=spot'
apply_setup || die "setup objects not applied"
"$BIN" run --kubeconfig "$WORK/hub.kc" --metrics-bind-address 0 --health-probe-bind-address 0 \
  --worker "cluster1=$WORK/cluster1.kc" --worker "cluster2=$WORK/cluster2.kc" --v 1 \
  --unschedulable-timeout ${TIMEOUT_S}s --unschedulable-exclusion 10m >>"$WORK/op.log" 2>&1 &
OP=$!
wait_until 20 "ClusterMetrics for both workers" jq_ok hub \
  '[.items[]|select(.status.nodeCount==2)]|length==2' clustermetrics

# stale metrics: cluster1's nodes shown with recovery=yes, which they do not carry
nodes=$(k hub get clustermetrics cluster1 -o json | jq -c '[.status.nodes[]|.labels.recovery="yes"]')
k hub patch clustermetrics cluster1 --subresource=status --type merge \
  -p "{\"status\":{\"nodes\":$nodes}}" >/dev/null || die "cannot edit ClusterMetrics cluster1"
jq_ok hub '[.status.nodes[]|select(.labels.recovery=="yes")]|length==2' clustermetrics cluster1 \
  >/dev/null || die "ClusterMetrics cluster1 not edited"

# ---- u: placed on cluster1, its pod unschedulable there, reported ----------------------
next u
cat <<YAML | k hub create -f - >/dev/null || die "job-u not created"
apiVersion: batch/v1
kind: Job
metadata:
  name: job-u
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
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - key: recovery
                operator: In
                values: ["yes"]
      containers:
      - name: c
        image: busybox
        args: ["20s"]
        resources:
          requests:
            cpu: "1"
            memory: 100Mi
YAML
on_cluster1() { [ "$(copies job-u)" = "1 0" ]; }
wait_until 30 "job-u copy on cluster1" on_cluster1
k cluster2 label nodes --all recovery=yes >/dev/null || die "cannot label cluster2's nodes"
# poll both workers from here on: never a copy on each at once
MAX_BOTH=0
poll() { # one sample; records two copies at once
  local c
  c=$(copies job-u)
  [ "$c" = "1 1" ] && MAX_BOTH=1
  echo "$c"
}
wait_until 20 "an Unschedulable pod of job-u on cluster1" jq_ok cluster1 \
  '[.items[]|select(.metadata.labels["job-name"]=="job-u" or .metadata.labels["batch.kubernetes.io/job-name"]=="job-u")|.status.conditions[]?|select(.type=="PodScheduled" and .status=="False" and .reason=="Unschedulable")]|length>=1' \
  pods -n default
wait_until 20 "ClusterMetrics cluster1 reports job-u unschedulable" jq_ok hub \
  '[.status.unschedulableJobs[]?|select(.namespace=="default" and .name=="job-u" and .reason=="Unschedulable" and (.message|test("node affinity")))]|length==1' \
  clustermetrics cluster1
poll >/dev/null
since=$(k hub get clustermetrics cluster1 -o json | jq -r '.status.unschedulableJobs[]|select(.name=="job-u")|.since')
since_s=$(date -d "$since" +%s) || die "bad since: $since"
pass "job-u placed on cluster1 by stale metrics; its pod Unschedulable there since $since, reported by the agent"

# ---- m: moved within the timeout, completes on cluster2, one copy at a time -------------
next m
moved=
for _ in $(seq 300); do # 60 s
  [ "$(poll)" = "0 1" ] && { moved=$(($(date +%s) - since_s)); break; }
  sleep 0.2
done
[ -n "$moved" ] || die "job-u not moved to cluster2: copies $(copies job-u)"
# the timeout counts from the pod's PodScheduled=False (whole seconds: 1 s of rounding);
# after it: the exclusion write, Kueue's requeue and the new copy (slack for a loaded machine)
[ "$moved" -ge $((TIMEOUT_S - 1)) ] || die "job-u moved ${moved}s after it became unschedulable: before the timeout (${TIMEOUT_S}s)"
[ "$moved" -le $((TIMEOUT_S + 30)) ] || die "job-u moved ${moved}s after it became unschedulable (timeout ${TIMEOUT_S}s)"
for _ in $(seq 150); do # 30 s
  poll >/dev/null
  hub_job_complete job-u >/dev/null 2>&1 && break
  sleep 0.2
done
hub_job_complete job-u >/dev/null || die "hub job-u not Complete"
[ "$MAX_BOTH" = 0 ] || die "job-u had copies on both workers at once"
[ "$(copies job-u)" = "0 1" ] || die "job-u copies after completion: $(copies job-u)"
jq_ok hub '.metadata.labels["kubestellar.io/cluster"]=="cluster2"' job job-u -n default >/dev/null ||
  die "hub job-u not placed on cluster2"
jq_ok hub '.metadata.annotations["kueue-ks.io/excluded-clusters"]|test("^cluster1=[0-9T:-]+Z$")' \
  job job-u -n default >/dev/null ||
  die "no exclusion of cluster1 on job-u" "$(k hub get job job-u -n default -o yaml)"
ev=$(k hub get events -n default -o json | jq -r '[.items[]|select(.reason=="UnschedulableOnWorker" and .type=="Warning" and .involvedObject.name=="job-u")][0].message // ""')
case "$ev" in
  *"cannot run on cluster cluster1: pods unschedulable there: Unschedulable:"*"node affinity"*"excluded until"*) ;;
  *) die "no Warning Event UnschedulableOnWorker naming the reason on job-u: '$ev'" ;;
esac
pass "moved ${moved}s after its pod became unschedulable (timeout ${TIMEOUT_S}s), completed on cluster2, never two copies; Event: $(echo "$ev" | cut -c1-150)"

# ---- x: explain says cluster1 is excluded, until when ----------------------------------
next x
out=$("$BIN" explain --kubeconfig "$WORK/hub.kc" job/job-u 2>&1) || die "explain failed" "$out"
echo "$out" | grep -q "cluster1: excluded until [0-9T:-]*Z" || die "explain does not show the exclusion" "$out"
pass "explain: $(echo "$out" | grep -o 'cluster1: excluded until [^;]*' | head -1)"
echo "PASS placement_recovery"
