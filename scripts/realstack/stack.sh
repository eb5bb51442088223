#!/usr/bin/env bash
# make real-up / make real-down / make run REAL=1: the real stack.
#
# Three clusters on loopback, every process local, built by scripts/realstack/build.sh:
#   hub       etcd, kube-apiserver, kube-controller-manager, kube-scheduler, Kueue manager
#             (webhooks and CRD conversion on https://127.0.0.1:<port>, a local CA)
#   cluster1  etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok;
#             nodes cluster1-node-0..1: cpu=8, memory=32Gi, instance=spot
#   cluster2  the same with nvidia.com/gpu=2 per node, instance=h100
# then the CRDs of config/crd, examples/setup/ and `bin/kueue-ks run` with both workers, like
# scripts/dev.sh. Kubeconfigs .real/{hub,cluster1,cluster2}.kubeconfig, logs .real/*.log,
# ports .real/ports.env. Every port is a free one the kernel hands out.
#
#   stack.sh up      start everything in the background (make real-up)
#   stack.sh run     the same, the operator in the foreground; Ctrl-C stops everything
#   stack.sh down    stop what up started (make real-down)
#   stack.sh nodes NAME   (internal) print the node manifests of worker NAME
#   stack.sh kueue-restart CLUSTER [DISPATCHER]   (bench/multikueue) restart that Kueue
#
# REAL_DIR (default .real) moves the state directory; REAL_NO_OPERATOR=1 starts everything
# but the operator (tests that start their own).
#
# REAL_WORKER_KUEUE=1 also runs Kueue's own MultiKueue (bench/multikueue): the same Kueue
# binary on each worker (its own webhook and health ports; ports.env CLUSTER<i>_KUEUE_*), and
# the MultiKueue objects of setup_multikueue on the hub (kubeconfig Secrets in kueue-system,
# MultiKueueCluster cluster1/cluster2, MultiKueueConfig, AdmissionCheck mk-admc with controller
# kueue.x-k8s.io/multikueue, ClusterQueue mk-cq, LocalQueue default/mk-lq) and the matching
# flavor and queues on each worker. Every Kueue runs at its defaults (client QPS 20, burst 30;
# MultiKueue's worker clients at client-go's 5/10). A worker Kueue suspends new Jobs that name
# a queue (its webhook), so kueue-ks dispatch is measured on a stack without it.
# REAL_MK_DISPATCHER=NAME sets the hub Kueue's multiKueue.dispatcherName (a name no controller
# implements holds every dispatch: MultiKueue waits for nominated clusters).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
REAL=$(realpath -m "${REAL_DIR:-.real}")
BIN=build/realstack/bin
cmd=${1:-up}
shift || true

log() { echo "real: $*" >&2; }
die() {
  log "$*"
  exit 1
}

pids_file() { echo "$REAL/pids"; }

stop_all() {
  local f
  f=$(pids_file)
  [ -f "$f" ] || return 0
  local pids
  pids=$(tac "$f")
  for pid in $pids; do kill "$pid" 2>/dev/null || true; done
  for pid in $pids; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  rm -f "$f"
}

# The end of the stack (down, or Ctrl-C of run): stopped, and its kubeconfigs removed: they
# name ports nothing listens on any more, and a later `kueue-ks status` or kubectl with one
# would only say "connection refused".
stop_for_good() {
  stop_all
  rm -f "$REAL"/hub.kubeconfig "$REAL"/cluster[0-9]*.kubeconfig
}

