#!/usr/bin/env bash
# "A && ok .. || bad .." is safe here: ok only echoes and never fails.
# shellcheck disable=SC2015
# Static and dry-run checks of everything kueue-ks deploys (issue 6):
#   1. shellcheck of every shell script under scripts/ and of the e2e tests this
#      part owns (test/checks/*.sh, test/k3d/scenarios.sh)
#   2. every YAML file under config/ and examples/ parses, and every document
#      has apiVersion, kind and a name (or generateName); config/grafana JSON parses
#   3. kubectl kustomize renders config/default, also with config/prometheus enabled
#   4. RBAC grants exactly the API calls kueue-ks makes (scripts/rbac-check.sh),
#      and every resource the C sources name is among them (scripts/rbac-static.py)
#   5. every metric the Grafana dashboard queries is in config/grafana/metrics.txt
#      and vice versa; the ones kueue-ks already exports are scraped from a live
#      `kueue-ks run` against a devhub (all of them with KKS_METRICS_STRICT=1);
#      every API call that run (and `kueue-ks agent`) makes, as logged by the devhub,
#      is granted by config/rbac (scripts/rbac-observed.py)
#   5c. Dockerfile recipe (stages, user, exec entrypoint, runtime libraries)
#   5d. the kustomizations scripts/k3d/up.sh generates render
#   6. with bin/kueue-ks-devhub: the rendered config/default (with and without
#      prometheus) passes `kubectl apply --dry-run=server`, examples/setup applies and every
#      example job passes `kubectl create --dry-run=server`
# Usage: scripts/manifests-check.sh       (make manifests-check). Exit 0 = all passed.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
DEVHUB=${DEVHUB_BIN:-$ROOT/bin/kueue-ks-devhub}
KKS=${KKS_BIN:-$ROOT/bin/kueue-ks}
fails=0
ok() { echo "ok   $*"; }
bad() {
  echo "FAIL $*"
  fails=$((fails + 1))
}
need() {
  command -v "$1" >/dev/null || {
    echo "FAIL $1 is required: $2"
    exit 1
  }
}
need kubectl "install kubectl >= 1.29"
need shellcheck "apt-get install shellcheck"
need python3 "apt-get install python3 python3-yaml"
python3 -c 'import yaml' 2>/dev/null || {
  echo "FAIL python3 PyYAML is required: apt-get install python3-yaml"
  exit 1
}

