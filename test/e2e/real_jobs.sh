#!/usr/bin/env bash
# Real-stack e2e (make real-test; last tier of make test): kueue-ks against real
# kube-apiservers, controller managers and schedulers, the real Kueue manager on the hub and
# kwok-simulated nodes on the workers (scripts/realstack/stack.sh). One stack, these steps, each
# asserting the hub and both workers:
#   0  start-up: ClusterMetrics for both workers, AdmissionCheck Active, the managed
#      ClusterQueue's quotas equal the workers' capacity and real Kueue keeps it Active
#   a  acceptance: examples/batch-job.yaml Complete on the hub, its Workload QuotaReserved,
#      our check Pending with the placement message, Finished by Kueue; the hub Job is never
#      unsuspended; exactly one copy on one worker; one Workload uid for the job's whole life
#      (Kueue never deleted and recreated it) and one CreatedWorkload event
#   n  a job in a non-default namespace runs there on the worker and completes
#   p  placement: a GPU job runs on cluster2 only; a pod larger than any node is Rejected with
#      a message and copied nowhere
#   q  the quota follows the workers: a third cluster1 node raises the spot quota, its removal
#      lowers it again; real Kueue accepts every value (ClusterQueue Active)
#   r  priority preemption by real Kueue: two low-priority GPU jobs fill h100, a
#      sample-priority GPU job preempts one, whose worker copy is deleted; the high job
#      completes, then the preempted job is admitted again and completes
#   d  stack.sh down (make real-down) leaves no process and no port behind
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=test/e2e/lib/real_harness.sh
. "$ROOT/test/e2e/lib/real_harness.sh"

quota() { # FLAVOR RESOURCE
  k hub get clusterqueue cluster-queue-ks -o json | jq -r --arg f "$1" --arg r "$2" \
    '.spec.resourceGroups[].flavors[]|select(.name==$f)|.resources[]|select(.name==$r)|.nominalQuota'
}
quota_is() { [ "$(quota "$1" "$2")" = "$3" ]; }
cq_active() {
  jq_ok hub '[.status.conditions[]?|select(.type=="Active" and .status=="True")]|length==1' \
    clusterqueue cluster-queue-ks
}
created_events() { # NAME NS: Kueue's CreatedWorkload events for the job
  k hub get events -n "$2" -o json | jq --arg n "$1" \
    '[.items[]|select(.involvedObject.kind=="Job" and .involvedObject.name==$n and .reason=="CreatedWorkload")]|length'
}

# follow NAME NS SECONDS: until the hub job is Complete, sample what must hold all along:
# the Workload uids (a recreated Workload shows a second one), spec.suspend of the hub job
# (never false), the check entry (seen Pending with a message naming the worker) and
# QuotaReserved. Leaves $WORK/<name>.uids, .pending.
follow() {
  local n=$1 ns=$2 t=$3 deadline=$((SECONDS + $3)) s e
  : >"$WORK/$n.uids"
  : >"$WORK/$n.pending"
  while :; do
    wl_uids "$n" "$ns" | cut -d' ' -f2 >>"$WORK/$n.uids"
    s=$(k hub get job "$n" -n "$ns" -o jsonpath='{.spec.suspend}')
    [ "$s" = true ] || die "hub job $ns/$n unsuspended (spec.suspend=$s): it must only run on a worker"
    e=$(check_entry "$n" "$ns")
    case $e in Pending\ *cluster*) echo "$e" >>"$WORK/$n.pending" ;; esac
    [ "$(wl_cond "$n" "$ns" QuotaReserved)" = True ] && touch "$WORK/$n.reserved"
    complete_on hub "$n" "$ns" >/dev/null 2>&1 && break
    [ $SECONDS -le $deadline ] || die "hub job $ns/$n not Complete within $t s" \
      "$(k hub get job "$n" -n "$ns" -o yaml; wl_uids "$n" "$ns"; check_entry "$n" "$ns")"
    sleep 0.5
  done
  wl_uids "$n" "$ns" | cut -d' ' -f2 >>"$WORK/$n.uids"
}
# assert_one_life NAME NS: one Workload uid ever, one CreatedWorkload event, Finished
assert_one_life() {
  local n=$1 ns=$2 u ev
  u=$(sort -u "$WORK/$n.uids" | grep -c .)
  [ "$u" = 1 ] || die "job $ns/$n had $u Workload uids: Kueue deleted and recreated its Workload" \
    "$(sort -u "$WORK/$n.uids")"
  wait_until 120 "Workload of $ns/$n Finished" wl_finished "$n" "$ns"
  ev=$(created_events "$n" "$ns")
  [ "$ev" = 1 ] || die "job $ns/$n: $ev CreatedWorkload events, want 1"
  # one line a user follows per step, even when the final status takes two writes
  wait_until 120 "operator log: job $ns/$n finished" grep -q "msg=\"job finished\" job=$ns/$n " "$WORK/op.log"
  ev=$(grep -c "msg=\"job finished\" job=$ns/$n " "$WORK/op.log")
  [ "$ev" = 1 ] || die "job $ns/$n: $ev 'job finished' log lines, want 1"
}

