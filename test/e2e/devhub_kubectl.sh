#!/usr/bin/env bash
# End-to-end test of kueue-ks-devhub with the real kubectl: discovery, CRDs,
# CRUD, watch, patch flavours, apply, scale, finalizers, garbage collection,
# optimistic concurrency, malformed requests, restart with --data, 410 after
# compaction, SIGTERM. One line per step; exits non-zero on the first failure.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${DEVHUB_BIN:-$ROOT/bin/kueue-ks-devhub}
TD=$ROOT/test/e2e/testdata
command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
[ -x "$BIN" ] || { echo "FAIL: $BIN not built"; exit 1; }

WORK=$(mktemp -d /tmp/devhub-e2e-XXXXXX)
PID=
PID2=
PID3=
cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
  [ -n "$PID3" ] && kill "$PID3" 2>/dev/null && wait "$PID3" 2>/dev/null
  [ -n "$PID2" ] && kill "$PID2" 2>/dev/null && wait "$PID2" 2>/dev/null
  if [ -n "${KEEP_LOG:-}" ]; then cp "$WORK/devhub.log" "$KEEP_LOG"; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
export HOME=$WORK/home # private kubectl discovery cache
mkdir -p "$HOME"
export KUBECONFIG=$WORK/kubeconfig
TOKEN=e2e-$RANDOM-$RANDOM
STEP=0

pass() { echo "ok   $STEP $1"; }
die() {
  echo "FAIL $STEP $1"
  [ -n "${2:-}" ] && echo "---- output:" && echo "$2" | head -40
  echo "---- devhub log (tail):"
  tail -20 "$WORK/devhub.log" 2>/dev/null
  exit 1
}
# step NAME EXPECTED-REGEX CMD...: run, require exit 0 and output matching the regex.
step() {
  local name=$1 want=$2
  shift 2
  STEP=$((STEP + 1))
  local out
  out=$("$@" 2>&1) || die "$name (exit $?)" "$out"
  echo "$out" | grep -Eq -- "$want" || die "$name: output does not match /$want/" "$out"
  pass "$name"
}
# step_fail NAME EXPECTED-REGEX CMD...: require a non-zero exit and matching output.
step_fail() {
  local name=$1 want=$2
  shift 2
  STEP=$((STEP + 1))
  local out
  if out=$("$@" 2>&1); then die "$name: expected failure" "$out"; fi
  echo "$out" | grep -Eq -- "$want" || die "$name: output does not match /$want/" "$out"
  pass "$name"
}

