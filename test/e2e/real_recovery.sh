#!/usr/bin/env bash
# Real-stack e2e: recovery when a worker's real kube-scheduler cannot place the copy (issue 15,
# point 4). Real kube-apiservers, schedulers, Kueue and kwok (scripts/realstack/stack.sh), the
# operator with --unschedulable-timeout 20s; a ClusterQueue cq-any whose flavor has no node
# labels, so a job fits either worker by capacity. Set-up: a bare pod app=anchor runs on
# cluster2; cluster2's nodes are cordoned, so placement picks cluster1. The job's pod requires
# pod affinity to app=anchor on the same node (kubernetes.io/hostname): placement cannot judge
# that (ConstraintsLeftToWorker) and cluster1's scheduler leaves the pod Unschedulable. cluster2
# is uncordoned once the agent reports it.
#   r  the agent reports the copy (status.unschedulableJobs of ClusterMetrics cluster1, cause
#      unschedulable, the scheduler's message naming pod affinity); past the timeout: Warning
#      Event UnschedulableOnWorker naming that reason, the hub job annotated with the exclusion
#      of cluster1, the cluster1 copy deleted, a copy made on cluster2 where the pod joins the
#      anchor's node, the hub job Complete. One copy at a time, from the two workers' Job watch
#      histories (each event stamped on arrival): cluster1's copy DELETED before cluster2's
#      ADDED, and never two live copies.
#   q  cluster2 cordoned again, a ResourceQuota pods=0 in cluster1's namespace: the real Job
#      controller cannot create job-q's pod (FailedCreate); the agent reports the copy (cause
#      no-pods), it is moved to cluster2 once uncordoned, Event naming it, Complete.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=test/e2e/lib/real_harness.sh
. "$ROOT/test/e2e/lib/real_harness.sh"
TIMEOUT_S=20
WATCHERS=()
real_cleanup_watch() {
  for p in "${WATCHERS[@]}"; do kill "$p" 2>/dev/null; done
  real_cleanup
}
trap real_cleanup_watch EXIT

real_up --unschedulable-timeout ${TIMEOUT_S}s --unschedulable-exclusion 10m

next r
k hub apply -f - >/dev/null <<YAML || die "cq-any not created"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: any}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq-any}
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
      - {name: cpu, nominalQuota: "16"}
      - {name: memory, nominalQuota: 64Gi}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq-any, namespace: default}
spec: {clusterQueue: cq-any}
YAML
k cluster2 apply -f - >/dev/null <<YAML || die "anchor pod not created on cluster2"
apiVersion: v1
kind: Pod
metadata: {name: anchor, namespace: default, labels: {app: anchor}}
spec:
  containers:
  - {name: c, image: sleep, args: ["3600s"], resources: {requests: {cpu: 100m, memory: 10Mi}}}
YAML
wait_until 60 "anchor Running on cluster2" jq_ok cluster2 \
  '.status.phase=="Running" and (.spec.nodeName|length>0)' pod anchor -n default
anchor_node=$(k cluster2 get pod anchor -n default -o jsonpath='{.spec.nodeName}')
k cluster2 cordon -l type=kwok >/dev/null || die "cannot cordon cluster2"
wait_until 120 "ClusterMetrics cluster2 shows its nodes cordoned" jq_ok hub \
  '[.status.nodes[]|select(.unschedulable==true)]|length==2' clustermetrics cluster2

# the workers' Job histories, each event stamped on arrival
for c in cluster1 cluster2; do
  k "$c" get jobs -n default -w --output-watch-events -o json 2>/dev/null |
    jq --unbuffered -c --arg c "$c" '{t: now, c: $c, type, name: .object.metadata.name,
      uid: .object.metadata.uid, del: .object.metadata.deletionTimestamp}' >"$WORK/$c.jobs.watch" &
  WATCHERS+=($!)
done

k hub create -f - >/dev/null <<YAML || die "job-r not created"
apiVersion: batch/v1
kind: Job
metadata:
  name: job-r
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: lq-any}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      affinity:
        podAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {app: anchor}}
            topologyKey: kubernetes.io/hostname
      containers:
      - name: c
        image: sleep
        args: ["10s"]
        resources: {requests: {cpu: "1", memory: 100Mi}}