# N free loopback ports, held open together so they differ, then released.
free_ports() {
  python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

spawn() { # name command... : background process, logged to $REAL/<name>.log, pid in <name>.pid
  local name=$1
  shift
  "$@" >"$REAL/$name.log" 2>&1 &
  echo $! >>"$(pids_file)"
  echo $! >"$REAL/$name.pid"
}

pki() {
  local d=$REAL/pki
  [ -s "$d/admin.crt" ] && return 0
  mkdir -p "$d"
  (
    cd "$d"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 \
      -subj "/CN=kueue-ks-real-ca" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout serving.key -out serving.csr \
      -subj "/CN=127.0.0.1" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >serving.ext
    openssl x509 -req -in serving.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile serving.ext -out serving.crt 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr \
      -subj "/O=system:masters/CN=kueue-ks-real-admin" 2>/dev/null
    printf 'extendedKeyUsage=clientAuth\n' >admin.ext
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile admin.ext -out admin.crt 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    rm -f ./*.csr ./*.ext
  )
}

kubeconfig() { # name port -> $REAL/<name>.kubeconfig (embedded certs: the file stands alone)
  local name=$1 port=$2 d=$REAL/pki
  cat >"$REAL/$name.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: $name
  cluster:
    server: https://127.0.0.1:$port
    certificate-authority-data: $(base64 -w0 "$d/ca.crt")
users:
- name: $name-admin
  user:
    client-certificate-data: $(base64 -w0 "$d/admin.crt")
    client-key-data: $(base64 -w0 "$d/admin.key")
contexts:
- name: $name
  context: {cluster: $name, user: $name-admin}
current-context: $name
KC
}

k() { # cluster kubectl-args...
  local c=$1
  shift
  "$BIN/kubectl" --kubeconfig "$REAL/$c.kubeconfig" "$@"
}

start_control_plane() { # name etcd-port peer-port api-port
  local name=$1 ep=$2 pp=$3 ap=$4
  local d=$REAL/$name pki=$REAL/pki
  mkdir -p "$d"
  rm -rf "$d/etcd"
  # --unsafe-no-fsync: test data, thrown away at every start; fsync would dominate the disk.
  spawn "$name-etcd" "$BIN/etcd" --name "$name" --data-dir "$d/etcd" --log-level warn \
    --listen-client-urls "http://127.0.0.1:$ep" --advertise-client-urls "http://127.0.0.1:$ep" \
    --listen-peer-urls "http://127.0.0.1:$pp" --initial-advertise-peer-urls "http://127.0.0.1:$pp" \
    --initial-cluster "$name=http://127.0.0.1:$pp" --unsafe-no-fsync
  # Loopback everywhere: the endpoint reconciler would refuse 127.0.0.1 as the kubernetes
  # Service's endpoint, and nothing here needs that Service.
  spawn "$name-apiserver" "$BIN/kube-apiserver" --etcd-servers "http://127.0.0.1:$ep" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$ap" \
    --endpoint-reconciler-type none --cert-dir "$d/apiserver" \
    --tls-cert-file "$pki/serving.crt" --tls-private-key-file "$pki/serving.key" \
    --client-ca-file "$pki/ca.crt" --authorization-mode RBAC \
    --service-account-issuer https://kubernetes.default.svc \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
    --service-cluster-ip-range 10.96.0.0/16 --enable-priority-and-fairness=false \
    --profiling=false --v=1
}

wait_ready() { # cluster timeout-seconds
  local c=$1 t=$2 i
  for i in $(seq 1 $((t * 5))); do
    if k "$c" get --raw /readyz >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  die "$c kube-apiserver not ready after ${t}s; see $REAL/$c-apiserver.log and $REAL/$c-etcd.log"
}

start_controllers() { # name extra-controllers
  local name=$1 kc=$REAL/$1.kubeconfig
  # Only the controllers the scenarios exercise: fewer informers, less CPU. The node lifecycle
  # controller takes off the node.kubernetes.io/not-ready taint the API server puts on every
  # new node (TaintNodesByCondition) once kwok reports it Ready.
  spawn "$name-controller-manager" "$BIN/kube-controller-manager" --kubeconfig "$kc" \
    --secure-port 0 --leader-elect=false --profiling=false \
    --controllers "job-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller,pod-garbage-collector-controller,ttl-after-finished-controller,node-lifecycle-controller" \
    --v=1
  spawn "$name-scheduler" "$BIN/kube-scheduler" --kubeconfig "$kc" --secure-port 0 \
    --leader-elect=false --profiling=false --v=1
}

nodes() { # worker -> node manifests like the devhub's (scripts/dev.sh)
  local name=$1 instance gpu=""
  case $name in
  cluster1) instance=spot ;;
  cluster2)
    instance=h100
    gpu=', nvidia.com/gpu: "2"'
    ;;
  *) die "no node shape for $name" ;;
  esac
  for i in 0 1; do
    cat <<NODE
---
apiVersion: v1
kind: Node
metadata:
  name: $name-node-$i
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    type: kwok
    instance: $instance
    node.kubernetes.io/instance-type: $instance
    kubernetes.io/hostname: $name-node-$i
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"$gpu}
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"$gpu}
NODE
  done
}

start_worker_sim() { # name
  local name=$1
  spawn "$name-kwok" "$BIN/kwok" --kubeconfig "$REAL/$name.kubeconfig" \
    --manage-nodes-with-label-selector type=kwok --config test/realstack/kwok-stages.yaml
  nodes "$name" | k "$name" apply -f - >/dev/null
}

kueue_module_dir() {
  (cd test/realstack/tools/kueue && go_bin list -m -f '{{.Dir}}' sigs.k8s.io/kueue)
}

go_bin() {
  if command -v go >/dev/null 2>&1; then go "$@"; else /usr/local/go/bin/go "$@"; fi
}

start_kueue() { # cluster webhook-port health-port
  local c=$1 wp=$2 hp=$3 d=$REAL/$1/kueue mod
  mkdir -p "$d/certs" "$d/etc/kueue/metrics/certs"
  cp "$REAL/pki/serving.crt" "$d/certs/tls.crt"
  cp "$REAL/pki/serving.key" "$d/certs/tls.key"
  cp "$d/certs/tls.crt" "$d/certs/tls.key" "$d/etc/kueue/metrics/certs/"
  mod=$(kueue_module_dir) || die "cannot find sigs.k8s.io/kueue in the module cache (run scripts/realstack/build.sh)"
  python3 scripts/realstack/kueue_manifests.py "$mod" "https://127.0.0.1:$wp" \
    "$REAL/pki/ca.crt" "$d/manifests.yaml"
  k "$c" apply --server-side --force-conflicts -f "$d/manifests.yaml" >/dev/null
  # kubectl wait fails at once on a CRD the server has not given conditions yet ("accessor
  # error: <nil>"), which a quick start hits: retry that.
  local i
  for i in $(seq 1 50); do
    k "$c" wait --for condition=established --timeout 30s crd --all >/dev/null 2>"$d/wait.err" &&
      break
    [ "$i" -lt 50 ] || die "$c: Kueue's CRDs not established: $(cat "$d/wait.err")"
    sleep 0.2
  done
  cat >"$d/config.yaml" <<CFG
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
health:
  healthProbeBindAddress: 127.0.0.1:$hp
metrics:
  bindAddress: "0"
webhook:
  host: 127.0.0.1
  port: $wp
  certDir: $d/certs
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
integrations:
  frameworks: ["batch/job"]
featureGates:
  VisibilityOnDemand: false
CFG
  if [ "$c" = hub ] && [ -n "${REAL_MK_DISPATCHER:-}" ]; then
    printf 'multiKueue:\n  dispatcherName: %s\n' "$REAL_MK_DISPATCHER" >>"$d/config.yaml"
  fi
  spawn_kueue "$c"
}

spawn_kueue() { # cluster: the Kueue manager of $REAL/<cluster>/kueue/config.yaml
  local c=$1 d=$REAL/$1/kueue
  # Without internal cert management Kueue reads its metrics certificate from the fixed path
  # /etc/kueue/metrics/certs. The manager runs in a private mount namespace whose /etc is an
  # overlay holding that directory, so nothing is written to the machine's /etc.
  local ns=(unshare --mount --propagation private)
  [ "$(id -u)" -eq 0 ] || ns=(unshare --user --map-root-user --mount --propagation private)
  mkdir -p "$d/ov"
  # shellcheck disable=SC2016 # expanded by the inner shell
  KUBECONFIG=$REAL/$c.kubeconfig spawn "$c-kueue" "${ns[@]}" -- bash -c '
    set -e
    ov=$1; shift
    mount -t tmpfs kks-real-kueue "$ov"
    mkdir -p "$ov/upper" "$ov/work"
    cp -r "$ov/../etc/kueue" "$ov/upper/"
    mount -t overlay overlay -o "lowerdir=/etc,upperdir=$ov/upper,workdir=$ov/work" /etc
    exec "$@"' kueue-ns "$d/ov" "$ROOT/$BIN/kueue" --config "$d/config.yaml" \
    --zap-log-level=2
}

worker_kueue() { [ "${REAL_WORKER_KUEUE:-0}" = 1 ]; }

# The queues MultiKueue dispatches through: one flavor without node labels and a ClusterQueue
# with room for every bench job, the same names on the hub and on each worker.
mk_queues() { # admission-check-yaml
  cat <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: mk-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: mk-cq}
spec:
  namespaceSelector: {}
$1
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: mk-flavor
      resources:
      - {name: cpu, nominalQuota: "1000"}
      - {name: memory, nominalQuota: 4000Gi}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: mk-lq, namespace: default}
spec: {clusterQueue: mk-cq}
YAML
}

# Kueue's MultiKueue on the hub, dispatching to cluster1 and cluster2 (REAL_WORKER_KUEUE=1).
setup_multikueue() {
  local c i ok
  k hub create namespace kueue-system --dry-run=client -o yaml | k hub apply -f - >/dev/null
  for c in cluster1 cluster2; do
    k hub -n kueue-system create secret generic "$c-kubeconfig" \
      --from-file=kubeconfig="$REAL/$c.kubeconfig" --dry-run=client -o yaml | k hub apply -f - >/dev/null
    # the worker's webhooks answer once its Kueue is ready; retry like examples/setup above
    ok=0
    for i in $(seq 1 100); do
      if mk_queues "" | k "$c" apply -f - >/dev/null 2>"$REAL/mk-setup.err"; then
        ok=1
        break
      fi
      sleep 0.3
    done
    [ $ok = 1 ] || die "$c: MultiKueue worker queues not accepted: $(cat "$REAL/mk-setup.err")"
  done
  {
    for c in cluster1 cluster2; do
      cat <<YAML
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata: {name: $c}
spec:
  clusterSource:
    kubeConfig: {locationType: Secret, location: $c-kubeconfig}
YAML
    done
    cat <<YAML
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueConfig
metadata: {name: mk-config}
spec: {clusters: [cluster1, cluster2]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: mk-admc}
spec:
  controllerName: kueue.x-k8s.io/multikueue
  parameters: {apiGroup: kueue.x-k8s.io, kind: MultiKueueConfig, name: mk-config}
---
YAML
    mk_queues "  admissionChecksStrategy:
    admissionChecks:
    - name: mk-admc"
  } | k hub apply -f - >/dev/null || die "MultiKueue objects not accepted on the hub"
  k hub wait --for condition=Active --timeout 60s multikueuecluster --all >/dev/null ||
    die "MultiKueueClusters not Active: $(k hub get multikueuecluster -o yaml | grep -A3 message); see $REAL/hub-kueue.log"
  k hub wait --for condition=Active --timeout 60s admissioncheck mk-admc >/dev/null ||
    die "AdmissionCheck mk-admc not Active; see $REAL/hub-kueue.log"
}

wait_http() { # url timeout-seconds what
  local i
  for i in $(seq 1 $(($2 * 5))); do
    curl -skf "$1" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  die "$3 not ready after $2 s ($1)"
}

start_env() {
  if ! scripts/realstack/build.sh --check; then
    die "components not built or out of date: run scripts/realstack/build.sh (or make real-up)"
  fi
  [ -x bin/kueue-ks ] || die "bin/kueue-ks missing: run make"
  mkdir -p "$REAL"
  stop_all
  local t0 ports
  t0=$(date +%s)
  pki
  # hub, cluster1, cluster2: etcd client, etcd peer, apiserver; then Kueue webhook and health,
  # operator metrics and health; then the workers' Kueue webhook and health (REAL_WORKER_KUEUE).
  read -r -a ports <<<"$(free_ports 17)"
  local names=(hub cluster1 cluster2) i
  for i in 0 1 2; do
    kubeconfig "${names[$i]}" "${ports[$((i * 3 + 2))]}"
    start_control_plane "${names[$i]}" "${ports[$((i * 3))]}" "${ports[$((i * 3 + 1))]}" \
      "${ports[$((i * 3 + 2))]}"
  done
  cat >"$REAL/ports.env" <<ENV
HUB_API=${ports[2]}
CLUSTER1_API=${ports[5]}
CLUSTER2_API=${ports[8]}
KUEUE_WEBHOOK=${ports[9]}
KUEUE_HEALTH=${ports[10]}
OPERATOR_METRICS=127.0.0.1:${ports[11]}
OPERATOR_HEALTH=127.0.0.1:${ports[12]}
CLUSTER1_KUEUE_WEBHOOK=${ports[13]}
CLUSTER1_KUEUE_HEALTH=${ports[14]}
CLUSTER2_KUEUE_WEBHOOK=${ports[15]}
CLUSTER2_KUEUE_HEALTH=${ports[16]}
ENV
  for c in "${names[@]}"; do wait_ready "$c" 60; done
  log "apiservers ready after $(($(date +%s) - t0)) s"
  for c in "${names[@]}"; do start_controllers "$c"; done
  start_kueue hub "${ports[9]}" "${ports[10]}"
  for c in cluster1 cluster2; do
    k "$c" apply --server-side -f config/crd/ >/dev/null
    start_worker_sim "$c"
  done
  if worker_kueue; then
    start_kueue cluster1 "${ports[13]}" "${ports[14]}"
    start_kueue cluster2 "${ports[15]}" "${ports[16]}"
  fi
  k hub apply --server-side -f config/crd/ >/dev/null
  wait_http "http://127.0.0.1:${ports[10]}/readyz" 60 "Kueue (see $REAL/hub-kueue.log)"
  # The ClusterQueue defaulting webhook must answer before examples/setup goes in.
  local ok=0
  for i in $(seq 1 100); do
    if k hub apply -f examples/setup/ >/dev/null 2>"$REAL/setup.err"; then
      ok=1
      break
    fi
    sleep 0.3
  done
  [ $ok = 1 ] || die "examples/setup/ not accepted: $(cat "$REAL/setup.err")"
  log "applied examples/setup/ after $(($(date +%s) - t0)) s"
  if worker_kueue; then
    wait_http "http://127.0.0.1:${ports[14]}/readyz" 60 "cluster1's Kueue (see $REAL/cluster1-kueue.log)"
    wait_http "http://127.0.0.1:${ports[16]}/readyz" 60 "cluster2's Kueue (see $REAL/cluster2-kueue.log)"
    setup_multikueue
    log "MultiKueue active after $(($(date +%s) - t0)) s"
  fi
  for c in cluster1 cluster2; do
    k "$c" wait --for condition=Ready --timeout 30s node --all >/dev/null ||
      die "$c nodes not Ready; see $REAL/$c-kwok.log"
  done
}

operator_args() {
  # shellcheck disable=SC1091
  . "$REAL/ports.env"
  echo --kubeconfig "$REAL/hub.kubeconfig" --metrics-bind-address "$OPERATOR_METRICS" \
    --health-probe-bind-address "$OPERATOR_HEALTH" \
    --worker "cluster1=$REAL/cluster1.kubeconfig" --worker "cluster2=$REAL/cluster2.kubeconfig"
}

usage_hint() {
  cat >&2 <<MSG

  The real stack is up (kubectl: $BIN/kubectl). In another terminal:
    export KUBECONFIG=$REAL/hub.kubeconfig PATH=$ROOT/$BIN:\$PATH
    kubectl get nodes --kubeconfig $REAL/cluster1.kubeconfig
    kubectl create -f examples/batch-job.yaml
  $1

MSG
}

case "$cmd" in
up)
  t0=$(date +%s)
  start_env
  if [ "${REAL_NO_OPERATOR:-0}" != 1 ]; then
    # shellcheck disable=SC2046
    spawn kueue-ks bin/kueue-ks run $(operator_args) "$@"
    # shellcheck disable=SC1091
    . "$REAL/ports.env"
    wait_http "http://$OPERATOR_HEALTH/readyz" 30 "kueue-ks (see $REAL/kueue-ks.log)"
  fi
  log "up in $(($(date +%s) - t0)) s (logs in $REAL/)"
  usage_hint "Stop it with 'make real-down'."
  ;;
run)
  # On a terminal, run again as a job of its own process group, which the terminal's Ctrl-C
  # reaches alone (not make, which would report the interrupted recipe as failed); see
  # scripts/dev.sh in_own_process_group.
  if [ -t 0 ] && [ -t 2 ] && [ -z "${REAL_OWN_GROUP:-}" ]; then
    set -m
    rc=0
    REAL_OWN_GROUP=1 "$ROOT/scripts/realstack/stack.sh" run "$@" || rc=$?
    exit $rc
  fi
  trap stop_for_good EXIT
  # Ctrl-C is how this mode ends: a clean stop, exit 0
  trap 'exit 0' INT TERM
  start_env
  # The operator logs to this terminal; the hint comes once it is ready, below its start-up
  # lines, so that it stays on screen.
  # shellcheck disable=SC2046
  bin/kueue-ks run $(operator_args) "$@" &
  op=$!
  echo "$op" >>"$(pids_file)"
  # shellcheck disable=SC1091
  . "$REAL/ports.env"
  wait_http "http://$OPERATOR_HEALTH/readyz" 30 "kueue-ks"
  usage_hint "Ctrl-C stops everything."
  wait "$op"
  ;;
down)
  stop_for_good
  log "stopped (kubeconfigs removed; logs kept in $REAL)"
  ;;
kueue-restart)
  # kueue-restart CLUSTER [DISPATCHER]: stop that cluster's Kueue and start it again (the bench
  # of bench/multikueue: reservations first under a dispatcher no one implements, then
  # MultiKueue's own); DISPATCHER, if given, replaces multiKueue.dispatcherName in its config.
  c=${1:?usage: stack.sh kueue-restart CLUSTER [DISPATCHER]}
  d=$REAL/$c/kueue
  [ -s "$REAL/$c-kueue.pid" ] || die "no Kueue running on $c"
  pid=$(cat "$REAL/$c-kueue.pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  sed -i "/^$pid\$/d" "$(pids_file)"
  mv "$REAL/$c-kueue.log" "$REAL/$c-kueue.0.log"
  if [ -n "${2:-}" ]; then
    sed -i '/^multiKueue:/,$d' "$d/config.yaml"
    printf 'multiKueue:\n  dispatcherName: %s\n' "$2" >>"$d/config.yaml"
  fi
  spawn_kueue "$c"
  hp=$(sed -n 's/^  healthProbeBindAddress: //p' "$d/config.yaml")
  wait_http "http://$hp/readyz" 60 "$c's Kueue (see $REAL/$c-kueue.log)"
  ;;
nodes)
  nodes "$1"
  ;;
*)
  echo "usage: $0 up|run|down" >&2
  exit 2
  ;;
esac
