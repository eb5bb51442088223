#!/usr/bin/env bash
# Real-stack chaos (the short variant of test/e2e/chaos.sh): real kube-apiservers, Kueue and
# kwok (scripts/realstack/stack.sh). 20 jobs are paced in while the operator is SIGKILLed 4
# times at random 3-8 s intervals (restarted at once, same arguments) and the hub's
# kube-apiserver is restarted once. Then a bounded wait. Checks, from full change logs (a
# watch on every worker's Jobs, kept for the whole run) rather than samples:
#   - every hub Job Complete (0 lost), the operator never exited on its own;
#   - 0 duplicates: no job ever had more than one worker copy (one cluster and one uid over
#     the whole run), and each job kept one Workload uid (Kueue never recreated it).
# Prints: real_chaos: jobs=20 complete=N lost=N duplicates=N kills=4 hub_restarts=1 seconds=S
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=test/e2e/lib/real_harness.sh
. "$ROOT/test/e2e/lib/real_harness.sh"
N=20
KILLS=4
T0=$SECONDS
WATCHERS=()
chaos_cleanup() {
  for p in "${WATCHERS[@]}"; do kill "$p" 2>/dev/null; done
  real_cleanup
}
trap chaos_cleanup EXIT

# restart NAME [SIGNAL]: stop process NAME of the stack and start it again with the same
# command line, environment and working directory (its log appended), as a supervisor would.
restart() {
  local name=$1 sig=${2:-KILL} pid args=() env=() cwd
  pid=$(cat "$WORK/$name.pid")
  mapfile -d '' args <"/proc/$pid/cmdline"
  mapfile -d '' env <"/proc/$pid/environ"
  cwd=$(readlink "/proc/$pid/cwd")
  kill "-$sig" "$pid" 2>/dev/null
  # a kube-apiserver drains its requests and watches on SIGTERM: give it a minute, then do
  # what a supervisor does after its grace period (kubelet, systemd): SIGKILL (on a loaded
  # machine the drain took longer than a minute once)
  for _ in $(seq 1 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if [ "$sig" != KILL ] && kill -0 "$pid" 2>/dev/null; then
    echo "note: $name (pid $pid) still draining 60 s after SIG$sig: SIGKILL, as a supervisor would"
    kill -KILL "$pid" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  kill -0 "$pid" 2>/dev/null && die "$name (pid $pid) did not stop after SIG$sig and SIGKILL"
  (cd "$cwd" && exec env -i "${env[@]}" "${args[@]}" >>"$WORK/$name.log" 2>&1) &
  disown $! # no "Killed" notice from bash when the next round kills it
  echo $! >"$WORK/$name.pid"
  echo $! >>"$WORK/pids"
}

real_up
next c
# every copy ever created on a worker: "ns/name uid" per watch event, until the end
for c in cluster1 cluster2; do
  k "$c" get jobs -A --watch --output-watch-events \
    -o jsonpath='{.object.metadata.namespace}/{.object.metadata.name} {.object.metadata.uid}{"\n"}' \
    >"$WORK/$c.copies" 2>"$WORK/$c.watch.err" &
  WATCHERS+=($!)
done

op_alive() { kill -0 "$(cat "$WORK/kueue-ks.pid")" 2>/dev/null; }
create() { # i
  local cpu=$((1 + $1 % 2)) d=$((5 + $1 % 8))
  rjob "job-c$1" "$cpu" "${d}s" | k hub create -f - >/dev/null 2>&1
}
kills=0
restarts=0
next_kill=$((SECONDS + 3 + RANDOM % 6))
i=0
deadline=$((SECONDS + 240))
while [ $i -lt $N ] || [ $kills -lt $KILLS ]; do
  [ $SECONDS -le $deadline ] || die "the chaos phase did not end within 240 s (created $i, kills $kills)"
  if [ $i -lt $N ]; then
    # a create the restarted apiserver refused is tried again
    create "$i" && i=$((i + 1))
  fi
  if [ $kills -lt $KILLS ] && [ $SECONDS -ge $next_kill ]; then
    op_alive || die "the operator exited on its own (before kill $((kills + 1)))"
    restart kueue-ks KILL
    kills=$((kills + 1))
    next_kill=$((SECONDS + 3 + RANDOM % 6))
  fi
  if [ $restarts = 0 ] && [ $i -ge $((N / 2)) ]; then
    restart hub-apiserver TERM
    restarts=1
    wait_until 60 "hub kube-apiserver back after its restart" k hub get --raw /readyz
  fi
  sleep 0.3
done
for j in $(seq 0 $((N - 1))); do wl_uids "job-c$j" default | cut -d' ' -f2 >>"$WORK/uids.$j"; done

all_complete() {
  local n
  n=$(k hub get jobs -n default -o json |
    jq '[.items[]|select(.metadata.name|startswith("job-c"))|select([.status.conditions[]?|select(.type=="Complete" and .status=="True")]|length==1)]|length')
  [ "$n" = "$N" ]
}
wait_until 300 "all $N hub jobs Complete" all_complete
op_alive || die "the operator exited on its own"
for j in $(seq 0 $((N - 1))); do wl_uids "job-c$j" default | cut -d' ' -f2 >>"$WORK/uids.$j"; done
# the watches may lag the last creates by a moment: every job's copy seen first
seen_all() {
  local j
  for j in $(seq 0 $((N - 1))); do
    grep -qh "^default/job-c$j " "$WORK/cluster1.copies" "$WORK/cluster2.copies" || return 1
  done
}
wait_until 120 "every copy in the worker watch logs" seen_all

complete=0
lost=0
dups=0
detail=""
for j in $(seq 0 $((N - 1))); do
  if complete_on hub "job-c$j" >/dev/null 2>&1; then complete=$((complete + 1)); else lost=$((lost + 1)); fi
  # distinct (cluster, uid) pairs of this job's copies over the whole run
  pairs=$(for c in cluster1 cluster2; do
    grep "^default/job-c$j " "$WORK/$c.copies" | awk -v c="$c" '{print c, $2}'
  done | sort -u | grep -c .)
  uids=$(sort -u "$WORK/uids.$j" | grep -c .)
  if [ "$pairs" != 1 ] || [ "$uids" != 1 ]; then
    dups=$((dups + 1))
    detail="$detail job-c$j: $pairs copies, $uids Workload uids;"
  fi
done
echo "real_chaos: jobs=$N complete=$complete lost=$lost duplicates=$dups kills=$kills hub_restarts=$restarts seconds=$((SECONDS - T0))"
[ $lost = 0 ] || die "$lost jobs lost"
[ $dups = 0 ] || die "$dups duplicated jobs:$detail"
pass "$N jobs through $kills operator kills and $restarts hub apiserver restart: all Complete, one copy and one Workload each"
echo "ok   real_chaos passed"
