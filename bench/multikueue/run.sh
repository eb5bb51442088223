#!/usr/bin/env bash
# bench-multikueue: kueue-ks against Kueue's own MultiKueue on the real stack, one run, the same
# N jobs, each dispatcher at its default settings (issue 12 goal 1, "side by side").
#
#   bench/multikueue/run.sh [--n N (default 200)] [--end-to-end] [--keep]
#
# Two fresh real stacks (scripts/realstack/stack.sh, each in its own directory), one after the
# other, so that neither run's objects or pods load the other. Both reserved first: the
# dispatcher is held while the N jobs are created and the hub's Kueue reserves all of them
# (about 3 reservations/s here, slower than either dispatcher), then released and timed alone.
#   1. kueue-ks: `REAL_NO_OPERATOR=1 stack.sh up`, then `bin/bench-dispatch --real DIR --n N`
#      (kwok bench nodes, the operator stopped while the jobs are reserved, then started and
#      timed from its first write, a hub job's label, to the last worker copy).
#   2. MultiKueue: `REAL_NO_OPERATOR=1 REAL_WORKER_KUEUE=1 stack.sh up` (Kueue on the hub and
#      on each worker, MultiKueue dispatching through AdmissionCheck mk-admc), the hub Kueue
#      first under a dispatcher name no controller implements (REAL_MK_DISPATCHER), so
#      MultiKueue nominates no worker; the same bench nodes; bench/multikueue/measure.py creates
#      the N jobs in LocalQueue mk-lq, waits until all are reserved, restarts the hub Kueue with
#      MultiKueue's default dispatcher (all at once; `stack.sh kueue-restart`) and times from its
#      first write, a workload's nominatedClusterNames, to the last Job on a worker.
# --end-to-end instead times both from the first reservation to the last worker Job with the
# dispatcher running while the jobs are created (kueue-ks: `stack.sh up` with the operator;
# MultiKueue at its default dispatcher): there the hub Kueue's reservation pace bounds both.
#
# Prints each phase's JSON line (prefixed with "phase") and one JSON line
#   {"bench":"multikueue","mode":"reserved-first"|"end-to-end","n":..,"kueue_ks_per_s":..,
#    "multikueue_per_s":..,"ratio":..,"kueue_ks_p50_ms":..,"multikueue_p50_ms":..,
#    "kueue_ks_p99_ms":..,"multikueue_p99_ms":..,"load1":..}
# ratio = kueue_ks_per_s / multikueue_per_s; load1: the 1-minute load average at the end.
# --keep keeps the stacks' directories (logs) instead of removing them. Exit 0 when both
# dispatched all N.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=200
KEEP=0
E2E=0
while [ $# -gt 0 ]; do
  case $1 in
  --n)
    N=$2
    shift
    ;;
  --keep) KEEP=1 ;;
  --end-to-end) E2E=1 ;;
  *)
    echo "usage: $0 [--n N] [--end-to-end] [--keep]" >&2
    exit 2
    ;;
  esac
  shift
done
command -v jq >/dev/null || {
  echo "bench-multikueue: jq is needed" >&2
  exit 2
}
WORK=$(mktemp -d /tmp/bench-multikueue-XXXXXX)
KUBECTL=build/realstack/bin/kubectl
current=""
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
  [ -z "$current" ] || REAL_DIR=$current scripts/realstack/stack.sh down >/dev/null 2>&1 || true
  if [ "$KEEP" = 1 ]; then echo "bench-multikueue: logs kept in $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# One kwok node per worker with room for every job, like bench-dispatch --real.
bench_nodes() { # stack-dir
  local c inst
  for c in cluster1 cluster2; do
    inst=spot
    [ $c = cluster2 ] && inst=h100
    "$KUBECTL" --kubeconfig "$1/$c.kubeconfig" apply -f - >/dev/null <<NODE
apiVersion: v1
kind: Node
metadata:
  name: $c-bench-node
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {type: kwok, instance: $inst, node.kubernetes.io/instance-type: $inst,
           kubernetes.io/hostname: $c-bench-node, kubernetes.io/os: linux, kubernetes.io/arch: amd64}
status:
  capacity: {cpu: "$((N / 10 + 8))", memory: $((N / 100 + 8))Gi, pods: "$((N + 10))"}
  allocatable: {cpu: "$((N / 10 + 8))", memory: $((N / 100 + 8))Gi, pods: "$((N + 10))"}
NODE
  done
}

