#!/usr/bin/env bash
# More end-to-end scenarios of the workload controller in `kueue-ks run`
# (direct transport), same set-up as workload.sh: a devhub hub emulating
# Kueue (--kueue, with the job controller: --run-jobs) and two workers running jobs (--run-jobs, time-scaled):
#   cluster1: 2 nodes cpu=8,memory=32Gi, instance=spot
#   cluster2: 2 nodes cpu=8,memory=32Gi,nvidia.com/gpu=2, instance=h100
# Every step asserts objects on the hub and on both workers:
#   j  a Job in a non-default namespace runs: the Namespace and its
#      LocalQueue are created on the worker, the job completes
#   e  preemption: a high-priority Job (WorkloadPriorityClass, ClusterQueue
#      with preemption.withinClusterQueue LowerPriority, quota for one)
#      evicts a running low-priority one, whose worker copy is deleted; the
#      low-priority job runs again afterwards and completes; one "job evicted" line
#   i  a worker paused (devhub fault `paused`) past --worker-lost-timeout:
#      its unpinned jobs get Event WorkerLost and are re-placed on the other
#      worker (the check went Retry: Kueue evicted and re-reserved); when it
#      is resumed its stale copies are deleted; every job
#      completes with exactly one copy left
#   r  a job whose annotations leave no room for kueue-ks's: the refused write is told
#      (Warning Event WriteRejected, one log line), nothing is placed
# Skipped (exit 77) when the devhub binary, kubectl or jq is missing.
# KEEP_LOG=FILE keeps a copy of the operator log.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${KUEUE_KS_BIN:-$ROOT/bin/kueue-ks}
DEVHUB=${DEVHUB_BIN:-$ROOT/bin/kueue-ks-devhub}
[ -x "$BIN" ] || { echo "FAIL: $BIN not built"; exit 1; }
[ -x "$DEVHUB" ] || { echo "SKIP: $DEVHUB not built"; exit 77; }
command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }

WORK=$(mktemp -d /tmp/workload-more-e2e-XXXXXX)
PIDS=()
OP=
cleanup() {
  [ -n "$OP" ] && kill "$OP" 2>/dev/null
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  [ -n "${KEEP_LOG:-}" ] && cp "$WORK/op.log" "$KEEP_LOG"
  rm -rf "$WORK"
}
trap cleanup EXIT
# shellcheck source=test/e2e/lib/workload_harness.sh
. "$ROOT/test/e2e/lib/workload_harness.sh"
# job_yaml NAME CPU ARGS: one pod; NS (default), QUEUE (user-queue-ks),
# PRIO (a WorkloadPriorityClass) from the environment.
job_yaml() {
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  namespace: ${NS:-default}
  labels:
    kueue.x-k8s.io/queue-name: ${QUEUE:-user-queue-ks}${PRIO:+
    kueue.x-k8s.io/priority-class: $PRIO}
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
        args: ["$3"]
        resources:
          requests:
            cpu: "$2"
            memory: 100Mi
YAML
}
hub_job_complete() { # NAME [NS]
  jq_ok hub '[.status.conditions[]?|select(.type=="Complete" and .status=="True")]|length==1' \
    job "$1" -n "${2:-default}"
}
wl_of() { # NAME [NS]
  k hub get workloads -n "${2:-default}" -o json |
    jq -r --arg n "$1" '.items[]|select(.metadata.ownerReferences[0].name==$n)|.metadata.name'
}
# faults CLUSTER JSON: PUT /devhub/faults on a devhub instance (never held by a pause).
faults() { echo "$2" | k "$1" replace --raw /devhub/faults -f -; }

start_devhub hub --kueue --run-jobs
start_devhub cluster1 --run-jobs --time-scale $SCALE --nodes '2x cpu=8,memory=32Gi;labels=instance=spot'
start_devhub cluster2 --run-jobs --time-scale $SCALE \
  --nodes '2x cpu=8,memory=32Gi,nvidia.com/gpu=2;labels=instance=h100'
