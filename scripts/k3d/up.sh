#!/usr/bin/env bash
# Creates the kueue-ks development clusters on k3d and deploys kueue-ks:
#   kueue-ks-hub  Kueue (Helm chart, pinned), config/crd, examples/setup, kueue-ks
#   cluster1      1 agent node labelled instance=spot
#   cluster2      1 agent node labelled instance=h100, advertising 2 nvidia.com/gpu
# all on one Docker network, so the hub reaches the workers at
# https://k3d-<cluster>-server-0:6443. Kubeconfigs go to .dev/k3d/ (your own
# kubeconfig is not touched); everything created is recorded in .dev/k3d/state
# and `scripts/k3d/down.sh` removes exactly that.
#
# Usage: scripts/k3d/up.sh [--kubestellar] [--skip-build] [-h]
#   --kubestellar  install KubeStellar's core chart (pinned) on the hub, register
#                  the workers with its ITS, deploy kueue-ks with
#                  --transport=kubestellar and a ClusterMetrics agent per worker.
#                  Default: --transport=direct, workers registered as Secrets.
#   --skip-build   do not run `docker build` (import an existing $KKS_IMAGE)
# Environment: KUEUE_VERSION, KUBESTELLAR_VERSION, KKS_IMAGE, KKS_K3S_IMAGE.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

MODE=direct
BUILD=1
while [ $# -gt 0 ]; do
  case "$1" in
  --kubestellar) MODE=kubestellar ;;
  --skip-build) BUILD=0 ;;
  -h | --help)
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *) die "unknown argument $1 (see --help)" ;;
  esac
  shift
done

check_prereqs "$([ "$MODE" = kubestellar ] && echo kubestellar)"
mkdir -p "$K3D_STATE_DIR"
cd "$K3D_ROOT"

# Never adopt clusters this script did not create.
for c in "$HUB" "${WORKERS[@]}"; do
  if cluster_exists "$c" && ! state_has cluster "$c"; then
    die "a k3d cluster named $c already exists and was not created by up.sh; delete it (k3d cluster delete $c) or rename it"
  fi
done
state_add mode "$MODE"

# ---- network and clusters ---------------------------------------------------
if ! docker network inspect "$NETWORK" >/dev/null 2>&1; then
  log "creating docker network $NETWORK"
  docker network create "$NETWORK" >/dev/null
  state_add network "$NETWORK"
fi

create_cluster() { # create_cluster NAME [k3d args...]
  local c=$1
  shift
  if cluster_exists "$c"; then
    log "cluster $c exists (created earlier by up.sh)"
  else
    log "creating k3d cluster $c"
    state_add cluster "$c"
    k3d cluster create "$c" --image "$K3S_IMAGE" --network "$NETWORK" \
      --kubeconfig-update-default=false --kubeconfig-switch-context=false \
      --k3s-arg "--disable=traefik@server:0" \
      --k3s-arg "--tls-san=k3d-$c-server-0@server:0" --wait "$@"
  fi
  k3d kubeconfig get "$c" >"$(kubeconfig_of "$c")"
  chmod 600 "$(kubeconfig_of "$c")"
}

hub_args=()
[ "$MODE" = kubestellar ] && hub_args=(-p "9443:443@loadbalancer")
create_cluster "$HUB" "${hub_args[@]}"
create_cluster cluster1 --agents 1 --k3s-node-label "instance=spot@agent:0"
create_cluster cluster2 --agents 1 --k3s-node-label "instance=h100@agent:0"

# Fake GPUs on cluster2's agent so the GPU example has somewhere to go
# (extended resources advertised through the node status, as the Kubernetes
# docs describe for "Advertise Extended Resources for a Node").
log "advertising 2 nvidia.com/gpu on k3d-cluster2-agent-0"
retry 30 2 kc cluster2 patch node k3d-cluster2-agent-0 --subresource=status --type=json \
  -p '[{"op":"add","path":"/status/capacity/nvidia.com~1gpu","value":"2"}]' >/dev/null ||
  die "could not patch node k3d-cluster2-agent-0"

