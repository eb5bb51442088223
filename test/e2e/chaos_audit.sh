#!/usr/bin/env bash
# The chaos suite's audit (test/e2e/lib/chaos_audit.py) finds what it must:
# fed hand-made change logs, it counts a job copied to two workers, a job
# with two copy uids, a job with two pods that ran, a stale copy left on a
# lost worker, and an incomplete job; it accepts the one documented relaunch
# (a run on the paused worker the operator declared lost, removed later) only
# on that worker; it refuses a change log without its closing BOOKMARK. Its
# capacity oracle counts a change that leaves a node's bound, running pods over
# its allocatable (cpu, memory, pods, a resource the node lacks, init
# containers, sidecars, overhead, a limit without a request), and not pods that
# finished or were deleted before the next one came.
# Skipped (exit 77) without python3.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
AUDIT=$ROOT/test/e2e/lib/chaos_audit.py
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
WORK=$(mktemp -d /tmp/chaos-audit-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
fails=0

# scenario NAME SPEC: writes the change logs of one case into $WORK/NAME.
# SPEC (python literal): {"jobs": {name: complete?}, "copies": [(worker, job,
# copy uid, token, deleted?, pods that ran)], "lost": [(job, worker, token)],
# "cut": stream name left without its closing BOOKMARK, "pods": [(worker, type,
# name, node, phase, spec fields)] more pod changes, "nodes": {worker: {node:
# allocatable}}, default one node n1 of 4 cpu, 8Gi, 110 pods on each worker}
scenario() {
  mkdir -p "$WORK/$1"
  python3 - "$WORK/$1" "$2" <<'PY'
import ast, json, os, sys
d, spec = sys.argv[1], ast.literal_eval(sys.argv[2])
def stream(name, events):
    with open(os.path.join(d, name), "w") as f:
        for t, o in events:
            f.write(json.dumps({"type": t, "object": o}) + "\n")
        if spec.get("cut") != name:
            f.write(json.dumps({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "9"}}}) + "\n")
hub = []
for n, done in spec["jobs"].items():
    conds = [{"type": "Complete", "status": "True"}] if done else []
    hub.append({"metadata": {"name": n, "uid": "u-" + n}, "status": {"conditions": conds}})
json.dump({"items": hub}, open(os.path.join(d, "hub-jobs.json"), "w"))
wl = []
for job, w, tok in spec.get("lost", []):
    wl.append(("MODIFIED", {
        "metadata": {"uid": tok.split("/")[0], "ownerReferences": [{"uid": "u-" + job}]},
        "status": {"conditions": [{"type": "QuotaReserved", "status": "True",
                                   "lastTransitionTime": tok.split("/")[1]}],
                   "admissionChecks": [{"name": "kubestellar-admc", "state": "Retry",
                                        "message": f"worker cluster {w} lost for 6s (timeout 5s): re-placing"}]}}))
stream("hub-workloads.watch", wl)
for w in ("cluster1", "cluster2"):
    nodes = spec.get("nodes", {}).get(w, {"n1": {"cpu": "4", "memory": "8Gi", "pods": "110"}})
    stream(f"{w}-nodes.watch", [("ADDED", {"metadata": {"name": n}, "status": {"allocatable": a}})
                                for n, a in nodes.items()])
    jobs, pods = [], []
    for cw, job, cuid, tok, deleted, ran in spec["copies"]:
        if cw != w:
            continue
        o = {"metadata": {"name": job, "uid": cuid, "labels": {"kueue-ks.io/origin-uid": "u-" + job},
                          "annotations": {"kueue-ks.io/placed-for": tok}}}
        jobs.append(("ADDED", o))
        for i in range(ran):
            p = {"metadata": {"uid": f"{cuid}-p{i}", "labels": {"controller-uid": cuid}}}
            pods.append(("ADDED", dict(p, status={"phase": "Pending"})))
            pods.append(("MODIFIED", dict(p, status={"phase": "Running"})))
        if deleted:
            jobs.append(("DELETED", o))
    for pw, t, name, node, phase, fields in spec.get("pods", []):
        if pw == w:
            pods.append((t, {"metadata": {"uid": "u-" + name, "name": name},
                             "spec": dict(fields, nodeName=node), "status": {"phase": phase}}))
    stream(f"{w}-jobs.watch", jobs)
    stream(f"{w}-pods.watch", pods)