# kueue-ks: the operator's quota controller sets cluster-queue-ks's quota from the workers'
# nodes; real Kueue reserves only what fits, so wait until spot holds N x 100m CPU.
wait_ks_quota() { # stack-dir
  local q
  for _ in $(seq 1 300); do
    q=$("$KUBECTL" --kubeconfig "$1/hub.kubeconfig" get clusterqueue cluster-queue-ks -o json |
      jq -r '.spec.resourceGroups[0].flavors[]|select(.name=="spot").resources[]|select(.name=="cpu").nominalQuota')
    if python3 -c 'import sys
q = sys.argv[1]
v = float(q[:-1]) / 1000 if q.endswith("m") else float(q)
sys.exit(0 if v * 10 >= int(sys.argv[2]) else 1)' "$q" "$N"; then
      return 0
    fi
    sleep 0.2
  done
  echo "bench-multikueue: cluster-queue-ks's spot CPU quota stayed at $q (< N x 100m)" >&2
  return 1
}

# What the restart of the hub Kueue switches to: MultiKueue's default dispatcher.
ALL_AT_ONCE=kueue.x-k8s.io/multikueue-dispatcher-all-at-once

measure() { # stack-dir queue [release-command] -> JSON line
  python3 bench/multikueue/measure.py --hub "$1/hub.kubeconfig" \
    --worker "$1/cluster1.kubeconfig" --worker "$1/cluster2.kubeconfig" --queue "$2" --n "$N" \
    ${3:+--release "$3"}
}

# One phase's JSON line, normalised to per_s, p50_ms, p99_ms.
run_phase() { # name stack-dir
  local rc=0
  case "$1" in
  kueue-ks)
    if [ $E2E = 1 ]; then
      bench_nodes "$2"
      wait_ks_quota "$2"
      measure "$2" user-queue-ks
    else
      # its JSON line among a CPU line and a human one; exit 1 unless all N were placed
      bin/bench-dispatch --real "$2" --n "$N" >"$WORK/bench-dispatch.out" \
        2>"$WORK/bench-dispatch.err" || rc=$?
      grep '^{"bench":"dispatch"' "$WORK/bench-dispatch.out" | jq -c '. + {per_s: .dispatch_per_s}'
      return $rc
    fi
    ;;
  multikueue)
    bench_nodes "$2"
    if [ $E2E = 1 ]; then
      measure "$2" mk-lq
    else
      measure "$2" mk-lq "REAL_DIR=$2 scripts/realstack/stack.sh kueue-restart hub $ALL_AT_ONCE"
    fi
    ;;
  esac
}

phase() { # name env... : a fresh stack, one measurement
  local name=$1 out rc=0
  shift
  current=$WORK/$name
  env REAL_DIR="$current" "$@" scripts/realstack/stack.sh up >"$WORK/$name-up.log" 2>&1 || {
    echo "bench-multikueue: $name stack did not start:" >&2
    tail -5 "$WORK/$name-up.log" >&2
    KEEP=1
    REAL_DIR=$current scripts/realstack/stack.sh down >/dev/null 2>&1 || true
    current=""
    echo '{"failed":true}' >"$WORK/$name.json"
    return 1
  }
  out=$(run_phase "$name" "$current") || rc=$?
  [ -n "$out" ] || {
    rc=1
    out='{"failed":true}'
  }
  echo "{\"phase\":\"$name\",${out#\{}"
  REAL_DIR=$current scripts/realstack/stack.sh down >/dev/null 2>&1 || true
  current=""
  [ $rc = 0 ] || {
    echo "bench-multikueue: $name did not dispatch all $N (logs in $WORK/$name)" >&2
    KEEP=1
  }
  echo "$out" >"$WORK/$name.json"
  return $rc
}

rc=0
if [ $E2E = 1 ]; then
  phase kueue-ks || rc=1
  phase multikueue REAL_NO_OPERATOR=1 REAL_WORKER_KUEUE=1 || rc=1
else
  phase kueue-ks REAL_NO_OPERATOR=1 || rc=1
  phase multikueue REAL_NO_OPERATOR=1 REAL_WORKER_KUEUE=1 \
    REAL_MK_DISPATCHER=kueue-ks.io/bench-hold || rc=1
fi
mode=reserved-first
[ $E2E = 0 ] || mode=end-to-end
ks=$WORK/kueue-ks.json
mk=$WORK/multikueue.json
load=$(cut -d' ' -f1 /proc/loadavg)
jq -nc --slurpfile k "$ks" --slurpfile m "$mk" --argjson n "$N" --argjson load "$load" \
  --arg mode "$mode" '
  {bench:"multikueue", mode:$mode, n:$n, kueue_ks_per_s:$k[0].per_s,
   multikueue_per_s:$m[0].per_s,
   ratio:(if ($m[0].per_s // 0) > 0 and $k[0].per_s != null
          then ($k[0].per_s / $m[0].per_s * 100 | round) / 100 else null end),
   kueue_ks_p50_ms:$k[0].p50_ms, multikueue_p50_ms:$m[0].p50_ms,
   kueue_ks_p99_ms:$k[0].p99_ms, multikueue_p99_ms:$m[0].p99_ms, load1:$load}' || rc=1
exit $rc
