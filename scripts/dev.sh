#!/usr/bin/env bash
# make run / make dev-up / make dev-down.
#
# With KUBECONFIG set, `make run` runs the operator against that cluster.
# Without it, it starts the embedded hub (kueue-ks-devhub) and two simulated
# worker clusters on loopback, writes .dev/{hub,cluster1,cluster2}.kubeconfig,
# applies examples/setup/ when present, and runs `kueue-ks run` in the
# foreground; Ctrl-C stops everything it started (exit 0) and removes the
# kubeconfigs it wrote. dev-up does the same in the background (operator log
# in .dev/kueue-ks.log); dev-down stops it. Both end with a READY block: what
# runs where and the next commands. `--data` (dev-up/run) keeps the hub's
# objects in .dev/hub.db across restarts; without it a restart starts empty.
# While a `make run` runs (.dev/run.pid), another run or dev-up refuses instead of
# stopping it from behind.
# DEV_DIR moves .dev (the e2e tests use a temporary one).
set -euo pipefail
cd "$(dirname "$0")/.."
DEV=${DEV_DIR:-.dev}
HUB_PORT=${DEV_HUB_PORT:-16443}
C1_PORT=${DEV_CLUSTER1_PORT:-16444}
C2_PORT=${DEV_CLUSTER2_PORT:-16445}
HEALTH_ADDR=${DEV_HEALTH_ADDR:-127.0.0.1:18081}
METRICS_ADDR=${DEV_METRICS_ADDR:-127.0.0.1:18080}
cmd=${1:-run}
shift || true
KEEP_DATA=0
OP_ARGS=()
for a in "$@"; do
  if [ "$a" = --data ]; then KEEP_DATA=1; else OP_ARGS+=("$a"); fi
done

log() { echo "dev: $*" >&2; }
# The previous run's log becomes <log>.1: a restart (dev-up ARGS=--data) keeps the log of the
# run being debugged.
keep_prev_log() { if [ -s "$1" ]; then mv -f "$1" "$1.1"; fi; }

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# The port a devhub's kubeconfig names: the one it listens on (DEV_*_PORT=0 lets it pick a free
# one; the kubeconfig is written, by rename, once it listens).
kc_port() { sed -n 's#.*server: https://127.0.0.1:\([0-9]*\).*#\1#p' "$1" | head -1; }

start_devhub() { # name port kubeconfig extra-args...
  local name=$1 port=$2 kc=$3
  shift 3
  if [ "$port" != 0 ] && port_busy "$port"; then
    log "port $port is in use (another 'make dev-up'?): run 'make dev-down' or set DEV_*_PORT"
    return 1
  fi
  rm -f "$kc"
  keep_prev_log "$DEV/$name.log"
  # same-port: the user's DEV_*_PORT (stable addresses for a dev environment); 0 picks one
  bin/kueue-ks-devhub --listen "127.0.0.1:$port" --name "$name" --kubeconfig-out "$kc" \
    --crds devhub/crds --crds config/crd "$@" >"$DEV/$name.log" 2>&1 &
  echo $! >>"$DEV/pids"
  for _ in $(seq 1 100); do
    if [ -s "$kc" ] && kubectl --kubeconfig "$kc" get --raw /readyz >/dev/null 2>&1; then
      log "$name ready on https://127.0.0.1:$(kc_port "$kc") ($kc)"
      return 0
    fi
    sleep 0.1
  done
  log "$name did not become ready; see $DEV/$name.log"
  return 1
}

# True when a dev environment started by this script is still running.
env_running() {
  [ -f "$DEV/pids" ] || return 1
  local pid
  while read -r pid; do
    kill -0 "$pid" 2>/dev/null && return 0
  done <"$DEV/pids"
  return 1
}

