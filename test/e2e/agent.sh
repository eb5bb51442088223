#!/usr/bin/env bash
# End-to-end test of `kueue-ks agent` on two kueue-ks-devhub instances (a
# worker with nodes, a hub): the agent watches the worker and writes
# ClusterMetrics <cluster> to the hub. Checks: created with the exact node
# data; a bound Pending pod's requests appear (init containers, overhead);
# a terminal pod drops out; 200 pod changes are coalesced into at most
# window/min-interval + 1 writes with exact final sums; a galaxy-format
# consumer sees every original field; SIGTERM exits 0.
# Skipped (exit 77) when the devhub binary is not built in this tree.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/bin/kueue-ks
DEVHUB=${DEVHUB_BIN:-$ROOT/bin/kueue-ks-devhub}
[ -x "$BIN" ] || { echo "FAIL: $BIN not built"; exit 1; }

# The command line, without any server.
help=$("$BIN" agent --help 2>&1) || { echo "FAIL agent --help exited non-zero"; exit 1; }
for f in --cluster-name --kubeconfig --hub-kubeconfig "--min-interval duration.*(default 5s)" \
  --heartbeat --metrics-bind-address --health-probe-bind-address "--v int" --log-format; do
  grep -qE -- "$f" <<<"$help" || { echo "FAIL agent --help lacks $f"; exit 1; }
done
echo "ok   0 agent --help lists the flags"
out=$("$BIN" agent 2>&1)
rc=$?
[ $rc = 2 ] && grep -q -- "--cluster-name is required" <<<"$out" ||
  { echo "FAIL agent without --cluster-name: exit $rc: $out"; exit 1; }
echo "ok   0 agent without --cluster-name: exit 2 with a clear message"

[ -x "$DEVHUB" ] || { echo "SKIP: $DEVHUB not built (devhub branch not merged)"; exit 77; }
command -v curl >/dev/null || { echo "SKIP: curl not installed"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }

WORK=$(mktemp -d /tmp/agent-e2e-XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT
TOKEN=e2e-$RANDOM-$RANDOM
STEP=0
MIN_INTERVAL=1
CM=/apis/galaxy.kubestellar.io/v1alpha1/clustermetrics

pass() { echo "ok   $STEP $1"; }
die() {
  echo "FAIL $STEP $1"
  [ -n "${2:-}" ] && echo "---- output:" && echo "$2" | head -40
  for f in w1 hub agent; do
    echo "---- $f log (tail):"
    tail -15 "$WORK/$f.log" 2>/dev/null
  done
  exit 1
}
next() { STEP=$((STEP + 1)); }

# start_devhub NAME [flags]: sets <NAME>_URL and writes $WORK/NAME.kc, NAME.ca.
start_devhub() {
  local name=$1
  shift
  "$DEVHUB" --listen 127.0.0.1:0 --name "$name" --kubeconfig-out "$WORK/$name.kc" \
    --token "$TOKEN" --crds "$ROOT/config/crd" "$@" >"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  local deadline=$((SECONDS + 120))
  while [ $SECONDS -le $deadline ]; do
    [ -s "$WORK/$name.kc" ] && break
    sleep 0.05
  done
  [ -s "$WORK/$name.kc" ] || die "devhub $name wrote no kubeconfig"
  sed -n 's/^ *certificate-authority-data: //p' "$WORK/$name.kc" | base64 -d >"$WORK/$name.ca"
  eval "${name}_URL=\$(sed -n 's/^ *server: //p' \"\$WORK/\$name.kc\")"
}
# kc NAME curl-args...: curl against devhub NAME.
kc() {
  local name=$1 url
  shift
  eval "url=\$${name}_URL"
  local path=$1
  shift
  curl -sS --cacert "$WORK/$name.ca" -H "Authorization: Bearer $TOKEN" "$@" "$url$path"
}
cm() { kc hub "$CM/w1"; }
# wait_for SECONDS JQ-EXPR: until the hub's ClusterMetrics w1 satisfies the expression
# (SECONDS: a safety deadline, not a bound the state must meet).
wait_for() {
  local deadline=$((SECONDS + $1)) out
  while [ $SECONDS -le $deadline ]; do
    out=$(cm 2>/dev/null)
    if echo "$out" | jq -e "$2" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  die "timed out waiting for: $2" "$out"
}
pod_json() { # pod_json NAME NODE CPU MEM
  cat <<JSON
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"$1","namespace":"default"},
 "spec":{"nodeName":"$2","containers":[{"name":"c","image":"busybox",
  "resources":{"requests":{"cpu":"$3","memory":"$4"}}}]}}
