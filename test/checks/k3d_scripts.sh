#!/usr/bin/env bash
# scripts/k3d/{up,down,status}.sh without Docker: docker, k3d, kubectl and helm
# are replaced by stubs that keep state in files and log every call. Checks the
# prerequisite messages, what up.sh creates (network, clusters with their node
# labels, pinned Kueue, worker Secrets with in-network addresses, the overlay),
# that it refuses to adopt a cluster it did not create, and that down.sh removes
# exactly what up.sh recorded.
# "A && ok .. || bad .." is safe here: ok only echoes.
# shellcheck disable=SC2015
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
WORK=$(mktemp -d /tmp/kks-k3d-stub-XXXXXX)
STATE=$ROOT/build/k3d-stub-test.$$
trap 'rm -rf "$WORK" "$STATE"' EXIT
STUB=$WORK/stub
BIN=$WORK/bin
mkdir -p "$STUB" "$BIN"
fails=0
ok() { echo "ok   $*"; }
bad() {
  echo "FAIL $*"
  fails=$((fails + 1))
}

# ---- stubs ----------------------------------------------------------------
cat >"$BIN/docker" <<'S'
#!/usr/bin/env bash
echo "docker $*" >>"$STUB/calls"
case "$1 ${2:-}" in
"info "*) exit 0 ;;
"network inspect") [ -e "$STUB/net_$3" ] ;;
"network create") touch "$STUB/net_$3" ;;
"network rm") rm -f "$STUB/net_$3" ;;
"build "*) touch "$STUB/image_$(echo "$3" | tr :/ __)" ;;
"image inspect") [ -e "$STUB/image_$(echo "$3" | tr :/ __)" ] ;;
"image rm") rm -f "$STUB/image_$(echo "$3" | tr :/ __)" ;;
*) exit 0 ;;
esac
S
cat >"$BIN/k3d" <<'S'
#!/usr/bin/env bash
echo "k3d $*" >>"$STUB/calls"
case "$1 ${2:-}" in
"version "*) echo "k3d version ${STUB_K3D_VERSION:-v5.7.4}"; echo "k3s version v1.32.13-k3s1 (default)" ;;
"cluster get") [ -e "$STUB/cluster_$3" ] ;;
"cluster create") touch "$STUB/cluster_$3" ;;
"cluster delete") rm -f "$STUB/cluster_$3" ;;
"kubeconfig get")
  printf 'apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    certificate-authority-data: Q0E=\n    server: https://0.0.0.0:6550\n  name: k3d-%s\n' "$3" ;;
*) exit 0 ;;
esac
S
cat >"$BIN/kubectl" <<'S'
#!/usr/bin/env bash
echo "kubectl $*" >>"$STUB/calls"
args=" $* "
case "$args" in
*" version --client "*) echo "Client Version: v1.32.4"; exit 0 ;;
esac
# Secrets: keep the file given with --from-file so the test can read it.
if [[ "$args" == *" create secret generic "* ]]; then
  for a in "$@"; do
    case "$a" in --from-file=kubeconfig=*) cp "${a#--from-file=kubeconfig=}" "$STUB/secret_$(echo "$args" | sed 's/.* generic \([^ ]*\) .*/\1/')" ;; esac
  done
  echo "kind: Secret"
  exit 0
fi
if [[ "$args" == *" -f - "* ]] || [[ "$args" == *" apply -f - "* ]]; then cat >>"$STUB/stdin"; fi
if [[ "$args" == *" get -f "* ]]; then echo "customresourcedefinition.apiextensions.k8s.io/workloads.kueue.x-k8s.io"; fi
if [[ "$args" == *" apply -k "* ]]; then
  dir=$(echo "$args" | sed 's/.* apply -k \([^ ]*\) .*/\1/')
  [ -f "$dir/kustomization.yaml" ] || [ -f "$dir/Kustomization" ] || { echo "no kustomization in $dir" >&2; exit 1; }
