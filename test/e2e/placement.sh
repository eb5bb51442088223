#!/usr/bin/env bash
# End-to-end test of placement as the scheduler would decide it (issue 15):
# `kueue-ks run` (direct transport) with a hub devhub (--kueue) and two worker
# devhubs (--run-jobs), every node labelled instance=spot (flavor spot):
#   cluster1: 2 nodes cpu=8,memory=32Gi
#   cluster2: 2 nodes cpu=8,memory=32Gi, labels disk=ssd; its ClusterMetrics
#             labelled location-group=eu
# Equal capacity, so without constraints a job goes to cluster1 (tie: the
# smaller name); every step below needs cluster2 or nothing:
#   r  the devhub runner leaves a pod whose required node affinity matches no
#      node Pending (PodScheduled=False/Unschedulable), and runs one that does
#   a  a Job with required node affinity disk In [ssd] lands on cluster2 only
#      and completes
#   n  a Job whose required node affinity matches no node anywhere: check
#      Rejected, the message names the affinity, no copy
#   s  3 Jobs with kueue-ks.io/cluster-selector: location-group=eu all land on
#      cluster2 and complete
#   i  an invalid selector: Warning Event InvalidClusterSelector, check stays
#      Pending, no copy
#   q  the ClusterQueue's annotation is the default: a plain Job lands on cluster2
# Skipped (exit 77) when the devhub binary, kubectl or jq is missing.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${KUEUE_KS_BIN:-$ROOT/bin/kueue-ks}
DEVHUB=${DEVHUB_BIN:-$ROOT/bin/kueue-ks-devhub}
[ -x "$BIN" ] || { echo "FAIL: $BIN not built"; exit 1; }
[ -x "$DEVHUB" ] || { echo "SKIP: $DEVHUB not built"; exit 77; }
command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }

WORK=$(mktemp -d /tmp/placement-e2e-XXXXXX)
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

# job_yaml NAME [annotation line] [extra pod spec lines]
job_yaml() {
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: user-queue-ks
${2:+  annotations:
$2}
spec:
  parallelism: 1
  completions: 1
  suspend: true
  template:
    spec:
      restartPolicy: Never
${3:-}
      containers:
      - name: c
        image: busybox
        args: ["20s"]
        resources:
          requests:
            cpu: "1"
            memory: 100Mi
YAML
}
affinity() { # KEY VALUE: required node affinity KEY In [VALUE], pod spec lines
  cat <<YAML
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - key: $1
                operator: In
                values: ["$2"]
YAML
}
wl_of() { k hub get workloads -n default -o json | jq -r --arg n "$1" '.items[]|select(.metadata.ownerReferences[0].name==$n)|.metadata.name'; }
check_is() { # JOB STATE REGEX: our check entry in that state with a matching message
  local w
  w=$(wl_of "$1")
  [ -n "$w" ] && jq_ok hub "[.status.admissionChecks[]?|select(.name==\"kubestellar-admc\" and .state==\"$2\" and (.message|test(\"$3\")))]|length==1" workloads "$w" -n default
}

start_devhub hub --kueue
start_devhub cluster1 --run-jobs --time-scale $SCALE --nodes '2x cpu=8,memory=32Gi;labels=instance=spot'
start_devhub cluster2 --run-jobs --time-scale $SCALE \
  --nodes '2x cpu=8,memory=32Gi;labels=instance=spot,disk=ssd'
apply_setup || die "setup objects not applied"
"$BIN" run --kubeconfig "$WORK/hub.kc" --metrics-bind-address 0 --health-probe-bind-address 0 \
  --worker "cluster1=$WORK/cluster1.kc" --worker "cluster2=$WORK/cluster2.kc" --v 1 \
  >>"$WORK/op.log" 2>&1 &
OP=$!
wait_until 120 "ClusterMetrics for both workers" jq_ok hub \
  '[.items[]|select(.status.nodeCount==2)]|length==2' clustermetrics
k hub label clustermetrics cluster2 location-group=eu >/dev/null || die "cannot label ClusterMetrics cluster2"

