#!/usr/bin/env bash
# End-to-end test of the workload controller in `kueue-ks run` (direct
# transport) on three kueue-ks-devhub instances: a hub emulating Kueue
# (--kueue, with the job controller: --run-jobs) and two workers running jobs (--run-jobs, time-scaled):
#   cluster1: 2 nodes cpu=8,memory=32Gi, instance=spot
#   cluster2: 2 nodes cpu=8,memory=32Gi,nvidia.com/gpu=2, instance=h100
# The operator registers them with --worker. Every step asserts objects on
# the hub and on both workers:
#   0  an insecure worker kubeconfig is refused (exit 2, clear message);
#      start-up: ClusterMetrics for both workers, AdmissionCheck Active,
#      BindingPolicies kueue-ks-<c>, readyz check workload-informers-synced
#   a  a batch Job lands on exactly one worker, runs, completes;
#      hub Job Complete, Workload Finished, quota released
#   c  a Job pinned to cluster2 runs there and nowhere else
#   f  a Job that fits no node: admission check Rejected with a message,
#      no copy anywhere
#   g  hub Job deleted mid-run: the worker copy is deleted
#   b  a PyTorchJob lands on one worker and completes
#   d  30 Jobs at once: spread over both workers, never over a node's
#      capacity, no duplicates, all complete
#   h  operator SIGKILL right after jobs are created, restart: each job runs
#      exactly once (one copy, completes)
#   s  workers from Secrets: added (agent, BindingPolicy), insecure one
#      rejected, removed with the Secret (its ClusterMetrics too); SIGTERM 0
#   k  --transport=kubestellar: the hub job is labelled, nothing on workers
#   l  a third worker killed under a pinned job: after --worker-lost-timeout
#      Event WorkerLost, no copy elsewhere
# Skipped (exit 77) when the devhub binary, kubectl or jq is missing.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${KUEUE_KS_BIN:-$ROOT/bin/kueue-ks}
DEVHUB=${DEVHUB_BIN:-$ROOT/bin/kueue-ks-devhub}
[ -x "$BIN" ] || { echo "FAIL: $BIN not built"; exit 1; }
[ -x "$DEVHUB" ] || { echo "SKIP: $DEVHUB not built"; exit 77; }
command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }

WORK=$(mktemp -d /tmp/workload-e2e-XXXXXX)
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
job_yaml() { # NAME CPU ARGS [extra label line]; GPU=n adds a GPU request, PAR=n pods (2)
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: user-queue-ks
${4:-}
spec:
  parallelism: ${PAR:-2}
  completions: ${PAR:-2}
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
            memory: 100Mi${GPU:+
            nvidia.com/gpu: "$GPU"}${GPU:+
          limits:
            nvidia.com/gpu: "$GPU"}
YAML
}
# The STATUS column kubectl prints for a job (derived from its conditions).
job_status_is() {
  local line
  line=$(k "$1" get job "$2" -n default --no-headers)
  [ "$(awk '{print $2}' <<<"$line")" = "$3" ] && return 0
  echo "$line"
  k "$1" get job "$2" -n default -o yaml
  return 1
}
wl_of() { k hub get workloads -n default -o json | jq -r --arg n "$1" '.items[]|select(.metadata.ownerReferences[0].name==$n)|.metadata.name'; }
start_op() {
  "$BIN" run --kubeconfig "$WORK/hub.kc" --metrics-bind-address 0 \
    --health-probe-bind-address 127.0.0.1:0 --worker "cluster1=$WORK/cluster1.kc" \
    --worker "cluster2=$WORK/cluster2.kc" --v 1 >>"$WORK/op.log" 2>&1 &
  OP=$!
}

start_devhub hub --kueue --run-jobs
start_devhub cluster1 --run-jobs --time-scale $SCALE --nodes '2x cpu=8,memory=32Gi;labels=instance=spot'
start_devhub cluster2 --run-jobs --time-scale $SCALE \
  --nodes '2x cpu=8,memory=32Gi,nvidia.com/gpu=2;labels=instance=h100'
apply_setup || die "setup objects not applied"

# ---- 0: flags and start-up ---------------------------------------------------
next 0
sed -e '/certificate-authority-data/d' -e 's/^\( *\)server: /\1insecure-skip-tls-verify: true\n\1server: /' \
  "$WORK/cluster1.kc" >"$WORK/insecure.kc"
out=$("$BIN" run --kubeconfig "$WORK/hub.kc" --metrics-bind-address 0 --health-probe-bind-address 0 \
  --worker "cluster1=$WORK/insecure.kc" 2>&1)
