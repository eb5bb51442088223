# Shared harness of the real-stack e2e scripts test/e2e/real_*.sh (sourced, not run): starts
# scripts/realstack/stack.sh in a temporary directory (real kube-apiservers, controller
# managers, schedulers, the Kueue manager on the hub, kwok on the workers, then kueue-ks),
# stops it on exit, and reuses the workload harness (k, wait_until, jq_ok, copies...) on it.
# The sourcing script sets ROOT first. Without built components: exit 77 (skip), or a failure
# under CI.
# shellcheck shell=bash disable=SC2034
REALBIN=$ROOT/build/realstack/bin
if ! "$ROOT/scripts/realstack/build.sh" --check; then
  if [ -n "${CI:-}" ]; then
    echo "FAIL: real-stack components not built (scripts/realstack/build.sh)"
    exit 1
  fi
  echo "SKIP: real-stack components not built: run scripts/realstack/build.sh"
  exit 77
fi
[ -x "$ROOT/bin/kueue-ks" ] || { echo "FAIL: $ROOT/bin/kueue-ks not built"; exit 1; }
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }
export PATH=$REALBIN:$PATH # the pinned kubectl, not the machine's

WORK=$(mktemp -d /tmp/real-e2e-XXXXXX)
export REAL_DIR=$WORK
PIDS=()
OP=
real_cleanup() {
  "$ROOT/scripts/realstack/stack.sh" down >/dev/null 2>&1
  [ -n "${KKS_KEEP:-}" ] || rm -rf "$WORK" # KKS_KEEP=1: keep the logs
}
trap real_cleanup EXIT
# shellcheck source=test/e2e/lib/workload_harness.sh
. "$ROOT/test/e2e/lib/workload_harness.sh"

# real_up [stack.sh up args...]: the whole stack; logs named as the workload harness reads them.
real_up() {
  local t0=$SECONDS
  "$ROOT/scripts/realstack/stack.sh" up "$@" >"$WORK/up.log" 2>&1 ||
    { cat "$WORK/up.log"; tail -30 "$WORK"/*.log; echo "FAIL: real stack did not start"; exit 1; }
  for c in hub cluster1 cluster2; do ln -sf "$WORK/$c.kubeconfig" "$WORK/$c.kc"; done
  ln -sf "$WORK/hub-kueue.log" "$WORK/hub.log"
  ln -sf "$WORK/cluster1-kwok.log" "$WORK/cluster1.log"
  ln -sf "$WORK/cluster2-kwok.log" "$WORK/cluster2.log"
  ln -sf "$WORK/kueue-ks.log" "$WORK/op.log"
  echo "real stack up in $((SECONDS - t0)) s"
}

# The Workload of hub job NAME in NS: "name uid" lines (one line when Kueue kept one Workload).
wl_uids() { # NAME [NS]
  k hub get workloads -n "${2:-default}" -o json |
    jq -r --arg n "$1" '.items[]|select(.metadata.ownerReferences[]?.name==$n)|"\(.metadata.name) \(.metadata.uid)"'
}

rjob() { # NAME CPU DURATION [NS]; GPU=n per pod, PAR=n pods (1), PRIO=class
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  namespace: ${4:-default}
  labels:
    kueue.x-k8s.io/queue-name: user-queue-ks${PRIO:+
    kueue.x-k8s.io/priority-class: $PRIO}
spec:
  parallelism: ${PAR:-1}
  completions: ${PAR:-1}
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: sleep
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
complete_on() { # CLUSTER NAME [NS]
  jq_ok "$1" '[.status.conditions[]?|select(.type=="Complete" and .status=="True")]|length==1' \
    job "$2" -n "${3:-default}"
}
wl_cond() { # NAME NS TYPE: the Workload's condition status
  local w
  w=$(wl_uids "$1" "$2" | head -1 | cut -d' ' -f1)
  [ -n "$w" ] || return 0
  k hub get workload "$w" -n "$2" -o json | jq -r --arg t "$3" '.status.conditions[]?|select(.type==$t)|.status'
}
check_entry() { # NAME NS: "state message" of our admission check entry
  local w
  w=$(wl_uids "$1" "$2" | head -1 | cut -d' ' -f1)
  [ -n "$w" ] || return 0
  k hub get workload "$w" -n "$2" -o json |
    jq -r '.status.admissionChecks[]?|select(.name=="kubestellar-admc")|"\(.state) \(.message)"'
}
wl_finished() { [ "$(wl_cond "$1" "$2" Finished)" = True ]; }
