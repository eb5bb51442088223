#!/usr/bin/env bash
# End-to-end test of recovery when a worker cannot run the copy it got (issue 15, point 4):
# `kueue-ks run` (direct transport, --unschedulable-timeout 8s) with a hub devhub (--kueue)
# and two worker devhubs (--run-jobs), 2 nodes cpu=8,memory=32Gi, instance=spot each.
# Placement is tricked by stale metrics: cluster1's ClusterMetrics is edited to show its
# nodes labelled recovery=yes (the agent rewrites it only when something changes there), so
# a Job with the required node affinity recovery In [yes] is placed on cluster1, where the
# devhub runner leaves its pod Pending with PodScheduled=False/Unschedulable, as
# kube-scheduler would. Then cluster2's nodes get the label. Asserted:
#   u  the copy on cluster1 has an unschedulable pod, the agent reports it
#      (status.unschedulableJobs of ClusterMetrics cluster1)
#   m  the copy is moved, not before the timeout (how long after it is not asserted: the
#      agent's write interval and Kueue's requeue, slow on a loaded machine; a safety deadline
#      only): Warning Event UnschedulableOnWorker naming the worker's reason,
#      kueue-ks.io/excluded-clusters on the hub job names cluster1, the job completes on
#      cluster2, and never were there copies on both workers at once (both polled every
#      0.2 s while it moved)
#   x  `kueue-ks explain` says cluster1 is excluded and until when
#   s  (cluster2 cordoned) job-s runs 16 s on cluster1, twice the timeout: left there
#   p  cluster1's nodes labelled devhub.kueue-ks.io/image-pull=fail: job-p's pod is bound but
#      ErrImagePull; reported (cause not-started), explain shows it, moved to cluster2
#      once cluster2 is uncordoned, Event naming ErrImagePull; job-s completes on cluster1
#   n  cluster1's namespace annotated devhub.kueue-ks.io/refuse-pods: job-n gets no pod;
#      reported (cause no-pods), moved, completes on cluster2
#   e  job-e selects cluster1 only and carries an exclusion of cluster1 for 30 s: its check
#      waits naming the exclusion and its end, no copy, no write loop (watched), placed once
#      on cluster1 after the exclusion, Complete
# Skipped (exit 77) when the devhub binary, kubectl or jq is missing.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${KUEUE_KS_BIN:-$ROOT/bin/kueue-ks}
DEVHUB=${DEVHUB_BIN:-$ROOT/bin/kueue-ks-devhub}
[ -x "$BIN" ] || { echo "FAIL: $BIN not built"; exit 1; }
[ -x "$DEVHUB" ] || { echo "SKIP: $DEVHUB not built"; exit 77; }
command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }

