#!/usr/bin/env bash
# Chaos suite (issue 11): nothing lost, nothing run twice under faults and
# restarts. A hub devhub emulating Kueue (--kueue, --data: it keeps its state
# across a restart) and two workers running jobs (--run-jobs, time-scaled;
# cluster1: 2 nodes of 8 CPUs / 64Gi, cluster2: 2 nodes of 16 CPUs / 32Gi), all
# on 127.0.0.1 with free ports; `kueue-ks run` registers both workers.
# Under faults on all three from the operator's first start (10 % of writes
# fail with 409/429/500, mixed; every watch is cut after 2 s):
#   - 200 Jobs (one pod each, 2-20 s; 80 % of 1 CPU, 10 % of 12 CPUs that only
#     cluster2 can run, 10 % of 48Gi that only cluster1 can run) are created
#     2.5 a second (test/e2e/lib/chaos_create.py), starting before the
#     operator's first start;
#   - the operator is SIGKILLed 10 times, 5-15 s apart (random), and
#     restarted at once;
#   - once, between two kills, the hub is SIGKILLed and restarted on the same
#     port and data file;
#   - once, between two kills, one worker that holds running copies is paused
#     (requests held, as in a partition) until the operator has declared it
#     lost (--worker-lost-timeout 5s), then resumed; no kill happens while it
#     is paused (a restart would start the timeout again).
# Then faults off and a bounded wait until every hub Job is Complete and no
# job has copies on two workers. The audit (test/e2e/lib/chaos_audit.py)
# replays every change the devhubs recorded since the start (watch from
# resourceVersion 1; compaction is off), so it sees every copy and every pod
# that ever existed, and after every pod change checks each node against its
# allocatable with its own arithmetic from the raw pod specs (an oracle the
# devhub's simulators, which share pkg/podres and pkg/sched, do not share).
# Prints one line:
#   chaos: jobs=200 complete=N lost=N duplicates=N over_capacity=N kills=10 hub_restarts=1 worker_losses=1 seconds=S
# and fails unless every job is Complete, lost=0, duplicates=0, over_capacity=0, the fault plan
# ran in full and the operator never exited on its own (it must also exit 0
# on the final SIGTERM). The random choices (the plan, the jobs, the devhubs'
# --fault-seed) come from CHAOS_SEED (printed; set it to replay them; the
# timing on a busy machine, and so which request meets which failure, varies).
# CHAOS_KEEP=1 keeps the work directory (logs, change logs).
# Skipped (exit 77) when the devhub binary, kubectl, jq, python3 or
# python3-yaml is missing.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${KUEUE_KS_BIN:-$ROOT/bin/kueue-ks}
DEVHUB=${DEVHUB_BIN:-$ROOT/bin/kueue-ks-devhub}
[ -x "$BIN" ] || { echo "FAIL: $BIN not built"; exit 1; }
[ -x "$DEVHUB" ] || { echo "SKIP: $DEVHUB not built"; exit 77; }
for t in kubectl jq python3; do
  command -v $t >/dev/null || { echo "SKIP: $t not installed"; exit 77; }
done
python3 -c 'import yaml' 2>/dev/null || { echo "SKIP: python3-yaml not installed"; exit 77; }

JOBS=${CHAOS_JOBS:-200}
KILLS=10
LOST_TIMEOUT=5
SEED=${CHAOS_SEED:-$(((RANDOM << 15 | RANDOM) % 1000000))}
RANDOM=$SEED
T0=$SECONDS
echo "chaos: seed $SEED (CHAOS_SEED=$SEED replays the plan)" >&2

WORK=$(mktemp -d /tmp/chaos-e2e-XXXXXX)
PIDS=() # hub cluster1 cluster2 (index 0 is replaced when the hub restarts)
OP=
CREATOR=
cleanup() {
  [ -n "$CREATOR" ] && kill "$CREATOR" 2>/dev/null
  [ -n "$OP" ] && kill "$OP" 2>/dev/null
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}" $OP $CREATOR; do wait "$p" 2>/dev/null; done
  if [ "${CHAOS_KEEP:-0}" = 1 ]; then echo "chaos: kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