real_up --v 1

# ---- 0: start-up ------------------------------------------------------------------------------
next 0
wait_until 120 "ClusterMetrics for both workers" jq_ok hub \
  '[.items[]|select(.status.nodeCount==2)]|length==2' clustermetrics
wait_until 120 "AdmissionCheck Active" jq_ok hub \
  '.status.conditions[]|select(.type=="Active")|.status=="True"' admissionchecks kubestellar-admc
for fr in "spot cpu 16" "spot memory 64Gi" "spot nvidia.com/gpu 0" "h100 cpu 16" \
  "h100 memory 64Gi" "h100 nvidia.com/gpu 4"; do
  # shellcheck disable=SC2086
  wait_until 120 "quota $fr" quota_is $fr
done
wait_until 120 "Kueue keeps ClusterQueue cluster-queue-ks Active" cq_active
pass "ClusterMetrics x2, AdmissionCheck Active, quotas = workers' capacity, ClusterQueue Active in Kueue"

# ---- a: acceptance: examples/batch-job.yaml ------------------------------------------------------
next a
name=$(k hub create -f "$ROOT/examples/batch-job.yaml" -o name) || die "examples/batch-job.yaml not created"
name=${name#job.batch/}
follow "$name" default 150
[ -f "$WORK/$name.reserved" ] || die "Workload of $name never seen QuotaReserved"
[ -s "$WORK/$name.pending" ] || die "check never seen Pending with the placement message"
assert_one_life "$name" default
c=$(copies "$name")
[ "$c" = "1 0" ] || die "$name copies (cluster1 cluster2): $c, want 1 0 (flavor spot)"
complete_on cluster1 "$name" >/dev/null || die "worker copy of $name not Complete on cluster1"
# the flavor's nodeLabels reach the worker in the copy only: the hub job's spec is left alone
# (its placement is a metadata-only patch, through the Job's /status)
sel=$(k cluster1 get job "$name" -n default -o 'jsonpath={.spec.template.spec.nodeSelector.instance}')
[ "$sel" = spot ] || die "copy of $name on cluster1: nodeSelector instance='$sel', want spot"
sel=$(k hub get job "$name" -n default -o 'jsonpath={.spec.template.spec.nodeSelector.instance}')
[ -z "$sel" ] || die "hub job $name: nodeSelector instance='$sel', want none (the copy carries it)"
wait_until 120 "quota released" jq_ok hub '(.status.reservingWorkloads // 0)==0' clusterqueue cluster-queue-ks
pass "$name Complete, Workload Finished by Kueue, one uid, check was '$(head -1 "$WORK/$name.pending")', one copy on cluster1"

# ---- n: non-default namespace -----------------------------------------------------------------------
next n
k hub create namespace team-a >/dev/null || die "namespace team-a"
k hub apply -f - >/dev/null <<YAML || die "LocalQueue in team-a"
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: user-queue-ks, namespace: team-a}
spec: {clusterQueue: cluster-queue-ks}
YAML
rjob job-ns 1 5s team-a | k hub create -f - >/dev/null || die "job-ns not created"
follow job-ns team-a 90
assert_one_life job-ns team-a
[ "$(copies job-ns team-a)" = "1 0" ] || die "job-ns copies: $(copies job-ns team-a)"
complete_on cluster1 job-ns team-a >/dev/null || die "job-ns not Complete on cluster1/team-a"
pass "job-ns in team-a ran on cluster1/team-a and completed"