YAML
wait_until 60 "job-r copy on cluster1" jq_ok cluster1 '.metadata.name=="job-r"' job job-r -n default
reported() {
  jq_ok hub '[.status.unschedulableJobs[]?|select(.namespace=="default" and .name=="job-r" and .cause=="unschedulable" and .reason=="Unschedulable" and (.message|test("affinity")))]|length==1' \
    clustermetrics cluster1
}
wait_until 60 "ClusterMetrics cluster1 reports job-r unschedulable (pod affinity)" reported
since=$(k hub get clustermetrics cluster1 -o json | jq -r '.status.unschedulableJobs[]|select(.name=="job-r")|.since')
since_s=$(date -d "$since" +%s) || die "bad since: $since"
msg=$(k hub get clustermetrics cluster1 -o json | jq -r '.status.unschedulableJobs[]|select(.name=="job-r")|.message')
k cluster2 uncordon -l type=kwok >/dev/null || die "cannot uncordon cluster2"

on_c2() { k cluster2 get job job-r -n default >/dev/null 2>&1; }
wait_until $((TIMEOUT_S + 180)) "job-r re-placed on cluster2" on_c2
wait_until 90 "hub job-r Complete" complete_on hub job-r
[ "$(copies job-r)" = "0 1" ] || die "job-r copies after completion: $(copies job-r)"
node=$(k cluster2 get pods -n default -l job-name=job-r -o json | jq -r '[.items[].spec.nodeName]|unique|join(",")')
[ "$node" = "$anchor_node" ] || die "job-r's pod ran on '$node', not the anchor's node $anchor_node"
jq_ok hub '.metadata.annotations["kueue-ks.io/excluded-clusters"]|test("^cluster1=[0-9T:-]+Z$")' \
  job job-r -n default >/dev/null || die "no exclusion of cluster1 on job-r" "$(k hub get job job-r -n default -o yaml)"
ev=$(k hub get events -n default -o json | jq -r '[.items[]|select(.reason=="UnschedulableOnWorker" and .type=="Warning" and .involvedObject.kind=="Job" and .involvedObject.name=="job-r")][0].message // ""')
case "$ev" in
  *"cannot run on cluster cluster1: pods unschedulable there: Unschedulable: "*"affinity"*"excluded until"*) ;;
  *) die "no Warning Event UnschedulableOnWorker naming the scheduler's reason on job-r: '$ev'" ;;
esac
k hub get events -n default -o json | jq -e '[.items[]|select(.reason=="ConstraintsLeftToWorker" and .involvedObject.name=="job-r")]|length>=1' \
  >/dev/null || die "no ConstraintsLeftToWorker Event on job-r (pod affinity is the worker's to judge)"
w=$(wl_uids job-r default | head -1 | cut -d' ' -f1)
jq_ok hub '[.status.conditions[]?|select(.type=="Evicted" and (.message|test("admission check";"i")))]|length==1' \
  workloads "$w" -n default >/dev/null || die "Workload $w: no eviction for the Retry check" \
  "$(k hub get workloads "$w" -n default -o json | jq -c .status.conditions)"