rc=$?
if ! { [ $rc = 2 ] && grep -q "insecure-skip-tls-verify" <<<"$out" &&
  grep -q -- "--allow-insecure-workers" <<<"$out"; }; then
  die "insecure worker kubeconfig: exit $rc" "$out"
fi
out=$("$BIN" run --kubeconfig "$WORK/hub.kc" --worker "bad name=$WORK/cluster1.kc" 2>&1)
rc=$?
if ! { [ $rc = 2 ] && grep -q "DNS label" <<<"$out"; }; then die "bad worker name accepted" "$out"; fi
pass "insecure worker kubeconfig and bad worker name refused (exit 2, clear message)"

start_op
wait_until 120 "ClusterMetrics for both workers" jq_ok hub \
  '[.items[]|select(.status.nodeCount==2)]|length==2' clustermetrics
wait_until 120 "AdmissionCheck Active" jq_ok hub \
  '.status.conditions[]|select(.type=="Active")|.status=="True"' admissionchecks kubestellar-admc
for c in cluster1 cluster2; do
  wait_until 120 "BindingPolicy kueue-ks-$c" jq_ok hub \
    ".spec.clusterSelectors[0].matchLabels.name==\"$c\" and .spec.downsync[0].objectSelectors[0].matchLabels[\"kubestellar.io/cluster\"]==\"$c\" and .spec.downsync[0].createOnly==true" \
    bindingpolicies "kueue-ks-$c"
done
port=$(sed -n 's/.*serving health probes" port=\([0-9]*\).*/\1/p' "$WORK/op.log" | head -1)
[ -n "$port" ] || die "no health port in the log"
wait_until 120 "readyz workload-informers-synced" \
  bash -c "curl -sf 'http://127.0.0.1:$port/readyz?verbose' | grep -q '\[+\]workload-informers-synced ok'"
pass "ClusterMetrics x2, AdmissionCheck Active, BindingPolicies, readyz workload-informers-synced"

# ---- a: a batch job runs on one worker and completes --------------------------
next a
job_yaml job-a 1 20s | k hub create -f - >/dev/null || die "job-a not created"
wait_until 120 "job-a copy on exactly one worker" one_copy job-a
c=$(copies job-a)
W=cluster2
[ "$c" = "1 0" ] && W=cluster1
jq_ok "$W" '.metadata.labels["kueue-ks.io/origin"] != null and .metadata.labels["app.kubernetes.io/managed-by"]=="kueue-ks"' \
  job job-a -n default >/dev/null || die "job-a copy lacks the origin labels" "$(k "$W" get job job-a -n default -o yaml)"
jq_ok hub ".metadata.labels[\"kubestellar.io/cluster\"]==\"$W\"" job job-a -n default >/dev/null ||
  die "hub job-a not labelled with its cluster"
wait_until 120 "hub job-a Complete" hub_job_complete job-a
wl=$(wl_of job-a)
wait_until 120 "Workload $wl Finished" jq_ok hub \
  '[.status.conditions[]|select(.type=="Finished" and .status=="True")]|length==1' workloads "$wl" -n default
wait_until 120 "quota released" jq_ok hub '(.status.reservingWorkloads // 0)==0' clusterqueue cluster-queue-ks
one_copy job-a || die "job-a copies changed: $(copies job-a)"
for c in cluster1 cluster2; do
  jq_ok "$c" '.spec.clusterQueue=="cluster-queue-ks" and .metadata.labels["app.kubernetes.io/managed-by"]=="kueue-ks"' \
    localqueue user-queue-ks -n default >/dev/null || die "LocalQueue user-queue-ks not carried to $c"
done
pass "job-a on $W only, Complete on the hub, Workload Finished, quota released, LocalQueue carried to the workers"

# ---- c: pinned cluster honoured ------------------------------------------------
next c
# (with a GPU: Kueue assigns flavor h100, whose nodes only cluster2 has; a
# CPU-only job gets flavor spot, which cluster2 cannot run: rejected, see f)
GPU=1 job_yaml job-c 1 20s '    kubestellar.io/cluster: cluster2' | k hub create -f - >/dev/null || die "job-c not created"
wait_until 120 "job-c copy on cluster2 only (copies 0 1)" copies_are job-c "0 1"
wait_until 120 "hub job-c Complete" hub_job_complete job-c
[ "$(copies job-c)" = "0 1" ] || die "job-c copies after completion: $(copies job-c)"
# the "job placed" line says it was the pin, and what pinned it, not a spread decision
placed=$(grep 'msg="job placed".*job=default/job-c ' "$WORK/op.log" | head -1)
grep -q "why=\"placed on cluster cluster2 (pinned by the job's label kubestellar.io/cluster: " \
  <<<"$placed" || die "job-c's 'job placed' line does not name the pin" "$placed"
