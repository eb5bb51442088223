#!/usr/bin/env python3
"""Audit of test/e2e/chaos.sh: reads the change logs the devhubs replayed
(watch streams from resourceVersion 1, so every change since the start, not
samples) and the hub's final jobs, and counts complete, lost and duplicated
jobs.

  chaos_audit.py DIR JOBS PREFIX PAUSED_WORKER

DIR holds
  hub-jobs.json              kubectl get jobs -o json on the hub at the end
  hub-workloads.watch        the hub's Workload changes (watch stream)
  <worker>-jobs.watch        each worker's Job changes (watch stream)
  <worker>-pods.watch        each worker's Pod changes (watch stream)
  <worker>-nodes.watch       each worker's Node changes (watch stream)
for the workers named by the *-jobs.watch files. A stream must end with the
BOOKMARK the devhub sends when the watch times out: without it the replay was
cut and the audit is refused (exit 2).

A hub job (matched to its worker copies by the label kueue-ks.io/origin-uid)
is a duplicate when, over the whole run, its copies were on two workers, or
had two uids, or two of their pods ran (phase Running or later; every job has
completions 1). One exception, the documented behaviour of a lost worker:
a copy on PAUSED_WORKER placed for an admission the operator declared lost
there (the Workload's check went Retry with "worker cluster <w> lost" while
that admission held its quota) is the run the operator gave up on, so the
job ran again elsewhere. Such a copy is counted as relaunched, not as a
duplicate, only if it is the only one of its kind for the job, at most one of
its pods ran, and it is gone by the end (the operator removed it once the
worker was back). Everything else about the job is held to the strict rules.

Capacity, an oracle independent of kueue-ks's arithmetic (pkg/podres,
pkg/sched, which the devhub's simulators share): the pod changes of each
worker are replayed in order, and after every change no node may hold bound,
non-terminal pods (phase not Succeeded/Failed, not deleted) whose requests,
summed with the Kubernetes rules written out below from their raw specs
(a missing request is the limit; init containers and sidecars; overhead),
exceed the node's status.allocatable (the smallest value any version of the
node showed), counting one "pods" per pod. A resource the node does not list
has 0 allocatable. Each pod change that leaves a node over counts once.

Prints the findings to stderr and one line to stdout:
  complete=N lost=N duplicates=N relaunched=N over_capacity=N
"""
import json
import os
import re
import sys
from fractions import Fraction

ORIGIN_UID = "kueue-ks.io/origin-uid"
PLACED_FOR = "kueue-ks.io/placed-for"
CHECK = "kubestellar-admc"
LOST_RE = re.compile(r"^worker cluster (\S+) lost")


def fail(msg):
    print("chaos_audit: " + msg, file=sys.stderr)
    sys.exit(2)


def read_watch(path):
    """The events of a watch stream; refuses a stream not ended by a BOOKMARK."""
    events = []
    last = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                ev = json.loads(line)
            except ValueError as e:
                fail(f"{path}:{n}: not JSON ({e})")
            t = ev.get("type")
            if t == "ERROR":
                fail(f"{path}:{n}: the replay failed: {json.dumps(ev.get('object'))[:300]}")
            last = t
            if t != "BOOKMARK":
                events.append((t, ev.get("object") or {}))
    if last != "BOOKMARK":
        fail(f"{path}: the stream did not end with the closing BOOKMARK (replay incomplete)")
    return events


def meta(o):
    return o.get("metadata") or {}


def labels(o):
    return meta(o).get("labels") or {}


def annotations(o):
    return meta(o).get("annotations") or {}


def complete(job):
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Complete" and c.get("status") == "True":
            return True
    return False


# Kubernetes quantity suffixes (k8s.io/apimachinery resource.Quantity).
SUFFIX = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": 1,
          "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
          "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