# ---- r: the devhub runner honours required node affinity -------------------------
next r
pod_yaml() { # NAME KEY VALUE
  cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: default
spec:
  restartPolicy: Never
$(affinity "$2" "$3" | sed 's/^    //')
  containers:
  - name: c
    image: busybox
    args: ["20s"]
YAML
}
pod_yaml pod-none no-such-label x | k cluster1 create -f - >/dev/null || die "pod-none not created"
pod_yaml pod-ssd disk ssd | k cluster2 create -f - >/dev/null || die "pod-ssd not created"
wait_until 120 "pod-none PodScheduled=False/Unschedulable" jq_ok cluster1 \
  '.status.phase=="Pending" and ([.status.conditions[]?|select(.type=="PodScheduled" and .status=="False" and .reason=="Unschedulable" and (.message|test("node affinity")))]|length==1)' \
  pod pod-none -n default
wait_until 120 "pod-ssd bound" jq_ok cluster2 '(.spec.nodeName // "")!=""' pod pod-ssd -n default
sleep 1
jq_ok cluster1 '(.spec.nodeName // "")=="" and .status.phase=="Pending"' pod pod-none -n default >/dev/null ||
  die "pod-none was bound" "$(k cluster1 get pod pod-none -n default -o yaml)"
pass "runner: affinity matching no node stays Pending (Unschedulable), a matching one is bound"

# ---- a: required node affinity picks the cluster that can run it -----------------------
next a
job_yaml job-a "" "$(affinity disk ssd)" | k hub create -f - >/dev/null || die "job-a not created"
wait_until 120 "job-a copy on cluster2 only (copies 0 1)" copies_are job-a "0 1"
wait_until 120 "hub job-a Complete" hub_job_complete job-a
[ "$(copies job-a)" = "0 1" ] || die "job-a copies after completion: $(copies job-a)"
pass "job-a (disk In [ssd]) placed on cluster2 only and completed"

# ---- n: no node anywhere matches: Rejected, the affinity named --------------------------
next n
job_yaml job-n "" "$(affinity no-such-label x)" | k hub create -f - >/dev/null || die "job-n not created"
wait_until 120 "job-n Rejected naming the affinity" rejected_with job-n \
  'required node affinity \(no-such-label In \[x\]\) excludes'
no_copy job-n || die "job-n has copies: $(copies job-n)"
pass "job-n rejected: $(rejected_msg job-n | cut -c1-160)"

# ---- s: a cluster selector is never left ----------------------------------------------
next s
for i in 1 2 3; do
  job_yaml "job-s$i" "    kueue-ks.io/cluster-selector: location-group=eu" | k hub create -f - >/dev/null ||
    die "job-s$i not created"
done
for i in 1 2 3; do
  wait_until 120 "hub job-s$i Complete" hub_job_complete "job-s$i"
  [ "$(copies "job-s$i")" = "0 1" ] || die "job-s$i copies: $(copies "job-s$i") (want 0 1)"
  jq_ok hub '.metadata.labels["kubestellar.io/cluster"]=="cluster2"' job "job-s$i" -n default >/dev/null ||
    die "hub job-s$i not placed on cluster2"
done
pass "3 jobs with cluster-selector location-group=eu: all on cluster2, all complete"

# ---- i: an invalid selector is said, the check stays Pending ----------------------------
next i
job_yaml job-i "    kueue-ks.io/cluster-selector: \"a in (x\"" | k hub create -f - >/dev/null || die "job-i not created"
wait_until 120 "job-i Pending with the selector error" check_is job-i Pending 'invalid cluster selector'
wait_until 120 "Warning Event InvalidClusterSelector on job-i" jq_ok hub \
  '[.items[]|select(.reason=="InvalidClusterSelector" and .type=="Warning" and .involvedObject.name=="job-i")]|length>=1' events -n default
no_copy job-i || die "job-i has copies: $(copies job-i)"
k hub delete job job-i -n default --wait=false >/dev/null
pass "invalid selector: Warning Event InvalidClusterSelector, check Pending, no copy"

# ---- q: the ClusterQueue-wide default --------------------------------------------------
next q
k hub annotate clusterqueue cluster-queue-ks kueue-ks.io/cluster-selector=location-group=eu >/dev/null ||
  die "cannot annotate the ClusterQueue"
job_yaml job-q | k hub create -f - >/dev/null || die "job-q not created"
wait_until 120 "hub job-q Complete" hub_job_complete job-q
[ "$(copies job-q)" = "0 1" ] || die "job-q copies: $(copies job-q) (want 0 1)"
pass "ClusterQueue default selector: a plain job ran on cluster2"
echo "PASS placement"