apply_setup || die "setup objects not applied"
"$BIN" run --kubeconfig "$WORK/hub.kc" --metrics-bind-address 0 \
  --health-probe-bind-address 127.0.0.1:0 --worker "cluster1=$WORK/cluster1.kc" \
  --worker "cluster2=$WORK/cluster2.kc" --worker-lost-timeout 2s --v 1 >>"$WORK/op.log" 2>&1 &
OP=$!
wait_until 120 "ClusterMetrics for both workers" jq_ok hub \
  '[.items[]|select(.status.nodeCount==2)]|length==2' clustermetrics
wait_until 120 "AdmissionCheck Active, 2 of 2 workers" jq_ok hub \
  '.status.conditions[]|select(.type=="Active")|.status=="True" and (.message|test("2 of 2"))' \
  admissionchecks kubestellar-admc

# ---- j: a job in a non-default namespace ----------------------------------------
next j
cat <<YAML | k hub create -f - >/dev/null || die "namespace team-j and its LocalQueue not created"
apiVersion: v1
kind: Namespace
metadata:
  name: team-j
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: user-queue-ks
  namespace: team-j
spec:
  clusterQueue: cluster-queue-ks
YAML
for c in cluster1 cluster2; do
  k "$c" get namespace team-j >/dev/null 2>&1 && die "namespace team-j exists on $c before any job"
done
NS=team-j job_yaml job-j 1 20s | k hub create -f - >/dev/null || die "job-j not created"
wait_until 120 "job-j copy on exactly one worker (namespace team-j)" one_copy job-j team-j
c=$(copies job-j team-j)
W=cluster2
O=cluster1
[ "$c" = "1 0" ] && W=cluster1 && O=cluster2
k "$W" get namespace team-j >/dev/null || die "namespace team-j not created on $W"
jq_ok "$W" '.spec.clusterQueue=="cluster-queue-ks" and .metadata.labels["app.kubernetes.io/managed-by"]=="kueue-ks"' \
  localqueue user-queue-ks -n team-j >/dev/null || die "LocalQueue team-j/user-queue-ks not carried to $W"
jq_ok "$W" '.metadata.labels["kueue-ks.io/origin"] != null' job job-j -n team-j >/dev/null ||
  die "job-j copy lacks the origin label"
[ "$(copies job-j default)" = "0 0" ] || die "job-j copied into namespace default"
wait_until 120 "hub job-j Complete" hub_job_complete job-j team-j
wl=$(wl_of job-j team-j)
wait_until 120 "Workload team-j/$wl Finished" jq_ok hub \
  '[.status.conditions[]|select(.type=="Finished" and .status=="True")]|length==1' workloads "$wl" -n team-j
[ "$(copies job-j team-j)" = "$c" ] || die "job-j copies changed: $(copies job-j team-j)"
pass "job-j in namespace team-j ran on $W only (Namespace and LocalQueue created there) and completed"

# ---- e: preemption ------------------------------------------------------------------
next e
cat <<YAML | k hub create -f - >/dev/null || die "preemption set-up not created"
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata:
  name: high
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata:
  name: low
value: 10
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: cq-prio
spec:
  namespaceSelector: {}
  preemption:
    withinClusterQueue: LowerPriority
  admissionChecksStrategy:
    admissionChecks:
    - name: kubestellar-admc
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: spot
      resources:
      - name: cpu
        nominalQuota: "4"
      - name: memory
        nominalQuota: 16Gi
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: lq-prio
  namespace: default
spec:
  clusterQueue: cq-prio
