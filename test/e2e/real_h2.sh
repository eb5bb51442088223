#!/usr/bin/env bash
# Real-stack HTTP/2 multiplexing (issue #12, goal 1): against a real kube-apiserver (ALPN h2)
# the operator's requests and watches share one connection, so a burst of N jobs does not open
# ~N connections. One stack, N jobs created at once; until every job has its worker copy, the
# operator's established TCP connections to the hub apiserver are sampled (ss -tnp, 0.2 s).
# The operator runs with --http2=true (the default since 27 Nov; said here so that
# REAL_H2_OP_ARGS can turn it off, docs/operations.md).
# Checks: all N placed, and at most MAX_CONN connections at any sample (HTTP/1.1 needs one
# per watch alone, more than MAX_CONN: REAL_H2_OP_ARGS=--http2=false makes this test fail).
# Prints: real_h2: jobs=N placed=N max_hub_connections=C samples=S seconds=T
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=test/e2e/lib/real_harness.sh
. "$ROOT/test/e2e/lib/real_harness.sh"
N=${REAL_H2_JOBS:-60}
MAX_CONN=4
command -v ss >/dev/null || { echo "SKIP: ss (iproute2) not installed"; exit 77; }
T0=$SECONDS

# shellcheck disable=SC2086 # extra operator flags, word-split on purpose
real_up ${REAL_H2_OP_ARGS:---http2=true}
# shellcheck source=/dev/null
. "$WORK/ports.env"
OPPID=$(cat "$WORK/kueue-ks.pid")
next 0
wait_until 120 "ClusterMetrics of both workers" \
  jq_ok hub '[.items[]|select(.status.nodeCount==2)]|length==2' clustermetrics

hub_conns() { ss -tnpH state established "( dport = :$HUB_API )" | grep -c "pid=$OPPID,"; }
placed() {
  local a b
  a=$(k cluster1 get jobs -n default -o name | grep -c '/job-h')
  b=$(k cluster2 get jobs -n default -o name | grep -c '/job-h')
  echo $((a + b))
}

next b
for i in $(seq 1 "$N"); do rjob "job-h$i" 100m 600s; echo ---; done >"$WORK/burst.yaml"
k hub create -f "$WORK/burst.yaml" >/dev/null || die "creating $N jobs failed"
max=0 samples=0 deadline=$((SECONDS + 240)) p=0
while :; do
  c=$(hub_conns)
  samples=$((samples + 1))
  [ "$c" -gt "$max" ] && max=$c
  if [ $((samples % 10)) = 0 ]; then
    p=$(placed)
    [ "$p" -ge "$N" ] && break
  fi
  kill -0 "$OPPID" 2>/dev/null || die "the operator exited" "$(tail -30 "$WORK/kueue-ks.log")"
  [ $SECONDS -le $deadline ] || die "$p of $N jobs placed within 240 s" "$(tail -30 "$WORK/kueue-ks.log")"
  sleep 0.2
done
echo "real_h2: jobs=$N placed=$p max_hub_connections=$max samples=$samples seconds=$((SECONDS - T0))"
[ "$max" -ge 1 ] || die "no operator connection to the hub apiserver seen (ss -tnp)"
[ "$max" -le "$MAX_CONN" ] ||
  die "the operator held $max connections to the hub apiserver during the burst (at most $MAX_CONN with HTTP/2)" \
    "$(ss -tnpH state established "( dport = :$HUB_API )" | grep "pid=$OPPID,")"
echo "PASS: real_h2"
