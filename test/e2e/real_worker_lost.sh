#!/usr/bin/env bash
# Real-stack e2e: a worker lost. Real kube-apiservers, Kueue and kwok (scripts/realstack/
# stack.sh), the operator with --worker-lost-timeout 10s; a ClusterQueue cq-any whose flavor
# has no node labels, so a job fits either worker:
#   i  four jobs spread over both workers; the kube-apiserver of the busier worker is stopped
#      (SIGSTOP) past the timeout: its jobs get Event WorkerLost, our check goes Retry, real
#      Kueue evicts and re-reserves the Workload (same uid) and kueue-ks re-places the job on
#      the other worker; the hub jobs stay suspended. When the apiserver is continued the stale
#      copies are deleted; every job completes with exactly one copy left.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=test/e2e/lib/real_harness.sh
. "$ROOT/test/e2e/lib/real_harness.sh"
STOPPED=
real_cleanup_cont() {
  [ -n "$STOPPED" ] && kill -CONT "$STOPPED" 2>/dev/null
  real_cleanup
}
trap real_cleanup_cont EXIT

real_up --worker-lost-timeout 10s

next i
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
for n in 1 2 3 4; do
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: job-i$n
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: lq-any}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: sleep
        args: ["45s"]
        resources: {requests: {cpu: "1", memory: 100Mi}}
---
YAML
done | k hub create -f - >/dev/null || die "job-i* not created"
for n in 1 2 3 4; do wait_until 60 "job-i$n copy on exactly one worker" one_copy "job-i$n"; done
n1=0
for n in 1 2 3 4; do [ "$(copies "job-i$n")" = "1 0" ] && n1=$((n1 + 1)); done
P=cluster1
O=cluster2
[ $n1 -lt 2 ] && P=cluster2 && O=cluster1
ON_P=()
for n in 1 2 3 4; do
  k "$P" get job "job-i$n" -n default >/dev/null 2>&1 && ON_P+=("job-i$n")
  wl_uids "job-i$n" default | cut -d' ' -f2 >"$WORK/job-i$n.uids"
done
[ ${#ON_P[@]} -ge 1 ] || die "no job on $P"
STOPPED=$(cat "$WORK/$P-apiserver.pid")
kill -STOP "$STOPPED" || die "cannot stop $P's kube-apiserver"
lost() { # NAME
  k hub get events -n default -o json |
    jq -e --arg n "$1" --arg c "$P" '[.items[]|select(.reason=="WorkerLost" and .involvedObject.name==$n and (.message|contains($c)))]|length>=1'
}
on_other() { k "$O" get job "$1" -n default >/dev/null 2>&1; }
for j in "${ON_P[@]}"; do
  wait_until 90 "Event WorkerLost for $j ($P stopped)" lost "$j"
  wait_until 60 "$j re-placed on $O" on_other "$j"
  jq_ok hub ".metadata.labels[\"kubestellar.io/cluster\"]==\"$O\" and .spec.suspend==true" job "$j" -n default \
    >/dev/null || die "hub $j not labelled with $O (or unsuspended)" "$(k hub get job "$j" -o yaml)"
  w=$(wl_uids "$j" default | head -1 | cut -d' ' -f1)
  jq_ok hub '([.status.conditions[]?|select(.type=="Evicted" and (.message|test("admission check";"i")))]|length==1) and ([.status.conditions[]?|select(.type=="QuotaReserved" and .status=="True")]|length==1)' \
    workloads "$w" -n default >/dev/null || die "Workload $w of $j: no eviction for the Retry check" \
    "$(k hub get workloads "$w" -n default -o json | jq -c .status.conditions)"
done
grep -q "worker unreachable.*cluster=$P" "$WORK/op.log" || die "no 'worker unreachable' for $P in the log"
kill -CONT "$STOPPED"
STOPPED=
for j in "${ON_P[@]}"; do
  gone_p() { ! k "$P" get job "$1" -n default >/dev/null 2>&1; }
  wait_until 60 "stale copy of $j deleted from $P after resume" gone_p "$j"
done
for n in 1 2 3 4; do
  wait_until 120 "hub job-i$n Complete" complete_on hub "job-i$n"
  one_copy "job-i$n" || die "job-i$n copies: $(copies "job-i$n")"
  wl_uids "job-i$n" default | cut -d' ' -f2 >>"$WORK/job-i$n.uids"
  u=$(sort -u "$WORK/job-i$n.uids" | grep -c .)
  [ "$u" = 1 ] || die "job-i$n had $u Workload uids"
done
pass "$P stopped: ${ON_P[*]} got WorkerLost, Retry, re-placed on $O; stale copies deleted; all 4 completed, one copy, one Workload each"
echo "ok   real_worker_lost passed"