fi
[[ "$args" == *" create namespace "* ]] && echo "kind: Namespace"
[[ "$args" == *" label --local "* ]] && cat
exit 0
S
cat >"$BIN/helm" <<'S'
#!/usr/bin/env bash
echo "helm $*" >>"$STUB/calls"
case "$1" in
version) echo "${STUB_HELM_VERSION:-v3.14.4}+g81c902a" ;;
template) printf -- '---\n# Source: kueue/templates/crd.yaml\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: workloads.kueue.x-k8s.io\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: kueue\n' ;;
esac
exit 0
S
chmod +x "$BIN"/*
export STUB KKS_K3D_STATE_DIR=$STATE
SAFE_PATH=/usr/bin:/bin # sed, awk, grep, realpath, sort...
run_up() { PATH=$1 scripts/k3d/up.sh "${@:2}" >"$WORK/out" 2>&1; }

# ---- prerequisites ------------------------------------------------------
mkdir -p "$WORK/nok3d"
for t in docker kubectl helm; do ln -sf "$BIN/$t" "$WORK/nok3d/$t"; done
if PATH=$SAFE_PATH command -v k3d >/dev/null; then
  echo "note: a real k3d is in $SAFE_PATH; the missing-k3d check is not possible here"
elif run_up "$WORK/nok3d:$SAFE_PATH"; then bad "up.sh ran without k3d"; else
  grep -q 'missing prerequisites: k3d' "$WORK/out" && ok "missing k3d is named" || bad "message: $(cat "$WORK/out")"
fi
if STUB_K3D_VERSION=v5.5.2 run_up "$BIN:$SAFE_PATH"; then bad "up.sh ran with k3d 5.5.2"; else
  grep -q 'k3d v5.5.2 is too old (need >= 5.6.0)' "$WORK/out" && ok "old k3d is named" || bad "message: $(cat "$WORK/out")"
fi
if STUB_HELM_VERSION=v3.11.0 run_up "$BIN:$SAFE_PATH"; then bad "up.sh ran with helm 3.11"; else
  grep -q 'helm v3.11.0 is too old' "$WORK/out" && ok "old helm is named" || bad "message: $(cat "$WORK/out")"
fi
[ ! -e "$STUB/calls" ] || ! grep -q 'cluster create' "$STUB/calls" && ok "nothing created when prerequisites fail" ||
  bad "clusters created despite missing prerequisites"

# ---- refuses to adopt a foreign cluster -----------------------------------
touch "$STUB/cluster_cluster1"
if run_up "$BIN:$SAFE_PATH"; then bad "up.sh adopted a foreign cluster1"; else
  grep -q 'cluster1 already exists and was not created by up.sh' "$WORK/out" && ok "foreign cluster1 refused" ||
    bad "message: $(cat "$WORK/out")"
fi
rm -f "$STUB/cluster_cluster1" "$STATE/state"
touch "$STUB/cluster_other" # someone else's cluster: must survive down.sh

# ---- up -------------------------------------------------------------------
: >"$STUB/calls"
if run_up "$BIN:$SAFE_PATH"; then ok "up.sh succeeded with the stubs"; else
  bad "up.sh failed: $(tail -5 "$WORK/out")"
fi
calls=$STUB/calls
want() { grep -qE -- "$2" "$calls" && ok "$1" || bad "$1: no call matching /$2/"; }
want "docker network created" '^docker network create k3d-kueue-ks$'
want "hub cluster on the network" '^k3d cluster create kueue-ks-hub .*--network k3d-kueue-ks'
want "cluster1 agent labelled instance=spot" '^k3d cluster create cluster1 .*--agents 1 --k3s-node-label instance=spot@agent:0'
want "cluster2 agent labelled instance=h100" '^k3d cluster create cluster2 .*--k3s-node-label instance=h100@agent:0'
want "server certificate names the in-network host" 'k3d cluster create cluster1 .*--tls-san=k3d-cluster1-server-0@server:0'
want "user kubeconfig untouched" 'k3d cluster create cluster2 .*--kubeconfig-update-default=false'
want "Kueue CRDs by server-side apply" 'kubectl --kubeconfig .*kueue-ks-hub.kubeconfig apply --server-side --force-conflicts -f .*kueue-crds.yaml'
want "Kueue chart pinned" '^helm upgrade --install kueue oci://registry.k8s.io/kueue/charts/kueue --version 0\.(1[6-9]|[2-9][0-9])\.'
want "config/crd applied" 'apply --server-side -k config/crd'
want "examples/setup applied" 'apply -f examples/setup/'
want "image built" '^docker build -t kueue-ks:dev '
want "image imported into the hub" '^k3d image import kueue-ks:dev -c kueue-ks-hub'
want "worker Secret labelled" 'label --local -f - -o yaml kueue-ks.io/worker=true name=cluster1'
want "deployed with kustomize" 'apply -k .*/overlay'
want "GPUs advertised on cluster2" 'cluster2.kubeconfig patch node k3d-cluster2-agent-0 --subresource=status'
grep -q 'server: https://k3d-cluster2-server-0:6443' "$STUB/secret_worker-cluster2" 2>/dev/null &&
  ok "worker-cluster2 kubeconfig uses the in-network address" || bad "worker-cluster2 kubeconfig: $(cat "$STUB/secret_worker-cluster2" 2>&1)"
grep -q 'certificate-authority-data' "$STUB/secret_worker-cluster2" 2>/dev/null && ok "worker kubeconfig keeps its CA" ||
  bad "worker kubeconfig lost its CA"
! grep -q -- '--transport' "$STATE/overlay/kustomization.yaml" && ok "direct mode: no --transport flag (the default)" ||
  bad "direct overlay sets --transport"
