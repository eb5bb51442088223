#!/usr/bin/env bash
# make run / make dev-up / make dev-down.
#
# With KUBECONFIG set, `make run` runs the operator against that cluster.
# Without it, it starts the embedded hub (kueue-ks-devhub) and two simulated
# worker clusters on loopback, writes .dev/{hub,cluster1,cluster2}.kubeconfig,
# applies examples/setup/ when present, and runs `kueue-ks run` in the
# foreground; Ctrl-C stops everything it started. dev-up does the same in the
# background (operator log in .dev/kueue-ks.log); dev-down stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
DEV=.dev
HUB_PORT=${DEV_HUB_PORT:-16443}
C1_PORT=${DEV_CLUSTER1_PORT:-16444}
C2_PORT=${DEV_CLUSTER2_PORT:-16445}
HEALTH_ADDR=${DEV_HEALTH_ADDR:-127.0.0.1:18081}
METRICS_ADDR=${DEV_METRICS_ADDR:-127.0.0.1:18080}
cmd=${1:-run}
shift || true

log() { echo "dev: $*" >&2; }

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start_devhub() { # name port kubeconfig extra-args...
  local name=$1 port=$2 kc=$3
  shift 3
  if port_busy "$port"; then
    log "port $port is in use (another 'make dev-up'?): run 'make dev-down' or set DEV_*_PORT"
    return 1
  fi
  rm -f "$kc"
  bin/kueue-ks-devhub --listen "127.0.0.1:$port" --name "$name" --kubeconfig-out "$kc" \
    --crds devhub/crds --crds config/crd "$@" >"$DEV/$name.log" 2>&1 &
  echo $! >>"$DEV/pids"
  for _ in $(seq 1 100); do
    if [ -s "$kc" ] && kubectl --kubeconfig "$kc" get --raw /readyz >/dev/null 2>&1; then
      log "$name ready on https://127.0.0.1:$port ($kc)"
      return 0
    fi
    sleep 0.1
  done
  log "$name did not become ready; see $DEV/$name.log"
  return 1
}

stop_all() {
  [ -f "$DEV/pids" ] || return 0
  while read -r pid; do
    kill "$pid" 2>/dev/null || true
  done <"$DEV/pids"
  while read -r pid; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done <"$DEV/pids"
  rm -f "$DEV/pids"
}

start_env() {
  mkdir -p "$DEV"
  stop_all
  # The hub runs a job controller too (a real hub's kube-controller-manager):
  # it marks the jobs Kueue holds Suspended, as `kubectl get jobs` shows them.
  start_devhub hub "$HUB_PORT" "$DEV/hub.kubeconfig" --kueue --run-jobs
  start_devhub cluster1 "$C1_PORT" "$DEV/cluster1.kubeconfig" --run-jobs \
    --nodes '2x cpu=8,memory=32Gi;labels=instance=spot'
  start_devhub cluster2 "$C2_PORT" "$DEV/cluster2.kubeconfig" --run-jobs \
    --nodes '2x cpu=8,memory=32Gi,nvidia.com/gpu=2;labels=instance=h100'
  kubectl --kubeconfig "$DEV/hub.kubeconfig" apply -f examples/setup/ >/dev/null
  log "applied examples/setup/"
}

operator_args() {
  echo --kubeconfig "$DEV/hub.kubeconfig" --metrics-bind-address "$METRICS_ADDR" \
    --health-probe-bind-address "$HEALTH_ADDR" \
    --worker "cluster1=$DEV/cluster1.kubeconfig" --worker "cluster2=$DEV/cluster2.kubeconfig"
}

usage_hint() {
  cat >&2 <<MSG

  The embedded hub is up. In another terminal:
    export KUBECONFIG=$PWD/$DEV/hub.kubeconfig
    kubectl get nodes --kubeconfig $PWD/$DEV/cluster1.kubeconfig
    kubectl create -f examples/batch-job.yaml

MSG
}

case "$cmd" in
run)
  if [ -n "${KUBECONFIG:-}" ]; then
    exec bin/kueue-ks run "$@"
  fi
  trap stop_all EXIT
  trap 'exit 130' INT TERM
  start_env
  usage_hint
  # shellcheck disable=SC2046
  bin/kueue-ks run $(operator_args) "$@"
  ;;
up)
  start_env
  # shellcheck disable=SC2046
  bin/kueue-ks run $(operator_args) "$@" >"$DEV/kueue-ks.log" 2>&1 &
  echo $! >>"$DEV/pids"
  for _ in $(seq 1 100); do
    curl -sf "http://$HEALTH_ADDR/readyz" >/dev/null 2>&1 && break
    sleep 0.1
  done
  if ! curl -sf "http://$HEALTH_ADDR/readyz" >/dev/null 2>&1; then
    log "kueue-ks did not become ready; see $DEV/kueue-ks.log"
    stop_all
    exit 1
  fi
  log "kueue-ks running (log: $DEV/kueue-ks.log); stop with 'make dev-down'"
  usage_hint
  ;;
down)
  stop_all
  log "stopped"
  ;;
*)
  echo "usage: $0 run|up|down" >&2
  exit 2
  ;;
esac