# shellcheck source=test/e2e/lib/workload_harness.sh
. "$ROOT/test/e2e/lib/workload_harness.sh"
say() { echo "chaos: +$((SECONDS - T0))s $*" >&2; }
# kubectl with a bound: a paused devhub holds requests (nothing here asks a paused one; 60 s
# leaves a loaded machine room, and a failed look is retried or fails the run)
kt() { local c=$1; shift; kubectl --kubeconfig "$WORK/$c.kc" --request-timeout=60s "$@"; }
faults() { # CLUSTER JSON
  echo "$2" | kt "$1" replace --raw /devhub/faults -f - >/dev/null
}

# ---- set-up ---------------------------------------------------------------------
# Two shapes of worker, so that some jobs fit one worker only: a placement
# made from an incomplete view of the workers would reject them.
NODES1='2x cpu=8,memory=64Gi;labels=instance=spot'
NODES2='2x cpu=16,memory=32Gi;labels=instance=spot'
NOCOMPACT=(--compact-keep 1000000000) # the audit replays every change
start_devhub hub --kueue --data "$WORK/hub.db" "${NOCOMPACT[@]}" --fault-seed $((SEED * 4))
HUB_PORT=$(sed -n 's#.*server: https://127.0.0.1:\([0-9]*\).*#\1#p' "$WORK/hub.kc" | head -1)
[ -n "$HUB_PORT" ] || die "no hub port in $WORK/hub.kc"
start_devhub cluster1 --run-jobs --time-scale "$SCALE" --nodes "$NODES1" "${NOCOMPACT[@]}" \
  --fault-seed $((SEED * 4 + 1))
start_devhub cluster2 --run-jobs --time-scale "$SCALE" --nodes "$NODES2" "${NOCOMPACT[@]}" \
  --fault-seed $((SEED * 4 + 2))
cat <<'YAML' | k hub apply -f - >/dev/null || die "setup objects not applied"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: spot
spec:
  nodeLabels:
    instance: spot
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata:
  name: kubestellar-admc
spec:
  controllerName: kubestellar.io/ks-kueue
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: cluster-queue-ks
spec:
  namespaceSelector: {}
  admissionChecksStrategy:
    admissionChecks:
    - name: kubestellar-admc
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: spot
      resources:
      - name: cpu
        nominalQuota: "48"
      - name: memory
        nominalQuota: 192Gi
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: user-queue-ks
  namespace: default
spec:
  clusterQueue: cluster-queue-ks
YAML

OP_STARTS=0
start_op() {
  OP_STARTS=$((OP_STARTS + 1))
  echo "---- operator start $OP_STARTS" >>"$WORK/op.log"
  "$BIN" run --kubeconfig "$WORK/hub.kc" --metrics-bind-address 0 \
    --health-probe-bind-address 127.0.0.1:0 --worker "cluster1=$WORK/cluster1.kc" \
    --worker "cluster2=$WORK/cluster2.kc" --worker-lost-timeout ${LOST_TIMEOUT}s --v 1 \
    >>"$WORK/op.log" 2>&1 &
  OP=$!
}
SELF_EXITS=0
kill_op() { # the operator must still be running: it never exits on its own
  if ! kill -0 "$OP" 2>/dev/null; then
    wait "$OP"
    say "the operator exited on its own (exit $?)"
    SELF_EXITS=$((SELF_EXITS + 1))
  else
    kill -9 "$OP"
    wait "$OP" 2>/dev/null
  fi
  OP=
}