WORK=$(mktemp -d /tmp/placement-recovery-e2e-XXXXXX)
PIDS=()
OP=
cleanup() {
  [ -n "$OP" ] && kill "$OP" 2>/dev/null
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT
# shellcheck source=test/e2e/lib/workload_harness.sh
. "$ROOT/test/e2e/lib/workload_harness.sh"

TIMEOUT_S=8

start_devhub hub --kueue
start_devhub cluster1 --run-jobs --time-scale $SCALE --nodes '2x cpu=8,memory=32Gi;labels=instance=spot'
start_devhub cluster2 --run-jobs --time-scale $SCALE --nodes '2x cpu=8,memory=32Gi;labels=instance=spot'
apply_setup || die "setup objects not applied"
"$BIN" run --kubeconfig "$WORK/hub.kc" --metrics-bind-address 0 --health-probe-bind-address 0 \
  --worker "cluster1=$WORK/cluster1.kc" --worker "cluster2=$WORK/cluster2.kc" --v 1 \
  --unschedulable-timeout ${TIMEOUT_S}s --unschedulable-exclusion 10m >>"$WORK/op.log" 2>&1 &
OP=$!
wait_until 120 "ClusterMetrics for both workers" jq_ok hub \
  '[.items[]|select(.status.nodeCount==2)]|length==2' clustermetrics

# stale metrics: cluster1's nodes shown with recovery=yes, which they do not carry
nodes=$(k hub get clustermetrics cluster1 -o json | jq -c '[.status.nodes[]|.labels.recovery="yes"]')
k hub patch clustermetrics cluster1 --subresource=status --type merge \
  -p "{\"status\":{\"nodes\":$nodes}}" >/dev/null || die "cannot edit ClusterMetrics cluster1"
jq_ok hub '[.status.nodes[]|select(.labels.recovery=="yes")]|length==2' clustermetrics cluster1 \
  >/dev/null || die "ClusterMetrics cluster1 not edited"

# ---- u: placed on cluster1, its pod unschedulable there, reported ----------------------
next u
cat <<YAML | k hub create -f - >/dev/null || die "job-u not created"
apiVersion: batch/v1
kind: Job
metadata:
  name: job-u
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: user-queue-ks
spec:
  parallelism: 1
  completions: 1
  suspend: true
  template:
    spec:
      restartPolicy: Never
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - key: recovery
                operator: In
                values: ["yes"]
      containers:
      - name: c
        image: busybox
        args: ["20s"]
        resources:
          requests:
            cpu: "1"
            memory: 100Mi
YAML
on_cluster1() { [ "$(copies job-u)" = "1 0" ]; }
on_c1_only() { [ "$(copies "$1")" = "1 0" ]; }
wait_until 120 "job-u copy on cluster1" on_cluster1
k cluster2 label nodes --all recovery=yes >/dev/null || die "cannot label cluster2's nodes"
# copies_moving JOB: "c1 c2" as copies() prints, but cluster2 (where this script's jobs move
# to) sampled before cluster1: "1 1" is then a real overlap (a copy on cluster2 while the
# one on cluster1 still existed). Sampled the other way, a move between the two kubectl
# calls reads as "1 1" (seen under a load of 25: "job-n had copies on both workers").
copies_moving() {
  local a b
  b=$(copies_on cluster2 "$1")
  a=$(copies_on cluster1 "$1")
  echo "$a $b"
}
# poll both workers from here on: never a copy on each at once
MAX_BOTH=0
poll() { # one sample; records two copies at once
  local c
  c=$(copies_moving job-u)
  [ "$c" = "1 1" ] && MAX_BOTH=1
  echo "$c"
}
wait_until 120 "an Unschedulable pod of job-u on cluster1" jq_ok cluster1 \
  '[.items[]|select(.metadata.labels["job-name"]=="job-u" or .metadata.labels["batch.kubernetes.io/job-name"]=="job-u")|.status.conditions[]?|select(.type=="PodScheduled" and .status=="False" and .reason=="Unschedulable")]|length>=1' \
  pods -n default
# since: read in the same sample as the report (read after it, the job may have moved
# already on a loaded machine and the report be gone)
u_reported() {
  since=$(k hub get clustermetrics cluster1 -o json | jq -r '[.status.unschedulableJobs[]?|select(.namespace=="default" and .name=="job-u" and .reason=="Unschedulable" and (.message|test("node affinity")))]|if length==1 then .[0].since // "" else "" end')
  [ -n "$since" ]
}
since=
wait_until 120 "ClusterMetrics cluster1 reports job-u unschedulable" u_reported
poll >/dev/null
since_s=$(date -d "$since" +%s) || die "bad since: $since"
pass "job-u placed on cluster1 by stale metrics; its pod Unschedulable there since $since, reported by the agent"

# ---- m: moved once the timeout passed, completes on cluster2, one copy at a time --------
next m
moved=
deadline=$((SECONDS + 180)) # a safety deadline, not a bound on how soon it moves
while [ $SECONDS -le $deadline ]; do
  [ "$(poll)" = "0 1" ] && { moved=$(($(date +%s) - since_s)); break; }
  sleep 0.2
done
[ -n "$moved" ] || die "job-u not moved to cluster2 within 180 s: copies $(copies job-u)"
# the timeout counts from the pod's PodScheduled=False (whole seconds: 1 s of rounding);
# after it: the exclusion write, Kueue's requeue and the new copy (no upper bound: a loaded
# machine may take any time; only never before the timeout)
[ "$moved" -ge $((TIMEOUT_S - 1)) ] || die "job-u moved ${moved}s after it became unschedulable: before the timeout (${TIMEOUT_S}s)"
deadline=$((SECONDS + 120))
while [ $SECONDS -le $deadline ]; do
  poll >/dev/null
  hub_job_complete job-u >/dev/null 2>&1 && break
  sleep 0.2
done
hub_job_complete job-u >/dev/null || die "hub job-u not Complete"
[ "$MAX_BOTH" = 0 ] || die "job-u had copies on both workers at once"
[ "$(copies job-u)" = "0 1" ] || die "job-u copies after completion: $(copies job-u)"
jq_ok hub '.metadata.labels["kubestellar.io/cluster"]=="cluster2"' job job-u -n default >/dev/null ||
  die "hub job-u not placed on cluster2"
jq_ok hub '.metadata.annotations["kueue-ks.io/excluded-clusters"]|test("^cluster1=[0-9T:-]+Z$")' \
  job job-u -n default >/dev/null ||
  die "no exclusion of cluster1 on job-u" "$(k hub get job job-u -n default -o yaml)"
ev=$(k hub get events -n default -o json | jq -r '[.items[]|select(.reason=="UnschedulableOnWorker" and .type=="Warning" and .involvedObject.name=="job-u")][0].message // ""')
case "$ev" in
  *"cannot run on cluster cluster1: pods unschedulable there: Unschedulable:"*"node affinity"*"excluded until"*) ;;
  *) die "no Warning Event UnschedulableOnWorker naming the reason on job-u: '$ev'" ;;