YAML
# 3 CPUs each against a quota of 4: only one at a time
# job-low runs 30 s (300 s at the workers' time scale 0.1): it must still be running when
# job-high comes; with 10 s a busy machine let it finish first and nothing was preempted.
QUEUE=lq-prio PRIO=low job_yaml job-low 3 300s | k hub create -f - >/dev/null || die "job-low not created"
wait_until 120 "job-low copy on cluster1" eval '[ "$(copies job-low)" = "1 0" ]'
low_running() { jq_ok cluster1 '(.status.active // 0)==1' job job-low -n default; }
wait_until 120 "job-low running on cluster1" low_running
uid_low=$(k cluster1 get job job-low -n default -o jsonpath='{.metadata.uid}')
[ -n "$uid_low" ] || die "job-low's copy on cluster1 has no uid"
QUEUE=lq-prio PRIO=high job_yaml job-high 3 20s | k hub create -f - >/dev/null || die "job-high not created"
# The preempted run's copy (its uid) is deleted. Not "no copy of job-low": job-high runs 2 s,
# then job-low gets a new copy, so on a busy machine that state may pass between two looks.
low_copy_gone() {
  [ "$(k cluster1 get jobs -n default -o json |
    jq --arg u "$uid_low" '[.items[]|select(.metadata.uid==$u)]|length')" = 0 ]
}
wait_until 120 "job-low's preempted worker copy (uid $uid_low) deleted" low_copy_gone
[ "$(copies job-low | cut -d' ' -f2)" = 0 ] || die "job-low copied to cluster2: $(copies job-low)"
wl_low=$(wl_of job-low)
# A Preempted condition in any status: job-high runs 2 s (time scale 0.1), so under load job-low
# may already be re-admitted here, which turns the condition False ("Previously: …") but keeps it.
jq_ok hub '[.status.conditions[]?|select(.type=="Preempted")]|length>=1' \
  workloads "$wl_low" -n default >/dev/null || die "Workload $wl_low not marked preempted" \
  "$(k hub get workloads "$wl_low" -n default -o yaml)"
wait_until 120 "job-high copy on cluster1" eval '[ "$(copies job-high)" = "1 0" ]'
wait_until 120 "hub job-high Complete" hub_job_complete job-high
wait_until 120 "job-low copy back on cluster1" eval '[ "$(copies job-low)" = "1 0" ]'
wait_until 90 "hub job-low Complete" hub_job_complete job-low
# The preempted run did not count: job-low completed in a second copy (another uid), which
# started once job-high had finished. (Not "job-low not Complete" right after the preemption:
# its second run takes 30 s, and a busy machine may look later than that.)
uid_low2=$(k cluster1 get job job-low -n default -o jsonpath='{.metadata.uid}')
[ -n "$uid_low2" ] && [ "$uid_low2" != "$uid_low" ] ||
  die "job-low's completion is not from a second copy (copy uid '$uid_low2', preempted $uid_low)"
start_low=$(k hub get job job-low -n default -o jsonpath='{.status.startTime}')
done_high=$(k hub get job job-high -n default -o jsonpath='{.status.completionTime}')
[ -n "$start_low" ] && [ -n "$done_high" ] && [[ ! "$start_low" < "$done_high" ]] ||
  die "job-low's final run started at '$start_low', before job-high finished at '$done_high'"
[ "$(copies job-low)" = "1 0" ] || die "job-low copies after completion: $(copies job-low)"
[ "$(copies job-high)" = "1 0" ] || die "job-high copies after completion: $(copies job-high)"
# one line per eviction (two were logged at one preemption when a pass found its undone placement
# still on the job)
n=$(grep -c 'msg="job evicted" job=default/job-low ' "$WORK/op.log")
[ "$n" = 1 ] || die "'job evicted' for job-low logged $n times, want 1" \
  "$(grep 'msg="job evicted"' "$WORK/op.log")"
pass "job-high preempted the running job-low (worker copy deleted); job-high completed, then job-low ran again and completed"

# ---- i: a worker paused past --worker-lost-timeout ---------------------------------
next i
# a flavor without node labels: either worker can run these jobs
cat <<YAML | k hub create -f - >/dev/null || die "set-up for i not created"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: any
spec: {}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: cq-any
spec:
  namespaceSelector: {}
  admissionChecksStrategy:
    admissionChecks:
    - name: kubestellar-admc
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: any
      resources:
      - name: cpu
        nominalQuota: "16"
      - name: memory
        nominalQuota: 64Gi
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: lq-any
  namespace: default