start_devhub() { # start_devhub LISTEN [extra flags]
  local listen=$1
  shift
  local d
  for d in "$ROOT/config/crd" "$ROOT/devhub/crds"; do
    ls "$d"/*.yaml >/dev/null 2>&1 && set -- "$@" --crds "$d"
  done
  rm -f "$KUBECONFIG"
  # same-port: 127.0.0.1:0 at first; the restart keeps its port (kubeconfigs written before)
  "$BIN" --listen "$listen" --name e2e --kubeconfig-out "$KUBECONFIG" --token "$TOKEN" \
    --data "$WORK/hub.db" --crds "$TD/crds" --bookmark-interval 1 \
    --nodes '2xcpu=8,memory=32Gi,nvidia.com/gpu=1;labels=instance=h100' "$@" >>"$WORK/devhub.log" 2>&1 &
  PID=$!
  local deadline=$((SECONDS + 120))
  while [ $SECONDS -le $deadline ]; do
    [ -s "$KUBECONFIG" ] && break
    kill -0 "$PID" 2>/dev/null || die "devhub exited at start"
    sleep 0.05
  done
  [ -s "$KUBECONFIG" ] || die "devhub wrote no kubeconfig"
  SERVER=$(sed -n 's/^ *server: //p' "$KUBECONFIG")
  sed -n 's/^ *certificate-authority-data: //p' "$KUBECONFIG" | base64 -d >"$WORK/ca.crt"
}
# curl against the devhub with the bearer token and the instance CA.
kcurl() { curl -sS --cacert "$WORK/ca.crt" -H "Authorization: Bearer $TOKEN" "$@"; }

start_devhub 127.0.0.1:0
PORT=${SERVER##*:}

# Crds shipped with the project.
for d in "$ROOT/config/crd" "$ROOT/devhub/crds"; do
  step "apply CRDs from ${d#"$ROOT"/}" "created|configured|unchanged" kubectl apply -f "$d"
done

step "Kueue CRDs served in v1beta1 and v1beta2" "workloads +[a-z,]* +kueue.x-k8s.io/v1beta2 +true +Workload" \
  kubectl api-resources
step "v1beta1 objects readable as v1beta2 (shared storage)" "kueue.x-k8s.io/v1beta2" sh -c \
  "echo '{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"ResourceFlavor\",\"metadata\":{\"name\":\"rf1\"}}' |
   kubectl create -f - >/dev/null && kubectl get resourceflavors.v1beta2.kueue.x-k8s.io rf1 -o jsonpath='{.apiVersion}'"
step "ClusterMetrics printer columns" "NAME +NODES +READY +AGE.*c1 +3 +True" sh -c \
  "echo '{\"apiVersion\":\"galaxy.kubestellar.io/v1alpha1\",\"kind\":\"ClusterMetrics\",\"metadata\":{\"name\":\"c1\"}}' |
   kubectl create -f - >/dev/null &&
   kubectl patch cmet c1 --subresource=status --type merge -p '{\"status\":{\"nodeCount\":3,\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"Fresh\",\"message\":\"\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}}' >/dev/null &&
   kubectl get cmet | tr '\n' ' '"
step "version reports v1.32.0" "Server Version: v1.32.0" kubectl version
step "anonymous request gets 401 Status" '"reason":"Unauthorized".*"code":401' \
  curl -sS --cacert "$WORK/ca.crt" "$SERVER/api/v1/namespaces"
step "client certificate authenticates" "default" kubectl get ns default -o name
step "bearer token authenticates" '"kind":"NamespaceList"' kcurl "$SERVER/api/v1/namespaces"
# A client that stops in the middle of its TLS handshake (its loop busy, as the operator's is
# while it reads a 10,000-item list): MHD's epoll mode asks to be run at once until the
# client goes on, and the devhub spun a core on that (100 % CPU; devhub/server.c
# can_progress). Idle it uses well under 5 %; 25 % leaves room for a busy machine.
step "a stalled TLS handshake does not make the devhub spin" '^cpu=0\.([01][0-9]|2[0-4])$' \
  python3 "$ROOT/test/e2e/lib/tls_stall.py" 127.0.0.1 "$PORT" "$PID" 2
# Several requests on one connection (curl reuses it: num_connects 0 after the first): the
# client certificate's verdict is kept per connection (devhub/server.c), and every request on
# it must still be judged as the first was.
sed -n 's/^ *client-certificate-data: //p' "$KUBECONFIG" | base64 -d >"$WORK/client.crt"
sed -n 's/^ *client-key-data: //p' "$KUBECONFIG" | base64 -d >"$WORK/client.key"
NS_URL="$SERVER/api/v1/namespaces"
W='%{http_code} %{num_connects} '
step "one connection without credentials: 401 at each request" '^401 1 401 0 $' \
  curl -s --cacert "$WORK/ca.crt" -w "$W" -o /dev/null "$NS_URL" -o /dev/null "$NS_URL"
step "one connection, nothing then the token: 401 then 200" '^401 1 200 0 $' \
  curl -s --cacert "$WORK/ca.crt" -w "$W" -o /dev/null "$NS_URL" --next -s --cacert "$WORK/ca.crt" \
  -w "$W" -H "Authorization: Bearer $TOKEN" -o /dev/null "$NS_URL"
step "one connection with the client certificate: 200 at each request" '^200 1 200 0 $' \
  curl -s --cacert "$WORK/ca.crt" --cert "$WORK/client.crt" --key "$WORK/client.key" -w "$W" \
  -o /dev/null "$NS_URL" -o /dev/null "$NS_URL"
step "healthz" "^ok$" kubectl get --raw /healthz
step "api-resources lists built-ins and --crds CRD" "widgets +wd +e2e.devhub.io/v1 +false +Widget" \
  kubectl api-resources
step "get --raw /apis" '"name":"batch".*"preferredVersion"' kubectl get --raw /apis
step "--nodes: Ready nodes with -o wide columns" "e2e-node-2 +Ready .*v1.32.0 +10\\." kubectl get nodes -o wide
step "--nodes: capacity and labels" "^1 h100$" kubectl get node e2e-node-1 \
  -o 'jsonpath={.status.allocatable.nvidia\.com/gpu} {.metadata.labels.instance}'
step "Table output for namespaces" "default +Active" kubectl get ns
step "apply CRD at run time" "gadgets.e2e.devhub.io created" kubectl apply -f "$TD/gadget-crd.yaml"
step "wait for condition established" "condition met" \
  kubectl wait --for condition=established crd/gadgets.e2e.devhub.io --timeout=120s
step "new resource served at once" "gadgets +gd +e2e.devhub.io/v1 +true +Gadget" kubectl api-resources

cat >"$WORK/gen.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata:
  generateName: gen-
  labels: {tier: e2e}
data: {k: v}
Y
step "create with generateName" "^configmap/gen-[a-z0-9]{5} created" kubectl create -f "$WORK/gen.yaml"
GEN=$(kubectl get cm -l tier=e2e -o jsonpath='{.items[0].metadata.name}')
# --sort-by asks for Table rows with includeObject=Object and decodes each row's object, which
# must carry kind and apiVersion although list items of built-in kinds do not
for n in sort-b sort-a; do
  kubectl create configmap "$n" --from-literal=k=v >/dev/null || die "configmap $n not created"
done
step "get --sort-by on a built-in kind" "^sort-a sort-b $" \
  sh -c "kubectl get cm --sort-by=.metadata.name --no-headers | awk '/^sort-/{printf \"%s \", \$1}'"

cat >"$WORK/app.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  labels: {app: demo}
data: {color: blue}
Y
step "apply creates" "configmap/app created" kubectl apply -f "$WORK/app.yaml"
step "second apply is a no-op" "configmap/app unchanged" kubectl apply -f "$WORK/app.yaml"
sed -i 's/blue/green/' "$WORK/app.yaml"
step "changed apply configures" "configmap/app configured" kubectl apply -f "$WORK/app.yaml"
step "applied value stored" "^green$" kubectl get cm app -o 'jsonpath={.data.color}'
step "get -o wide" "^app " kubectl get cm -o wide
step "get -o json" '"color": "green"' kubectl get cm app -o json
step "get -l selects by label" "^$GEN$" kubectl get cm -l tier=e2e -o 'jsonpath={.items[*].metadata.name}'
step "get -l with set selector" "^app$" kubectl get cm -l 'app in (demo,x)' -o 'jsonpath={.items[*].metadata.name}'
step "get --field-selector" "^app$" kubectl get cm --field-selector metadata.name=app \
  -o 'jsonpath={.items[*].metadata.name}'
step_fail "bad label selector is a 400" "BadRequest|unable to parse|invalid" \
  kubectl get cm -l 'a in (b'

kubectl get cm app -w -o 'custom-columns=N:.metadata.name,C:.data.color' --no-headers \
  >"$WORK/watch.out" 2>&1 &
WPID=$!
sleep 1.5 # not needed for the check: kubectl -w lists first (red either way)
kubectl patch cm app --type merge -p '{"data":{"color":"red"}}' >/dev/null 2>&1
deadline=$((SECONDS + 120))
until grep -q red "$WORK/watch.out" || [ $SECONDS -gt $deadline ]; do sleep 0.1; done
kill $WPID 2>/dev/null
wait $WPID 2>/dev/null
step "get -w receives the update" "app +red" cat "$WORK/watch.out"

step "label" "configmap/app labeled" kubectl label cm app stage=test
step "annotate" "configmap/app annotated" kubectl annotate cm app note=hello
step "merge patch" "configmap/app patched" kubectl patch cm app --type merge -p '{"data":{"size":"L"}}'
step "json patch" "configmap/app patched" kubectl patch cm app --type json \
  -p '[{"op":"replace","path":"/data/size","value":"XL"}]'
step "strategic patch" "configmap/app patched" kubectl patch cm app -p '{"data":{"shape":"round"}}'
step "patches stored" "^test hello XL round$" kubectl get cm app \
  -o 'jsonpath={.metadata.labels.stage} {.metadata.annotations.note} {.data.size} {.data.shape}'
step "describe" "Labels: +app=demo" kubectl describe cm app

cat >"$WORK/deploy.yaml" <<'Y'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: nginx}]
Y
step "create deployment" "deployment.apps/web created" kubectl apply -f "$WORK/deploy.yaml"
step "scale deployment" "deployment.apps/web scaled" kubectl scale deployment web --replicas=3
step "scale stored, generation bumped" "^3 2$" kubectl get deploy web \
  -o 'jsonpath={.spec.replicas} {.metadata.generation}'

cat >"$WORK/gadget.yaml" <<'Y'
apiVersion: e2e.devhub.io/v1
kind: Gadget
metadata: {name: g1, finalizers: [e2e.devhub.io/hold]}
spec: {size: big}
Y
step "create custom resource" "gadget.e2e.devhub.io/g1 created" kubectl apply -f "$WORK/gadget.yaml"
step "status subresource write" "patched" kubectl patch gadget g1 --subresource=status --type merge \
  -p '{"status":{"conditions":[{"type":"Ready","status":"True","reason":"Up","message":"ok","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}'
step "main resource write ignores status" "^big True$" sh -c \
  "kubectl patch gadget g1 --type merge -p '{\"status\":{\"conditions\":[]}}' >/dev/null &&
   kubectl get gadget g1 -o 'jsonpath={.spec.size} {.status.conditions[0].status}'"
step "CRD additionalPrinterColumns in kubectl get" "NAME +SIZE +READY.*g1 +big +True" \
  sh -c "kubectl get gadgets | tr '\n' ' '"
step "wait --for=condition=Ready" "condition met" kubectl wait --for=condition=Ready gadget/g1 --timeout=120s
step "delete with finalizer returns" 'gadget.e2e.devhub.io "g1" deleted' kubectl delete gadget g1 --wait=false
step "object stays Terminating" "^g1 [0-9TZ:-]+$" kubectl get gadget g1 \
  -o 'jsonpath={.metadata.name} {.metadata.deletionTimestamp}'
step "removing the finalizer deletes it" "patched" kubectl patch gadget g1 --type json \
  -p '[{"op":"remove","path":"/metadata/finalizers"}]'
step_fail "object is gone" 'gadgets.e2e.devhub.io "g1" not found' kubectl get gadget g1

# kubectl's generator commands send protobuf: decoded for the simple kinds.
step "kubectl create namespace (protobuf)" "namespace/e2e-pb created" kubectl create namespace e2e-pb
step "kubectl create configmap --from-literal (protobuf)" "configmap/pbcm created" \
  kubectl create configmap pbcm -n e2e-pb --from-literal=k=v
step "kubectl create secret generic (protobuf)" "^djI= Opaque$" sh -c \
  "kubectl create secret generic pbs -n e2e-pb --from-literal=p=v2 >/dev/null &&
   kubectl get secret pbs -n e2e-pb -o 'jsonpath={.data.p} {.type}'"
step "kubectl auth can-i" "^yes$" kubectl auth can-i create pods
step "kubectl auth whoami" "Username +admin" kubectl auth whoami
step "kubectl create deployment (protobuf)" "deployment.apps/pbd created" \
  kubectl create deployment pbd -n e2e-pb --image=nginx --replicas=2
step "its spec arrived whole" "^2 nginx app=pbd$" kubectl get deploy pbd -n e2e-pb \
  -o 'jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image} app={.spec.selector.matchLabels.app}'
step "kubectl create job --image (protobuf)" "job.batch/pbj created" \
  kubectl create job pbj -n e2e-pb --image=busybox -- sleep 5
step "the job's command arrived" '^\["sleep","5"\]$' kubectl get job pbj -n e2e-pb \
  -o 'jsonpath={.spec.template.spec.containers[0].command}'
# A well-formed protobuf body of a kind the decoder has no schema for: a clear 415.
printf 'k8s\000\012\014\012\002v1\022\006Widget\022\000' >"$WORK/widget.pb"
step "protobuf of an unknown kind is a clear 415" '"code":415' \
  kcurl -X POST -H 'Content-Type: application/vnd.kubernetes.protobuf' \
  --data-binary @"$WORK/widget.pb" "$SERVER/api/v1/namespaces/e2e-pb/configmaps"
step "namespace deletion removes its contents" 'namespace "e2e-pb" deleted' kubectl delete ns e2e-pb
step_fail "namespace and contents gone" 'namespaces "e2e-pb" not found' kubectl get cm pbcm -n e2e-pb
step "no configmaps left in it" '"items":\[\]' kubectl get --raw /api/v1/namespaces/e2e-pb/configmaps

# Fidelity with kube-apiserver where users look (devhub/README.md, "Known
# differences"): Job defaults and selector, the Suspended condition the job
# controller writes, strict field validation, quantities, pods/log. A second
# devhub runs the simulators (--kueue --run-jobs), as a hub or worker does.
SIMKC=$WORK/sim.kubeconfig
"$BIN" --listen 127.0.0.1:0 --name sim --kubeconfig-out "$SIMKC" --kueue --run-jobs --time-scale 0.1 \
  --crds "$ROOT/devhub/crds" --crds "$ROOT/config/crd" --nodes '2xcpu=8,memory=32Gi' >>"$WORK/sim.log" 2>&1 &
PID3=$!
deadline=$((SECONDS + 120))
until [ -s "$SIMKC" ] || [ $SECONDS -gt $deadline ]; do sleep 0.05; done
[ -s "$SIMKC" ] || die "simulating devhub wrote no kubeconfig"
ks() { kubectl --kubeconfig "$SIMKC" "$@"; }
jobyaml() { # NAME EXTRA-SPEC-LINE EXTRA-METADATA-LINE
  printf 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n%s\nspec:\n%s\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n        image: busybox\n        command: [sleep, "%s"]\n%s\n' \
    "$1" "${3:-}" "${2:-}" "${SLEEP:-5}" "${RES:-}" >"$WORK/$1.yaml"
}
jobyaml pi
step "job created" "job.batch/pi created" ks create -f "$WORK/pi.yaml"
step "job selector is its own controller-uid" "^ok$" sh -c \
  "kubectl --kubeconfig '$SIMKC' get job pi -o json | jq -r '
    if .spec.selector.matchLabels == {\"batch.kubernetes.io/controller-uid\": .metadata.uid}
       and .spec.template.metadata.labels[\"controller-uid\"] == .metadata.uid
       and .spec.template.metadata.labels[\"batch.kubernetes.io/job-name\"] == \"pi\"
       and .metadata.labels[\"job-name\"] == \"pi\" then \"ok\" else . end'"
step "job defaults as the apiserver writes them" \
  "^1 1 6 NonIndexed false TerminatingOrFailed ClusterFirst default-scheduler 30 Always File$" \
  ks get job pi -o 'jsonpath={.spec.parallelism} {.spec.completions} {.spec.backoffLimit} {.spec.completionMode} {.spec.suspend} {.spec.podReplacementPolicy} {.spec.template.spec.dnsPolicy} {.spec.template.spec.schedulerName} {.spec.template.spec.terminationGracePeriodSeconds} {.spec.template.spec.containers[0].imagePullPolicy} {.spec.template.spec.containers[0].terminationMessagePolicy}'
step "describe job shows selector and the new fields" \
  "Selector: +batch.kubernetes.io/controller-uid=.*Completion Mode: +NonIndexed.*Suspend: +false.*Backoff Limit: +6" \
  sh -c "kubectl --kubeconfig '$SIMKC' describe job pi | tr '\n' ' '"
step "job runs to Complete" "condition met" ks wait --for=condition=Complete job/pi --timeout=120s
step "kubectl logs job/X picks its pod and returns" "^$" ks logs job/pi --pod-running-timeout=60s
POD=$(ks get pods -l job-name=pi -o 'jsonpath={.items[0].metadata.name}')
step_fail "logs of a container the pod does not have" "container nope is not valid for pod $POD" \
  ks logs "pod/$POD" -c nope
step "pod defaults (admission, QoS)" "^default 0 BestEffort 300 300 true$" ks get pod "$POD" \
  -o 'jsonpath={.spec.serviceAccountName} {.spec.priority} {.status.qosClass} {.spec.tolerations[*].tolerationSeconds} {.spec.enableServiceLinks}'
jobyaml held '  suspend: true'
step "a suspended job" "job.batch/held created" ks create -f "$WORK/held.yaml"
deadline=$((SECONDS + 120))
until [ "$(ks get job held -o 'jsonpath={.status.conditions[0].type}')" = Suspended ] || [ $SECONDS -gt $deadline ]; do
  sleep 0.1
done
step "kubectl get jobs: STATUS Suspended" "^held +Suspended +0/1" ks get job held --no-headers
step "Suspended condition as the job controller writes it" "^True JobSuspended Job suspended$" \
  ks get job held -o 'jsonpath={.status.conditions[?(@.type=="Suspended")].status} {.status.conditions[?(@.type=="Suspended")].reason} {.status.conditions[?(@.type=="Suspended")].message}'
step "kubectl logs job/X of a job without pods waits, then says so" "timed out waiting for the condition" \
  sh -c "kubectl --kubeconfig '$SIMKC' logs job/held --pod-running-timeout=1s 2>&1; true"
step "resume" "job.batch/held patched" ks patch job held --type merge -p '{"spec":{"suspend":false}}'
step "resumed job completes, Suspended turns False/JobResumed" "^False JobResumed Job resumed$" sh -c \
  "kubectl --kubeconfig '$SIMKC' wait --for=condition=Complete job/held --timeout=120s >/dev/null &&
   kubectl --kubeconfig '$SIMKC' get job held -o 'jsonpath={.status.conditions[?(@.type==\"Suspended\")].status} {.status.conditions[?(@.type==\"Suspended\")].reason} {.status.conditions[?(@.type==\"Suspended\")].message}'"
jobyaml other '  suspend: true
  managedBy: example.com/other'
step "a job another controller manages" "job.batch/other created" ks create -f "$WORK/other.yaml"
sleep 0.5 # nothing must happen: no state to wait for
step "the job controller leaves it alone" "^other +Running +0/1" ks get job other --no-headers
step "no status written for it" "^$" ks get job other -o 'jsonpath={.status.conditions}'
jobyaml queued '' '  labels: {kueue.x-k8s.io/queue-name: user-queue}'
step "a job for a Kueue queue" "job.batch/queued created" ks create -f "$WORK/queued.yaml"
step "created suspended by the (emulated) Kueue webhook" "^true$" ks get job queued -o 'jsonpath={.spec.suspend}'
jobyaml typo '  paralelism: 2'
step_fail "unknown field: strict decoding error (kubectl default)" \
  "Error from server \(BadRequest\): error when creating \".*typo.yaml\": Job in version \"v1\" cannot be handled as a Job: strict decoding error: unknown field \"spec.paralelism\"" \
  ks create -f "$WORK/typo.yaml"
step_fail "apply of the same file: strict decoding error" \
  'Job in version "v1" cannot be handled as a Job: strict decoding error: unknown field "spec.paralelism"' \
  ks apply -f "$WORK/typo.yaml"
step "--validate=warn: created with a warning" \
  "Warning: unknown field \"spec.paralelism\".*job.batch/typo created" \
  sh -c "kubectl --kubeconfig '$SIMKC' create -f '$WORK/typo.yaml' --validate=warn 2>&1 | tr '\n' ' '"
step "--validate=false: created silently, field dropped" "^job.batch/typo2 created$" sh -c \
  "sed 's/name: typo/name: typo2/' '$WORK/typo.yaml' | kubectl --kubeconfig '$SIMKC' create -f - --validate=false 2>&1"
step_fail "apply adding an unknown field to an existing job: 422 on the patch" \
  'The request is invalid: patch: Invalid value: ".*": strict decoding error: unknown field "spec.paralelism"' \
  sh -c "sed 's/name: typo/name: pi/' '$WORK/typo.yaml' | kubectl --kubeconfig '$SIMKC' apply -f -"
step_fail "unknown field of a custom resource" \
  'strict decoding error: unknown field "spec.colour"' \
  sh -c "printf 'apiVersion: galaxy.kubestellar.io/v1alpha1\nkind: ClusterMetrics\nmetadata:\n  name: c1\nspec:\n  colour: red\n' | kubectl --kubeconfig '$SIMKC' create -f -"
RES='        resources: {requests: {cpu: "1x"}}' jobyaml badqty
step_fail "invalid quantity: the apiserver's decode error" \
  "Error from server \(BadRequest\): error when creating \".*badqty.yaml\": Job in version \"v1\" cannot be handled as a Job: quantities must match the regular expression '\^\(\[\+-\]\?\[0-9\.\]\+\)\(\[eEinumkKMGTP\]\*\[-\+\]\?\[0-9\]\*\)\\$'" \
  ks create -f "$WORK/badqty.yaml"
kill "$PID3" 2>/dev/null && wait "$PID3" 2>/dev/null
PID3=

# ownerReference garbage collection: background and foreground.
# (Manifests via kubectl apply here, as users write them.)
# (it answers 415); create from JSON manifests instead.
mkcm() { echo "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"$1\"}}" |
  kubectl create -f - -o 'jsonpath={.metadata.uid}' 2>/dev/null; }
OWNER_UID=$(mkcm owner)
[ -n "$OWNER_UID" ] || die "create owner"
for i in 1 2; do
  cat <<Y | kubectl create -f - >/dev/null 2>&1 || die "create dependent $i"
apiVersion: v1
kind: ConfigMap
metadata:
  name: dep$i
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: "$OWNER_UID"}]
Y
done
step "delete owner (background)" 'configmap "owner" deleted' kubectl delete cm owner
deadline=$((SECONDS + 120))
while kubectl get cm dep1 >/dev/null 2>&1 && [ $SECONDS -le $deadline ]; do sleep 0.1; done
step_fail "dependents garbage-collected" 'configmaps "dep1" not found' kubectl get cm dep1

FG_UID=$(mkcm fgowner)
cat <<Y | kubectl create -f - >/dev/null 2>&1 || die "create fg dependent"
apiVersion: v1
kind: ConfigMap
metadata:
  name: fgdep
  finalizers: [e2e.devhub.io/hold]
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: fgowner, uid: "$FG_UID", blockOwnerDeletion: true}]
Y
step "foreground delete" 'configmap "fgowner" deleted' kubectl delete cm fgowner --cascade=foreground --wait=false
sleep 0.3
step "owner waits for its dependent" "^foregroundDeletion [0-9TZ:-]+$" kubectl get cm fgowner \
  -o 'jsonpath={.metadata.finalizers[0]} {.metadata.deletionTimestamp}'
kubectl patch cm fgdep --type json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1
deadline=$((SECONDS + 120))
while kubectl get cm fgowner >/dev/null 2>&1 && [ $SECONDS -le $deadline ]; do sleep 0.1; done
step_fail "owner deleted after its dependent" 'configmaps "fgowner" not found' kubectl get cm fgowner

# Optimistic concurrency via curl: a stale resourceVersion gets 409.
OLD_RV=$(kubectl get cm app -o 'jsonpath={.metadata.resourceVersion}')
kubectl annotate cm app bump=1 >/dev/null 2>&1
step "stale update gets 409 Conflict" \
  'Operation cannot be fulfilled on configmaps \\"app\\": the object has been modified; please apply your changes to the latest version and try again.*"reason":"Conflict".*"code":409' \
  kcurl -X PUT -H 'Content-Type: application/json' "$SERVER/api/v1/namespaces/default/configmaps/app" \
  -d "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"app\",\"resourceVersion\":\"$OLD_RV\"}}"
step "create of an existing name gets 409 AlreadyExists" '"reason":"AlreadyExists".*"code":409' \
  kcurl -X POST -H 'Content-Type: application/json' "$SERVER/api/v1/namespaces/default/configmaps" \
  -d '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app"}}'
step "missing object gets 404 with details" '"message":"jobs.batch \\"nope\\" not found","reason":"NotFound","details":\{"name":"nope","group":"batch","kind":"jobs"\},"code":404' \
  kcurl "$SERVER/apis/batch/v1/namespaces/default/jobs/nope"

# Malformed requests: clear 4xx Status bodies, the server keeps serving.
step "bad JSON is 400" '"kind":"Status".*"status":"Failure".*"reason":"BadRequest".*"code":400' \
  kcurl -X POST -H 'Content-Type: application/json' "$SERVER/api/v1/namespaces/default/configmaps" -d '{"metadata":'
step "wrong kind for the URL is 400" '"reason":"BadRequest".*"code":400' \
  kcurl -X POST -H 'Content-Type: application/json' "$SERVER/api/v1/namespaces/default/configmaps" \
  -d '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}'
step "missing name is 422 Invalid" '"reason":"Invalid".*"code":422' \
  kcurl -X POST -H 'Content-Type: application/json' "$SERVER/api/v1/namespaces/default/configmaps" \
  -d '{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}'
step "unknown resource is 404" '"reason":"NotFound".*"code":404' kcurl "$SERVER/apis/nope.io/v1/things"
head -c 3200000 /dev/zero | tr '\0' 'a' >"$WORK/big.txt"
step "body over 3 MiB is 413" '"code":413' \
  kcurl -X POST -H 'Content-Type: application/json' "$SERVER/api/v1/namespaces/default/configmaps" \
  --data-binary @"$WORK/big.txt"
step "server-side apply is 415 and says so" '"code":415' \
  kcurl -X PATCH -H 'Content-Type: application/apply-patch+yaml' \
  "$SERVER/api/v1/namespaces/default/configmaps/app?fieldManager=x" -d 'data: {a: b}'
step "still serving after bad requests" "^app$" kubectl get cm app -o 'jsonpath={.metadata.name}'

# Paging.
step "paging with limit/continue" '"continue":"[A-Za-z0-9+/=]+"' \
  kubectl get --raw '/api/v1/namespaces/default/configmaps?limit=1'

# Fault injection through the admin endpoint.
step "faults: inject 429 on every write" '"writeFailRate":1' \
  kcurl -X PUT "$SERVER/devhub/faults" -d '{"writeFailRate":1,"failCodes":[429]}'
step "faults: write fails with 429 + Retry-After" 'Retry-After: 1' \
  kcurl -i -X POST -H 'Content-Type: application/json' "$SERVER/api/v1/namespaces/default/configmaps" \
  -d '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"faulty"}}'
step "faults: reads unaffected" "^app$" kubectl get cm app -o 'jsonpath={.metadata.name}'
step "faults: pause" '"paused":true' kcurl -X PUT "$SERVER/devhub/faults" -d '{"writeFailRate":0,"paused":true}'
STEP=$((STEP + 1))
out=$(kcurl -m 1 "$SERVER/api/v1/namespaces" 2>&1) && die "paused server answered" "$out"
pass "faults: paused server does not answer"
step "faults: resume" '"paused":false' kcurl -X PUT "$SERVER/devhub/faults" -d '{"paused":false}'
step "faults: cut watches" '"cutWatchesEverySec":1' kcurl -X PUT "$SERVER/devhub/faults" -d '{"cutWatchesEverySec":1}'
STEP=$((STEP + 1))
# curl exits 0 only when the server ends the stream (its -m expiry is exit 28): the cut is the
# state checked; -m is a hang guard far beyond the 1 s period (no bound on how fast it came)
kcurl -m 60 "$SERVER/api/v1/namespaces/default/configmaps?watch=1" >/dev/null 2>&1 || die "cut watch: curl failed (exit $?)"
pass "faults: watch stream closed by the server"
step "faults: reset" '"cutWatchesEverySec":0' kcurl -X PUT "$SERVER/devhub/faults" -d '{"cutWatchesEverySec":0}'
step "faults: bad settings are a 400" '"code":400' kcurl -X PUT "$SERVER/devhub/faults" -d '{"writeFailRate":7}'

# A second instance side by side: its own port, CA, data and client certificate.
"$BIN" --listen 127.0.0.1:0 --name second --kubeconfig-out "$WORK/second.kubeconfig" \
  --log-format json >"$WORK/second.log" 2>&1 &
PID2=$!
deadline=$((SECONDS + 120))
until [ -s "$WORK/second.kubeconfig" ] || [ $SECONDS -gt $deadline ]; do sleep 0.05; done
step "second instance serves" "No resources found" kubectl --kubeconfig "$WORK/second.kubeconfig" get cm
step "instances are separate" "^$" kubectl --kubeconfig "$WORK/second.kubeconfig" get cm app \
  --ignore-not-found -o name
SECOND=$(sed -n 's/^ *server: //p' "$WORK/second.kubeconfig")
step_fail "one instance's client cert is refused by the other" "Unauthorized|certificate" \
  kubectl --server "$SECOND" --insecure-skip-tls-verify=true --context e2e get ns
kill -TERM "$PID2"
wait "$PID2"
PID2=
step "--log-format json" '^\{"ts":.*"msg":"stopped"' tail -1 "$WORK/second.log"

# Restart with --data: nothing lost, watches resume from an RV taken before.
RV_BEFORE=$(kubectl get cm app -o 'jsonpath={.metadata.resourceVersion}')
kubectl patch cm app --type merge -p '{"data":{"after":"restart-marker"}}' >/dev/null 2>&1
cp "$KUBECONFIG" "$WORK/before-restart.kubeconfig"
STEP=$((STEP + 1))
kill -TERM "$PID"
wait "$PID"
rc=$?
PID=
[ $rc -eq 0 ] || die "SIGTERM exit status $rc"
pass "SIGTERM shuts down cleanly"
start_devhub "127.0.0.1:$PORT"
step "data kept across restart" "^restart-marker$" kubectl get cm app -o 'jsonpath={.data.after}'
step "a kubeconfig written before the restart still works (same CA and client cert)" "^restart-marker$" \
  kubectl --kubeconfig "$WORK/before-restart.kubeconfig" get cm app -o 'jsonpath={.data.after}'
step "TLS keys kept with --data are 0600" "^600 600$" \
  sh -c 'echo $(stat -c %a "$1/server.key" "$1/client.key")' sh "$WORK/hub.db.tls"
step "CRD still served after restart" "gadgets" kubectl api-resources
step "watch from an RV taken before the restart" '"type":"MODIFIED".*restart-marker' \
  kubectl get --raw "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$RV_BEFORE&timeoutSeconds=1"
step "compaction" '"compactedRV"' kcurl -X POST "$SERVER/devhub/compact"
step "watch from a compacted RV gets ERROR 410 Expired" '"type":"ERROR".*"reason":"Expired".*"code":410' \
  kubectl get --raw "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$RV_BEFORE&timeoutSeconds=1"
step "bookmarks when allowed" '"type":"BOOKMARK"' \
  kubectl get --raw "/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&timeoutSeconds=2"
echo "devhub_kubectl: all $STEP steps passed"