# ---- Kueue on the hub ---------------------------------------------------------
install_kueue() {
  log "installing Kueue $KUEUE_VERSION (CRDs by server-side apply, then the Helm chart)"
  local tpl="$K3D_STATE_DIR/kueue-$KUEUE_VERSION.yaml" crds="$K3D_STATE_DIR/kueue-crds.yaml"
  helm template kueue "$KUEUE_CHART" --version "$KUEUE_VERSION" --namespace kueue-system \
    --include-crds >"$tpl"
  # Keep only the CustomResourceDefinition documents.
  awk 'BEGIN { RS = "\n---\n"; ORS = "\n---\n" } /(^|\n)kind: CustomResourceDefinition\n/' "$tpl" >"$crds"
  [ -s "$crds" ] || die "no CRDs found in the Kueue chart $KUEUE_VERSION"
  kc "$HUB" apply --server-side --force-conflicts -f "$crds" >/dev/null
  # Let Helm adopt the CRDs (they may be templates in the chart).
  local names
  names=$(kc "$HUB" get -f "$crds" -o name)
  # shellcheck disable=SC2086 # one argument per CRD
  kc "$HUB" label --overwrite $names app.kubernetes.io/managed-by=Helm >/dev/null
  # shellcheck disable=SC2086
  kc "$HUB" annotate --overwrite $names meta.helm.sh/release-name=kueue \
    meta.helm.sh/release-namespace=kueue-system >/dev/null
  helm upgrade --install kueue "$KUEUE_CHART" --version "$KUEUE_VERSION" \
    --kubeconfig "$(kubeconfig_of "$HUB")" --namespace kueue-system --create-namespace \
    --wait --timeout 10m >/dev/null
  state_add helm "$HUB/kueue-system/kueue"
  kc "$HUB" -n kueue-system rollout status deploy/kueue-controller-manager --timeout=5m >/dev/null
}
install_kueue

log "applying config/crd and examples/setup (retrying while Kueue's webhook starts)"
kc "$HUB" apply --server-side -k config/crd >/dev/null
retry 30 5 kc "$HUB" apply -f examples/setup/ >/dev/null || die "examples/setup could not be applied to the hub"

# ---- image --------------------------------------------------------------------
if [ "$BUILD" = 1 ]; then
  log "building $IMAGE"
  docker build -t "$IMAGE" "$K3D_ROOT"
  state_add image "$IMAGE"
fi
docker image inspect "$IMAGE" >/dev/null 2>&1 || die "image $IMAGE not found (drop --skip-build)"
log "importing $IMAGE into the clusters"
k3d image import "$IMAGE" -c "$HUB"
[ "$MODE" = kubestellar ] && for c in "${WORKERS[@]}"; do k3d image import "$IMAGE" -c "$c"; done

# ---- namespace and workers -----------------------------------------------------
kc "$HUB" create namespace "$NAMESPACE" --dry-run=client -o yaml | kc "$HUB" apply -f - >/dev/null

# A worker kubeconfig as the hub sees it: the in-network server address, TLS
# verified against the cluster CA (k3d adds k3d-<c>-server-0 to the server
# certificate through --tls-san above).
in_network_kubeconfig() { # in_network_kubeconfig CLUSTER OUTFILE
  sed -E "s#^( *server: ).*#\1https://k3d-$1-server-0:6443#" "$(kubeconfig_of "$1")" >"$2"
  chmod 600 "$2"
}

register_workers_direct() {
  local c f
  for c in "${WORKERS[@]}"; do
    f="$K3D_STATE_DIR/$c.in-network.kubeconfig"
    in_network_kubeconfig "$c" "$f"
    log "registering worker $c (Secret $NAMESPACE/worker-$c)"
    kc "$HUB" -n "$NAMESPACE" create secret generic "worker-$c" --from-file=kubeconfig="$f" \
      --dry-run=client -o yaml |
      kc "$HUB" label --local -f - -o yaml kueue-ks.io/worker=true "name=$c" location-group=edge |
      kc "$HUB" apply -f - >/dev/null
  done
}