# ---- the plan ---------------------------------------------------------------------
GAPS=()
for _ in $(seq $KILLS); do GAPS+=($((5 + RANDOM % 11))); done
HUB_AFTER=$((2 + RANDOM % 3))   # hub restart in the gap after this kill
PAUSE_AFTER=$((5 + RANDOM % 3)) # worker pause right after this kill
PAUSED=cluster$((1 + RANDOM % 2))
say "plan: kill gaps ${GAPS[*]} s; hub restart after kill $HUB_AFTER; $PAUSED paused after kill $PAUSE_AFTER"

# One pod each, run times 2-20 s (time-scaled: long ones are still running
# when their worker is declared lost). Sizes: 80 % 1 CPU / 100Mi (fit
# anywhere); 10 % 12 CPUs (cluster2's nodes only) and 10 % 48Gi (cluster1's
# nodes only), these 2-6 s (one at a time per node: long ones would make the
# drain slow).
for i in $(seq "$JOBS"); do
  case $((RANDOM % 10)) in
  0) size="$((20 + RANDOM % 41))s 12 100Mi" ;;
  1) size="$((20 + RANDOM % 41))s 1 48Gi" ;;
  *) size="$((20 + RANDOM % 181))s 1 100Mi" ;;
  esac
  printf 'chaos-%03d %s\n' "$i" "$size"
done >"$WORK/jobs.txt"

# faults from the start: the operator meets them from its first start on
FAULTS_ON='{"writeFailRate":0.1,"failCodes":[409,429,500],"cutWatchesEverySec":2}'
FAULTS_OFF='{"writeFailRate":0,"cutWatchesEverySec":0,"paused":false}'
for c in hub cluster1 cluster2; do faults $c "$FAULTS_ON" || die "faults not set on $c"; done
# jobs are coming in when the operator first starts: 2.5 a second, through
# injected failures and the hub restart
python3 "$ROOT/test/e2e/lib/chaos_create.py" "$WORK/hub.kc" 2.5 <"$WORK/jobs.txt" 2>>"$WORK/creator.log" &
CREATOR=$!
start_op
wait_until 60 "ClusterMetrics for both workers" jq_ok hub \
  '[.items[]|select(.status.nodeCount==2)]|length==2' clustermetrics
wait_until 60 "AdmissionCheck Active" jq_ok hub \
  '.status.conditions[]|select(.type=="Active")|.status=="True"' admissionchecks kubestellar-admc
say "set up: hub :$HUB_PORT, 2 workers, operator running"

