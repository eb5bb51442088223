#!/usr/bin/env bash
# A user's first hour (issue 13): the README's steps through scripts/dev.sh
# (what `make run` / `make dev-up` run), in a temporary .dev and on free
# ports. Asserts the READY block (after the start-up logs), a placement log
# line, one-time facts logged once at start (no server-side apply, the quota
# replaced), no `error` key on info lines, a never-fits Event naming both
# clusters (once), a job within the quota but too big for every node (kueue-ks
# rejects it, in Kubernetes units and with the advice to shrink it; Kueue's
# deactivation is not blamed on Kueue), Kueue's reason relayed for a missing
# LocalQueue (a wrong queue name, and the README's job in a namespace without
# the LocalQueue; told once), `kueue-ks explain` (fit table with in-use
# capacity subtracted, the flavor a cluster lacks, Kueue's reason as the
# verdict, the context's namespace without -n, a finished job said finished
# and where), `kueue-ks status` counts (a
# PyTorchJob counted), "not a hub" on a worker, a deleted job's log line and
# its copy gone, Ctrl-C exiting 0 and removing the kubeconfigs, the dead
# exported KUBECONFIG hint, dev-up's restart note, and `make run` on a
# terminal (a pty): Ctrl-C typed there ends make with 0.
set -u
set -m # background jobs in their own process group: Ctrl-C is sent to it as a terminal would
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
WORK=$(mktemp -d)
export DEV_DIR=$WORK/dev
RUNPID=
cleanup() {
  [ -n "$RUNPID" ] && kill -INT -- "-$RUNPID" 2>/dev/null
  scripts/dev.sh down >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT
STEP=0
next() { STEP=$1; }
pass() { echo "ok   $STEP $1"; }
die() {
  echo "FAIL $STEP $1"
  [ -n "${2:-}" ] && echo "---- output:" && echo "$2" | head -60
  echo "---- dev.sh run output (tail):"
  tail -40 "$WORK/run.out" 2>/dev/null
  exit 1
}
wait_until() { # SECONDS WHAT COMMAND...
  local t=$1 what=$2
  shift 2
  local deadline=$((SECONDS + t))
  while [ $SECONDS -le $deadline ]; do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  die "timed out ($t s) waiting for: $what" "$("$@" 2>&1)"
}
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# The devhubs bind free ports themselves (DEV_*_PORT=0: a port picked here could be taken before
# a devhub binds it); the operator's two ports from a base a multiple of 2 apart per process: two
# copies started by processes with close ids used to overlap.
base=$((20000 + ($$ % 8000) * 2))
while ! { port_free $base && port_free $((base + 1)); }; do base=$((base + 2)); done
export DEV_HUB_PORT=0 DEV_CLUSTER1_PORT=0 DEV_CLUSTER2_PORT=0
export DEV_METRICS_ADDR=127.0.0.1:$base DEV_HEALTH_ADDR=127.0.0.1:$((base + 1))
unset KUBECONFIG

# ---- 1: make run: the READY block comes last --------------------------------------
next 1
scripts/dev.sh run >"$WORK/run.out" 2>&1 &
RUNPID=$!
wait_until 120 "READY block" grep -q "Ctrl-C stops everything" "$WORK/run.out"
# the ports the devhubs got, from the kubeconfigs they wrote once they listened
kc_port() { sed -n 's#.*server: https://127.0.0.1:\([0-9]*\).*#\1#p' "$1" | head -1; }
hub_port=$(kc_port "$DEV_DIR/hub.kubeconfig") c1_port=$(kc_port "$DEV_DIR/cluster1.kubeconfig")
{ [ -n "$hub_port" ] && [ -n "$c1_port" ]; } || die "no ports in the kubeconfigs in $DEV_DIR"
for want in "kueue-ks dev environment: READY" "hub       https://127.0.0.1:$hub_port" \
  "cluster1  https://127.0.0.1:$c1_port" "export KUBECONFIG=$DEV_DIR/hub.kubeconfig" \
  "kubectl create -f examples/batch-job.yaml" "bin/kueue-ks status" \
  "bin/kueue-ks explain job/NAME" "get jobs,pods -A" "$DEV_DIR/{hub,cluster1,cluster2}.log"; do
  grep -qF -- "$want" "$WORK/run.out" || die "READY block lacks '$want'" "$(cat "$WORK/run.out")"
done
ready_line=$(grep -n "kueue-ks dev environment: READY" "$WORK/run.out" | cut -d: -f1)
for before in "applied examples/setup/" "controller started" "workload controller started"; do
  l=$(grep -n -- "$before" "$WORK/run.out" | head -1 | cut -d: -f1)
  if [ -z "$l" ] || [ "$l" -ge "$ready_line" ]; then die "'$before' is not printed before the READY block"; fi
done
# one-time facts, at default verbosity: no SSA before READY (the operator is
# ready only after the probe); the quota takeover (dev.sh waits for it, but
# its line follows the write's response: no order asserted)
fact() { grep -c "msg=\"$1" "$WORK/run.out"; }
quota_said() { [ "$(fact "ClusterQueue quota replaced by the workers' capacity")" -ge 1 ]; }
wait_until 120 "the quota takeover line" quota_said
for f in "the hub has no server-side apply" "ClusterQueue quota replaced by the workers' capacity"; do
  [ "$(fact "$f")" = 1 ] || die "'$f' not logged exactly once" "$(cat "$WORK/run.out")"
done
l=$(grep -n 'msg="the hub has no server-side apply' "$WORK/run.out" | cut -d: -f1)
[ "$l" -lt "$ready_line" ] || die "the SSA fact is logged after the READY block"
pass "READY block after the start-up logs, with ports, kubeconfigs, logs and next commands; SSA and quota facts once"

export KUBECONFIG=$DEV_DIR/hub.kubeconfig
k() { kubectl "$@"; }

# ---- 2: the README's job runs; one placement line in the operator log -------------
next 2
name=$(k create -f examples/batch-job.yaml -o name) || die "kubectl create failed"
name=${name#job.batch/}
placed() { grep -E "msg=\"job placed\" job=default/$name .*cluster=cluster[12] flavor=(spot|h100) why=" "$WORK/run.out"; }
wait_until 60 "a 'job placed' log line for $name" placed
cl=$(placed | sed -E 's/.* cluster=(cluster[12]) .*/\1/')
# while it runs: its 3 cpu are in use on $cl, so explain's all-matching-nodes
# figure for $cl is 13 of 16 (the best node alone may still be 8 of 8)
inuse() {
  running_out=$(bin/kueue-ks explain "job/$name")
  grep -qE "^  $cl +(spot|h100) +fits now +main +cpu +1 +[0-9]+ / 8 +13 / 16$" <<<"$running_out"
}
wait_until 60 "explain shows the 3 cpu in use on $cl" inuse
running_out=$(bin/kueue-ks explain "job/$name")
# the other cluster lacks the flavor Kueue reserved the quota in: said so
other=cluster1 fl=spot
[ "$cl" = cluster1 ] && other=cluster2
[ "$cl" = cluster2 ] && fl=h100
if ! grep -q "^finished: " <<<"$running_out"; then # (unless it finished in between)
  grep -qF "$other: no node of flavor $fl (instance=$fl), the flavor Kueue reserved the quota in" <<<"$running_out" ||
    die "explain: $other's missing flavor $fl not named" "$running_out"
fi
# a job in another namespace than explain's default: the answer says how to name it
miss=$(bin/kueue-ks explain job/no-such-job 2>&1) && die "explain of a missing job succeeded" "$miss"
echo "$miss" | grep -q "not found (in namespace default: -n names another one; kubectl get jobs -A" ||
  die "explain of a missing job: no hint about -n" "$miss"
complete() { [ "$(k get job "$name" -o jsonpath='{.status.conditions[?(@.type=="Complete")].status}')" = True ]; }
wait_until 120 "$name Complete" complete
finished() { grep -E "msg=\"job finished\" job=default/$name cluster=cluster[12] result=Succeeded" "$WORK/run.out"; }
wait_until 120 "a 'job finished' log line for $name" finished
[ "$(grep -c "msg=\"job placed\" job=default/$name " "$WORK/run.out")" = 1 ] ||
  die "more than one placement line for $name"
grep 'level=info' "$WORK/run.out" | grep -q ' error=' &&
  die "an info line carries an error key" "$(grep 'level=info' "$WORK/run.out" | grep ' error=')"
pass "$(placed | sed 's/.*msg=/msg=/' | cut -c1-150)"

# ---- 3: a job no cluster can hold: one NoClusterFits Event naming both clusters ---
next 3
sed 's/cpu: "1"/cpu: "100"/g; s/generateName: sample-job-/name: huge/' examples/batch-job.yaml | k create -f - >/dev/null
ev() { # JOB REASON: the Events' messages
  k get events -o json | jq -r --arg n "$1" --arg r "$2" \
    '.items[]|select(.involvedObject.name==$n and .reason==$r)|"\(.count) \(.message)"'
}
never() { ev huge NoClusterFits | grep -q 'never fits: pod set main needs 3 pods, cpu 100'; }
wait_until 60 "NoClusterFits on job huge" never
msg=$(ev huge NoClusterFits)
grep -qF "cluster1: largest node 8 cpu (spot)" <<<"$msg" || die "cluster1 not explained" "$msg"
grep -qF "cluster2: largest node 8 cpu (h100)" <<<"$msg" || die "cluster2 not explained" "$msg"
grep -qF "Kueue has not admitted it: Pending:" <<<"$msg" || die "Kueue's reason not relayed" "$msg"
sleep 12 # more than two requeue periods: the Event must not repeat
n=$(ev huge NoClusterFits | wc -l)
c=$(ev huge NoClusterFits | awk '{s+=$1} END {print s}')
if [ "$n" != 1 ] || [ "$c" != 1 ]; then
  die "NoClusterFits written $n times (count $c), want once" "$(ev huge NoClusterFits)"
fi
pass "$(cut -c1-160 <<<"$msg")"

# ---- 3b: within the quota but too big for every node: kueue-ks rejects it, Kueue deactivates it
next 3b
sed 's/cpu: "1"/cpu: "12"/g; s/memory: 200Mi/memory: 1Gi/g; s/parallelism: 3/parallelism: 1/; s/completions: 3/completions: 1/; s/generateName: sample-job-/name: toobig/' \
  examples/batch-job.yaml | k create -f - >/dev/null || die "create toobig"
said() { grep 'job=default/toobig ' "$WORK/run.out" | grep -F "$1"; }
rejected_said() { said 'msg="job rejected: no cluster can ever hold it"'; }
wait_until 60 "the 'job rejected' line for toobig" rejected_said
line=$(said 'msg="job not placed" job=default/toobig reason=NoClusterFits')
grep -qF "(each cpu=12, memory=1Gi) fit" <<<"$line" || die "placement's message not in Kubernetes units" "$line"
grep -qF "shrink the job's requests" <<<"$line" || die "no advice on the 'job not placed' line" "$line"
line=$(rejected_said)
grep -qF "kueue-ks rejected it: no worker cluster can hold it, even empty: never fits: pod set main needs cpu 12, memory 1Gi per pod" <<<"$line" ||
  die "the 'job rejected' line does not say kueue-ks rejected it and why" "$line"
grep -qF "Kueue deactivated its Workload (spec.active=false); shrink the job's requests" <<<"$line" ||
  die "the 'job rejected' line has no advice" "$line"
said "Kueue has not admitted it: deactivated" && die "the deactivation is blamed on Kueue" "$(said toobig)"
[ "$(rejected_said | wc -l)" = 1 ] || die "'job rejected' logged more than once" "$(rejected_said)"
sleep 6 # more than a requeue period: nothing is told again
evs=$(ev toobig NoClusterFits)
[ "$(wc -l <<<"$evs")" = 1 ] || die "want 1 NoClusterFits Event on toobig (the rejection; the deactivation is a log line)" "$evs"
[ "$(awk '{s+=$1} END {print s}' <<<"$evs")" = 1 ] || die "a NoClusterFits Event on toobig repeated" "$evs"
grep -qF "shrink the job's requests" <<<"$evs" || die "the rejection's Event has no advice" "$evs"
grep -q "1073741824" <<<"$evs" && die "raw bytes in a NoClusterFits Event" "$evs"
[ -z "$(ev toobig NotAdmitted)" ] || die "NotAdmitted on toobig" "$(ev toobig NotAdmitted)"
out=$(bin/kueue-ks explain job/toobig) || die "explain job/toobig failed" "$out"
grep -q "^kueue-ks rejected it: no worker cluster can hold it, even empty; Kueue deactivated its Workload" <<<"$out" ||
  die "explain toobig: not kueue-ks's verdict" "$out"
pass "$(rejected_said | sed 's/.*msg=/msg=/' | cut -c1-160)"

# ---- 4: a missing LocalQueue: Kueue's reason on the job, once ----------------------
next 4
sed 's/generateName: sample-job-/name: noqueue/; s/user-queue-ks/no-such-queue/' examples/batch-job.yaml | k create -f - >/dev/null
# Kueue's reason first: "fits now" leading it read as if the job were about to run
nolq() { ev noqueue NotAdmitted | grep -qE "^1 Kueue has not admitted it: Inadmissible: LocalQueue no-such-queue doesn't exist; fits"; }
wait_until 60 "NotAdmitted on job noqueue" nolq
[ "$(ev noqueue NotAdmitted | wc -l)" = 1 ] || die "NotAdmitted repeated" "$(ev noqueue NotAdmitted)"
[ "$(k get job noqueue -o jsonpath='{.spec.suspend}')" = true ] || die "noqueue is not suspended"
k get jobs noqueue | grep -q Suspended || die "kubectl get jobs does not say Suspended" "$(k get jobs noqueue)"
out=$(bin/kueue-ks explain job/noqueue) || die "explain job/noqueue failed" "$out"
grep -qx "not placed: Kueue has not admitted it: Inadmissible: LocalQueue no-such-queue doesn't exist; kueue-ks places a job only once Kueue has reserved its quota" <<<"$out" ||
  die "explain noqueue: Kueue's reason is not the verdict" "$out"
grep -q "^capacity once admitted: fits now: " <<<"$out" || die "explain noqueue: no capacity line" "$out"
grep -q "^fits now" <<<"$out" && die "explain noqueue says 'fits now' as the verdict" "$out"
# the README's job in a namespace without the LocalQueue
k create namespace other >/dev/null || die "create namespace other"
sed 's/generateName: sample-job-/name: elsewhere/; /namespace: default/d' examples/batch-job.yaml |
  k create -n other -f - >/dev/null || die "create job in namespace other"
nolq2() { bin/kueue-ks explain -n other job/elsewhere | grep -qx "not placed: Kueue has not admitted it: Inadmissible: LocalQueue user-queue-ks doesn't exist; kueue-ks places a job only once Kueue has reserved its quota"; }
wait_until 60 "explain: no LocalQueue user-queue-ks in namespace other" nolq2
out=$(bin/kueue-ks explain -n other job/elsewhere)
grep -qF "Queue:        user-queue-ks (no such LocalQueue in namespace other;" <<<"$out" ||
  die "explain: the missing LocalQueue's namespace is not named" "$out"
# without -n: the kubeconfig context's namespace, as kubectl
cp "$KUBECONFIG" "$WORK/other.kubeconfig"
kubectl --kubeconfig "$WORK/other.kubeconfig" config set-context --current --namespace=other >/dev/null ||
  die "set the context's namespace"
out=$(bin/kueue-ks explain --kubeconfig "$WORK/other.kubeconfig" job/elsewhere 2>&1) ||
  die "explain without -n does not use the context's namespace" "$out"
grep -qF "Job other/elsewhere (batch/v1)" <<<"$out" || die "explain without -n: not other/elsewhere" "$out"
pass "$(ev noqueue NotAdmitted | cut -c1-140); explain: Kueue's reason is the verdict"

# ---- 5: kueue-ks explain ------------------------------------------------------------
next 5
out=$(bin/kueue-ks explain job/huge 2>&1) || die "explain job/huge failed" "$out"
for want in "Job default/huge (batch/v1)" "Queue:        user-queue-ks (ClusterQueue cluster-queue-ks)" \
  "Reservation:  no: Pending:" "Placed on:    not placed"; do
  grep -qF -- "$want" <<<"$out" || die "explain huge lacks '$want'" "$out"
done
grep -qE '^  cluster1 +spot +never +main +cpu +100 +8 / 8 +16 / 16$' <<<"$out" || die "no never row for cluster1" "$out"
grep -qE '^  cluster2 +h100 +never +main +cpu +100 +8 / 8 +16 / 16$' <<<"$out" || die "no never row for cluster2" "$out"
grep -q '^never fits: ' <<<"$out" || die "no verdict line" "$out"
grep -q '^Kueue has not admitted it either: Pending: ' <<<"$out" || die "Kueue's reason not after never" "$out"
out=$(bin/kueue-ks explain "job.batch/$name") || die "explain $name failed" "$out"
grep -qE "Placed on:    $cl$" <<<"$out" || die "explain: not placed on $cl" "$out"
grep -qE "Worker copy:  on $cl: active 0, ready 0, succeeded 3, failed 0" <<<"$out" ||
  die "explain: worker copy" "$out"
# finished: said so, with where it ran, not "Pending" and a fit
grep -qx "finished: Succeeded on cluster $cl" <<<"$out" || die "explain: a finished job's verdict" "$out"
grep -qE "^  Check: +kubestellar-admc: finished on cluster $cl: succeeded \(state Pending to the end" <<<"$out" ||
  die "explain: a finished job's check line" "$out"
grep -q "^fits now" <<<"$out" && die "explain: a finished job's verdict is 'fits now'" "$out"
grep -q "^capacity now, for a new run: " <<<"$out" || die "explain: a finished job's fit is not labelled" "$out"
# the Workload's name explains its job (the README has users watch Workloads)
wl=$(k get workloads -o jsonpath="{.items[?(@.metadata.ownerReferences[0].name==\"$name\")].metadata.name}")
[ -n "$wl" ] || die "no Workload of $name" "$(k get workloads)"
wout=$(bin/kueue-ks explain "workload/$wl") || die "explain workload/$wl failed" "$wout"
for want in "Job default/$name (batch/v1)" "Placed on:    $cl" \
  "Worker copy:  on $cl: active 0, ready 0, succeeded 3, failed 0"; do
  grep -qF -- "$want" <<<"$wout" || die "explain workload/$wl lacks '$want'" "$wout"
done
wout=$(bin/kueue-ks explain workload/no-such-workload 2>&1) && die "explain of a missing Workload succeeded" "$wout"
grep -qF "Workload default/no-such-workload: not found (kubectl get workloads -A lists them)" <<<"$wout" ||
  die "explain: a missing Workload is not said so" "$wout"
out=$(bin/kueue-ks explain -n default job/nope 2>&1) && die "explain of a missing job exits 0"
grep -q "Job default/nope not found" <<<"$out" || die "missing job message" "$out"
pass "explain: fit table with never rows for both clusters, placement and worker copy; a finished job says so"

# ---- 6: status counts every placed kind; RESERVED; json; not a hub -----------------
next 6
k create -f examples/pytorch-simple-job.yaml >/dev/null || die "create PyTorchJob"
pt_placed() { [ -n "$(k get pytorchjobs -o jsonpath='{.items[0].metadata.labels.kubestellar\.io/cluster}')" ]; }
wait_until 60 "the PyTorchJob placed" pt_placed
# JOBS: the placed jobs of every kind that have not finished (the sample job may have by now;
# the PyTorchJob runs on: nothing on the simulated workers completes it)
running_placed() {
  k get jobs,pytorchjobs -o json | jq '[.items[]|select(.metadata.labels["kubestellar.io/cluster"]
    and ([.status.conditions[]?|select((.type=="Complete" or .type=="Failed" or
    .type=="Succeeded") and .status=="True")]|length==0))]|length'
}
jobs_total() {
  local want
  want=$(running_placed)
  [ "$want" -ge 1 ] && [ "$(bin/kueue-ks status -o json | jq '[.clusters[].jobs]|add')" = "$want" ]
}
wait_until 120 "status counts the placed, unfinished jobs (the PyTorchJob among them)" jobs_total
out=$(bin/kueue-ks status) || die "status failed" "$out"
head -1 <<<"$(grep CLUSTERQUEUE <<<"$out")" | grep -qE 'QUOTA +RESERVED +SOURCE$' || die "queue header" "$out"
grep -q IN-USE <<<"$out" && die "IN-USE in the default view" "$out"
out=$(bin/kueue-ks status --kubeconfig "$DEV_DIR/cluster1.kubeconfig" 2>&1) && die "status on a worker exits 0" "$out"
grep -q "not a kueue-ks hub" <<<"$out" || die "no 'not a hub' message" "$out"
out=$(bin/kueue-ks explain --kubeconfig "$DEV_DIR/$cl.kubeconfig" "job/$name" 2>&1) &&
  die "explain on a worker exits 0" "$out"
grep -q "is kueue-ks's copy of a hub job.*explain the job with the hub's kubeconfig" <<<"$out" ||
  die "explain on a worker does not say it is a copy" "$out"
# the job without its LocalQueue was told once, whatever ran on the clusters since
n=$(grep -c 'msg="job not admitted by Kueue" job=default/noqueue ' "$WORK/run.out")
[ "$n" = 1 ] || die "'job not admitted by Kueue' for noqueue logged $n times" "$(grep noqueue "$WORK/run.out")"
[ "$(ev noqueue NotAdmitted | awk '{s+=$1} END {print s}')" = 1 ] || die "NotAdmitted on noqueue repeated" "$(ev noqueue NotAdmitted)"
pass "status: placed unfinished jobs counted (the PyTorchJob too), RESERVED column; status and explain refuse a worker kubeconfig"

# ---- 6b: deleting the job: a log line, its copy gone from the worker --------------
next 6b
k delete job "$name" >/dev/null || die "delete $name"
deleted() { grep -E "msg=\"job deleted on the hub: removing its copy\" job=default/$name kind=Job cluster=$cl$" "$WORK/run.out"; }
wait_until 60 "a 'job deleted' log line for $name" deleted
gone() { ! kubectl --kubeconfig "$DEV_DIR/$cl.kubeconfig" get job "$name" >/dev/null 2>&1; }
wait_until 60 "the copy of $name gone from $cl" gone
sleep 2 # a later GC pass must not say it again
[ "$(deleted | wc -l)" = 1 ] || die "the 'job deleted' line is repeated" "$(deleted)"
pass "$(deleted | sed 's/.*msg=/msg=/')"

# ---- 7: the exported hub kubeconfig while it runs; Ctrl-C --------------------------
next 7
out=$(scripts/dev.sh run 2>&1) && die "a second make run with KUBECONFIG exported exits 0" "$out"
grep -q "make dev-down" <<<"$out" || die "no hint" "$out"
# dev-up from another terminal must not stop the running make run behind its back
out=$(env -u KUBECONFIG scripts/dev.sh up 2>&1) && die "dev-up while make run runs exits 0" "$out"
grep -qF "'make run' is running in another terminal (pid" <<<"$out" || die "no make-run hint" "$out"
curl -sf "http://$DEV_HEALTH_ADDR/readyz" >/dev/null || die "the running operator was stopped by dev-up"
kill -INT -- "-$RUNPID"
wait "$RUNPID"
rc=$?
RUNPID=
[ $rc = 0 ] || die "Ctrl-C: exit code $rc, want 0"
for f in hub cluster1 cluster2; do
  [ -e "$DEV_DIR/$f.kubeconfig" ] && die "$f.kubeconfig left after Ctrl-C"
done
grep -q "signal received, shutting down" "$WORK/run.out" || die "the operator did not stop on SIGINT"
out=$(scripts/dev.sh run 2>&1) && die "make run with a dead exported KUBECONFIG exits 0" "$out"
grep -qF "unset KUBECONFIG or run make dev-down" <<<"$out" || die "no dead-KUBECONFIG hint" "$out"
unset KUBECONFIG
pass "Ctrl-C exits 0 and removes the kubeconfigs; a dead exported KUBECONFIG is named"

# ---- 8: dev-up twice: the restart is said --------------------------------------------
next 8
out=$(scripts/dev.sh up 2>&1) || die "dev-up failed" "$out"
grep -q "'make dev-down' stops everything" <<<"$out" || die "dev-up READY block" "$out"
out=$(scripts/dev.sh up 2>&1) || die "second dev-up failed" "$out"
grep -qF "restarting the running dev environment: its jobs are lost (ARGS=--data keeps them: make dev-up ARGS=--data)" <<<"$out" ||
  die "second dev-up does not say it restarts" "$out"
# --data after a run without it: the jobs of the run are lost, and the saved objects are older
out=$(scripts/dev.sh up --data 2>&1) || die "dev-up --data failed" "$out"
grep -qF "restarting the running dev environment, started without --data: its jobs are lost" <<<"$out" ||
  die "dev-up --data over a run without it does not say the jobs are lost" "$out"
out=$(scripts/dev.sh up --data 2>&1) || die "second dev-up --data failed" "$out"
grep -qF "the hub keeps its objects" <<<"$out" || die "dev-up --data twice: no 'keeps its objects'" "$out"
out=$(scripts/dev.sh up 2>&1) || die "dev-up failed" "$out"
out=$(scripts/dev.sh up --data 2>&1) || die "dev-up --data after a run without it failed" "$out"
grep -qF -- "--data: the hub starts from the objects saved in $DEV_DIR/hub.db at" <<<"$out" ||
  die "dev-up --data does not say it starts from older saved objects" "$out"
scripts/dev.sh down >/dev/null 2>&1
[ -e "$DEV_DIR/hub.kubeconfig" ] && die "dev-down left the kubeconfig"
pass "second dev-up says it restarts; --data over a run without it says what is lost and what comes back; dev-down cleans up"
# ---- 9: make run on a terminal: Ctrl-C typed there ends make with 0 -----------------
# The terminal sends SIGINT to its foreground process group; make in it would exit 130.
next 9
python3 test/e2e/lib/on_terminal.py "$WORK/term.out" "Ctrl-C stops everything" 120 -- \
  make --no-print-directory run
rc=$?
[ $rc = 0 ] || die "make run on a terminal, Ctrl-C: exit code $rc, want 0" "$(tail -20 "$WORK/term.out")"
grep -q "make: \*\*\*" "$WORK/term.out" && die "make reports a failure" "$(tail -5 "$WORK/term.out")"
grep -q "signal received, shutting down" "$WORK/term.out" || die "the operator did not get Ctrl-C"
for f in hub cluster1 cluster2; do
  [ -e "$DEV_DIR/$f.kubeconfig" ] && die "$f.kubeconfig left after Ctrl-C on a terminal"
done
# the hub's port as the READY block of this run showed it (its kubeconfig is gone)
hub_port=$(sed -n 's#^  hub       https://127.0.0.1:\([0-9]*\) .*#\1#p' "$WORK/term.out" | head -1)
[ -n "$hub_port" ] || die "no hub port in the READY block" "$(tail -20 "$WORK/term.out")"
wait_until 120 "the hub's port free" port_free "$hub_port"
pass "make run on a terminal: Ctrl-C exits 0, nothing left running"
echo "first_hour: all steps passed"