pass "job-c pinned to cluster2 ran there only and completed; 'job placed' names the pin"
job_yaml job-c2 1 20s '    kubestellar.io/cluster: cluster2' | k hub create -f - >/dev/null || die "job-c2 not created"
wait_until 120 "job-c2 (pinned to cluster2, flavor spot) Rejected naming the pin" \
  rejected_with job-c2 "pinned cluster cluster2"
no_copy job-c2 || die "job-c2 has copies: $(copies job-c2)"
pass "job-c2 pinned to cluster2 with a flavor cluster2 lacks: Rejected, message names the pin"

# ---- f: a job that fits no cluster is rejected -----------------------------------
next f
# one pod of 12 CPUs: within the quota (16), larger than any node (8)
PAR=1 job_yaml job-f 12 20s | k hub create -f - >/dev/null || die "job-f not created"
wait_until 120 "job-f check Rejected" rejected_with job-f "even empty"
msg=$(rejected_msg job-f)
no_copy job-f || die "job-f has copies: $(copies job-f)"
# The hub's job controller marks the held job Suspended, as kubectl shows it.
wait_until 120 "hub job-f shows Suspended" job_status_is hub job-f Suspended
pass "job-f rejected: $msg; kubectl shows it Suspended"

# ---- g: hub job deleted mid-run -> worker copy deleted -------------------------------
next g
job_yaml job-g 1 300s | k hub create -f - >/dev/null || die "job-g not created"
wait_until 120 "job-g copy" one_copy job-g
W=cluster2
[ "$(copies job-g)" = "1 0" ] && W=cluster1
# The copy has a selector of its own (the worker's apiserver generated it), so
# kubectl logs job/X picks its pod and returns.
jq_ok "$W" '.spec.selector.matchLabels["batch.kubernetes.io/controller-uid"]==.metadata.uid and
  .spec.template.metadata.labels["controller-uid"]==.metadata.uid' job job-g -n default >/dev/null ||
  die "job-g copy has no selector of its own" "$(k "$W" get job job-g -n default -o yaml)"
out=$(timeout 120 kubectl --kubeconfig "$WORK/$W.kc" logs job/job-g -n default --pod-running-timeout=60s 2>&1) ||
  die "kubectl logs job/job-g on $W failed" "$out"
k hub delete job job-g -n default --wait=false >/dev/null || die "job-g not deleted"
wait_until 120 "job-g copy deleted" no_copy job-g
pass "job-g copy has its own selector, kubectl logs job/job-g returns; hub job-g deleted mid-run: worker copy deleted"

# ---- b: PyTorchJob --------------------------------------------------------------------
next b
cat <<YAML | k hub create -f - >/dev/null || die "pytorch-b not created"
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: pytorch-b
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: user-queue-ks
spec:
  runPolicy:
    suspend: true
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: pytorch
            image: busybox
            args: ["20s"]
            resources:
              requests:
                cpu: "1"
                memory: 500Mi
    Worker:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: pytorch
            image: busybox
            args: ["20s"]
            resources:
              requests:
                cpu: "1"
                memory: 500Mi
YAML
pt_copies() {
  local a b
  a=$(k cluster1 get pytorchjobs -n default -o json | jq '[.items[]|select(.metadata.name=="pytorch-b")]|length')
  b=$(k cluster2 get pytorchjobs -n default -o json | jq '[.items[]|select(.metadata.name=="pytorch-b")]|length')
  echo "$a $b"
}
pt_one() { c=$(pt_copies); [ "$c" = "1 0" ] || [ "$c" = "0 1" ]; }
c=
wait_until 120 "pytorch-b copy on exactly one worker" pt_one # leaves c as last sampled
pt_done() { jq_ok hub '[.status.conditions[]?|select(.type=="Succeeded" and .status=="True")]|length==1' pytorchjob pytorch-b -n default; }
wait_until 120 "hub pytorch-b Succeeded" pt_done
pass "pytorch-b ran on one worker ($c) and Succeeded on the hub"

# ---- d: 30 jobs at once ---------------------------------------------------------------
next d
for i in $(seq -w 1 30); do job_yaml "job-d$i" 2 20s; echo "---"; done | k hub create -f - >/dev/null ||
  die "30 jobs not created"