restart_hub() {
  cp "$WORK/hub.kc" "$WORK/hub-before-restart.kc"
  kill -9 "${PIDS[0]}"
  wait "${PIDS[0]}" 2>/dev/null
  rm -f "$WORK/hub.kc"
  # same-port: the operator's hub kubeconfig names this port; it was free a moment ago
  "$DEVHUB" --listen "127.0.0.1:$HUB_PORT" --name hub --kubeconfig-out "$WORK/hub.kc" \
    --crds "$ROOT/devhub/crds" --crds "$ROOT/config/crd" --kueue --data "$WORK/hub.db" \
    "${NOCOMPACT[@]}" --fault-seed $((SEED * 4 + 3)) >>"$WORK/hub.log" 2>&1 &
  PIDS[0]=$!
  wait_until 120 "hub back on :$HUB_PORT" k hub get --raw /readyz
  faults hub "$FAULTS_ON" || die "faults not set on the restarted hub"
  HUB_RESTARTS=$((HUB_RESTARTS + 1))
  # the devhub keeps its CA and certificates with --data: a kubeconfig
  # written before the restart still works (the running operator holds one)
  kubectl --kubeconfig "$WORK/hub-before-restart.kc" --request-timeout=60s get --raw /version \
    >/dev/null 2>&1 || die "the kubeconfig written before the hub restart no longer works"
}
lost_declared() { # OFFSET: the operator logged a job's worker lost for the paused worker
  # since byte OFFSET of its log. It logs that line only once the Workload write that
  # records it went through (the check's message names the lost worker on the hub). Not a
  # watch of the hub's change log from the pause: under a load of 20-30 its replay did not
  # reach the line within the watch's 1 s (three of five concurrent runs failed so).
  tail -c +$(($1 + 1)) "$WORK/op.log" | grep -q "msg=\"job's worker lost\".*worker cluster $PAUSED lost"
}
has_running_copy() {
  kt "$PAUSED" get pods -n default -o json |
    jq -e '[.items[]|select(.status.phase=="Running")]|length>0'
}
pause_worker() {
  local t
  # pause only while the worker holds running copies: they are what the
  # operator must give up and place again
  wait_until 60 "running copies on $PAUSED" has_running_copy
  local off
  off=$(stat -c %s "$WORK/op.log")
  faults "$PAUSED" '{"paused":true}' || die "$PAUSED not paused"
  t=$SECONDS
  say "$PAUSED paused"
  local deadline=$((SECONDS + 90)) declared=0
  while [ $SECONDS -le $deadline ]; do
    if [ $((SECONDS - t)) -gt $LOST_TIMEOUT ] && lost_declared "$off"; then
      declared=1
      break
    fi
    sleep 0.5
  done
  faults "$PAUSED" '{"paused":false}' || die "$PAUSED not resumed"
  if [ $declared = 1 ]; then
    WORKER_LOSSES=$((WORKER_LOSSES + 1))
    say "$PAUSED resumed after $((SECONDS - t)) s: the operator declared it lost"
  else
    say "$PAUSED resumed after $((SECONDS - t)) s: NOT declared lost within 90 s"
  fi
}

# ---- chaos ------------------------------------------------------------------------
KILLS_DONE=0
HUB_RESTARTS=0
WORKER_LOSSES=0
for i in $(seq $KILLS); do
  gap=${GAPS[$((i - 1))]}
  if [ "$i" = $((HUB_AFTER + 1)) ]; then
    sleep "$((gap / 2))"
    say "hub SIGKILL and restart"
    restart_hub
    sleep "$((gap - gap / 2))"
  else
    sleep "$gap"
  fi
  kill_op
  start_op
  KILLS_DONE=$((KILLS_DONE + 1))
  say "operator kill $KILLS_DONE (gap $gap s)"
  [ "$i" = "$PAUSE_AFTER" ] && pause_worker
done

# ---- faults off, bounded wait -------------------------------------------------------
wait "$CREATOR"
rc=$?
CREATOR=
[ $rc = 0 ] || die "jobs not all created: $(tail -3 "$WORK/creator.log")"
say "all $JOBS jobs created; faults off"
for c in hub cluster1 cluster2; do faults $c "$FAULTS_OFF" || die "faults not cleared on $c"; done
n_complete() {
  kt hub get jobs -n default -o json | jq '[.items[]|select(.metadata.name|startswith("chaos-"))
    |select(any(.status.conditions[]?; .type=="Complete" and .status=="True"))]|length'
}
# until all are Complete, for at most 240 s, no longer than 120 s without one
# more (a Rejected job never completes), and leaving 60 s of the 10 minutes
# for the checks
deadline=$((SECONDS + 240))
[ $deadline -le $((T0 + 540)) ] || deadline=$((T0 + 540))
last=-1
while [ $SECONDS -le $deadline ]; do
  n=$(n_complete)
  [ "$n" = "$JOBS" ] && break
  [ "$n" != "$last" ] && last=$n && since=$SECONDS
  [ $((SECONDS - since)) -ge 120 ] && break
  sleep 1
done
say "$(n_complete) of $JOBS Complete"
# the copy left on the lost worker is removed once the operator sees it again
on_two() {
  for c in cluster1 cluster2; do kt $c get jobs -n default -o json | jq -r '.items[].metadata.name'; done |
    sort | uniq -d | grep -q .
}
# (a state: up to 120 s, within the 10 minutes' budget as above)
deadline=$((SECONDS + 120))
[ $deadline -le $((T0 + 550)) ] || deadline=$((T0 + 550))
while on_two && [ $SECONDS -le $deadline ]; do sleep 1; done