install_kubestellar() {
  log "installing ingress-nginx $INGRESS_NGINX_VERSION (SSL passthrough) and KubeStellar $KUBESTELLAR_VERSION"
  local hubkc
  hubkc=$(kubeconfig_of "$HUB")
  helm upgrade --install ingress-nginx ingress-nginx --repo https://kubernetes.github.io/ingress-nginx \
    --version "$INGRESS_NGINX_VERSION" --kubeconfig "$hubkc" --namespace ingress-nginx --create-namespace \
    --set "controller.extraArgs.enable-ssl-passthrough=" --wait --timeout 10m >/dev/null
  state_add helm "$HUB/ingress-nginx/ingress-nginx"
  # The hub itself is the WDS (type host); its1 is the inventory and transport space.
  helm upgrade --install ks-core "$KUBESTELLAR_CHART" --version "$KUBESTELLAR_VERSION" \
    --kubeconfig "$hubkc" --set-json 'ITSes=[{"name":"its1"}]' \
    --set-json 'WDSes=[{"name":"wds1","type":"host"}]' \
    --set "kubeflex-operator.hostContainer=k3d-$HUB-server-0" --wait --timeout 15m >/dev/null
  state_add helm "$HUB/default/ks-core"
  KUBECONFIG=$hubkc retry 60 10 kubectl wait controlplane/its1 --for=condition=Ready --timeout=10s >/dev/null ||
    die "KubeStellar ITS its1 did not become Ready"
  KUBECONFIG=$hubkc kflex ctx --set-current-for-hosting >/dev/null
  KUBECONFIG=$hubkc kflex ctx --overwrite-existing-context its1 >/dev/null
  local join c
  join=$(KUBECONFIG=$hubkc clusteradm --context its1 get token | grep -E '^clusteradm join' | head -1)
  [ -n "$join" ] || die "could not get a join token from its1 (clusteradm get token)"
  for c in "${WORKERS[@]}"; do
    log "joining $c to its1"
    # shellcheck disable=SC2086 # $join is the command line clusteradm printed
    KUBECONFIG=$(kubeconfig_of "$c") ${join/<cluster_name>/$c} --singleton --force-internal-endpoint-lookup \
      --context "k3d-$c" >/dev/null
  done
  for c in "${WORKERS[@]}"; do
    retry 60 5 env KUBECONFIG="$hubkc" clusteradm --context its1 accept --clusters "$c" >/dev/null ||
      die "could not accept $c on its1"
    KUBECONFIG=$hubkc kubectl --context its1 label --overwrite managedcluster "$c" "name=$c" location-group=edge >/dev/null
  done
}

# A ClusterMetrics agent per worker (KubeStellar mode: the operator does not
# reach the workers itself). It reads the worker's nodes and pods and writes
# ClusterMetrics <c> into the hub with a hub kubeconfig (development only:
# the k3d admin credential of the hub).
deploy_agents() {
  local c hubf="$K3D_STATE_DIR/$HUB.in-network.kubeconfig"
  in_network_kubeconfig "$HUB" "$hubf"
  for c in "${WORKERS[@]}"; do
    log "deploying the ClusterMetrics agent on $c"
    kc "$c" create namespace "$NAMESPACE" --dry-run=client -o yaml | kc "$c" apply -f - >/dev/null
    kc "$c" -n "$NAMESPACE" create secret generic kueue-ks-hub-kubeconfig --from-file=kubeconfig="$hubf" \
      --dry-run=client -o yaml | kc "$c" apply -f - >/dev/null
    write_agent_overlay "$K3D_STATE_DIR/agent-$c" "$c"
    kc "$c" apply -k "$K3D_STATE_DIR/agent-$c" >/dev/null
    state_add deploy "$c/$NAMESPACE"
  done
}

# ---- deploy kueue-ks ---------------------------------------------------------
if [ "$MODE" = kubestellar ]; then
  install_kubestellar
  deploy_agents
else
  register_workers_direct
fi

overlay=$K3D_STATE_DIR/overlay
write_manager_overlay "$overlay" "$MODE"
log "deploying kueue-ks ($MODE transport)"
kc "$HUB" apply -k "$overlay" >/dev/null
state_add deploy "$HUB/$NAMESPACE"
kc "$HUB" -n "$NAMESPACE" rollout status deploy/kueue-ks-controller-manager --timeout=5m ||
  die "kueue-ks did not become ready: kubectl --kubeconfig $(kubeconfig_of "$HUB") -n $NAMESPACE logs deploy/kueue-ks-controller-manager"

cat <<MSG

kueue-ks is running on k3d ($MODE transport). Use the hub with:
  export KUBECONFIG=$(kubeconfig_of "$HUB")
  kubectl create -f examples/batch-job.yaml
  kubectl get jobs,workloads -w
State: scripts/k3d/status.sh    Remove everything: scripts/k3d/down.sh
MSG
