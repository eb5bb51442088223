#!/usr/bin/env bash
# Prints the state of the k3d development setup made by scripts/k3d/up.sh:
# what up.sh recorded, whether each cluster runs, its nodes, Kueue and
# kueue-ks on the hub, the registered workers, ClusterMetrics and Workloads.
# Usage: scripts/k3d/status.sh
set -uo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

if [ ! -s "$K3D_STATE" ]; then
  echo "No k3d setup recorded ($K3D_STATE missing). Create one with scripts/k3d/up.sh."
  exit 0
fi
echo "== recorded by up.sh ($K3D_STATE)"
sed 's/^/  /' "$K3D_STATE"
docker_usable || {
  echo "docker or k3d is not usable here; cannot query the clusters"
  exit 1
}

section() { printf '\n== %s\n' "$*"; }
for c in $(state_list cluster | tac); do
  section "cluster $c"
  if ! cluster_exists "$c"; then
    echo "  not running (recorded, but k3d does not know it)"
    continue
  fi
  kc "$c" get nodes -L instance -o wide 2>&1 | sed 's/^/  /'
done

if cluster_exists "$HUB"; then
  section "Kueue on $HUB"
  kc "$HUB" -n kueue-system get deploy 2>&1 | sed 's/^/  /'
  section "kueue-ks on $HUB ($(state_list mode | head -1) transport)"
  kc "$HUB" -n "$NAMESPACE" get deploy,pods -o wide 2>&1 | sed 's/^/  /'
  kc "$HUB" -n "$NAMESPACE" get lease 2>/dev/null | sed 's/^/  /'
  section "registered workers (Secrets kueue-ks.io/worker=true)"
  kc "$HUB" -n "$NAMESPACE" get secrets -l kueue-ks.io/worker=true --show-labels 2>&1 | sed 's/^/  /'
  section "ClusterMetrics"
  kc "$HUB" get clustermetrics 2>&1 | sed 's/^/  /'
  section "queues"
  kc "$HUB" get clusterqueues,localqueues -A 2>&1 | sed 's/^/  /'
  section "workloads"
  kc "$HUB" get workloads -A 2>&1 | sed 's/^/  /'
  section "jobs (hub) with their cluster"
  kc "$HUB" get jobs -A -L kubestellar.io/cluster 2>&1 | sed 's/^/  /'
fi