WORK=$(mktemp -d /tmp/kks-manifests-XXXXXX)
DPID=
RPID=
cleanup() {
  [ -n "$RPID" ] && kill "$RPID" 2>/dev/null && wait "$RPID" 2>/dev/null
  [ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

# 1. shellcheck
mapfile -t scripts < <(
  find scripts -name '*.sh' -type f
  ls test/checks/*.sh test/k3d/scenarios.sh 2>/dev/null
)
if out=$(shellcheck -x "${scripts[@]}" 2>&1); then
  ok "shellcheck: ${#scripts[@]} scripts clean"
else
  bad "shellcheck"
  echo "$out" | head -60
fi

# 2. YAML/JSON parse
if out=$(python3 - <<'PY' 2>&1
import glob, json, sys, yaml
files = sorted(glob.glob("config/**/*.y*ml", recursive=True) + glob.glob("examples/**/*.y*ml", recursive=True))
bad = 0
docs = 0
for f in files:
    try:
        with open(f) as fh:
            for d in yaml.safe_load_all(fh):
                if d is None:
                    continue
                docs += 1
                if not isinstance(d, dict) or not d.get("apiVersion") or not d.get("kind"):
                    print(f"{f}: a document without apiVersion/kind"); bad += 1; continue
                md = d.get("metadata") or {}
                if d["kind"] not in ("Kustomization",) and not (md.get("name") or md.get("generateName")):
                    print(f"{f}: {d['kind']} without metadata.name or generateName"); bad += 1
    except yaml.YAMLError as e:
        print(f"{f}: {e}"); bad += 1
for f in sorted(glob.glob("config/**/*.json", recursive=True)):
    try:
        json.load(open(f))
    except ValueError as e:
        print(f"{f}: {e}"); bad += 1
print(f"{len(files)} YAML files, {docs} documents")
sys.exit(1 if bad else 0)
PY
); then ok "parse: $out"; else
  bad "parse"
  echo "$out"
fi

# 3. kustomize
# config/default with its [PROMETHEUS] line uncommented, as a user would enable
# it (kustomize only takes relative paths, so the copy lives under build/).
prom=build/manifests-check/default-prometheus
mkdir -p "$prom"
sed -e 's|^#- \.\./prometheus|- ../prometheus|' -e 's|\.\./|../../../config/|' \
  config/default/kustomization.yaml >"$prom/kustomization.yaml"
grep -q 'config/prometheus' "$prom/kustomization.yaml" || bad "config/default has no '#- ../prometheus' line to enable"
for k in config/default "$prom"; do
  name=$(basename "$k")
  if kubectl kustomize "$k" >"$WORK/$name.yaml" 2>"$WORK/err"; then
    ok "kubectl kustomize $k ($(grep -c '^kind:' "$WORK/$name.yaml") objects)"
  else
    bad "kubectl kustomize $k: $(cat "$WORK/err")"
  fi
done
grep -q 'kind: ServiceMonitor' "$WORK/default-prometheus.yaml" 2>/dev/null || bad "config/prometheus renders no ServiceMonitor"
# The deployment must carry what the design promises.
if [ -s "$WORK/default.yaml" ]; then
  for want in 'replicas: 2' -- '- --leader-elect' 'path: /healthz' 'path: /readyz' \
    'readOnlyRootFilesystem: true' 'runAsNonRoot: true' 'type: RuntimeDefault' 'namespace: kueue-ks-system'; do
    [ "$want" = -- ] && continue
    grep -qF -- "$want" "$WORK/default.yaml" || bad "config/default renders without '$want'"
  done
  ok "config/default has replicas, leader election, probes and the security context"
fi

# 4. RBAC
if out=$(scripts/rbac-check.sh 2>&1); then ok "rbac-check: $(echo "$out" | tr '\n' ';')"; else
  bad "rbac-check"
  echo "$out"
fi

# 4b. every API resource the C sources name is listed (and so granted).
if out=$(python3 scripts/rbac-static.py 2>&1); then ok "rbac-static: the $(echo "$out" | wc -l) resources the code names are granted"; else
  bad "rbac-static: resources named in the code but not in config/rbac/expected-calls*.txt"
  echo "$out"
fi

# 5. dashboard metrics
dash=$(grep -o 'kueue_ks_[a-z0-9_]*' config/grafana/kueue-ks.json | sed -E 's/_(bucket|sum|count)$//' | sort -u)
listed=$(grep -v '^[[:space:]]*$' config/grafana/metrics.txt | sort -u)
if [ "$dash" = "$listed" ]; then
  ok "dashboard queries exactly the $(echo "$listed" | wc -l) metrics of metrics.txt"
else
  bad "dashboard vs metrics.txt: $(diff <(echo "$dash") <(echo "$listed") | grep '^[<>]' | tr '\n' ' ')"
fi

# 5c. container image recipe (docker cannot run here: checked statically)
df=Dockerfile
if [ -f "$df" ]; then
  [ "$(grep -c '^FROM debian:bookworm-slim' "$df")" -ge 2 ] && ok "Dockerfile: multi-stage on debian:bookworm-slim" ||
    bad "Dockerfile: want a build and a runtime stage FROM debian:bookworm-slim"
  grep -q '^USER 65532' "$df" && ok "Dockerfile: runs as 65532" || bad "Dockerfile: no 'USER 65532'"
  grep -qE '^ENTRYPOINT \[' "$df" && ok "Dockerfile: exec-form ENTRYPOINT (no shell)" || bad "Dockerfile: ENTRYPOINT not in exec form"
  grep -q 'scripts/deps.sh' "$df" && grep -q 'make ' "$df" && ok "Dockerfile: builds with scripts/deps.sh and make" ||
    bad "Dockerfile: does not build with scripts/deps.sh and the Makefile"
  # Every shared library bin/kueue-ks links must come from a runtime package.
  if [ -x "$KKS" ] && command -v readelf >/dev/null && command -v dpkg >/dev/null; then
    runtime=$(awk '/^FROM/ { n++ } n == 2' "$df")
    missing_pkgs=
    for lib in $(readelf -d "$KKS" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
      pkg=$(dpkg -S "*/$lib" 2>/dev/null | grep -v i386 | head -1 | cut -d: -f1)
      case "$pkg" in "" | libc6) continue ;; esac
      grep -qw -- "$pkg" <<<"$runtime" || missing_pkgs="$missing_pkgs $pkg($lib)"
    done
    if [ -z "$missing_pkgs" ]; then ok "Dockerfile: runtime stage installs every library bin/kueue-ks links"; else
      bad "Dockerfile: runtime stage lacks$missing_pkgs"
    fi
  fi
else
  bad "no Dockerfile"
fi
[ -f .dockerignore ] && grep -qx 'build/' .dockerignore && grep -qx 'bin/' .dockerignore &&
  ok ".dockerignore keeps build outputs out of the context" || bad ".dockerignore must exclude build/ and bin/"

# 5d. the manifests scripts/k3d/up.sh generates render too.
(
  # shellcheck source=scripts/k3d/lib.sh
  . scripts/k3d/lib.sh
  K3D_ROOT=$ROOT
  gen=build/manifests-check/k3d
  write_manager_overlay "$gen/direct" direct
  write_manager_overlay "$gen/kubestellar" kubestellar
  write_agent_overlay "$gen/agent" cluster1
  for d in direct kubestellar agent; do
    kubectl kustomize "$gen/$d" >"$WORK/k3d-$d.yaml" || exit 1
  done
  grep -q -- '--transport=kubestellar' "$WORK/k3d-kubestellar.yaml" || exit 1
  ! grep -q -- '--transport' "$WORK/k3d-direct.yaml" || exit 1
  grep -q 'name: kueue-ks-agent-role' "$WORK/k3d-agent.yaml" && ! grep -q 'manager-role' "$WORK/k3d-agent.yaml"
) && ok "scripts/k3d overlays render (direct, kubestellar, worker agent with only the agent's RBAC)" ||
  bad "scripts/k3d overlays do not render as expected"

# 6. devhub
if [ ! -x "$DEVHUB" ]; then
  echo "skip devhub checks: $DEVHUB not built (make)"
  [ $fails -eq 0 ] && echo "manifests-check: all passed (devhub part skipped)"
  [ $fails -eq 0 ]
  exit
fi
export HOME=$WORK/home KUBECONFIG=$WORK/hub.kubeconfig
mkdir -p "$HOME"
"$DEVHUB" --listen 127.0.0.1:0 --name manifests --kubeconfig-out "$KUBECONFIG" --v 3 \
  --nodes '2xcpu=8,memory=32Gi;labels=instance=spot' \
  --crds config/crd --crds devhub/crds --crds test/e2e/testdata/manifests >"$WORK/devhub.log" 2>&1 &
DPID=$!
for _ in $(seq 200); do
  [ -s "$KUBECONFIG" ] && break
  kill -0 "$DPID" 2>/dev/null || break
  sleep 0.05
done
if [ ! -s "$KUBECONFIG" ]; then
  bad "devhub did not start: $(tail -5 "$WORK/devhub.log")"
  exit 1
fi
k() { timeout 60 kubectl --request-timeout=30s "$@"; }
# A real apiserver refuses a dry-run of objects in a namespace that does not
# exist yet, so the Namespace is created first, for real.
if out=$(python3 -c '
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d.get("kind") == "Namespace":
        print("---"); print(yaml.safe_dump(d))
' "$WORK/default.yaml" | k apply -f - 2>&1); then ok "namespace: $out"; else bad "create namespace: $out"; fi
for name in default default-prometheus; do
  if out=$(k apply --dry-run=server -f "$WORK/$name.yaml" 2>&1); then
    ok "dry-run=server $name: $(echo "$out" | grep -c 'server dry run') objects"
  else
    bad "dry-run=server config/$name"
    echo "$out"
  fi
done
# Really apply it, then the setup the examples need.
if out=$(k apply -f "$WORK/default.yaml" 2>&1); then ok "apply config/default"; else
  bad "apply config/default"
  echo "$out"
fi
if out=$(k apply -f examples/setup/ 2>&1); then ok "apply examples/setup ($(echo "$out" | wc -l) objects)"; else
  bad "apply examples/setup"
  echo "$out"
fi
for f in examples/*.yaml; do
  if out=$(k create --dry-run=server -f "$f" 2>&1); then ok "create --dry-run=server $f"; else bad "create --dry-run=server $f: $out"; fi
done
# The examples keep the shapes the design and the Go original use.
check_field() { # check_field DESC KIND/NAME JSONPATH WANT
  local got
  got=$(k get "$2" -o "jsonpath=$3" 2>&1)
  if [ "$got" = "$4" ]; then ok "$1"; else bad "$1: $2 $3 = '$got', want '$4'"; fi
}
check_field "flavor spot has instance=spot" resourceflavor/spot '{.spec.nodeLabels.instance}' spot
check_field "flavor h100 has instance=h100" resourceflavor/h100 '{.spec.nodeLabels.instance}' h100
check_field "admission check controller" admissioncheck/kubestellar-admc '{.spec.controllerName}' kubestellar.io/ks-kueue
check_field "cluster queue is managed" clusterqueue/cluster-queue-ks '{.metadata.labels.kueue-ks\.io/managed-quota}' true
check_field "cluster queue uses the check" clusterqueue/cluster-queue-ks \
  '{.spec.admissionChecksStrategy.admissionChecks[0].name}' kubestellar-admc
check_field "cluster queue preempts lower priority" clusterqueue/cluster-queue-ks \
  '{.spec.preemption.withinClusterQueue}' LowerPriority
check_field "local queue" localqueue/user-queue-ks '{.spec.clusterQueue}' cluster-queue-ks

# Jobs for the controllers to work on while kueue-ks runs below.
for f in examples/*.yaml; do k create -f "$f" >/dev/null 2>&1 || bad "create $f"; done

# 5b. metrics a live kueue-ks exports (scraped from /metrics), and every API
# call it makes (logged by the devhub) is granted by config/rbac.
if [ -x "$KKS" ]; then
  first=$(($(wc -l <"$WORK/devhub.log") + 1))
  "$KKS" run --metrics-bind-address 127.0.0.1:0 --health-probe-bind-address 0 \
    --leader-elect --leader-election-namespace kueue-ks-system >"$WORK/run.log" 2>&1 &
  RPID=$!
  port=
  for _ in $(seq 100); do
    port=$(sed -n 's/.*http server listening.* port=\([0-9][0-9]*\).*/\1/p' "$WORK/run.log" | head -1)
    [ -n "$port" ] && break
    sleep 0.1
  done
  if [ -z "$port" ]; then
    bad "kueue-ks run did not start its metrics server: $(tail -5 "$WORK/run.log")"
  else
    exported=$(curl -sS --max-time 10 "http://127.0.0.1:$port/metrics" | sed -n 's/^# TYPE \([a-z0-9_]*\) .*/\1/p' | sort -u)
    not_exported=$(comm -23 <(echo "$listed") <(echo "$exported"))
    # Exported by the code on this branch today; must never disappear.
    for m in kueue_ks_rest_client_requests_total kueue_ks_rest_client_request_duration_seconds kueue_ks_leader; do
      grep -qx "$m" <<<"$exported" || bad "kueue-ks run does not export $m"
    done
    if [ -z "$not_exported" ]; then
      ok "kueue-ks exports every dashboard metric"
    elif [ "${KKS_METRICS_STRICT:-0}" = 1 ]; then
      bad "dashboard metrics not exported: $(echo "$not_exported" | tr '\n' ' ')"
    else
      ok "kueue-ks exports $(comm -12 <(echo "$listed") <(echo "$exported") | wc -l) of $(echo "$listed" | wc -l) dashboard metrics; not yet: $(echo "$not_exported" | tr '\n' ' ')(KKS_METRICS_STRICT=1 fails on these)"
    fi
  fi
  sleep "${KKS_RBAC_OBSERVE_SECONDS:-4}" # let the controllers act on the example jobs
  kill "$RPID" 2>/dev/null && wait "$RPID" 2>/dev/null
  RPID=
  if out=$(python3 scripts/rbac-observed.py config/rbac/expected-calls.txt "$WORK/devhub.log" "$first" kueue-ks-system 2>&1); then
    ok "every API call kueue-ks run made is granted by config/rbac ($(echo "$out" | wc -l) distinct calls)"
  else
    bad "kueue-ks run made API calls config/rbac does not grant:"
    echo "$out"
  fi
  # The agent, when this binary has it.
  if "$KKS" --help 2>&1 | grep -qE '^  agent '; then
    first=$(($(wc -l <"$WORK/devhub.log") + 1))
    timeout -s TERM 4 "$KKS" agent --cluster-name manifests --metrics-bind-address 0 \
      --health-probe-bind-address 0 >"$WORK/agent.log" 2>&1
    if out=$(python3 scripts/rbac-observed.py config/rbac/expected-calls-agent.txt "$WORK/devhub.log" "$first" 2>&1); then
      ok "every API call kueue-ks agent made is granted by the agent role ($(echo "$out" | wc -l) distinct calls)"
    else
      bad "kueue-ks agent made API calls the agent role does not grant:"
      echo "$out"
    fi
  fi
fi

if [ $fails -eq 0 ]; then echo "manifests-check: all passed"; else echo "manifests-check: $fails failed"; fi
[ $fails -eq 0 ]
