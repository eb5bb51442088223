#!/usr/bin/env bash
# The quota controller and `kueue-ks status` against a devhub (issue 5):
#   status: prints the clusters and queues tables from the hub, and a clear
#           note (not a crash) for a missing CRD;
#   (a) a managed ClusterQueue's quotas equal the workers' sums per flavor;
#   (b) adding a node to a worker raises the quota;
#   (c) a worker whose metrics stop lowers the quota after stale + shrink delay;
#   (e) a ClusterMetrics in the original galaxy format (no lastUpdated, no
#       conditions, no per-node ready) is accepted and aggregated.
set -u
cd "$(dirname "$0")/../.." || exit 1
[ -x bin/kueue-ks-devhub ] || { echo "SKIP: bin/kueue-ks-devhub not built"; exit 77; }
command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 77; }
tmp=$(mktemp -d)
pids=()
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAIL: $*"; fails=$((fails + 1)); }

start_hub() { # name crd-dirs...
  local name=$1
  shift
  local args=()
  for d in "$@"; do args+=(--crds "$d"); done
  # port 0: the devhub binds a free port itself and writes it into the kubeconfig once it
  # listens (a port picked here could be taken before the devhub binds it)
  bin/kueue-ks-devhub --listen 127.0.0.1:0 --name "$name" --kubeconfig-out "$tmp/$name.kc" \
    "${args[@]}" >"$tmp/$name.log" 2>&1 &
  pids+=($!)
  local deadline=$((SECONDS + 120))
  while [ $SECONDS -le $deadline ]; do
    [ -s "$tmp/$name.kc" ] && KUBECONFIG=$tmp/$name.kc kubectl get --raw /readyz >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "devhub $name did not start within 120 s"
  cat "$tmp/$name.log"
  exit 1
}

echo "step: status on a hub without Kueue or ClusterMetrics CRDs"
start_hub bare
out=$(bin/kueue-ks status --kubeconfig "$tmp/bare.kc" 2>"$tmp/err")
rc=$?
# issue 13: not a hub (a worker's kubeconfig, say) is an error with a clear message
if [ $rc -eq 1 ] && grep -q "CLUSTERS: the ClusterMetrics CRD" <<<"$out" &&
  grep -q "QUEUES: Kueue is not installed" <<<"$out" &&
  grep -q "not a kueue-ks hub (no ClusterMetrics CRD; no Kueue)" "$tmp/err"; then
  ok "missing CRDs are notes, exit 1: $(cat "$tmp/err")"
else
  bad "status on a bare hub: rc=$rc"
  echo "$out"
  cat "$tmp/err"
fi

start_hub hub devhub/crds config/crd
export KUBECONFIG=$tmp/hub.kc
now() { date -u +%Y-%m-%dT%H:%M:%SZ; }
node() { # name cpu memory [labels-json]
  local labels=${4:-"{}"}
  printf '{"name":"%s","ready":true,"allocatableResources":{"cpu":"%s","memory":"%s"},"allocatedResourceRequests":{"cpu":"0","memory":"0"},"labels":%s}' \
    "$1" "$2" "$3" "$labels"
}
cm_status() { # name nodes-json [fresh]
  local extra=""
  [ "${3:-}" = fresh ] && extra="\"lastUpdated\":\"$(now)\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"lastTransitionTime\":\"$(now)\",\"reason\":\"Reporting\",\"message\":\"ok\"}],"
  kubectl patch clustermetrics "$1" --subresource=status --type=merge \
    -p "{\"status\":{${extra}\"nodes\":[$2]}}" >/dev/null
}
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
spec:
  nodeLabels: {instance: h100}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: team-a
  labels: {kueue-ks.io/managed-quota: "true"}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: "0"}
      - {name: memory, nominalQuota: "0"}
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: "0"}
      - {name: memory, nominalQuota: "0"}
---
apiVersion: galaxy.kubestellar.io/v1alpha1
kind: ClusterMetrics
metadata: {name: c1}
---
apiVersion: galaxy.kubestellar.io/v1alpha1
kind: ClusterMetrics
metadata: {name: c2}
EOF
# c1 reports with lastUpdated (goes stale later); c2 in the original galaxy format.
cm_status c1 "$(node c1-n1 4 8Gi),$(node c1-n2 8 16Gi '{"instance":"h100"}')"
kubectl patch clustermetrics c2 --subresource=status --type=merge -p \
  '{"status":{"nodes":[{"name":"c2-n1","allocatableResources":{"cpu":"2500m","memory":"1.5Gi"},"allocatedResourceRequests":{"cpu":"500m","memory":"512Mi"}}]}}' >/dev/null