esac
pass "moved ${moved}s after its pod became unschedulable (timeout ${TIMEOUT_S}s), completed on cluster2, never two copies; Event: $(echo "$ev" | cut -c1-150)"

# ---- x: explain says cluster1 is excluded, until when ----------------------------------
next x
out=$("$BIN" explain --kubeconfig "$WORK/hub.kc" job/job-u 2>&1) || die "explain failed" "$out"
echo "$out" | grep -q "cluster1: excluded until [0-9T:-]*Z" || die "explain does not show the exclusion" "$out"
pass "explain: $(echo "$out" | grep -o 'cluster1: excluded until [^;]*' | head -1)"
# ---- s/p/n: no progress on cluster1 (pods not started; no pods), slow is not stuck ------
# cluster2 is cordoned so that placement picks cluster1, then uncordoned so that the job
# has somewhere to go. The faults are the devhub runner's (devhub/sim_jobs.h): cluster1's
# nodes labelled devhub.kueue-ks.io/image-pull=fail leave bound pods ErrImagePull; its
# namespace annotated devhub.kueue-ks.io/refuse-pods gets no pod created.
cordon2() { # true|false
  local n
  for n in $(k cluster2 get nodes -o name); do
    k cluster2 patch "$n" --type merge -p "{\"spec\":{\"unschedulable\":$1}}" >/dev/null || return 1
  done
  wait_until 120 "ClusterMetrics cluster2 shows its nodes unschedulable=$1" jq_ok hub \
    "[.status.nodes[]|select(.unschedulable==$1)]|length==2" clustermetrics cluster2
}
simple_job() { # NAME ARGS
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: user-queue-ks
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: busybox
        args: ["$2"]
        resources:
          requests:
            cpu: "1"
            memory: 100Mi
YAML
}
# moved JOB CAUSE EVENT-PATTERN: JOB (on cluster1, reported with CAUSE) is moved to cluster2
# once the timeout has passed, completes there, never two copies; the Event matches the pattern.
moved() {
  local job=$1 cause=$2 pat=$3 c both=0 t0 since_s dt ev
  # since: read in the same sample as the report (see u_reported)
  since=
  reported() {
    since=$(k hub get clustermetrics cluster1 -o json | jq -r --arg n "$job" --arg c "$cause" '[.status.unschedulableJobs[]?|select(.name==$n and .cause==$c)]|if length==1 then .[0].since // "" else "" end')
    [ -n "$since" ]
  }
  wait_until 120 "ClusterMetrics cluster1 reports $job ($cause)" reported
  local out
  out=$("$BIN" explain --kubeconfig "$WORK/hub.kc" "job/$job" 2>&1) || die "explain $job failed" "$out"
  grep -q "No progress:  on cluster1 since .* ($cause, " <<<"$out" ||
    die "explain $job does not show the no-progress verdict" "$out"
  since_s=$(date -d "$since" +%s) || die "bad since: $since"
  cordon2 false
  t0=
  local deadline=$((SECONDS + 180)) # a safety deadline, not a bound on how soon it moves
  while [ $SECONDS -le $deadline ]; do
    c=$(copies_moving "$job")
    [ "$c" = "1 1" ] && both=1
    [ "$c" = "0 1" ] && { t0=$(date +%s); break; }
    sleep 0.2
  done
  [ -n "$t0" ] || die "$job not moved to cluster2 within 180 s: copies $(copies "$job")"
  dt=$((t0 - since_s))
  # not before the timeout; no upper bound (see m)
  [ "$dt" -ge $((TIMEOUT_S - 1)) ] || die "$job moved ${dt}s after since: before the timeout"
  deadline=$((SECONDS + 120))
  while [ $SECONDS -le $deadline ]; do
    [ "$(copies_moving "$job")" = "1 1" ] && both=1
    hub_job_complete "$job" >/dev/null 2>&1 && break
    sleep 0.2
  done
  hub_job_complete "$job" >/dev/null || die "hub $job not Complete"
  [ "$both" = 0 ] || die "$job had copies on both workers at once"
  jq_ok hub '.metadata.annotations["kueue-ks.io/excluded-clusters"]|test("^cluster1=")' \
    job "$job" -n default >/dev/null || die "no exclusion of cluster1 on $job"
  ev=$(k hub get events -n default -o json | jq -r --arg n "$job" '[.items[]|select(.reason=="UnschedulableOnWorker" and .type=="Warning" and .involvedObject.name==$n)][0].message // ""')
  grep -Eq -- "$pat" <<<"$ev" || die "$job: Event UnschedulableOnWorker '$ev' does not match '$pat'"
  MOVED_MSG="moved ${dt}s after its copy stalled (timeout ${TIMEOUT_S}s), completed on cluster2, never two copies; Event: $(echo "$ev" | cut -c1-160)"
}