spec:
  clusterQueue: cq-any
YAML
# 600 s at the workers' time scale 0.1 = 60 s: the copies on the paused worker must still be
# running when the loss is detected (two failed 5 s probes + the 2 s timeout, more under load);
# with 30 s a busy machine let them finish first and no WorkerLost was due.
for n in 1 2 3 4; do QUEUE=lq-any job_yaml "job-i$n" 1 600s; echo "---"; done | k hub create -f - >/dev/null ||
  die "job-i* not created"
for n in 1 2 3 4; do wait_until 120 "job-i$n copy on exactly one worker" one_copy "job-i$n"; done
n1=0
n2=0
for n in 1 2 3 4; do
  if [ "$(copies "job-i$n")" = "1 0" ]; then n1=$((n1 + 1)); else n2=$((n2 + 1)); fi
done
P=cluster1
O=cluster2
[ $n2 -gt $n1 ] && P=cluster2 && O=cluster1
ON_P=()
for n in 1 2 3 4; do
  k "$P" get job "job-i$n" -n default >/dev/null 2>&1 && ON_P+=("job-i$n")
done
faults "$P" '{"paused":true}' | jq -e '.paused==true' >/dev/null || die "$P not paused"
lost() { # NAME
  k hub get events -n default -o json |
    jq -e --arg n "$1" --arg c "$P" '[.items[]|select(.reason=="WorkerLost" and .involvedObject.name==$n and (.message|contains($c)))]|length>=1'
}
on_other() { k "$O" get job "$1" -n default >/dev/null 2>&1; }
for j in "${ON_P[@]}"; do
  wait_until 120 "Event WorkerLost for $j ($P paused)" lost "$j"
  wait_until 120 "$j re-placed on $O" on_other "$j"
  jq_ok hub ".metadata.labels[\"kubestellar.io/cluster\"]==\"$O\"" job "$j" -n default >/dev/null ||
    die "hub $j not labelled with $O"
  # the check went Retry: Kueue evicted the Workload for it and reserved again
  w=$(wl_of "$j")
  jq_ok hub '([.status.conditions[]?|select(.type=="Evicted" and (.message|test("admission check";"i")))]|length==1) and ([.status.conditions[]?|select(.type=="QuotaReserved" and .status=="True")]|length==1)' \
    workloads "$w" -n default >/dev/null || die "Workload $w of $j: no eviction for the Retry check" \
    "$(k hub get workloads "$w" -n default -o json | jq -c .status.conditions)"
done
grep -q 'worker unreachable.*cluster='"$P" "$WORK/op.log" || die "no 'worker unreachable' for $P in the log"
faults "$P" '{"paused":false}' | jq -e '.paused==false' >/dev/null || die "$P not resumed"
for j in "${ON_P[@]}"; do
  gone_p() { ! k "$P" get job "$1" -n default >/dev/null 2>&1; }
  wait_until 120 "stale copy of $j deleted from $P after resume" gone_p "$j"
done
for n in 1 2 3 4; do
  wait_until 90 "hub job-i$n Complete" hub_job_complete "job-i$n"
  one_copy "job-i$n" || die "job-i$n copies: $(copies "job-i$n")"
done
for j in "${ON_P[@]}"; do
  [ "$(copies "$j")" = "$([ $O = cluster1 ] && echo '1 0' || echo '0 1')" ] || die "$j copies: $(copies "$j")"
done
pass "$P paused: ${ON_P[*]} got WorkerLost, re-placed on $O; stale copies deleted on resume; all 4 completed with one copy"

# ---- u: a job kind outside the kind table -----------------------------------------
next u
widget_crd() {
  cat <<YAML
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
YAML
}
for c in hub cluster2; do
  widget_crd | k "$c" apply -f - >/dev/null || die "Widget CRD not created on $c"
done
wait_until 120 "Widget served by the hub" k hub get widgets -n default
for w in w1 w2; do
  cat <<YAML | k hub create -f - >/dev/null || die "Widget $w not created"