for r in "cluster kueue-ks-hub" "cluster cluster1" "cluster cluster2" "network k3d-kueue-ks" "image kueue-ks:dev"; do
  grep -qxF "$r" "$STATE/state" && ok "state records '$r'" || bad "state lacks '$r'"
done
PATH="$BIN:$SAFE_PATH" scripts/k3d/status.sh >"$WORK/status" 2>&1
grep -q 'cluster kueue-ks-hub' "$WORK/status" && ok "status.sh prints the recorded state" || bad "status.sh: $(head -5 "$WORK/status")"

# ---- down -----------------------------------------------------------------
: >"$calls"
if PATH="$BIN:$SAFE_PATH" scripts/k3d/down.sh >"$WORK/out" 2>&1; then ok "down.sh succeeded"; else bad "down.sh: $(cat "$WORK/out")"; fi
for c in kueue-ks-hub cluster1 cluster2; do
  [ ! -e "$STUB/cluster_$c" ] && ok "cluster $c deleted" || bad "cluster $c left"
done
[ -e "$STUB/cluster_other" ] && ok "foreign cluster 'other' untouched" || bad "down.sh deleted cluster 'other'"
! grep -q 'cluster delete other' "$calls" && ok "no delete call for 'other'" || bad "down.sh called delete on 'other'"
[ ! -e "$STUB/net_k3d-kueue-ks" ] && ok "network removed" || bad "network left"
[ ! -e "$STUB/image_kueue-ks_dev" ] && ok "image removed" || bad "image left"
[ ! -d "$STATE" ] && ok "state directory removed" || bad "state left: $(cat "$STATE/state" 2>&1)"
PATH="$BIN:$SAFE_PATH" scripts/k3d/down.sh >"$WORK/out" 2>&1 && grep -q 'nothing to remove' "$WORK/out" &&
  ok "second down.sh is a no-op" || bad "second down.sh: $(cat "$WORK/out")"

# ---- --kubestellar ---------------------------------------------------------
cat >"$BIN/kflex" <<'S'
#!/usr/bin/env bash
echo "kflex $*" >>"$STUB/calls"
S
cat >"$BIN/clusteradm" <<'S'
#!/usr/bin/env bash
echo "clusteradm $*" >>"$STUB/calls"
case " $* " in
*" get token "*) echo "token=abc"; echo "clusteradm join --hub-token abc --hub-apiserver https://its1.localtest.me:9443 --cluster-name <cluster_name>" ;;
esac
exit 0
S
chmod +x "$BIN/kflex" "$BIN/clusteradm"
: >"$calls"
touch "$STUB/image_kueue-ks_dev" # an image built earlier by the user
if run_up "$BIN:$SAFE_PATH" --kubestellar --skip-build; then ok "up.sh --kubestellar succeeded with the stubs"; else
  bad "up.sh --kubestellar failed: $(tail -5 "$WORK/out")"
fi
want "hub exposes 9443 for KubeFlex" '^k3d cluster create kueue-ks-hub .*-p 9443:443@loadbalancer'
want "KubeStellar core chart pinned" '^helm upgrade --install ks-core oci://ghcr.io/kubestellar/kubestellar/core-chart --version [0-9]+\.[0-9]+\.[0-9]+ '
want "the hub is a host-type WDS" "WDSes=\\[\\{\"name\":\"wds1\",\"type\":\"host\"\\}\\]"
want "cluster1 joined its1 by name" '^clusteradm join --hub-token abc .*--cluster-name cluster1 --singleton'
want "cluster2 accepted" '^clusteradm --context its1 accept --clusters cluster2'
want "ManagedCluster labelled" 'label --overwrite managedcluster cluster1 name=cluster1 location-group=edge'
want "agent deployed on cluster1" 'cluster1.kubeconfig apply -k .*/agent-cluster1'
grep -q -- '--transport=kubestellar' "$STATE/overlay/kustomization.yaml" && ok "kubestellar overlay sets --transport=kubestellar" ||
  bad "kubestellar overlay lacks --transport=kubestellar"
! grep -q '^docker build' "$calls" && ok "--skip-build builds nothing" || bad "--skip-build still built"
! grep -q 'create secret generic worker-' "$calls" && ok "no worker Secrets in KubeStellar mode" || bad "worker Secrets created in KubeStellar mode"
PATH="$BIN:$SAFE_PATH" scripts/k3d/down.sh >"$WORK/out" 2>&1 && [ ! -d "$STATE" ] && ok "down.sh after --kubestellar" ||
  bad "down.sh after --kubestellar: $(cat "$WORK/out")"
[ -e "$STUB/image_kueue-ks_dev" ] && ok "an image up.sh did not build is kept" || bad "down.sh removed the user's image"

echo "k3d_scripts: $fails failed"
[ $fails -eq 0 ]