all_done() {
  local n
  n=$(k hub get jobs -n default -o json | jq '[.items[]|select(.metadata.name|startswith("job-d"))|select(any(.status.conditions[]?; .type=="Complete" and .status=="True"))]|length')
  [ "$n" = 30 ]
}
# while they run: never a node over its 8 CPUs (pods requesting 2 each), no duplicates
deadline=$((SECONDS + 240)) # a safety deadline: 8 rounds of 4 jobs, slow on a loaded machine
used1=0
used2=0
while ! all_done; do
  [ $SECONDS -le $deadline ] || die "30 jobs not complete within 240 s"
  for c in cluster1 cluster2; do
    over=$(k $c get pods -A -o json | jq '[.items[]|select(.status.phase=="Running" or .status.phase=="Pending")|select(.spec.nodeName!=null)|{n:.spec.nodeName,c:(.spec.containers[0].resources.requests.cpu|tonumber)}]|group_by(.n)|map(map(.c)|add)|max // 0')
    [ "$over" -le 8 ] || die "a node on $c is over its CPU: $over"
  done
  d=$(for c in cluster1 cluster2; do k $c get jobs -n default -o json | jq -r '.items[].metadata.name'; done | grep '^job-d' | sort | uniq -d)
  [ -z "$d" ] || die "duplicate copies: $d"
  n1=$(k cluster1 get jobs -n default -o json | jq '[.items[]|select(.metadata.name|startswith("job-d"))]|length')
  n2=$(k cluster2 get jobs -n default -o json | jq '[.items[]|select(.metadata.name|startswith("job-d"))]|length')
  [ "$n1" -gt "$used1" ] && used1=$n1
  [ "$n2" -gt "$used2" ] && used2=$n2
  sleep 0.3
done
if [ "$used1" = 0 ] || [ "$used2" = 0 ]; then
  die "30 jobs not spread: cluster1 $used1, cluster2 $used2"
fi
d=$(for c in cluster1 cluster2; do k $c get jobs -n default -o json | jq -r '.items[].metadata.name'; done | grep '^job-d' | sort | uniq -d)
[ -z "$d" ] || die "duplicate copies: $d"
n=$(for c in cluster1 cluster2; do k $c get jobs -n default -o json | jq -r '.items[].metadata.name'; done | grep -c '^job-d')
[ "$n" = 30 ] || die "$n worker copies for 30 jobs"
pass "30 jobs: spread (cluster1 $used1, cluster2 $used2), no node over capacity, no duplicates, all Complete"

# ---- h: SIGKILL mid-dispatch and restart ------------------------------------------------
next h
for i in 1 2 3 4 5; do job_yaml "job-h$i" 1 20s; echo "---"; done | k hub create -f - >/dev/null ||
  die "job-h* not created"
sleep 0.3
{ kill -9 "$OP" && wait "$OP"; } 2>/dev/null
start_op
for i in 1 2 3 4 5; do
  wait_until 120 "job-h$i Complete" hub_job_complete "job-h$i"
  one_copy "job-h$i" || die "job-h$i copies: $(copies job-h$i)"
done
pass "SIGKILL mid-dispatch and restart: 5 jobs each ran once and completed"

# ---- s: workers from Secrets --------------------------------------------------------------
next s
secret_yaml() { # NAME KUBECONFIG-FILE
  cat <<YAML
apiVersion: v1
kind: Secret
metadata:
  name: $1
  namespace: default
  labels:
    kueue-ks.io/worker: "true"
    name: $1
data:
  kubeconfig: $(base64 -w0 "$2")
YAML
}
secret_yaml cluster9 "$WORK/cluster1.kc" | k hub create -f - >/dev/null || die "secret cluster9 not created"
secret_yaml cluster8 "$WORK/insecure.kc" | k hub create -f - >/dev/null || die "secret cluster8 not created"
wait_until 120 "ClusterMetrics cluster9 from the Secret worker" jq_ok hub '.status.nodeCount==2' \
  clustermetrics cluster9
wait_until 120 "BindingPolicy kueue-ks-cluster9" jq_ok hub '.spec.clusterSelectors[0].matchLabels.name=="cluster9"' \
  bindingpolicies kueue-ks-cluster9
wait_until 120 "AdmissionCheck counts 3 workers" jq_ok hub \
  '.status.conditions[]|select(.type=="Active")|.message|test("3 of 3")' admissionchecks kubestellar-admc
