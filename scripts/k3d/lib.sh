#!/usr/bin/env bash
# Shared by scripts/k3d/{up,down,status}.sh: names, pinned versions, the state
# file, prerequisite checks. Sourced, not run.
# shellcheck disable=SC2034 # variables are used by the scripts that source this file

K3D_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# Everything up.sh creates is recorded here; down.sh removes exactly that.
K3D_STATE_DIR=${KKS_K3D_STATE_DIR:-$K3D_ROOT/.dev/k3d}
K3D_STATE=$K3D_STATE_DIR/state

HUB=kueue-ks-hub
WORKERS=(cluster1 cluster2)
NETWORK=${KKS_K3D_NETWORK:-k3d-kueue-ks}
IMAGE=${KKS_IMAGE:-kueue-ks:dev}
NAMESPACE=kueue-ks-system
K3S_IMAGE=${KKS_K3S_IMAGE:-rancher/k3s:v1.32.13-k3s1}
# Pinned versions (override with the environment for a newer release).
KUEUE_VERSION=${KUEUE_VERSION:-0.19.2}
KUEUE_CHART=oci://registry.k8s.io/kueue/charts/kueue
KUBESTELLAR_VERSION=${KUBESTELLAR_VERSION:-0.30.0}
KUBESTELLAR_CHART=oci://ghcr.io/kubestellar/kubestellar/core-chart
INGRESS_NGINX_VERSION=${INGRESS_NGINX_VERSION:-4.12.1}
# Minimum tool versions.
MIN_K3D=5.6.0
MIN_KUBECTL=1.29.0
MIN_HELM=3.12.0

log() { printf '%s k3d: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() {
  printf 'k3d: error: %s\n' "$*" >&2
  exit 1
}