PY
}
expect() { # NAME PAUSED WANT
  local got rc
  got=$(python3 "$AUDIT" "$WORK/$1" 2 job- "$2" 2>"$WORK/$1.err")
  rc=$?
  [ "$3" = exit2 ] && { [ $rc = 2 ] && got=exit2; }
  if [ "$got" = "$3" ]; then
    echo "ok   $1: $got"
  else
    echo "FAIL $1: got '$got' (exit $rc), want '$3'"
    sed 's/^/     /' "$WORK/$1.err"
    fails=$((fails + 1))
  fi
}
TWO='"jobs": {"job-a": True, "job-b": True}'
ONE_B='("cluster2", "job-b", "b1", "wb/t1", False, 1)'
scenario clean "{$TWO, \"copies\": [(\"cluster1\", \"job-a\", \"a1\", \"wa/t1\", False, 1), $ONE_B]}"
expect clean cluster2 "complete=2 lost=0 duplicates=0 relaunched=0 over_capacity=0"
scenario two-workers "{$TWO, \"copies\": [(\"cluster1\", \"job-a\", \"a1\", \"wa/t1\", True, 0),
  (\"cluster2\", \"job-a\", \"a2\", \"wa/t1\", False, 1), $ONE_B]}"
expect two-workers cluster2 "complete=2 lost=0 duplicates=1 relaunched=0 over_capacity=0"
scenario two-uids "{$TWO, \"copies\": [(\"cluster1\", \"job-a\", \"a1\", \"wa/t1\", True, 0),
  (\"cluster1\", \"job-a\", \"a2\", \"wa/t1\", False, 1), $ONE_B]}"
expect two-uids cluster2 "complete=2 lost=0 duplicates=1 relaunched=0 over_capacity=0"
scenario two-pods "{$TWO, \"copies\": [(\"cluster1\", \"job-a\", \"a1\", \"wa/t1\", False, 2), $ONE_B]}"
expect two-pods cluster2 "complete=2 lost=0 duplicates=1 relaunched=0 over_capacity=0"
RELAUNCH='"copies": [("cluster2", "job-a", "a1", "wa/t1", DEL, 1), ("cluster1", "job-a", "a2", "wa/t2", False, 1), '"$ONE_B"'], "lost": [("job-a", "cluster2", "wa/t1")]'
scenario relaunch "{$TWO, ${RELAUNCH/DEL/True}}"
expect relaunch cluster2 "complete=2 lost=0 duplicates=0 relaunched=1 over_capacity=0"
expect relaunch cluster1 "complete=2 lost=0 duplicates=1 relaunched=0 over_capacity=0" # only the paused worker's run may be given up
scenario stale-left "{$TWO, ${RELAUNCH/DEL/False}}"
expect stale-left cluster2 "complete=2 lost=0 duplicates=1 relaunched=0 over_capacity=0"
scenario other-token "{$TWO, ${RELAUNCH/DEL/True}}"
# a run on the lost worker for an admission that was not declared lost is a duplicate
sed -i 's#"lastTransitionTime": "t1"#"lastTransitionTime": "t9"#' \
  "$WORK/other-token/hub-workloads.watch"
expect other-token cluster2 "complete=2 lost=0 duplicates=1 relaunched=0 over_capacity=0"
scenario incomplete "{\"jobs\": {\"job-a\": True, \"job-b\": False}, \"copies\": [(\"cluster1\", \"job-a\", \"a1\", \"wa/t1\", False, 1), $ONE_B]}"
expect incomplete cluster2 "complete=1 lost=1 duplicates=0 relaunched=0 over_capacity=0"
scenario cut "{$TWO, \"copies\": [(\"cluster1\", \"job-a\", \"a1\", \"wa/t1\", False, 1), $ONE_B], \"cut\": \"cluster2-pods.watch\"}"
expect cut cluster2 exit2
# capacity: pods of 1 cpu unless said otherwise (n1: 4 cpu, 8Gi, 110 pods)
C='"containers": [{"resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]'
cpu() { echo "{\"containers\": [{\"resources\": {\"requests\": {\"cpu\": \"$1\"}}}]}"; }
CLEAN="$TWO, \"copies\": [(\"cluster1\", \"job-a\", \"a1\", \"wa/t1\", False, 1), $ONE_B]"
scenario fits "{$CLEAN, \"pods\": [(\"cluster1\", \"ADDED\", \"p1\", \"n1\", \"Running\", $(cpu 3)),
  (\"cluster1\", \"ADDED\", \"p2\", \"n1\", \"Pending\", $(cpu 1)),
  (\"cluster1\", \"ADDED\", \"p3\", None, \"Pending\", $(cpu 4)),
  (\"cluster1\", \"MODIFIED\", \"p1\", \"n1\", \"Succeeded\", $(cpu 3)),
  (\"cluster1\", \"MODIFIED\", \"p3\", \"n1\", \"Pending\", $(cpu 2)),
  (\"cluster1\", \"DELETED\", \"p2\", \"n1\", \"Running\", $(cpu 1)),
  (\"cluster1\", \"ADDED\", \"p4\", \"n1\", \"Running\", $(cpu 2000m)),
  (\"cluster2\", \"ADDED\", \"q1\", \"n1\", \"Running\", $(cpu 4))]}"
expect fits cluster2 "complete=2 lost=0 duplicates=0 relaunched=0 over_capacity=0"
scenario over-cpu "{$CLEAN, \"pods\": [(\"cluster1\", \"ADDED\", \"p1\", \"n1\", \"Running\", $(cpu 3)),
  (\"cluster1\", \"ADDED\", \"p2\", \"n1\", \"Pending\", $(cpu 1001m)),
  (\"cluster1\", \"MODIFIED\", \"p2\", \"n1\", \"Running\", $(cpu 1001m))]}"
expect over-cpu cluster2 "complete=2 lost=0 duplicates=0 relaunched=0 over_capacity=2"
# init container 3 cpu + sidecar 0.5 cpu started before it; the app 1 cpu + limit-only 0.5
INIT='{"initContainers": [{"restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}},
  {"resources": {"requests": {"cpu": "3"}}}],
  "containers": [{"resources": {"requests": {"cpu": "1"}}}, {"resources": {"limits": {"cpu": "500m"}}}]}'
scenario init "{$CLEAN, \"pods\": [(\"cluster1\", \"ADDED\", \"p1\", \"n1\", \"Running\", $INIT),
  (\"cluster1\", \"ADDED\", \"p2\", \"n1\", \"Running\", $(cpu 500m)),
  (\"cluster1\", \"ADDED\", \"p3\", \"n1\", \"Running\", $(cpu 1m))]}"
expect init cluster2 "complete=2 lost=0 duplicates=0 relaunched=0 over_capacity=1"
scenario overhead "{$CLEAN, \"pods\": [(\"cluster1\", \"ADDED\", \"p1\", \"n1\", \"Running\",
  {\"containers\": [{\"resources\": {\"requests\": {\"cpu\": \"4\"}}}], \"overhead\": {\"cpu\": \"1m\"}})]}"
expect overhead cluster2 "complete=2 lost=0 duplicates=0 relaunched=0 over_capacity=1"
scenario memory-gpu-pods "{$CLEAN, \"nodes\": {\"cluster2\": {\"g\": {\"cpu\": \"8\", \"memory\": \"1Gi\", \"pods\": \"1\"}}},
  \"pods\": [(\"cluster1\", \"ADDED\", \"p1\", \"n1\", \"Running\", {$C}),
  (\"cluster1\", \"ADDED\", \"p2\", \"n1\", \"Running\", {\"containers\": [{\"resources\": {\"requests\": {\"memory\": \"7Gi\"}}}]}),
  (\"cluster1\", \"ADDED\", \"p3\", \"n1\", \"Running\", {\"containers\": [{\"resources\": {\"limits\": {\"nvidia.com/gpu\": \"1\"}}}]}),
  (\"cluster2\", \"ADDED\", \"q1\", \"g\", \"Running\", {$C}),
  (\"cluster2\", \"ADDED\", \"q2\", \"g\", \"Pending\", {\"containers\": []}),
  (\"cluster2\", \"ADDED\", \"q3\", \"gone\", \"Pending\", {\"containers\": []})]}"
expect memory-gpu-pods cluster2 "complete=2 lost=0 duplicates=0 relaunched=0 over_capacity=3"
[ $fails = 0 ] || exit 1
echo "ok   chaos audit self-test passed"