grep -q 'worker secret rejected.*secret=default/cluster8.*insecure-skip-tls-verify' "$WORK/op.log" ||
  die "insecure Secret worker not rejected with a message"
k hub get clustermetrics cluster8 >/dev/null 2>&1 && die "ClusterMetrics for the rejected Secret worker"
k hub delete secret cluster9 >/dev/null || die "secret cluster9 not deleted"
cm9_gone() { ! k hub get clustermetrics cluster9 >/dev/null 2>&1; }
wait_until 120 "ClusterMetrics cluster9 deleted with its Secret" cm9_gone
grep -q 'worker removed.*cluster=cluster9' "$WORK/op.log" || die "worker cluster9 not removed"
wait_until 120 "AdmissionCheck counts 2 workers" jq_ok hub \
  '.status.conditions[]|select(.type=="Active")|.message|test("2 of 2")' admissionchecks kubestellar-admc
pass "Secret worker added (agent, BindingPolicy) and removed with its Secret; insecure Secret rejected"

kill "$OP"
wait "$OP"
rc=$?
OP=
[ $rc = 0 ] || die "operator exit $rc on SIGTERM"
pass "SIGTERM: exit 0"

# ---- k: --transport=kubestellar: labels only, nothing sent to workers ------------------------
next k
"$BIN" run --kubeconfig "$WORK/hub.kc" --metrics-bind-address 0 --health-probe-bind-address 0 \
  --transport=kubestellar >>"$WORK/op.log" 2>&1 &
OP=$!
job_yaml job-k 1 20s | k hub create -f - >/dev/null || die "job-k not created"
labelled() { jq_ok hub '.metadata.labels["kubestellar.io/cluster"]|test("^cluster[12]$")' job job-k -n default; }
wait_until 120 "hub job-k labelled with a cluster" labelled
sleep 1
no_copy job-k || die "kubestellar transport created copies: $(copies job-k)"
kill "$OP"
wait "$OP"
rc=$?
OP=
[ $rc = 0 ] || die "operator (kubestellar) exit $rc on SIGTERM"
pass "kubestellar transport: job-k labelled $(k hub get job job-k -n default -o jsonpath='{.metadata.labels.kubestellar\.io/cluster}'), no copy on any worker"
# ---- l: a worker lost for --worker-lost-timeout: check Retry, Event WorkerLost ---------------
next l
start_devhub cluster3 --run-jobs --time-scale $SCALE --nodes '1x cpu=8,memory=32Gi;labels=instance=spot'
C3=${PIDS[${#PIDS[@]}-1]}
"$BIN" run --kubeconfig "$WORK/hub.kc" --metrics-bind-address 0 --health-probe-bind-address 0 \
  --worker "cluster1=$WORK/cluster1.kc" --worker "cluster2=$WORK/cluster2.kc" \
  --worker "cluster3=$WORK/cluster3.kc" --worker-lost-timeout 3s >>"$WORK/op.log" 2>&1 &
OP=$!
wait_until 120 "ClusterMetrics cluster3" jq_ok hub '.status.nodeCount==1' clustermetrics cluster3
# the operator sees cluster3 usable (reachable, synced, fresh metrics)
wait_until 120 "AdmissionCheck counts 3 usable workers" jq_ok hub \
  '.status.conditions[]|select(.type=="Active")|.message|test("3 of 3")' admissionchecks kubestellar-admc
job_yaml job-l 1 600s '    kubestellar.io/cluster: cluster3' | k hub create -f - >/dev/null || die "job-l not created"
on3() { [ "$(k cluster3 get jobs -n default -o json | jq '[.items[]|select(.metadata.name=="job-l")]|length')" = 1 ]; }
wait_until 120 "job-l copy on cluster3" on3
kill -9 "$C3"
wait "$C3" 2>/dev/null
lost_event() {
  k hub get events -n default -o json |
    jq -e '[.items[]|select(.reason=="WorkerLost" and .involvedObject.name=="job-l" and (.message|test("cluster3")))]|length>=1'
}
wait_until 120 "Event WorkerLost for job-l" lost_event
[ "$(copies job-l)" = "0 0" ] || die "job-l copied elsewhere while pinned to the lost cluster3: $(copies job-l)"
kill "$OP"
wait "$OP"
rc=$?
OP=
[ $rc = 0 ] || die "operator exit $rc on SIGTERM"
pass "cluster3 killed: after --worker-lost-timeout 3s Event WorkerLost for job-l; no copy elsewhere (pinned)"
echo "ok   workload e2e passed"