next s
cordon2 true
simple_job job-s 160s | k hub create -f - >/dev/null || die "job-s not created"
s_running() {
  [ "$(copies job-s)" = "1 0" ] && jq_ok cluster1 \
    '[.items[]|select(.metadata.labels["job-name"]=="job-s" and .status.phase=="Running")]|length==1' pods -n default
}
wait_until 120 "job-s Running on cluster1" s_running
pass "job-s (16 s, twice the timeout) Running on cluster1 (cluster2 cordoned)"

next p
for n in $(k cluster1 get nodes -o name); do
  k cluster1 label "$n" devhub.kueue-ks.io/image-pull=fail >/dev/null || die "cannot label $n"
done
simple_job job-p 20s | k hub create -f - >/dev/null || die "job-p not created"
wait_until 120 "job-p copy on cluster1, its pod ErrImagePull" jq_ok cluster1 \
  '[.items[]|select(.metadata.labels["job-name"]=="job-p" and .status.phase=="Pending" and .status.containerStatuses[0].state.waiting.reason=="ErrImagePull")]|length==1' pods -n default
moved job-p not-started "cannot run on cluster cluster1: no progress there, pods not started: ErrImagePull: failed to pull image"
pass "pods not started: $MOVED_MSG"
# job-s ran past the timeout on cluster1 and was left there (slow is not stuck)
wait_until 120 "job-s Complete" hub_job_complete job-s
[ "$(copies job-s)" = "1 0" ] || die "job-s copies: $(copies job-s), want it on cluster1 only"
k hub get events -n default -o json | jq -e '[.items[]|select(.reason=="UnschedulableOnWorker" and .involvedObject.name=="job-s")]|length==0' >/dev/null ||
  die "job-s (running, slow) was treated as stuck"
pass "job-s ran 16 s on cluster1 (timeout ${TIMEOUT_S}s) and completed there: a running pod is progress"

next n
for n in $(k cluster1 get nodes -o name); do
  k cluster1 label "$n" devhub.kueue-ks.io/image-pull- >/dev/null || die "cannot unlabel $n"
done
cordon2 true
k cluster1 annotate namespace default 'devhub.kueue-ks.io/refuse-pods=exceeded quota: pods=0' >/dev/null ||
  die "cannot annotate cluster1's namespace default"
simple_job job-n 20s | k hub create -f - >/dev/null || die "job-n not created"
wait_until 120 "job-n copy on cluster1" on_c1_only job-n
moved job-n no-pods "cannot run on cluster cluster1: no progress there, no pods created: NoPods:"
k cluster1 annotate namespace default devhub.kueue-ks.io/refuse-pods- >/dev/null
pass "no pods created: $MOVED_MSG"

