#!/usr/bin/env bash
# Strict dashboard check (issue 6 item 4): every metric the Grafana dashboard
# queries (config/grafana/metrics.txt) is exported by a live `kueue-ks run`.
# A hub emulating Kueue (devhub --kueue) and two workers running jobs
# (--run-jobs, time-scaled); the operator registers both with --worker and
# manages the ClusterQueue's quota; one Job runs to completion. Then /metrics
# must carry at least one sample of every listed name, and the values must
# tell the story: placed_total for the job's worker is 1, both workers are up,
# one dispatch and one status-return latency observed, no rejection.
# Skipped (exit 77) when the devhub binary, kubectl, jq or curl is missing.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${KUEUE_KS_BIN:-$ROOT/bin/kueue-ks}
DEVHUB=${DEVHUB_BIN:-$ROOT/bin/kueue-ks-devhub}
LIST=$ROOT/config/grafana/metrics.txt
[ -x "$BIN" ] || { echo "FAIL: $BIN not built"; exit 1; }
[ -x "$DEVHUB" ] || { echo "SKIP: $DEVHUB not built"; exit 77; }
for t in kubectl jq curl; do
  command -v $t >/dev/null || { echo "SKIP: $t not installed"; exit 77; }
done

WORK=$(mktemp -d /tmp/metrics-e2e-XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# shellcheck source=test/e2e/lib/workload_harness.sh
. "$ROOT/test/e2e/lib/workload_harness.sh" # start_devhub, k, wait_until, die

start_devhub hub --kueue --run-jobs
start_devhub cluster1 --run-jobs --time-scale 0.1 --nodes '2x cpu=8,memory=32Gi;labels=instance=spot'
start_devhub cluster2 --run-jobs --time-scale 0.1 \
  --nodes '2x cpu=8,memory=32Gi,nvidia.com/gpu=2;labels=instance=h100'
apply_setup || die "setup objects not applied"
k hub label clusterqueue cluster-queue-ks kueue-ks.io/managed-quota=true >/dev/null ||
  die "cannot label the ClusterQueue"

T_OP=$SECONDS # a latency the operator observed is at most the time it has run
"$BIN" run --kubeconfig "$WORK/hub.kc" --metrics-bind-address 127.0.0.1:0 \
  --health-probe-bind-address 0 --worker "cluster1=$WORK/cluster1.kc" \
  --worker "cluster2=$WORK/cluster2.kc" >"$WORK/op.log" 2>&1 &
PIDS+=($!)
port=
deadline=$((SECONDS + 120))
while [ $SECONDS -le $deadline ]; do
  port=$(sed -n 's/.*serving metrics.* port=\([0-9][0-9]*\).*/\1/p' "$WORK/op.log" | head -1)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || die "kueue-ks run did not log its metrics port"
scrape() { curl -sS --max-time 30 "http://127.0.0.1:$port/metrics"; }

wait_until 120 "AdmissionCheck Active" bash -c "kubectl --kubeconfig '$WORK/hub.kc' get admissionchecks \
  kubestellar-admc -o json | jq -e '.status.conditions[]|select(.type==\"Active\")|.status==\"True\"'"
k hub create -f - >/dev/null <<'YAML' || die "job not created"
apiVersion: batch/v1
kind: Job
metadata:
  name: m1
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: user-queue-ks
spec:
  parallelism: 2
  completions: 2
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: busybox
        args: ["10s"]
        resources:
          requests:
            cpu: "1"
            memory: 100Mi
YAML
wait_until 120 "hub job m1 Complete" bash -c "kubectl --kubeconfig '$WORK/hub.kc' get job m1 -n default \
  -o json | jq -e '[.status.conditions[]?|select(.type==\"Complete\" and .status==\"True\")]|length==1'"
W=$(k hub get job m1 -n default -o jsonpath='{.metadata.labels.kubestellar\.io/cluster}')
[ -n "$W" ] || die "hub job m1 has no cluster label"
echo "ok   job m1 ran on $W and completed"

# sample NAME-WITH-LABELS: its value in the scrape (exact series), empty when absent.
sample() { awk -v s="$1" '$1==s {print $2}' <<<"$out"; }
# Every listed name has a sample (the quota controller refreshes the metrics age every 5 s).
missing_names() {
  out=$(scrape) || return 1
  local names
  names=$(grep -v '^#' <<<"$out" | sed -n 's/^\([a-zA-Z_:][a-zA-Z0-9_:]*\).*/\1/p' |
    sed -E 's/_(bucket|sum|count)$//' | sort -u)
  missing=$(grep -v '^[[:space:]]*$' "$LIST" | sort -u | comm -23 - <(echo "$names"))
  [ -z "$missing" ]
}
deadline=$((SECONDS + 120))
until missing_names; do
  [ $SECONDS -gt $deadline ] && die "dashboard metrics not exported: $(echo "$missing" | tr '\n' ' ')" "$out"
  sleep 0.5
done
echo "ok   every one of the $(grep -cv '^[[:space:]]*$' "$LIST") dashboard metrics is exported"

check() { # DESC SERIES WANT
  local got
  got=$(sample "$2")
  [ "$got" = "$3" ] || die "$1: $2 = '$got', want '$3'" "$(grep kueue_ks_ <<<"$out")"
}
check "placed on the job's worker" "kueue_ks_workloads_placed_total{cluster=\"$W\"}" 1
check "worker cluster1 up" 'kueue_ks_worker_up{cluster="cluster1"}' 1
check "worker cluster2 up" 'kueue_ks_worker_up{cluster="cluster2"}' 1
check "one dispatch observed" kueue_ks_dispatch_latency_seconds_count 1
check "one status return observed" kueue_ks_status_return_latency_seconds_count 1
check "nothing rejected" kueue_ks_workloads_rejected_total 0
check "nothing evicted from $W" "kueue_ks_workloads_evicted_total{cluster=\"$W\"}" 0
q=$(sample 'kueue_ks_quota{cluster_queue="cluster-queue-ks",flavor="spot",resource="cpu"}')
awk -v q="$q" 'BEGIN{exit !(q > 0)}' || die "spot cpu quota of cluster-queue-ks is '$q', want > 0" "$out"
[ -n "$(sample 'kueue_ks_workqueue_depth{controller="quota"}')" ] || die "no quota workqueue depth" "$out"
[ -n "$(sample 'kueue_ks_workqueue_depth{controller="workload"}')" ] || die "no workload workqueue depth" "$out"
[ -n "$(sample 'kueue_ks_reconcile_errors_total{controller="workload"}')" ] || die "no workload error count" "$out"
d=$(sample kueue_ks_dispatch_latency_seconds_sum)
# in seconds, and no more than the operator has run (a bound of the run, not a speed target)
ran=$((SECONDS - T_OP + 1))
awk -v d="$d" -v r="$ran" 'BEGIN{exit !(d > 0 && d <= r)}' ||
  die "dispatch latency sum $d s not in (0, $ran] (the operator has run $ran s)" "$out"
echo "ok   placed{$W}=1, both workers up, 1 dispatch ($d s), 1 status return, 0 rejected"