for p in "${WATCHERS[@]}"; do kill "$p" 2>/dev/null; done
WATCHERS=()
# the histories: cluster1's copy gone (DELETED) before cluster2's appears (ADDED); replaying
# both in arrival order, never two live copies of job-r
hist=$(jq -s -c '[.[]|select(.name=="job-r")]|sort_by(.t)' "$WORK/cluster1.jobs.watch" "$WORK/cluster2.jobs.watch")
res=$(jq -r '
  (map(select(.c=="cluster1" and .type=="DELETED"))|first|.t) as $d1 |
  (map(select(.c=="cluster2" and .type=="ADDED"))|first|.t) as $a2 |
  (reduce .[] as $e ({live: {}, max: 0};
     .live[$e.c] = ($e.type != "DELETED") | .max = ([.max, ([.live[]|select(.)]|length)]|max))) as $r |
  "\($d1 // "none") \($a2 // "none") \($r.max) \(map(select(.type=="ADDED"))|length)"' <<<"$hist")
read -r d1 a2 maxlive adds <<<"$res"
if [ "$d1" = none ] || [ "$a2" = none ]; then die "watch histories incomplete: $res" "$hist"; fi
awk -v d="$d1" -v a="$a2" 'BEGIN{exit !(d < a)}' || die "cluster2's copy ADDED at $a2, before cluster1's was DELETED at $d1" "$hist"
[ "$maxlive" = 1 ] || die "two live copies of job-r at once in the watch histories" "$hist"
[ "$adds" = 2 ] || die "job-r copies created $adds times, want 2 (cluster1, then cluster2)" "$hist"
moved=$(awk -v a="$a2" -v s="$since_s" 'BEGIN{printf "%d", a - s}')
[ "$moved" -ge $((TIMEOUT_S - 1)) ] || die "moved ${moved}s after the pod became unschedulable: before the timeout"
# no upper bound: how long after the timeout depends on the machine's load (the wait for
# the move above is a safety deadline only)
gap=$(awk -v a="$a2" -v d="$d1" 'BEGIN{printf "%.2f", a - d}')
pass "scheduler: '$(echo "$msg" | cut -c1-90)'; moved ${moved}s after (timeout ${TIMEOUT_S}s), cluster1 copy deleted ${gap}s before cluster2's was created, never two live; ran on the anchor's node $anchor_node; Complete; Event: $(echo "$ev" | cut -c1-120)"

# ---- q: no pods (a real ResourceQuota refuses them), moved too ----------------------------
next q
k cluster2 cordon -l type=kwok >/dev/null || die "cannot cordon cluster2"
wait_until 120 "ClusterMetrics cluster2 shows its nodes cordoned" jq_ok hub \
  '[.status.nodes[]|select(.unschedulable==true)]|length==2' clustermetrics cluster2
k cluster1 create quota no-pods -n default --hard=pods=0 >/dev/null || die "no ResourceQuota on cluster1"
# the stack runs no resourcequota controller: its status (what admission enforces) set by hand
k cluster1 patch quota no-pods -n default --subresource=status --type merge \
  -p '{"status":{"hard":{"pods":"0"},"used":{"pods":"0"}}}' >/dev/null || die "quota status not set"
rjob job-q 1 10s | sed 's/user-queue-ks/lq-any/' | k hub create -f - >/dev/null || die "job-q not created"
wait_until 60 "job-q copy on cluster1" jq_ok cluster1 '.metadata.name=="job-q"' job job-q -n default
refused() {
  k cluster1 get events -n default -o json |
    jq -e '[.items[]|select(.involvedObject.name=="job-q" and .reason=="FailedCreate" and (.message|test("quota")))]|length>=1'
}
wait_until 60 "the real Job controller's FailedCreate (quota) on cluster1's job-q" refused
noq() {
  jq_ok hub '[.status.unschedulableJobs[]?|select(.name=="job-q" and .cause=="no-pods" and .reason=="NoPods")]|length==1' \
    clustermetrics cluster1
}
wait_until 60 "ClusterMetrics cluster1 reports job-q (no-pods)" noq
k cluster2 uncordon -l type=kwok >/dev/null || die "cannot uncordon cluster2"
on_c2q() { [ "$(copies job-q)" = "0 1" ]; }
wait_until $((TIMEOUT_S + 180)) "job-q moved to cluster2" on_c2q
wait_until 90 "hub job-q Complete" complete_on hub job-q
evq=$(k hub get events -n default -o json | jq -r '[.items[]|select(.reason=="UnschedulableOnWorker" and .involvedObject.kind=="Job" and .involvedObject.name=="job-q")][0].message // ""')
case "$evq" in
  *"cannot run on cluster cluster1: no progress there, no pods created: NoPods: "*) ;;
  *) die "no Warning Event UnschedulableOnWorker (no pods) on job-q: '$evq'" ;;
esac
k cluster1 delete quota no-pods -n default >/dev/null
pass "a ResourceQuota pods=0 on cluster1: the real Job controller's FailedCreate, reported no-pods, moved to cluster2, Complete; Event: $(echo "$evq" | cut -c1-110)"
echo "ok   real_recovery passed"