JSON
}

start_devhub w1 --nodes '2xcpu=8,memory=32Gi,nvidia.com/gpu=2;labels=instance=h100'
start_devhub hub

next
"$BIN" agent --cluster-name w1 --kubeconfig "$WORK/w1.kc" --hub-kubeconfig "$WORK/hub.kc" \
  --min-interval ${MIN_INTERVAL}s --metrics-bind-address 0 --health-probe-bind-address 0 \
  --v 2 >"$WORK/agent.log" 2>&1 &
AGENT=$!
PIDS+=($AGENT)
wait_for 120 '.status.nodeCount == 2'
out=$(cm)
echo "$out" | jq -e '
  .metadata.labels["app.kubernetes.io/managed-by"] == "kueue-ks" and
  ([.status.nodes[].name] == ["w1-node-1","w1-node-2"]) and
  (.status.nodes[0].allocatableResources == {"cpu":"8","memory":"32Gi","nvidia.com/gpu":"2","pods":"110"}) and
  (.status.nodes[0].allocatedResourceRequests == {}) and
  (.status.nodes[0].labels.instance == "h100") and
  (.status.nodes[0].ready == true) and (.status.nodes[0].unschedulable == false) and
  (.status.conditions[0].type == "Ready") and (.status.conditions[0].status == "True") and
  (.status.lastUpdated | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T"))' >/dev/null ||
  die "ClusterMetrics w1 on the hub lacks the node data" "$out"
wcm=$(kc w1 "$CM/w1" -o /dev/null -w '%{http_code}')
[ "$wcm" = 404 ] || die "ClusterMetrics also written to the worker (HTTP $wcm)"
pass "agent created ClusterMetrics w1 on the hub with both nodes"

next
# Pending but bound: init container bigger than the container, plus overhead.
kc w1 /api/v1/namespaces/default/pods -X POST -H 'Content-Type: application/json' -d '
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"big","namespace":"default"},
 "spec":{"nodeName":"w1-node-1","overhead":{"cpu":"100m"},
  "initContainers":[{"name":"i","image":"busybox","resources":{"requests":{"cpu":"2"}}}],
  "containers":[{"name":"c","image":"busybox","resources":{"requests":{"cpu":"500m","memory":"1.5Gi"},
   "limits":{"nvidia.com/gpu":"1"}}}]}}' -o /dev/null -w '%{http_code}\n' | grep -q 201 ||
  die "cannot create pod big"
wait_for 120 '.status.nodes[0].allocatedResourceRequests == {"cpu":"2100m","memory":"1536Mi","nvidia.com/gpu":"1"}'
wait_for 120 '.status.nodes[0].allocatedResourceLimits == {"nvidia.com/gpu":"1"}'
pass "a bound Pending pod counts: max(init, containers) + overhead, limit as request"

next
kc w1 /api/v1/namespaces/default/pods/big/status -X PATCH \
  -H 'Content-Type: application/merge-patch+json' -d '{"status":{"phase":"Succeeded"}}' \
  -o /dev/null -w '%{http_code}\n' | grep -q 200 || die "cannot mark pod big Succeeded"
wait_for 120 '.status.nodes[0].allocatedResourceRequests == {}'
pass "a Succeeded pod drops out"

next
# Coalescing: watch the hub's ClusterMetrics writes during 200 pod changes on
# the worker (100 creates, 50 deletes, 50 status updates).
sleep $MIN_INTERVAL
rv=$(cm | jq -r .metadata.resourceVersion)
kc hub "$CM?watch=1&fieldSelector=metadata.name%3Dw1&resourceVersion=$rv" -N >"$WORK/watch.out" 2>/dev/null &
WATCH=$!
PIDS+=($WATCH)
sleep 0.3
# One curl process (one connection) paced at 20 requests/s: 200 changes in 10 s.
url=$(sed -n 's/^ *server: //p' "$WORK/w1.kc")
mkdir -p "$WORK/bodies"
cfg=$WORK/changes.curl
: >"$cfg"
transfer() { # transfer METHOD PATH [CONTENT-TYPE BODY-FILE]
  {
    echo "url = \"$url$2\""
    echo "request = \"$1\""
    echo "header = \"Authorization: Bearer $TOKEN\""
    echo "cacert = \"$WORK/w1.ca\""
    echo "output = \"/dev/null\""
    echo "write-out = \"%{http_code}\\n\""
    if [ -n "${3:-}" ]; then
      echo "header = \"Content-Type: $3\""
      echo "data-binary = \"@$4\""
    fi
    echo "next"
  } >>"$cfg"
}
for i in $(seq 0 99); do
  pod_json "p$i" w1-node-2 10m 1Mi >"$WORK/bodies/p$i.json"
  transfer POST /api/v1/namespaces/default/pods application/json "$WORK/bodies/p$i.json"
