# Shared harness of the workload e2e scripts (sourced, not run): devhub start,
# kubectl per cluster, waits, JSON checks and worker-copy counting. The sourcing
# script sets ROOT, DEVHUB, WORK, PIDS and OP first.
# shellcheck shell=bash disable=SC2034
STEP=0
SCALE=0.1 # devhub --time-scale: "20s" runs 2 s

pass() { echo "ok   $STEP $1"; }
die() {
  echo "FAIL $STEP $1"
  [ -n "${2:-}" ] && echo "---- output:" && echo "$2" | head -40
  for f in hub cluster1 cluster2 op; do
    echo "---- $f log (tail):"
    tail -25 "$WORK/$f.log" 2>/dev/null
  done
  exit 1
}
next() { STEP=$1; }

# The hub objects of examples/setup/, with the ClusterQueue's quota fixed to what the
# workers hold (16 cpu, 64Gi, 4 gpus on h100) instead of managed by kueue-ks, and without
# preemption, so the scenarios see one quota from the start.
apply_setup() {
  k hub apply -f "$ROOT/examples/setup/" >/dev/null &&
    k hub label clusterqueue cluster-queue-ks kueue-ks.io/managed-quota- >/dev/null &&
    k hub patch clusterqueue cluster-queue-ks --type merge -p '{"spec":{"preemption":null,
      "resourceGroups":[{"coveredResources":["cpu","memory","nvidia.com/gpu"],"flavors":[
        {"name":"spot","resources":[{"name":"cpu","nominalQuota":"16"},
          {"name":"memory","nominalQuota":"64Gi"},{"name":"nvidia.com/gpu","nominalQuota":"0"}]},
        {"name":"h100","resources":[{"name":"cpu","nominalQuota":"16"},
          {"name":"memory","nominalQuota":"64Gi"},{"name":"nvidia.com/gpu","nominalQuota":"4"}]}]}]}}' \
      >/dev/null
}

start_devhub() { # NAME flags...
  local name=$1
  shift
  "$DEVHUB" --listen 127.0.0.1:0 --name "$name" --kubeconfig-out "$WORK/$name.kc" \
    --crds "$ROOT/devhub/crds" --crds "$ROOT/config/crd" "$@" >"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  # a state, not an instant: up to 120 s (a loaded machine starts it slowly), failing only then
  local deadline=$((SECONDS + 120))
  while [ $SECONDS -le $deadline ]; do
    [ -s "$WORK/$name.kc" ] && kubectl --kubeconfig "$WORK/$name.kc" get --raw /readyz \
      >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  die "devhub $name did not start within 120 s"
}
k() { # CLUSTER kubectl-args...
  local c=$1
  shift
  kubectl --kubeconfig "$WORK/$c.kc" "$@"
}
# wait_until SECONDS DESCRIPTION COMMAND...: until COMMAND succeeds. SECONDS is a safety
# deadline against a hang, not a bound the state must meet: give it room for a loaded machine
# (the scripts use 60 s or more).
wait_until() {
  local t=$1 what=$2
  shift 2
  local deadline=$((SECONDS + t))
  while [ $SECONDS -le $deadline ]; do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  die "timed out ($t s) waiting for: $what" "$("$@" 2>&1)"
}
# jq_ok CLUSTER JQ-EXPR kubectl-get-args...: the JSON satisfies the expression. False when the
# get fails (e.g. NotFound): jq -e on no input exits 0, which made a wait on an object that
# did not exist yet pass at once.
jq_ok() {
  local c=$1 expr=$2 out
  shift 2
  out=$(k "$c" get "$@" -o json) || return 1
  jq -e "$expr" <<<"$out"
}
# copies NAME [NS]: how many worker copies named NAME, per worker, "n1 n2".
copies_on() { # CLUSTER NAME [NS]: how many copies named NAME the worker holds
  k "$1" get jobs -n "${3:-default}" -o json | jq --arg n "$2" '[.items[]|select(.metadata.name==$n)]|length'
}
copies() {
  local a b
  a=$(copies_on cluster1 "$@")
  b=$(copies_on cluster2 "$@")
  echo "$a $b"
}
# hub_job_complete NAME: the hub Job NAME (namespace default) is Complete.
hub_job_complete() { jq_ok hub '[.status.conditions[]?|select(.type=="Complete" and .status=="True")]|length==1' job "$1" -n default; }
one_copy() { local c; c=$(copies "$@"); [ "$c" = "1 0" ] || [ "$c" = "0 1" ]; }
copies_are() { [ "$(copies "$1")" = "$2" ]; } # NAME "n1 n2": copies NAME (namespace default) prints that
no_copy() { [ "$(copies "$@")" = "0 0" ]; }
# rejected_msg JOB [NS]: the message our check rejected hub job JOB's Workload with, or nothing.
# Real Kueue (v0.15) deactivates such a Workload and resets the check to Pending ("Reset to
# Pending after eviction. Previously: Rejected"), so the durable record is the Workload's
# Evicted condition (DeactivatedDueToAdmissionCheck) plus our Warning NoClusterFits Event on
# the job; the Rejected entry itself is seen only while it lasts.
rejected_msg() {
  local ns=${2:-default} w
  w=$(k hub get workloads -n "$ns" -o json |
    jq -c --arg n "$1" '[.items[]|select(.metadata.ownerReferences[0].name==$n)][0] // empty')
  [ -n "$w" ] || return 1
  local m
  m=$(jq -r '.status.admissionChecks[]?|select(.name=="kubestellar-admc" and .state=="Rejected")|.message' <<<"$w")
  if [ -z "$m" ]; then
    jq -e '(.spec.active==false) and ([.status.conditions[]?|select(.type=="Evicted" and .status=="True" and .reason=="DeactivatedDueToAdmissionCheck")]|length==1) and ([.status.admissionChecks[]?|select(.name=="kubestellar-admc" and (.message|test("Previously: Rejected")))]|length==1)' <<<"$w" >/dev/null || return 1
    m=$(k hub get events -n "$ns" -o json | jq -r --arg n "$1" \
      '[.items[]|select(.involvedObject.kind=="Job" and .involvedObject.name==$n and .reason=="NoClusterFits" and .type=="Warning")]|last|.message // empty')
  fi
  [ -n "$m" ] || return 1
  echo "$m"
}
# rejected_with JOB REGEX [NS]: our check rejected JOB with a message matching REGEX.
rejected_with() { local m; m=$(rejected_msg "$1" "${3:-default}") && grep -Eq -- "$2" <<<"$m"; }