remove_kubeconfigs() {
  rm -f "$DEV/hub.kubeconfig" "$DEV/cluster1.kubeconfig" "$DEV/cluster2.kubeconfig"
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

# A `make run` holds the terminal it was started from: starting again elsewhere would stop it
# behind the user's back (its operator gets SIGTERM), so say where it runs instead.
foreground_run_elsewhere() {
  local pid
  pid=$(cat "$DEV/run.pid" 2>/dev/null) || return 1
  [ -n "$pid" ] && [ "$pid" != "$$" ] && kill -0 "$pid" 2>/dev/null
}

refuse_if_foreground_elsewhere() {
  mkdir -p "$DEV"
  foreground_run_elsewhere || return 0
  log "'make run' is running in another terminal (pid $(cat "$DEV/run.pid")): stop it there with Ctrl-C, or run 'make dev-down', then run this again"
  exit 1
}

# Take .dev/run.pid for this run: created only if absent (noclobber), so of two runs started
# at once one wins and the other refuses before it has set a trap that would stop anything.
claim_foreground() {
  mkdir -p "$DEV"
  foreground_run_elsewhere || rm -f "$DEV/run.pid" # a stale one: its run is gone
  if ! (set -o noclobber && echo $$ >"$DEV/run.pid") 2>/dev/null; then
    refuse_if_foreground_elsewhere
    echo $$ >"$DEV/run.pid"
  fi
}

release_foreground() {
  [ "$(cat "$DEV/run.pid" 2>/dev/null)" = "$$" ] && rm -f "$DEV/run.pid"
  return 0
}

start_env() {
  refuse_if_foreground_elsewhere
  local was running=0
  was=$(cat "$DEV/mode" 2>/dev/null || echo none)
  env_running && running=1
  if [ $running = 1 ]; then
    if [ "$KEEP_DATA" = 1 ] && [ "$was" = data ]; then
      log "restarting the running dev environment; the hub keeps its objects ($DEV/hub.db)"
    elif [ "$KEEP_DATA" = 1 ]; then
      log "restarting the running dev environment, started without --data: its jobs are lost"
    else
      log "restarting the running dev environment: its jobs are lost (ARGS=--data keeps them: make dev-up ARGS=--data)"
    fi
  fi
  # --data after a run without it: the saved objects are older than what ran last; say so
  if [ "$KEEP_DATA" = 1 ] && [ -s "$DEV/hub.db" ] && { [ $running = 0 ] || [ "$was" != data ]; }; then
    log "--data: the hub starts from the objects saved in $DEV/hub.db at $(date -r "$DEV/hub.db" '+%Y-%m-%d %H:%M:%S') (delete the file to start empty)"
  fi
  stop_all
  if [ "$KEEP_DATA" = 1 ]; then echo data >"$DEV/mode"; else echo nodata >"$DEV/mode"; fi
  # The hub runs a job controller too (a real hub's kube-controller-manager):
  # it marks the jobs Kueue holds Suspended, as `kubectl get jobs` shows them.
  local hub_extra=(--kueue --run-jobs)
  [ "$KEEP_DATA" = 1 ] && hub_extra+=(--data "$DEV/hub.db")
  start_devhub hub "$HUB_PORT" "$DEV/hub.kubeconfig" "${hub_extra[@]}"
  start_devhub cluster1 "$C1_PORT" "$DEV/cluster1.kubeconfig" --run-jobs \
    --nodes '2x cpu=8,memory=32Gi;labels=instance=spot'
  start_devhub cluster2 "$C2_PORT" "$DEV/cluster2.kubeconfig" --run-jobs \
    --nodes '2x cpu=8,memory=32Gi,nvidia.com/gpu=2;labels=instance=h100'
  HUB_PORT=$(kc_port "$DEV/hub.kubeconfig") C1_PORT=$(kc_port "$DEV/cluster1.kubeconfig")
  C2_PORT=$(kc_port "$DEV/cluster2.kubeconfig")
  kubectl --kubeconfig "$DEV/hub.kubeconfig" apply -f examples/setup/ >/dev/null
  log "applied examples/setup/"
}

operator_args() {
  echo --kubeconfig "$DEV/hub.kubeconfig" --metrics-bind-address "$METRICS_ADDR" \
    --health-probe-bind-address "$HEALTH_ADDR" \
    --worker "cluster1=$DEV/cluster1.kubeconfig" --worker "cluster2=$DEV/cluster2.kubeconfig"
}

# The READY block: printed last, after the start-up logs, so it stays on screen.
ready_block() { # how-to-stop
  local d
  d=$(cd "$DEV" && pwd)
  local hub=$d/hub.kubeconfig c1=$d/cluster1.kubeconfig c2=$d/cluster2.kubeconfig
  cat >&2 <<MSG

==================== kueue-ks dev environment: READY ====================
  hub       https://127.0.0.1:$HUB_PORT  (Kueue emulator)   kubeconfig $hub
  cluster1  https://127.0.0.1:$C1_PORT  2 nodes cpu=8 (spot)   kubeconfig $c1
  cluster2  https://127.0.0.1:$C2_PORT  2 nodes cpu=8 gpu=2 each (h100)   kubeconfig $c2
  operator  health http://$HEALTH_ADDR/readyz  metrics http://$METRICS_ADDR/metrics
  logs      $d/{hub,cluster1,cluster2}.log$2

  Next, in another terminal:
    export KUBECONFIG=$hub
    kubectl create -f examples/batch-job.yaml
    bin/kueue-ks status
    bin/kueue-ks explain job/NAME        # why a job runs where it does, or not
    kubectl --kubeconfig $c1 get jobs,pods -A     # the copies and pods on a worker
    kubectl --kubeconfig $c1 describe pod -n default POD
  (the workers simulate pods: there are no container logs; kubectl describe shows their state)

  $1
=========================================================================
MSG
}

# Wait (at most 10 s) for the quota controller's first write, so its line
# (examples/setup/'s quotas replaced by the workers' capacity) comes before the
# READY block, not under it, and the first job meets the real quotas.
# The operator's /readyz, by a deadline (60 s: its informers list three clusters, which on a
# loaded machine took more than the 10 s this loop used to allow), or until it exits.
wait_operator_ready() { # PID
  local deadline=$((SECONDS + 60))
  while [ $SECONDS -le $deadline ]; do
    curl -sf "http://$HEALTH_ADDR/readyz" >/dev/null 2>&1 && return 0
    kill -0 "$1" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

wait_quota() {
  [ -d examples/setup ] || return 0
  local kc=$DEV/hub.kubeconfig
  for _ in $(seq 1 100); do
    if [ -n "$(kubectl --kubeconfig "$kc" get clusterqueues -o jsonpath='{.items[*].metadata.annotations.kueue-ks\.io/quota-source}' 2>/dev/null)" ]; then
      sleep 0.3 # the write is seen; its log line follows the response
      return 0
    fi
    sleep 0.1
  done
}

# On a terminal, `make run` runs this script again as a job of its own (job control on: bash
# makes a foreground command its own process group and the terminal's foreground group), so
# Ctrl-C reaches that job alone: the INT trap stops everything and exits 0. Otherwise the
# terminal signals make as well, and make, interrupted, exits 130 however cleanly its recipe
# stopped. Without a terminal (scripts, CI) SIGINT to the process group does the same stop.
in_own_process_group() { # mode args...
  if [ -t 0 ] && [ -t 2 ] && [ -z "${DEV_OWN_GROUP:-}" ]; then
    set -m
    local rc=0
    DEV_OWN_GROUP=1 "$PWD/scripts/dev.sh" "$@" || rc=$?
    exit $rc
  fi
}

# `make run` in a shell that still exports the dev hub's kubeconfig: that hub
# is ours, so say what to do instead of running the operator against it.
check_exported_kubeconfig() {
  local kc=${KUBECONFIG:-} want
  want=$(cd "$DEV" 2>/dev/null && pwd)/hub.kubeconfig
  case "$kc" in
  "$want" | */.dev/hub.kubeconfig | "$DEV/hub.kubeconfig") ;;
  *) return 0 ;;
  esac
  if [ -s "$kc" ] && kubectl --kubeconfig "$kc" get --raw /readyz >/dev/null 2>&1; then
    refuse_if_foreground_elsewhere # a 'make run' in another terminal: say that, not dev-up
    log "KUBECONFIG=$kc is the running dev environment (make dev-up): stop it with 'make dev-down', or unset KUBECONFIG to start a new one here"
  else
    log "KUBECONFIG=$kc points at a dev hub that is not running: unset KUBECONFIG or run make dev-down, then run this again"
  fi
  exit 1
}