apiVersion: example.com/v1
kind: Widget
metadata:
  name: $w
  namespace: default
spec:
  size: 2
  template: {spec: {containers: [{name: c, image: busybox}]}}
YAML
  uid=$(k hub get widget "$w" -n default -o jsonpath='{.metadata.uid}')
  [ -n "$uid" ] || die "no uid for Widget $w"
  # Kueue's integration for such a kind would create this Workload
  cat <<YAML | k hub create -f - >/dev/null || die "Workload for Widget $w not created"
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: widget-$w
  namespace: default
  ownerReferences:
  - {apiVersion: example.com/v1, kind: Widget, name: $w, uid: $uid, controller: true}
spec:
  queueName: lq-any
  podSets:
  - name: main
    count: 2
    template:
      spec:
        containers:
        - name: c
          image: busybox
          resources: {requests: {cpu: "1", memory: 100Mi}}
YAML
done
wcopies() { # NAME: copies of Widget NAME on "cluster1 cluster2" (cluster1 has no such API)
  local b
  b=$(k cluster2 get widgets -n default -o json | jq --arg n "$1" '[.items[]|select(.metadata.name==$n)]|length')
  k cluster1 get widgets -n default >/dev/null 2>&1 && { echo "served-on-cluster1 $b"; return; }
  echo "0 $b"
}
for w in w1 w2; do
  wait_until 120 "Widget $w copied to cluster2" eval '[ "$(wcopies '"$w"')" = "0 1" ]'
  jq_ok hub '.metadata.labels["kubestellar.io/cluster"]=="cluster2" and
      .metadata.annotations["kueue-ks.io/placed-by"]=="kueue-ks" and
      (.metadata.annotations["kueue-ks.io/injected-node-selector"]==null)' widget "$w" -n default >/dev/null ||
    die "hub Widget $w not labelled for cluster2" "$(k hub get widget "$w" -n default -o yaml)"
  jq_ok cluster2 '.metadata.labels["kueue-ks.io/origin"]!=null and .metadata.labels["app.kubernetes.io/managed-by"]=="kueue-ks" and .spec.size==2' \
    widget "$w" -n default >/dev/null || die "cluster2 copy of $w lacks origin labels or its spec" \
    "$(k cluster2 get widget "$w" -n default -o yaml)"
  k hub get events -n default -o json | jq -e --arg n "$w" \
    '[.items[]|select(.reason=="UnknownJobKind" and .type=="Warning" and .involvedObject.kind=="Widget" and .involvedObject.name==$n and (.message|contains("placed on cluster cluster2")))]|length>=1' \
    >/dev/null || die "no Warning Event UnknownJobKind on Widget $w" "$(k hub get events -n default)"
done
grep -q 'watching a job kind outside the kind table.*resource=widgets' "$WORK/op.log" ||
  die "the operator did not log the discovered kind"
echo '{"status":{"phase":"Running","ready":2}}' |
  k cluster2 patch widget w1 -n default --subresource=status --type=merge --patch-file=/dev/stdin >/dev/null ||
  die "cannot set the status of the cluster2 copy"
wait_until 120 "hub Widget w1 status copied from cluster2" jq_ok hub \
  '.status.phase=="Running" and .status.ready==2' widget w1 -n default
wait_until 120 "check message of widget-w1 names cluster2" jq_ok hub \
  '[.status.admissionChecks[]|select(.name=="kubestellar-admc" and .state=="Pending" and (.message|test("^(placed|running) on cluster cluster2")))]|length==1' \
  workload widget-w1 -n default
k hub delete widget w2 -n default --wait=false >/dev/null || die "cannot delete hub Widget w2"
wait_until 120 "cluster2 copy of w2 deleted" eval '[ "$(wcopies w2)" = "0 0" ]'
[ "$(wcopies w1)" = "0 1" ] || die "Widget w1 copies: $(wcopies w1)"
pass "Widgets placed by label on cluster2 (the only worker serving the kind) with Warning UnknownJobKind; status came back whole; deleting w2 deleted its copy"