ALIVE=1
kill -0 "$OP" 2>/dev/null || ALIVE=0
kill "$OP" 2>/dev/null
wait "$OP"
OP_RC=$?
OP=
if [ $ALIVE = 0 ]; then
  say "the operator exited on its own (exit $OP_RC)"
  SELF_EXITS=$((SELF_EXITS + 1))
elif [ $OP_RC != 0 ]; then
  say "the operator exited $OP_RC on SIGTERM"
  SELF_EXITS=$((SELF_EXITS + 1))
fi

# ---- audit ----------------------------------------------------------------------------
A=$WORK/audit
mkdir -p "$A"
replay() { # CLUSTER PATH OUT: every change since the start, ended by the closing BOOKMARK
  kt "$1" get --raw "$2?watch=true&resourceVersion=1&allowWatchBookmarks=true&timeoutSeconds=3" >"$3"
}
for c in cluster1 cluster2; do
  [ "$(kt $c get --raw /devhub/stats | jq .compactedRV)" = 0 ] || die "$c compacted its change log"
  replay $c /apis/batch/v1/jobs "$A/$c-jobs.watch" || die "$c jobs not replayed"
  replay $c /api/v1/pods "$A/$c-pods.watch" || die "$c pods not replayed"
  replay $c /api/v1/nodes "$A/$c-nodes.watch" || die "$c nodes not replayed"
done
[ "$(kt hub get --raw /devhub/stats | jq .compactedRV)" = 0 ] || die "hub compacted its change log"
replay hub /apis/kueue.x-k8s.io/v1beta2/workloads "$A/hub-workloads.watch" || die "workloads not replayed"
kt hub get jobs -n default -o json >"$A/hub-jobs.json" || die "hub jobs not read"
res=$(python3 "$ROOT/test/e2e/lib/chaos_audit.py" "$A" "$JOBS" chaos- "$PAUSED" 2>"$A/findings.txt") ||
  die "audit failed: $(cat "$A/findings.txt")"
sed 's/^/chaos: /' "$A/findings.txt" >&2
# "complete=N lost=N duplicates=N relaunched=N over_capacity=N"
read -r complete lost duplicates relaunched over < <(sed -E 's/[a-z_]+=//g' <<<"$res")
say "relaunched after the worker loss: $relaunched; operator self-exits: $SELF_EXITS; operator starts: $OP_STARTS"
echo "chaos: jobs=$JOBS complete=$complete lost=$lost duplicates=$duplicates over_capacity=$over kills=$KILLS_DONE" \
  "hub_restarts=$HUB_RESTARTS worker_losses=$WORKER_LOSSES seconds=$((SECONDS - T0))"
ok=1
[ "$complete" = "$JOBS" ] && [ "$lost" = 0 ] && [ "$duplicates" = 0 ] && [ "$over" = 0 ] || ok=0
[ "$KILLS_DONE" = $KILLS ] && [ "$HUB_RESTARTS" = 1 ] && [ "$WORKER_LOSSES" = 1 ] || ok=0
[ "$SELF_EXITS" = 0 ] || ok=0
if [ $ok = 0 ]; then
  for f in hub cluster1 cluster2 op; do
    echo "---- $f log (tail):"
    tail -15 "$WORK/$f.log" 2>/dev/null
  done
  # the whole logs, where CI keeps the test logs
  mkdir -p "$ROOT/build/test-logs/e2e/chaos-work" &&
    cp "$WORK"/*.log "$ROOT/build/test-logs/e2e/chaos-work/" 2>/dev/null &&
    echo "chaos: whole logs in build/test-logs/e2e/chaos-work/" >&2
  exit 1
fi