# ---- e: a job that can only run on an excluded cluster waits, then runs (point 3) ------
# job-e selects cluster1 only and carries an exclusion of cluster1 for EXCL_S seconds (set
# by hand, as after an unschedulable copy). Expected: check Pending naming the exclusion and
# its end, no copy, no write loop (the Workload and the job barely change meanwhile); placed
# on cluster1 once the exclusion has ended, and Complete.
next e
# 30 s: the check must be seen naming the exclusion before it ends (job creation, Kueue's
# reservation and our check's write: with 15 s a loaded machine could miss the window)
EXCL_S=30
until_t=$(date -u -d "+$EXCL_S seconds" +%Y-%m-%dT%H:%M:%SZ)
simple_job job-e 20s | sed "s|^  labels:|  annotations:\n    kueue-ks.io/cluster-selector: name=cluster1\n    kueue-ks.io/excluded-clusters: cluster1=$until_t\n  labels:|" |
  k hub create -f - >/dev/null || die "job-e not created"
k hub get workloads -n default -w -o json --output-watch-events >"$WORK/e-wl.watch" 2>/dev/null &
W1=$!
PIDS+=("$W1")
k hub get job job-e -n default -w -o json --output-watch-events >"$WORK/e-job.watch" 2>/dev/null &
W2=$!
PIDS+=("$W2")
e_msg() {
  k hub get workloads -n default -o json | jq -r '[.items[]|select(.metadata.ownerReferences[0].name=="job-e")][0].status.admissionChecks[]?|select(.name=="kubestellar-admc")|.message'
}
wait_until 120 "job-e's check names the exclusion" bash -c "$(declare -f k e_msg); WORK=$WORK; e_msg | grep -q 'cluster1: excluded until $until_t'"
msg=$(e_msg)
copies_seen=0
until_s=$(date -d "$until_t" +%s)
while [ "$(date +%s)" -lt "$until_s" ]; do
  c=$(copies job-e)
  # a copy counts only when the sample ended before the exclusion did (a sample taking a
  # few seconds on a loaded machine can end after it, when the placement is right)
  [ "$c" = "0 0" ] || [ "$(date +%s)" -ge "$until_s" ] || copies_seen=1
  sleep 0.5
done
[ "$copies_seen" = 0 ] || die "job-e got a copy while cluster1 was excluded"
wait_until 120 "job-e placed on cluster1 after the exclusion" on_c1_only job-e
wait_until 120 "job-e Complete" hub_job_complete job-e
kill "$W1" "$W2" 2>/dev/null
wl_name=$(k hub get workloads -n default -o json | jq -r '[.items[]|select(.metadata.ownerReferences[0].name=="job-e")][0].metadata.name')
# writes while excluded: watch events of the Workload and the job up to the placement
# Workload versions whose check says it waits for the exclusion: one write (Kueue may add
# one of its own); a pass writing each requeue (5 s) would show 6 or more in 30 s
wl_writes=$(jq -rs --arg n "$wl_name" '[.[]|select(.object.metadata.name==$n)|select([.object.status.admissionChecks[]?|select(.name=="kubestellar-admc" and (.message|test("excluded until")))]|length==1)]|length' "$WORK/e-wl.watch")
job_before=$(jq -rs '[.[]|select(.object.metadata.labels["kubestellar.io/cluster"]==null)]|length' "$WORK/e-job.watch")
[ "$job_before" -le 2 ] || die "job-e written $((job_before - 1)) times before its placement (a write loop?)"
if [ "$wl_writes" -lt 1 ] || [ "$wl_writes" -gt 2 ]; then
  die "job-e's Workload had $wl_writes versions naming the exclusion, want 1 or 2 (a write loop?)"
fi
# one Event per dispatch (Dispatched, the copy made), and one placement token on the job
nf=$(k hub get events -n default -o json | jq '[.items[]|select(.involvedObject.name=="job-e" and .reason=="Dispatched")]|length')
[ "$nf" = 1 ] || die "job-e dispatched $nf times (Dispatched Events), want 1"
tokens=$(jq -rs '[.[]|.object.metadata.annotations["kueue-ks.io/placed-for"]|select(.!=null)]|unique|length' "$WORK/e-job.watch")
[ "$tokens" = 1 ] || die "job-e placed with $tokens placement tokens, want 1"
pass "waited ${EXCL_S}s with '$(echo "$msg" | grep -o 'cluster1: excluded until [^;]*' | head -1)', no copy, $job_before job version(s) and $wl_writes Workload version(s) naming the exclusion seen (watch), placed once on cluster1 after it, Complete"
echo "PASS placement_recovery"