# ---- x: a foreign object with the job's name on the worker ---------------------
next x
cat <<YAML | k cluster1 create -f - >/dev/null || die "foreign job-x not created on cluster1"
apiVersion: batch/v1
kind: Job
metadata:
  name: job-x
  namespace: default
  labels: {team: someone-else}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox, args: ["1s"]}]
YAML
job_yaml job-x 1 5s | sed 's|^  labels:|  labels:\n    kubestellar.io/cluster: cluster1|' |
  k hub create -f - >/dev/null || die "hub job-x not created"
conflict() {
  k hub get events -n default -o json | jq -e \
    '[.items[]|select(.reason=="CopyConflict" and .type=="Warning" and .involvedObject.name=="job-x" and (.message|contains("kueue-ks did not create")))]|length>=1'
}
wait_until 120 "Warning Event CopyConflict on job-x" conflict
jq_ok cluster1 '.metadata.labels.team=="someone-else" and (.metadata.labels["kueue-ks.io/origin"]==null)' \
  job job-x -n default >/dev/null || die "the user's job-x on cluster1 was changed"
hub_job_complete job-x >/dev/null && die "hub job-x Complete while its copy could not be made"
k cluster1 delete job job-x -n default >/dev/null || die "cannot delete the foreign job-x"
wait_until 120 "hub job-x Complete after the foreign job was removed" hub_job_complete job-x
jq_ok cluster1 '.metadata.labels["kueue-ks.io/origin"]!=null' job job-x -n default >/dev/null ||
  die "job-x on cluster1 is not our copy"
pass "a foreign job-x on cluster1 gave Warning CopyConflict and was left alone; after its removal job-x ran there and completed"

# ---- r: a write refused by the API server --------------------------------------------
# An annotation just under the 256 KiB total the API server allows: the hub accepts the job,
# but kueue-ks's placement patch (its own annotations added) is refused, 422 every time. The
# user must hear it: a Warning Event WriteRejected with the server's words on the job, and one
# log line, however many retries; the job is not placed (no copy anywhere).
next r
python3 - "$WORK/job-r.yaml" <<'PY'
import sys
doc = """apiVersion: batch/v1
kind: Job
metadata:
  name: job-r
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: user-queue-ks}
  annotations: {note: "%s"}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: busybox, args: ["1s"], resources: {requests: {cpu: "1", memory: 100Mi}}}
""" % ("x" * 262100)
open(sys.argv[1], "w").write(doc)
PY
k hub create -f "$WORK/job-r.yaml" >/dev/null || die "hub job-r (262100-byte annotation) not created"
rejected() {
  k hub get events -n default -o json | jq -e '[.items[]|select(.reason=="WriteRejected" and
    .type=="Warning" and .involvedObject.name=="job-r" and (.message|contains("the hub refused")) and
    (.message|contains("262144")))]|length>=1'
}
wait_until 120 "Warning Event WriteRejected on job-r" rejected
# the Event's count says how many times the write was refused: retried, so at least 3
refused_3x() {
  k hub get events -n default -o json | jq -e '[.items[]|select(.reason=="WriteRejected" and
    .involvedObject.name=="job-r")|.count]|add>=3'
}
wait_until 60 "job-r's write refused 3 times (Event count)" refused_3x
n=$(grep -c 'msg="a write for the job was refused.*job-job-r' "$WORK/op.log")
[ "$n" = 1 ] || die "the refusal was logged $n times, want once" "$(grep 'was refused' "$WORK/op.log" | head -5)"
[ "$(copies job-r)" = "0 0" ] || die "job-r has copies: $(copies job-r)"
k hub delete job job-r -n default >/dev/null || die "cannot delete job-r"
pass "a 262100-byte annotation: the hub refused the placement patch; Warning WriteRejected with the server's message, logged once, no copy"

echo "ok   workload more e2e passed"