case "$cmd" in
run)
  in_own_process_group run "$@"
  if [ -n "${KUBECONFIG:-}" ]; then
    check_exported_kubeconfig
    exec bin/kueue-ks run "${OP_ARGS[@]}"
  fi
  claim_foreground
  trap 'stop_all; remove_kubeconfigs; release_foreground' EXIT
  # Ctrl-C is how this mode ends: a clean stop, exit 0
  trap 'exit 0' INT TERM
  start_env
  # shellcheck disable=SC2046
  bin/kueue-ks run $(operator_args) "${OP_ARGS[@]}" &
  op=$!
  echo "$op" >>"$DEV/pids"
  wait_operator_ready "$op" || true # the operator logs to this terminal why it is not ready
  wait_quota
  ready_block "Ctrl-C stops everything." " (the operator logs to this terminal)"
  wait "$op"
  ;;
up)
  start_env
  keep_prev_log "$DEV/kueue-ks.log"
  # shellcheck disable=SC2046
  bin/kueue-ks run $(operator_args) "${OP_ARGS[@]}" >"$DEV/kueue-ks.log" 2>&1 &
  echo $! >>"$DEV/pids"
  wait_operator_ready $! || true
  if ! curl -sf "http://$HEALTH_ADDR/readyz" >/dev/null 2>&1; then
    log "kueue-ks did not become ready; see $DEV/kueue-ks.log"
    stop_all
    exit 1
  fi
  wait_quota
  ready_block "Ctrl-C does not stop it: 'make dev-down' stops everything." " $(cd "$DEV" && pwd)/kueue-ks.log (operator)"
  ;;
down)
  if env_running; then
    stop_all
    remove_kubeconfigs
    log "stopped"
  else
    stop_all
    remove_kubeconfigs
    log "nothing was running"
  fi
  ;;
*)
  echo "usage: $0 run|up|down" >&2
  exit 2
  ;;
esac