QTY_RE = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:[eE]([+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?$")


def qty(v):
    """A quantity (string or number) as an exact Fraction; refuses what does not parse."""
    m = QTY_RE.match(str(v).strip())
    if not m:
        fail(f"quantity {v!r} does not parse")
    n = Fraction(m.group(1))
    if m.group(2) is not None:
        return n * Fraction(10) ** int(m.group(2))
    return n * SUFFIX[m.group(3) or ""]


def add(a, b):
    return {r: a.get(r, 0) + b.get(r, 0) for r in set(a) | set(b)}


def cmax(a, b):
    return {r: max(a.get(r, 0), b.get(r, 0)) for r in set(a) | set(b)}


def container_requests(c):
    """A container's requests; a resource with a limit and no request requests the limit."""
    res = c.get("resources") or {}
    out = {r: qty(v) for r, v in (res.get("limits") or {}).items()}
    out.update({r: qty(v) for r, v in (res.get("requests") or {}).items()})
    return out


def pod_requests(pod):
    """What the scheduler counts for a pod: the app containers and the sidecars
    (init containers with restartPolicy Always, which keep running) together, or
    while an init container runs, it plus the sidecars started before it, whichever
    is larger; plus the pod overhead; plus one "pods"."""
    spec = pod.get("spec") or {}
    total = {}
    for c in spec.get("containers") or []:
        total = add(total, container_requests(c))
    sidecars, init_peak = {}, {}
    for c in spec.get("initContainers") or []:
        r = container_requests(c)
        if c.get("restartPolicy") == "Always":
            sidecars = add(sidecars, r)
            total = add(total, r)
            init_peak = cmax(init_peak, sidecars)
        else:
            init_peak = cmax(init_peak, add(r, sidecars))
    total = cmax(total, init_peak)
    total = add(total, {r: qty(v) for r, v in (spec.get("overhead") or {}).items()})
    return add(total, {"pods": 1})


def node_allocatable(events):
    """node name -> {resource: the smallest allocatable any version of the node showed}."""
    out = {}
    for _, n in events:
        name = meta(n).get("name")
        alloc = {r: qty(v) for r, v in ((n.get("status") or {}).get("allocatable") or {}).items()}
        out[name] = alloc if name not in out else {r: min(out[name].get(r, v), v)
                                                   for r, v in alloc.items()}
    return out


def over_capacity(worker, pod_events, alloc):
    """Replays a worker's pod changes; returns how many left a node over its allocatable.
    Prints each such change, and the peak use of each node."""
    bound = {}  # pod uid -> (node, requests, name) while bound and not terminal
    use, peak = {}, {}
    over = 0
    for t, p in pod_events:
        uid, node = meta(p).get("uid"), (p.get("spec") or {}).get("nodeName")
        old = bound.pop(uid, None)
        if old:
            use[old[0]] = add(use[old[0]], {r: -v for r, v in old[1].items()})
        phase = (p.get("status") or {}).get("phase")
        if t == "DELETED" or not node or phase in ("Succeeded", "Failed"):
            continue
        req = pod_requests(p)
        bound[uid] = (node, req, meta(p).get("name"))
        use[node] = add(use.get(node, {}), req)
        cap = alloc.get(node)
        if cap is None:
            over += 1
            print(f"over capacity {worker}: pod {meta(p).get('name')} bound to node {node}, "
                  f"which the node changes never showed", file=sys.stderr)
            continue
        excess = {r: (u, cap.get(r, 0)) for r, u in use[node].items() if u > cap.get(r, 0)}
        for r, u in use[node].items():
            if cap.get(r):
                peak.setdefault(node, {})[r] = max(peak.get(node, {}).get(r, 0), u / cap[r])
        if excess:
            over += 1
            pods = sorted(n for (nd, _, n) in bound.values() if nd == node)
            print(f"over capacity {worker}/{node} at rv {meta(p).get('resourceVersion')}: "
                  + ", ".join(f"{r} {float(u):g} of {float(c):g}" for r, (u, c) in sorted(excess.items()))
                  + f" (pods {', '.join(pods)})", file=sys.stderr)
    for node in sorted(peak):
        print(f"capacity {worker}/{node}: peak use "
              + ", ".join(f"{r} {100 * float(f):.0f}%" for r, f in sorted(peak[node].items())),
              file=sys.stderr)
    return over


def lost_admissions(events):
    """hub job uid -> {(worker, placement token)} declared lost by the operator."""
    out = {}
    for _, wl in events:
        owners = meta(wl).get("ownerReferences") or []
        if not owners:
            continue
        st = wl.get("status") or {}
        entry = next((c for c in st.get("admissionChecks") or [] if c.get("name") == CHECK), None)
        if not entry or entry.get("state") != "Retry":
            continue
        m = LOST_RE.match(entry.get("message") or "")
        if not m:
            continue
        qr = next((c for c in st.get("conditions") or [] if c.get("type") == "QuotaReserved"), None)
        if not qr or qr.get("status") != "True":
            continue
        token = f"{meta(wl).get('uid', '')}/{qr.get('lastTransitionTime', '')}"
        out.setdefault(owners[0].get("uid"), set()).add((m.group(1), token))
    return out


def main():
    if len(sys.argv) != 5:
        fail("usage: chaos_audit.py DIR JOBS PREFIX PAUSED_WORKER")
    d, njobs, prefix, paused = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    with open(os.path.join(d, "hub-jobs.json"), encoding="utf-8") as f:
        hub = [j for j in json.load(f)["items"] if meta(j).get("name", "").startswith(prefix)]
    if len(hub) != njobs:
        fail(f"{len(hub)} hub jobs named {prefix}*, expected {njobs}")
    by_uid = {meta(j)["uid"]: meta(j)["name"] for j in hub}
    n_complete = sum(1 for j in hub if complete(j))
    lost = lost_admissions(read_watch(os.path.join(d, "hub-workloads.watch")))

    workers = sorted(f[: -len("-jobs.watch")] for f in os.listdir(d) if f.endswith("-jobs.watch"))
    if len(workers) < 2:
        fail(f"change logs of {len(workers)} workers in {d}")
    # copy uid -> {worker, hub uid, token, exists at the end, pods that ran}
    copies = {}
    over = 0
    for w in workers:
        over += over_capacity(w, read_watch(os.path.join(d, f"{w}-pods.watch")),
                              node_allocatable(read_watch(os.path.join(d, f"{w}-nodes.watch"))))
        for t, o in read_watch(os.path.join(d, f"{w}-jobs.watch")):
            huid = labels(o).get(ORIGIN_UID)
            if not huid:
                continue
            c = copies.setdefault(
                meta(o)["uid"], {"worker": w, "hub": huid, "token": None, "ran": set()}
            )
            c["token"] = annotations(o).get(PLACED_FOR, c["token"])
            c["exists"] = t != "DELETED"
        for _, p in read_watch(os.path.join(d, f"{w}-pods.watch")):
            c = copies.get(labels(p).get("controller-uid", ""))
            if c and (p.get("status") or {}).get("phase") in ("Running", "Succeeded", "Failed"):
                c["ran"].add(meta(p)["uid"])

    per_job = {}
    for cuid, c in copies.items():
        per_job.setdefault(c["hub"], []).append((cuid, c))
    duplicates = relaunched = 0
    for huid, cs in sorted(per_job.items(), key=lambda kv: by_uid.get(kv[0], kv[0])):
        name = by_uid.get(huid)
        if name is None:
            continue  # not one of this run's jobs
        lost_tok = {tok for (w, tok) in lost.get(huid, ()) if w == paused}
        exempt = [(u, c) for u, c in cs if c["worker"] == paused and c["token"] in lost_tok]
        strict = [(u, c) for u, c in cs if (u, c) not in exempt]
        why = []
        if len({c["worker"] for _, c in strict}) > 1:
            why.append("copies on " + ",".join(sorted({c["worker"] for _, c in strict})))
        if len(strict) > 1:
            why.append(f"{len(strict)} copy uids")
        ran = sum(len(c["ran"]) for _, c in strict)
        if ran > 1:
            why.append(f"{ran} pods ran")
        if exempt:
            if len(exempt) > 1:
                why.append(f"{len(exempt)} copies on the lost worker {paused}")
            if sum(len(c["ran"]) for _, c in exempt) > 1:
                why.append(f"{sum(len(c['ran']) for _, c in exempt)} pods ran on the lost worker")
            if any(c["exists"] for _, c in exempt):
                why.append(f"the copy on the lost worker {paused} was never removed")
        if why:
            duplicates += 1
            detail = "; ".join(f"{c['worker']}:{u[:8]} token={c['token']} ran={len(c['ran'])}"
                               f"{'' if c['exists'] else ' (deleted)'}" for u, c in cs)
            print(f"duplicate {name}: {', '.join(why)} [{detail}]", file=sys.stderr)
        elif exempt:
            relaunched += 1
            print(f"relaunched {name}: its run on the lost worker {paused} was given up "
                  f"and removed, it ran again on {','.join(c['worker'] for _, c in strict) or '-'}",
                  file=sys.stderr)
    for j in hub:
        if not complete(j):
            st = j.get("status") or {}
            print(f"lost {meta(j)['name']}: not Complete (labels {labels(j)}, status {st})",
                  file=sys.stderr)
    print(f"complete={n_complete} lost={njobs - n_complete} duplicates={duplicates} "
          f"relaunched={relaunched} over_capacity={over}")


if __name__ == "__main__":
    main()
