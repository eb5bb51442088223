#!/usr/bin/env bash
# End-to-end test of the devhub simulators with the real kubectl: a worker
# instance (--run-jobs --nodes) runs Jobs and a PyTorchJob to completion and
# leaves a too-big pod Pending; a hub instance (--kueue) turns labelled Jobs
# into Workloads, runs the admission-check protocol, preempts by priority,
# never over-commits quota and releases it when a job finishes.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/bin/kueue-ks-devhub
CRDS=$ROOT/devhub/crds # the project's minimal Kueue/Kubeflow/KubeStellar CRDs
command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 77; }
[ -x "$BIN" ] || { echo "FAIL: $BIN not built"; exit 1; }

WORK=$(mktemp -d /tmp/devhub-sim-e2e-XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT
export HOME=$WORK/home # private kubectl discovery cache
mkdir -p "$HOME"
STEP=0

pass() { echo "ok   $STEP $1"; }
die() {
  echo "FAIL $STEP $1"
  [ -n "${2:-}" ] && echo "---- output:" && echo "$2" | head -40
  for l in "$WORK"/*.log; do echo "---- $l (tail):"; tail -15 "$l"; done
  exit 1
}
# step NAME EXPECTED-REGEX CMD...: run, require exit 0 and output matching the regex.
step() {
  local name=$1 want=$2
  shift 2
  STEP=$((STEP + 1))
  local out
  out=$("$@" 2>&1) || die "$name (exit $?)" "$out"
  echo "$out" | grep -Eq -- "$want" || die "$name: output does not match /$want/" "$out"
  pass "$name"
}
# eventually NAME EXPECTED-REGEX CMD...: like step, retried for up to 120 s (a safety
# deadline for a loaded machine, not a bound the state must meet).
eventually() {
  local name=$1 want=$2
  shift 2
  STEP=$((STEP + 1))
  local out='' deadline=$((SECONDS + 120))
  while [ $SECONDS -le $deadline ]; do
    if out=$("$@" 2>&1) && echo "$out" | grep -Eq -- "$want"; then
      pass "$name"
      return
    fi
    sleep 0.2
  done
  die "$name: output never matched /$want/" "$out"
}

start() { # start NAME KUBECONFIG [flags]
  local name=$1 kc=$2
  shift 2
  "$BIN" --listen 127.0.0.1:0 --name "$name" --kubeconfig-out "$kc" --crds "$CRDS" "$@" \
    >>"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  local deadline=$((SECONDS + 120))
  while [ $SECONDS -le $deadline ]; do
    [ -s "$kc" ] && return
    sleep 0.05
  done
  die "$name wrote no kubeconfig"
}

W=$WORK/worker.kubeconfig
H=$WORK/hub.kubeconfig
start worker "$W" --run-jobs --time-scale 0.1 --job-duration 5s \
  --nodes '2xcpu=2,memory=8Gi' --nodes '1xcpu=4,memory=16Gi;labels=pool=gpu;taints=gpu=true:NoSchedule'
start hub "$H" --kueue
kw() { kubectl --kubeconfig "$W" "$@"; }
kh() { kubectl --kubeconfig "$H" "$@"; }

# ---- worker: job runner ----------------------------------------------------------------
cat >"$WORK/job3.yaml" <<'YAML'
apiVersion: batch/v1
kind: Job
metadata: {name: j3}
spec:
  parallelism: 3
  completions: 3
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: busybox, command: [sleep, 5s], resources: {requests: {cpu: "1"}}}
YAML
step "create Job parallelism=completions=3" "job.batch/j3 created" kw create -f "$WORK/job3.yaml"
# active and failed are omitempty in batch/v1: absent once they are 0, as on a real cluster.
eventually "Job j3 Complete" "^3 none none .*SuccessCriteriaMet.*Complete" \
  kw get job j3 -o go-template='{{.status.succeeded}} {{or .status.active "none"}} {{or .status.failed "none"}} {{range .status.conditions}}{{.type}} {{end}}'
step "its 3 pods Succeeded on untainted nodes" "^3$" sh -c \
  "kubectl --kubeconfig '$W' get pods -l batch.kubernetes.io/job-name=j3 -o jsonpath='{range .items[*]}{.status.phase} {.spec.nodeName}{\"\n\"}{end}' | grep -cE '^Succeeded worker-node-[12]$'"
step "pods carry controller ownerReference and labels" "^Job true j3$" \
  kw get pods -l job-name=j3 -o 'jsonpath={.items[0].metadata.ownerReferences[0].kind} {.items[0].metadata.ownerReferences[0].controller} {.items[0].metadata.labels.batch\.kubernetes\.io/job-name}'
step "Job has startTime, completionTime, uncountedTerminatedPods" "^20.* 20.* \{\}$" \
  kw get job j3 -o 'jsonpath={.status.startTime} {.status.completionTime} {.status.uncountedTerminatedPods}'

cat >"$WORK/pt.yaml" <<'YAML'
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pt}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers: [{name: pytorch, image: x, args: ["sleep 3s"]}]
    Worker:
      replicas: 2
      template:
        spec:
          containers: [{name: pytorch, image: x, args: ["sleep 4s"], resources: {requests: {cpu: 500m}}}]
YAML
step "create PyTorchJob" "pytorchjob.kubeflow.org/pt created" kw create -f "$WORK/pt.yaml"
eventually "PyTorchJob Succeeded with replica statuses" "^True PyTorchJobSucceeded 1 2$" \
  kw get pytorchjob pt -o 'jsonpath={.status.conditions[?(@.type=="Succeeded")].status} {.status.conditions[?(@.type=="Succeeded")].reason} {.status.replicaStatuses.Master.succeeded} {.status.replicaStatuses.Worker.succeeded}'
step "PyTorchJob pods are labelled" "^pt-worker-1 worker 1$" \
  kw get pod pt-worker-1 -o 'jsonpath={.metadata.name} {.metadata.labels.training\.kubeflow\.org/replica-type} {.metadata.labels.training\.kubeflow\.org/replica-index}'

cat >"$WORK/big.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: big}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "64"}}}]
YAML
step "create a pod too big for any node" "pod/big created" kw create -f "$WORK/big.yaml"
eventually "too-big pod stays Pending, Unschedulable" "^Pending Unschedulable 0/3 nodes are available" \
  kw get pod big -o 'jsonpath={.status.phase} {.status.conditions[?(@.type=="PodScheduled")].reason} {.status.conditions[?(@.type=="PodScheduled")].message}'
step "delete Job j3" "deleted" kw delete job j3
eventually "its pods are garbage-collected" "^0$" sh -c "kubectl --kubeconfig '$W' get pods -l job-name=j3 -o name | wc -l"

# ---- hub: Kueue emulator -----------------------------------------------------------------
cat >"$WORK/setup.yaml" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
spec: {nodeLabels: {pool: cpu}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: kueue-ks}
spec: {controllerName: kueue-ks.io/dispatcher}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  admissionChecksStrategy: {admissionChecks: [{name: kueue-ks}]}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default-flavor
      resources: [{name: cpu, nominalQuota: "4"}, {name: memory, nominalQuota: 16Gi}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq10}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources: [{name: cpu, nominalQuota: "3"}]
---
apiVersion: v1
kind: Namespace
metadata: {name: ten}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: ten}
spec: {clusterQueue: cq10}
YAML
step "apply flavors, check, queues, priority class" "clusterqueue.kueue.x-k8s.io/cq created" \
  kh apply -f "$WORK/setup.yaml"

job() { # job NAME NAMESPACE CPU [PRIORITY-CLASS]
  local prio=
  [ -n "${4:-}" ] && prio=", kueue.x-k8s.io/priority-class: $4"
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: $1, namespace: $2, labels: {kueue.x-k8s.io/queue-name: lq$prio}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x, args: [10s], resources: {requests: {cpu: "$3"}}}]
YAML
}
wl_of() { # wl_of JOB [NAMESPACE]: the workload name of a job
  local uid
  uid=$(kh get job "$1" -n "${2:-default}" -o 'jsonpath={.metadata.uid}')
  kh get workloads -n "${2:-default}" -l "kueue.x-k8s.io/job-uid=$uid" -o 'jsonpath={.items[0].metadata.name}'
}

job a1 default 1 >"$WORK/a1.yaml"
step "create a labelled Job" "job.batch/a1 created" kh create -f "$WORK/a1.yaml"
eventually "a Workload named like Kueue's with QuotaReserved and a Pending check" \
  "^job-a1-[0-9a-f]{5} True Pending lq main cq$" sh -c \
  "kubectl --kubeconfig '$H' get workloads -o jsonpath='{.items[0].metadata.name} {.items[0].status.conditions[?(@.type==\"QuotaReserved\")].status} {.items[0].status.admissionChecks[0].state} {.items[0].spec.queueName} {.items[0].spec.podSets[0].name} {.items[0].status.admission.clusterQueue}'"
step "the Job is suspended" "^true$" kh get job a1 -o 'jsonpath={.spec.suspend}'
WL=$(wl_of a1)
step "the check controller sets Ready (patch --subresource=status)" "patched" \
  kh patch workload "$WL" --subresource=status --type=merge \
  -p '{"status":{"admissionChecks":[{"name":"kueue-ks","state":"Ready","lastTransitionTime":"2026-01-01T00:00:00Z","message":""}]}}'
eventually "Workload Admitted" "^True$" \
  kh get workload "$WL" -o 'jsonpath={.status.conditions[?(@.type=="Admitted")].status}'
eventually "Job unsuspended with the flavor's nodeSelector" "^false cpu$" \
  kh get job a1 -o 'jsonpath={.spec.suspend} {.spec.template.spec.nodeSelector.pool}'

for n in b1 b2 b3; do job $n default 1 >"$WORK/$n.yaml"; kh create -f "$WORK/$n.yaml" >/dev/null || die "create $n"; done
eventually "three more reserve the rest of the quota" "^4 4$" \
  kh get clusterqueue cq -o 'jsonpath={.status.reservingWorkloads} {.status.flavorsReservation[0].resources[0].total}'
job vip default 2 high >"$WORK/vip.yaml"
step "create a high-priority Job needing 2 cpu" "job.batch/vip created" kh create -f "$WORK/vip.yaml"
VIP=
deadline=$((SECONDS + 120))
while [ $SECONDS -le $deadline ]; do VIP=$(wl_of vip 2>/dev/null) && [ -n "$VIP" ] && break; sleep 0.1; done
eventually "it reserves quota" "^True 1000$" \
  kh get workload "$VIP" -o 'jsonpath={.status.conditions[?(@.type=="QuotaReserved")].status} {.spec.priority}'
step "two low-priority workloads were preempted" "^2$" sh -c \
  "kubectl --kubeconfig '$H' get workloads -o jsonpath='{range .items[*]}{.status.conditions[?(@.type==\"Evicted\")].reason}{\"\n\"}{end}' | grep -c '^Preempted$'"
eventually "quota is not over-committed: a1, one low job and vip hold 4 cpu" "^3 4$" \
  kh get clusterqueue cq -o 'jsonpath={.status.reservingWorkloads} {.status.flavorsReservation[0].resources[0].total}'

for i in $(seq 10); do job t$i ten 1 >>"$WORK/ten.yaml"; echo "---" >>"$WORK/ten.yaml"; done
step "create 10 Jobs for a 3-cpu ClusterQueue" "job.batch/t10 created" kh create -f "$WORK/ten.yaml"
step "sampled while admitting: cq10 never reserves more than 3 cpu" "^ok$" sh -c \
  "for i in \$(seq 15); do t=\$(kubectl --kubeconfig '$H' get clusterqueue cq10 -o jsonpath='{.status.flavorsReservation[0].resources[0].total}'); case \"\$t\" in ''|0|1|2|3) ;; *) echo \"over: \$t\"; exit 0;; esac; done; echo ok"
eventually "3 admitted, 7 pending" "^3 3 7 3$" \
  kh get clusterqueue cq10 -o 'jsonpath={.status.reservingWorkloads} {.status.admittedWorkloads} {.status.pendingWorkloads} {.status.flavorsReservation[0].resources[0].total}'
step "exactly 3 Workloads hold QuotaReserved=True" "^3$" sh -c \
  "kubectl --kubeconfig '$H' get workloads -n ten -o jsonpath='{range .items[*]}{.status.conditions[?(@.type==\"QuotaReserved\")].status}{\"\n\"}{end}' | grep -c '^True$'"
step "never more than 3 unsuspended Jobs" "^3$" sh -c \
  "kubectl --kubeconfig '$H' get jobs -n ten -o jsonpath='{range .items[*]}{.spec.suspend}{\"\n\"}{end}' | grep -c '^false$'"
step "LocalQueue status counts" "^7 3$" \
  kh get localqueue lq -n ten -o 'jsonpath={.status.pendingWorkloads} {.status.admittedWorkloads}'
RUNNING=$(kh get jobs -n ten -o 'jsonpath={range .items[?(@.spec.suspend==false)]}{.metadata.name}{"\n"}{end}' | head -n 1)
[ -n "$RUNNING" ] || die "no running job in namespace ten"
step "a running Job completes (status written by the worker side)" "patched" \
  kh patch job "$RUNNING" -n ten --subresource=status --type=merge \
  -p '{"status":{"conditions":[{"type":"Complete","status":"True","reason":"CompletionsReached"}]}}'
eventually "its Workload is Finished" "^True Succeeded$" sh -c \
  "kubectl --kubeconfig '$H' get workload \$(uid=\$(kubectl --kubeconfig '$H' get job $RUNNING -n ten -o jsonpath='{.metadata.uid}'); kubectl --kubeconfig '$H' get workloads -n ten -l kueue.x-k8s.io/job-uid=\$uid -o jsonpath='{.items[0].metadata.name}') -n ten -o jsonpath='{.status.conditions[?(@.type==\"Finished\")].status} {.status.conditions[?(@.type==\"Finished\")].reason}'"
eventually "the quota goes to the next one: 3 reserving, 6 pending" "^3 6 3$" \
  kh get clusterqueue cq10 -o 'jsonpath={.status.reservingWorkloads} {.status.pendingWorkloads} {.status.flavorsReservation[0].resources[0].total}'
step "deleting a Job deletes its Workload" "deleted" kh delete job a1
eventually "Workload of a1 garbage-collected" "^$" sh -c \
  "kubectl --kubeconfig '$H' get workloads -o name | grep '/job-a1-' || true"
echo "all $STEP steps passed"
