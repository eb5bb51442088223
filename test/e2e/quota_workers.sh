#!/usr/bin/env bash
# Quota end to end in direct mode, the way `make dev-up` runs it: a hub devhub
# (--kueue) with examples/setup/, two worker devhubs running jobs, and
# `kueue-ks run --worker ...`, whose in-process agents report ClusterMetrics.
#   a  the managed ClusterQueue's quotas equal the workers' sums per flavor
#   b  a job reserving 2 of h100's 16 cpu never lifts that quota above 16: its
#      reservation is added back only once the agent reports its pod
#      (managedResourceRequests), then the quota is 14 free + 2 = 16
#   c  a worker stops answering: its share leaves the quota after
#      --metrics-stale-after + --shrink-delay, but never below what running
#      work reserves, and the running job is neither evicted nor stopped;
#      when the worker answers again the quota comes back at once and the job
#      completes
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/bin/kueue-ks
DEVHUB=$ROOT/bin/kueue-ks-devhub
[ -x "$DEVHUB" ] || { echo "SKIP: $DEVHUB not built"; exit 77; }
command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 77; }
WORK=$(mktemp -d /tmp/quota-workers-XXXXXX)
PIDS=()
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT
fails=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAIL: $*"; fails=$((fails + 1)); }
k() { local c=$1; shift; kubectl --kubeconfig "$WORK/$c.kc" "$@"; }

start_devhub() { # NAME flags...
  local name=$1
  shift
  "$DEVHUB" --listen 127.0.0.1:0 --name "$name" --kubeconfig-out "$WORK/$name.kc" \
    --token "tok-$name" --crds "$ROOT/devhub/crds" --crds "$ROOT/config/crd" "$@" \
    >"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  local deadline=$((SECONDS + 120))
  while [ $SECONDS -le $deadline ]; do
    [ -s "$WORK/$name.kc" ] && k "$name" get --raw /readyz >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "devhub $name did not start within 120 s"
  exit 1
}
# faults CLUSTER JSON: set the devhub's fault injection (the admin endpoint answers while paused).
faults() {
  local server
  server=$(k "$1" config view --raw -o jsonpath='{.clusters[0].cluster.server}')
  k "$1" config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' |
    base64 -d >"$WORK/$1.ca"
  curl -sS --cacert "$WORK/$1.ca" -H "Authorization: Bearer tok-$1" -X PUT \
    "$server/devhub/faults" -d "$2" >/dev/null
}
quota() { # FLAVOR RESOURCE
  k hub get clusterqueue cluster-queue-ks -o jsonpath="{.spec.resourceGroups[0].flavors[?(@.name==\"$1\")].resources[?(@.name==\"$2\")].nominalQuota}"
}
expect_quota() { # WHAT FLAVOR RESOURCE WANT SECONDS (a safety deadline, not a bound to meet)
  local start=$SECONDS
  while [ $((SECONDS - start)) -le "$5" ]; do
    [ "$(quota "$2" "$3")" = "$4" ] && { ok "$1: $2/$3 = $4 after $((SECONDS - start))s"; return 0; }
    sleep 0.1
  done
  bad "$1: $2/$3 = '$(quota "$2" "$3")', want $4"
  return 1
}
wl_field() { # JSONPATH of the GPU job's Workload
  k hub get workloads -n default -o jsonpath="{.items[?(@.metadata.ownerReferences[0].name==\"gpu-long\")]$1}"
}

start_devhub hub --kueue --run-jobs
start_devhub cluster1 --run-jobs --time-scale 0.1 --nodes '2x cpu=8,memory=32Gi;labels=instance=spot'
start_devhub cluster2 --run-jobs --time-scale 0.1 \
  --nodes '2x cpu=8,memory=32Gi,nvidia.com/gpu=2;labels=instance=h100'
k hub apply -f "$ROOT/examples/setup/" >/dev/null
"$BIN" run --kubeconfig "$WORK/hub.kc" --worker "cluster1=$WORK/cluster1.kc" \
  --worker "cluster2=$WORK/cluster2.kc" --metrics-bind-address 0 \
  --health-probe-bind-address 0 --metrics-stale-after 25s --shrink-delay 2s \
  >"$WORK/op.log" 2>&1 &
PIDS+=($!)