done
echo '{"status":{"phase":"Running"}}' >"$WORK/bodies/running.json"
for i in $(seq 0 49); do
  transfer DELETE "/api/v1/namespaces/default/pods/p$i"
  transfer PATCH "/api/v1/namespaces/default/pods/p$((i + 50))/status" \
    application/merge-patch+json "$WORK/bodies/running.json"
done
sed -i '$ d' "$cfg" # no "next" after the last transfer
t0=$(date +%s.%N)
curl -sS --rate 20/s -K "$cfg" >"$WORK/codes" 2>"$WORK/curl.err" || die "curl failed" "$(cat "$WORK/curl.err")"
[ "$(wc -l <"$WORK/codes")" = 200 ] || die "expected 200 responses" "$(cat "$WORK/codes" "$WORK/curl.err")"
bad=$(grep -cvE '^20[01]$' "$WORK/codes")
[ "$bad" = 0 ] || die "$bad of the 200 pod changes failed" "$(sort "$WORK/codes" | uniq -c)"
wait_for 120 '.status.nodes[1].allocatedResourceRequests == {"cpu":"500m","memory":"50Mi"}'
# The window ends when the final sums are seen, not when curl ended: on a loaded machine the
# agent sees the changes late, and its last writes (still one per interval) come after curl.
t_end=$(date +%s.%N)
# the watch has delivered the write of the final sums (a state, not a guess at its delay)
final_seen() {
  grep '"MODIFIED"' "$WORK/watch.out" | tail -1 |
    jq -e '.object.status.nodes[1].allocatedResourceRequests == {"cpu":"500m","memory":"50Mi"}' >/dev/null 2>&1
}
deadline=$((SECONDS + 120))
until final_seen; do
  [ $SECONDS -le $deadline ] || die "the watch did not deliver the final write" "$(tail -c 2000 "$WORK/watch.out")"
  sleep 0.1
done
sleep $((MIN_INTERVAL * 2)) # a late extra write would show up here
kill $WATCH 2>/dev/null
writes=$(grep -c '"MODIFIED"' "$WORK/watch.out")
window=$(echo "$t_end - $t0" | bc)
# One write at once, then at most one per interval, plus the trailing one.
max=$(awk -v w="$window" -v i="$MIN_INTERVAL" 'BEGIN { m = w / i; c = int(m); if (c < m) c++; print c + 1 }')
[ "$writes" -ge 1 ] && [ "$writes" -le "$max" ] ||
  die "200 pod changes in $window s gave $writes writes (max $max)"
pass "200 pod changes over $(printf '%.1f' "$window") s: $writes ClusterMetrics writes (<= $max), exact final sums"

next
# A consumer of the original galaxy format finds every field it knows.
out=$(cm)
echo "$out" | jq -e '.status.nodes | all(has("name") and has("allocatableResources") and
  has("allocatedResourceRequests") and has("allocatedResourceLimits") and has("taints") and
  has("labels") and has("unschedulable"))' >/dev/null || die "galaxy fields missing" "$out"
pass "every node entry carries the galaxy fields"
# The hub-work share (no kueue-ks Job copies here: the pods are local work).
echo "$out" | jq -e '.status.nodes | all(.managedResourceRequests == {})' >/dev/null ||
  die "managedResourceRequests missing or not empty" "$out"
pass "every node entry carries managedResourceRequests (empty: no hub work)"

next
kill -TERM $AGENT
rc=0
wait $AGENT || rc=$?
[ "$rc" = 0 ] || die "agent exited $rc after SIGTERM"
grep -qE 'AddressSanitizer|runtime error' "$WORK/agent.log" && die "sanitizer report in the agent log"
pass "agent exits 0 on SIGTERM"
echo "agent e2e: all steps passed"