echo "step: status prints clusters and queues"
out=$(bin/kueue-ks status --kubeconfig "$tmp/hub.kc" -o wide 2>"$tmp/err")
rc=$?
if [ $rc -eq 0 ] && grep -qE '^c1 +Unknown +2/2 +0/12 +0/24Gi' <<<"$out" &&
  grep -qE '^c2 +Unknown +1/1 +500m/2500m +512Mi/1536Mi' <<<"$out" &&
  grep -qE '^team-a +h100 +cpu +0 +0 +0 +-' <<<"$out"; then
  ok "status tables"
else
  bad "status output (rc=$rc)"
  echo "$out"
  cat "$tmp/err"
fi

quota() { # flavor resource
  kubectl get clusterqueue team-a -o jsonpath="{.spec.resourceGroups[0].flavors[?(@.name==\"$1\")].resources[?(@.name==\"$2\")].nominalQuota}"
}
wait_quota() { # flavor resource want seconds (a safety deadline, not a bound the state must meet)
  local deadline=$((SECONDS + $4))
  while [ $SECONDS -le $deadline ]; do
    [ "$(quota "$1" "$2")" = "$3" ] && return 0
    sleep 0.1
  done
  return 1
}
expect_quota() { # what flavor resource want seconds
  if wait_quota "$2" "$3" "$4" "$5"; then ok "$1: $2/$3 = $4"
  else bad "$1: $2/$3 = '$(quota "$2" "$3")', want $4"; fi
}

# c1's agent, while it reports: a heartbeat every second, so the checks of
# (a) and (b) wait for states instead of racing the 4 s stale window (they
# run several kubectl calls, slow on a loaded machine).
HB=
keep_fresh() { # nodes-json
  rm -f "$tmp/hb.stop"
  (while [ ! -e "$tmp/hb.stop" ]; do
    cm_status c1 "$1" fresh 2>/dev/null || true
    sleep 1
  done) &
  HB=$!
  pids+=("$HB")
}
stop_fresh() { # waits for the loop's last write: none lands after this returns
  touch "$tmp/hb.stop"
  [ -n "$HB" ] && wait "$HB" 2>/dev/null
  HB=
}

echo "step: (a)+(e) quotas equal the workers' sums per flavor"
c1_nodes="$(node c1-n1 4 8Gi),$(node c1-n2 8 16Gi '{"instance":"h100"}')"
cm_status c1 "$c1_nodes" fresh
keep_fresh "$c1_nodes"
bin/kueue-ks run --metrics-bind-address 0 --health-probe-bind-address 0 \
  --metrics-stale-after 4s --shrink-delay 2s >"$tmp/op.log" 2>&1 &
pids+=($!)
expect_quota "initial" h100 cpu 8 120
expect_quota "initial" h100 memory 16Gi 120
# default-flavor: c1-n1 (4, 8Gi) + c2 (2500m-500m, 1.5Gi-512Mi) in galaxy format
expect_quota "initial, galaxy-format c2 counted" default-flavor cpu 6 120
expect_quota "initial, galaxy-format c2 counted" default-flavor memory 9Gi 120
src=$(kubectl get clusterqueue team-a -o jsonpath='{.metadata.annotations.kueue-ks\.io/quota-source}')
if grep -q "default-flavor/cpu=6: c1=4 c2=2" <<<"$src"; then ok "quota-source annotation: $src"
else bad "quota-source annotation: '$src'"; fi

echo "step: (b) a new node raises the quota"
stop_fresh
c1_nodes="$c1_nodes,$(node c1-n3 8 16Gi '{"instance":"h100"}')"
cm_status c1 "$c1_nodes" fresh
keep_fresh "$c1_nodes"
expect_quota "node added" h100 cpu 16 120

echo "step: (c) c1 stops reporting: its share leaves after stale + shrink delay"
stop_fresh
# t0 before the report's lastUpdated is taken: the windows count from that stamp, and the
# patch itself can take seconds on a loaded machine (t0 after it could fail a correct run)
t0=$(date +%s)
cm_status c1 "$c1_nodes" fresh # its last report
expect_quota "c1 stale" default-flavor cpu 2 120
expect_quota "c1 stale" h100 cpu 0 120
took=$(($(date +%s) - t0))
# lastUpdated (whole seconds) is not before t0: stale at least 4 s after t0, then 2 s shrink.
if [ $took -ge 4 ]; then ok "lowered after ${took}s (>= stale 4s + shrink 2s, less rounding)"
else bad "lowered after ${took}s, before stale + shrink delay"; fi
n=$(kubectl get events -n default -o jsonpath='{range .items[*]}{.reason}/{.involvedObject.name}{"\n"}{end}' |
  grep -c '^QuotaUpdated/team-a$')
if [ "$n" -ge 2 ]; then
  ok "QuotaUpdated Events"
else bad "no QuotaUpdated Events on team-a"; fi

[ $fails -eq 0 ] || { echo "--- operator log"; tail -30 "$tmp/op.log"; exit 1; }
echo "quota e2e: all ok"