echo "step: (a) quotas equal the workers' sums per flavor"
expect_quota "initial" spot cpu 16 120
expect_quota "initial" spot memory 64Gi 120
expect_quota "initial" spot nvidia.com/gpu 0 120
expect_quota "initial" h100 cpu 16 120
expect_quota "initial" h100 memory 64Gi 120
expect_quota "initial" h100 nvidia.com/gpu 4 120

echo "step: a GPU job runs on cluster2 (600s of simulated time = 60 s)"
cat >"$WORK/gpu.yaml" <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: gpu-long
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: user-queue-ks
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: sleep
        args: ["600s"]
        resources:
          requests: {cpu: "2", memory: 1Gi, nvidia.com/gpu: "1"}
          limits: {nvidia.com/gpu: "1"}
YAML
k hub create -f "$WORK/gpu.yaml" >/dev/null
# The h100 cpu quota is sampled from the reservation on: it must never exceed
# 16 (the reservation is added back only once the agent reports its pod).
h100_max=0
sample_h100() {
  local v
  v=$(quota h100 cpu)
  case $v in *m) v=${v%m} ;; '') v=0 ;; *) v=$((v * 1000)) ;; esac
  [ "$v" -gt "$h100_max" ] && h100_max=$v
}
deadline=$((SECONDS + 120))
while [ $SECONDS -le $deadline ]; do
  sample_h100
  [ "$(k cluster2 get pods -n default -o jsonpath='{.items[*].status.phase}' 2>/dev/null)" = Running ] && break
  sleep 0.1
done
if [ "$(k cluster2 get pods -n default -o jsonpath='{.items[*].status.phase}')" = Running ]; then
  ok "running on cluster2"
else bad "job not running on cluster2"; fi
managed=""
deadline=$((SECONDS + 120))
while [ $SECONDS -le $deadline ]; do
  sample_h100
  managed=$(k hub get clustermetrics cluster2 -o jsonpath='{.status.nodes[*].managedResourceRequests.cpu}')
  [ "$managed" = 2 ] && break
  sleep 0.1
done
if [ "$managed" = 2 ]; then ok "cluster2's ClusterMetrics count the job's pod as hub work (cpu 2)"
else bad "cluster2 managedResourceRequests cpu = '$managed', want 2"; fi
sample_h100
if [ "$h100_max" -le 16000 ]; then ok "h100 cpu quota never above 16 (max ${h100_max}m)"
else bad "h100 cpu quota overshot: max ${h100_max}m, want at most 16"; fi
expect_quota "job running" h100 cpu 16 120

echo "step: (c) cluster2 stops answering: quota drops after stale + shrink, floored by the reservation"
faults cluster2 '{"paused":true}'
t0=$SECONDS
# h100 keeps exactly what the running job reserves (cpu 2, memory 1Gi, gpu 1); spot is untouched.
expect_quota "cluster2 stale" h100 cpu 2 120
took=$((SECONDS - t0))
if [ $took -ge 5 ]; then ok "lowered after ${took}s, not before the stale window"
else bad "lowered after ${took}s: before --metrics-stale-after"; fi
expect_quota "cluster2 stale" h100 nvidia.com/gpu 1 120
expect_quota "cluster2 stale" h100 memory 1Gi 120
expect_quota "unaffected" spot cpu 16 1 # still 16 now (a look, not a wait)
if [ "$(wl_field '.status.conditions[?(@.type=="Evicted")].status')" != True ] &&
  [ "$(wl_field '.status.conditions[?(@.type=="QuotaReserved")].status')" = True ]; then
  ok "the running job's Workload keeps its quota (not evicted)"
else bad "Workload lost its reservation: $(wl_field '.status.conditions')"; fi

echo "step: cluster2 answers again: quota back at once, the job completes"
faults cluster2 '{"paused":false}'
expect_quota "cluster2 back" h100 nvidia.com/gpu 4 120
deadline=$((SECONDS + 180))
while [ $SECONDS -le $deadline ]; do
  [ "$(k hub get job gpu-long -o jsonpath='{.status.succeeded}')" = 1 ] && break
  sleep 0.1
done
if [ "$(k hub get job gpu-long -o jsonpath='{.status.succeeded}')" = 1 ]; then
  ok "job completed (hub status succeeded=1)"
else bad "job did not complete: $(k hub get job gpu-long -o jsonpath='{.status}')"; fi

if [ $fails -eq 0 ]; then echo "quota_workers: all steps passed"; exit 0; fi
echo "--- operator log"; tail -30 "$WORK/op.log"
echo "quota_workers: $fails step(s) failed"
exit 1