# ---- p: placement by capacity and the GPU job ----------------------------------------------------
next p
GPU=1 rjob job-gpu 1 5s | k hub create -f - >/dev/null || die "job-gpu not created"
PAR=1 rjob job-big 12 5s | k hub create -f - >/dev/null || die "job-big not created"
follow job-gpu default 90
assert_one_life job-gpu default
[ "$(copies job-gpu)" = "0 1" ] || die "job-gpu copies: $(copies job-gpu), want 0 1"
wait_until 120 "job-big check Rejected with a message" rejected_with job-big "even empty"
no_copy job-big || die "job-big has copies: $(copies job-big)"
pass "job-gpu ran on cluster2 only; job-big (12 cpu pod) Rejected: $(rejected_msg job-big | cut -c1-100)"
k hub delete job job-big >/dev/null

# ---- q: quota follows the workers ---------------------------------------------------------------------
next q
"$ROOT/scripts/realstack/stack.sh" nodes cluster1 |
  sed -e 's/cluster1-node-1/cluster1-node-2/g' | k cluster1 apply -f - >/dev/null || die "third node"
k cluster1 wait --for condition=Ready --timeout 120s node/cluster1-node-2 >/dev/null || die "node-2 not Ready"
wait_until 60 "spot cpu quota 24 with a third node" quota_is spot cpu 24
quota_is spot memory 96Gi || wait_until 120 "spot memory 96Gi" quota_is spot memory 96Gi
cq_active || die "Kueue no longer keeps the ClusterQueue Active at 24 cpu"
k cluster1 delete node cluster1-node-2 >/dev/null || die "node-2 not deleted"
wait_until 90 "spot cpu quota back to 16" quota_is spot cpu 16
wait_until 120 "ClusterQueue Active" cq_active
pass "spot quota 16 -> 24 -> 16 with cluster1's nodes, accepted by Kueue"

# ---- r: priority preemption by real Kueue -------------------------------------------------------------
next r
# The low jobs run 120 s: the premise is that both still run when Kueue admits high. With
# 40 s, under a load of 40 low-2 was placed 41 s after low-1 and low-1 finished as high came:
# high then fit without preempting anything.
for j in low-1 low-2; do
  PAR=2 GPU=1 PRIO=low-priority rjob "$j" 1 120s | k hub create -f - >/dev/null || die "$j not created"
done
running_both() { [ "$(copies low-1)" = "0 1" ] && [ "$(copies low-2)" = "0 1" ]; }
wait_until 60 "low-1 and low-2 running on cluster2" running_both
GPU=1 PRIO=sample-priority rjob high 1 5s | k hub create -f - >/dev/null || die "high not created"
preempted() {
  local j
  for j in low-1 low-2; do
    [ "$(wl_cond "$j" default Evicted)" = True ] && [ "$(copies "$j")" = "0 0" ] && { echo "$j"; return 0; }
  done
  return 1
}
wait_until 60 "a low job preempted and its worker copy deleted" preempted
victim=$(preempted)
follow high default 90
[ "$(copies high)" = "0 1" ] || die "high copies: $(copies high)"
wait_until 300 "low-1 Complete after the preemption" complete_on hub low-1
wait_until 300 "low-2 Complete after the preemption" complete_on hub low-2
for j in low-1 low-2; do
  u=$(wl_uids "$j" default | grep -c .)
  [ "$u" = 1 ] || die "$j has $u Workloads"
done
pass "high preempted $victim (worker copy deleted), high completed on cluster2, then low-1 and low-2 completed"

# ---- d: stack.sh down (make real-down) leaves no process and no port behind ---------------------
next d
pids=$(cat "$WORK"/*.pid)
# shellcheck disable=SC1091
. "$WORK/ports.env"
"$ROOT/scripts/realstack/stack.sh" down >/dev/null 2>&1 || die "stack.sh down failed"
for p in $pids; do kill -0 "$p" 2>/dev/null && die "process $p still runs after stack.sh down"; done
for kc in hub cluster1 cluster2; do
  [ -e "$WORK/$kc.kubeconfig" ] && die "$kc.kubeconfig left after stack.sh down (its ports are closed)"
done
for port in "$HUB_API" "$CLUSTER1_API" "$CLUSTER2_API" "$KUEUE_WEBHOOK" "$KUEUE_HEALTH"; do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && die "port $port still open after stack.sh down"
done
pass "stack.sh down: $(echo "$pids" | wc -w) processes gone, apiserver and Kueue ports closed, kubeconfigs removed"
echo "ok   real_jobs passed"