# version_ge A B: true when version A >= B (both dotted, leading "v" allowed).
version_ge() {
  local a=${1#v} b=${2#v}
  a=${a%%[-+]*}
  b=${b%%[-+]*}
  [ "$(printf '%s\n%s\n' "$b" "$a" | sort -V | head -1)" = "$b" ]
}

# First x.y.z found in a tool's version output.
first_version() { grep -oE 'v?[0-9]+\.[0-9]+\.[0-9]+' | head -1; }

# check_tool NAME MIN VERSION_CMD...: exits with a message naming what is missing or too old.
check_tool() {
  local name=$1 min=$2 v
  shift 2
  command -v "$name" >/dev/null 2>&1 || die "$name is not installed (need >= $min)"
  v=$("$@" 2>/dev/null | first_version)
  [ -n "$v" ] || die "could not read the version of $name (need >= $min)"
  version_ge "$v" "$min" || die "$name $v is too old (need >= $min)"
}

# Prerequisites of up.sh; with "kubestellar" also kflex and clusteradm.
check_prereqs() {
  local missing=() t
  for t in docker k3d kubectl helm; do
    command -v "$t" >/dev/null 2>&1 || missing+=("$t")
  done
  if [ "${1:-}" = kubestellar ]; then
    for t in kflex clusteradm; do
      command -v "$t" >/dev/null 2>&1 || missing+=("$t")
    done
  fi
  [ ${#missing[@]} -eq 0 ] || die "missing prerequisites: ${missing[*]} (docker, k3d >= $MIN_K3D, kubectl >= $MIN_KUBECTL, helm >= $MIN_HELM${1:+, kflex, clusteradm})"
  docker info >/dev/null 2>&1 || die "docker is installed but the daemon is not reachable (is it running, may this user use it?)"
  check_tool k3d "$MIN_K3D" k3d version
  check_tool kubectl "$MIN_KUBECTL" kubectl version --client
  check_tool helm "$MIN_HELM" helm version --short
}

# Docker and k3d usable at all (for the tests' skip decision).
docker_usable() {
  command -v docker >/dev/null 2>&1 && command -v k3d >/dev/null 2>&1 && docker info >/dev/null 2>&1
}

# State file: one "<kind> <name>" per line, in creation order.
state_add() {
  mkdir -p "$K3D_STATE_DIR"
  state_has "$1" "$2" || printf '%s %s\n' "$1" "$2" >>"$K3D_STATE"
}
state_has() { [ -f "$K3D_STATE" ] && grep -qxF "$1 $2" "$K3D_STATE"; }
state_list() { # state_list KIND: the names of that kind, newest first
  [ -f "$K3D_STATE" ] || return 0
  awk -v k="$1" '$1 == k { print $2 }' "$K3D_STATE" | tac
}
state_remove() {
  [ -f "$K3D_STATE" ] || return 0
  grep -vxF "$1 $2" "$K3D_STATE" >"$K3D_STATE.tmp" || true
  mv "$K3D_STATE.tmp" "$K3D_STATE"
}

kubeconfig_of() { echo "$K3D_STATE_DIR/$1.kubeconfig"; }
kc() { # kc CLUSTER kubectl-args...
  local c=$1
  shift
  kubectl --kubeconfig "$(kubeconfig_of "$c")" "$@"
}
cluster_exists() { k3d cluster get "$1" >/dev/null 2>&1; }

# retry N SECONDS CMD...: run CMD until it succeeds, at most N times.
retry() {
  local n=$1 s=$2 i
  shift 2
  for ((i = 1; i <= n; i++)); do
    "$@" && return 0
    [ "$i" -lt "$n" ] && sleep "$s"
  done
  return 1
}

# write_manager_overlay DIR MODE: a kustomization in DIR (under the repository:
# kustomize only takes relative paths) deploying config/default with $IMAGE and,
# for MODE=kubestellar, --transport=kubestellar (direct is the default).
write_manager_overlay() {
  local dir=$1 mode=$2 rel
  mkdir -p "$dir"
  rel=$(realpath --relative-to="$dir" "$K3D_ROOT/config/default")
  {
    cat <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- $rel
images:
- name: kueue-ks
  newName: ${IMAGE%:*}
  newTag: ${IMAGE##*:}
YAML
    if [ "$mode" = kubestellar ]; then
      cat <<YAML
patches:
- target: {kind: Deployment, name: kueue-ks-controller-manager}
  patch: |-
    - op: add
      path: /spec/template/spec/containers/0/args/-
      value: --transport=kubestellar
YAML
    fi
  } >"$dir/kustomization.yaml"
}

# write_agent_overlay DIR CLUSTER: the ClusterMetrics agent for one worker
# (KubeStellar mode): config/rbac's agent ServiceAccount and ClusterRole only,
# a Deployment running `kueue-ks agent --cluster-name CLUSTER` that writes to
# the hub with the kubeconfig in Secret hub-kubeconfig.
write_agent_overlay() {
  local dir=$1 c=$2 rel k n
  mkdir -p "$dir"
  rel=$(realpath --relative-to="$dir" "$K3D_ROOT/config/rbac")
  {
    cat <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: $NAMESPACE
namePrefix: kueue-ks-
resources:
- $rel
- agent.yaml
patches:
YAML
    # Drop the manager's RBAC: the agent's worker needs only the agent's.
    for k in ServiceAccount/controller-manager ClusterRole/manager-role ClusterRoleBinding/manager-rolebinding \
      Role/manager-namespace-role RoleBinding/manager-namespace-rolebinding; do
      n=${k#*/}
      k=${k%/*}
      # shellcheck disable=SC2016 # a literal $patch
      printf -- '- patch: |-\n    $patch: delete\n    apiVersion: %s\n    kind: %s\n    metadata:\n      name: %s\n' \
        "$([ "$k" = ServiceAccount ] && echo v1 || echo rbac.authorization.k8s.io/v1)" "$k" "$n"
      [ "$k" = Role ] || [ "$k" = RoleBinding ] || [ "$k" = ServiceAccount ] && printf '      namespace: system\n'
    done
  } >"$dir/kustomization.yaml"
  cat >"$dir/agent.yaml" <<YAML
apiVersion: apps/v1
kind: Deployment
metadata:
  name: agent
  namespace: system
  labels: {app.kubernetes.io/name: kueue-ks, app.kubernetes.io/component: agent}
spec:
  replicas: 1
  selector:
    matchLabels: {app.kubernetes.io/name: kueue-ks, app.kubernetes.io/component: agent}
  template:
    metadata:
      labels: {app.kubernetes.io/name: kueue-ks, app.kubernetes.io/component: agent}
    spec:
      serviceAccountName: agent
      securityContext: {runAsNonRoot: true, runAsUser: 65532, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: agent
        image: $IMAGE
        imagePullPolicy: IfNotPresent
        args: [agent, --cluster-name=$c, --hub-kubeconfig=/etc/kueue-ks/hub/kubeconfig]
        resources:
          requests: {cpu: 10m, memory: 32Mi}
          limits: {cpu: 500m, memory: 128Mi}
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities: {drop: [ALL]}
        volumeMounts:
        - {name: hub, mountPath: /etc/kueue-ks/hub, readOnly: true}
      volumes:
      - name: hub
        secret: {secretName: kueue-ks-hub-kubeconfig}
YAML
}
