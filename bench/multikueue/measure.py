#!/usr/bin/env python3
"""One dispatch measurement on a running real stack (bench/multikueue/run.sh).

Creates N suspended Jobs bench-<i> in namespace default of the hub, labelled with the
LocalQueue QUEUE (16 requests in flight, as bench-dispatch), while watches (no polling) time,
per job, the moment its hub Workload's QuotaReserved condition turned True and the moment a
Job of the same name appeared on a worker (watch ADDED): the worker copy that kueue-ks
creates, or the Job MultiKueue creates on the worker whose Kueue reserved first. Both
dispatchers keep the name. Prints one JSON line

  {"n":..,"placed":..,"duplicates":..,"cluster1":..,"cluster2":..,"seconds":..,"per_s":..,
   "p50_ms":..,"p99_ms":..,"max_ms":..,"create_seconds":..,"reserve_seconds":..,"reserved":..,
   "reserve_per_s":..}

seconds: from the first reservation seen to the last worker Job (the dispatch window, both
reserving and dispatching);
per_s = placed / seconds; p50/p99/max: from a job's reservation to its worker Job;
create_seconds: the N creates; reserve_seconds: from the first create to the last reservation;
reserve_per_s: reservations per second between the first and the last (the hub Kueue's pace,
which bounds both dispatchers when it is the slower step).
Exit 0 when all N were placed before --timeout (default 120 + 4 N seconds from the first
create), 1 otherwise.

--release CMD (reserved first, like bench-dispatch --real): the dispatcher is held while the N
jobs are created and reserved (none may reach a worker); then the shell command CMD releases it
(bench/multikueue/run.sh restarts the hub Kueue with MultiKueue's own dispatcher) and the
dispatch is timed alone: seconds from the first workload MultiKueue nominates workers for (its
first hub write; the release when none is seen) to the last worker Job, latencies from each
job's nomination to its worker Job, release_to_first_s from the release to the first
nomination.

usage: measure.py --hub KC --worker KC --worker KC --queue LOCALQUEUE [--n N] [--timeout S]
                  [--release CMD]
"""
import argparse
import base64
import concurrent.futures
import http.client
import json
import os
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

import yaml

WINDOW = 16


class Cluster:
    """A kubeconfig's server and credentials (embedded data, as stack.sh writes them)."""

    def __init__(self, path, tmp):
        with open(path) as f:
            kc = yaml.safe_load(f)
        cl = kc["clusters"][0]["cluster"]
        user = kc["users"][0]["user"]
        u = urllib.parse.urlparse(cl["server"])
        self.host, self.port = u.hostname, u.port or 443
        base = os.path.join(tmp, os.path.basename(path))
        files = {}
        for key, ext in (
            ("certificate-authority-data", "ca"),
            ("client-certificate-data", "crt"),
            ("client-key-data", "key"),
        ):
            src = cl if key.startswith("certificate-authority") else user
            files[ext] = base + "." + ext
            with open(files[ext], "wb") as f:
                f.write(base64.b64decode(src[key]))
        self.ctx = ssl.create_default_context(cafile=files["ca"])
        self.ctx.load_cert_chain(files["crt"], files["key"])

    def conn(self, timeout=30):
        return http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=timeout)

    def call(self, method, path, body=None, conn=None):
        c = conn or self.conn()
        data = json.dumps(body).encode() if body is not None else None
        hdr = {"Content-Type": "application/json", "Accept": "application/json"}
        c.request(method, path, body=data, headers=hdr)
        r = c.getresponse()
        payload = r.read()
        if conn is None:
            c.close()
        if r.status >= 300:
            raise RuntimeError("%s %s: HTTP %d %s" % (method, path, r.status, payload[:300]))
        return json.loads(payload)


def hub_job(i, queue):
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "bench-%d" % i,
            "namespace": "default",
            "labels": {"kueue.x-k8s.io/queue-name": queue},
        },
        "spec": {
            "parallelism": 1,
            "completions": 1,
            "suspend": True,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "c",
                            "image": "busybox",
                            "args": ["600s"],
                            "resources": {"requests": {"cpu": "100m", "memory": "1Mi"}},
                        }
                    ],
                }
            },
        },
    }


class State:
    def __init__(self, n):
        self.n = n
        self.lock = threading.Lock()
        self.reserved = {}  # job name -> monotonic time of QuotaReserved
        self.placed = {}  # job name -> (monotonic time, cluster index)
        self.nominated = {}  # job name -> monotonic time MultiKueue nominated its workers
        self.released = False
        self.dups = 0
        self.done = threading.Event()
        self.error = None


def owner_job(wl):
    for o in wl["metadata"].get("ownerReferences") or []:
        if o.get("kind") == "Job":
            return o.get("name")
    return None


def reserved_job(wl):
    """The Job name of a Workload whose QuotaReserved is True, else None."""
    conds = (wl.get("status") or {}).get("conditions") or []
    if not any(c.get("type") == "QuotaReserved" and c.get("status") == "True" for c in conds):
        return None
    return owner_job(wl)


def nominated_job(wl):
    """The Job name of a Workload MultiKueue has nominated workers for (its first hub write of
    a dispatch), else None."""
    status = wl.get("status") or {}
    if not status.get("nominatedClusterNames") and not status.get("clusterName"):
        return None
    return owner_job(wl)


def watch(cluster, path, on_event, st):
    """Watch path from its current resourceVersion; on_event(type, obj) per event."""
    try:
        rv = cluster.call("GET", path + "?limit=1")["metadata"]["resourceVersion"]
        c = cluster.conn(timeout=3600)
        c.request("GET", path + "?watch=1&timeoutSeconds=3600&resourceVersion=" + rv)
        r = c.getresponse()
        if r.status != 200:
            raise RuntimeError("watch %s: HTTP %d" % (path, r.status))
        st.ready.release()
        while not st.done.is_set():
            line = r.readline()
            if not line:
                raise RuntimeError("watch %s closed" % path)
            ev = json.loads(line)
            on_event(ev["type"], ev["object"])
    except Exception as e:  # reported by main
        if not st.done.is_set():
            st.error = "%s: %s" % (path, e)
            st.done.set()
            st.ready.release()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hub", required=True)
    ap.add_argument("--worker", action="append", required=True)
    ap.add_argument("--queue", required=True)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--timeout", type=float, default=0)
    ap.add_argument("--release", default="")
    a = ap.parse_args()
    timeout = a.timeout or 120 + 4 * a.n
    tmp = tempfile.mkdtemp(prefix="bench-mk-")
    hub = Cluster(a.hub, tmp)
    workers = [Cluster(w, tmp) for w in a.worker]
    st = State(a.n)
    st.ready = threading.Semaphore(0)
    st.all_reserved = threading.Event()
    names = {"bench-%d" % i for i in range(a.n)}

    def on_workload(typ, wl):
        if typ not in ("ADDED", "MODIFIED"):
            return
        now = time.monotonic()
        job = reserved_job(wl)
        nom = nominated_job(wl)
        with st.lock:
            if job in names:
                st.reserved.setdefault(job, now)
                if len(st.reserved) == st.n:
                    st.all_reserved.set()
            if nom in names and st.released:
                st.nominated.setdefault(nom, now)

    def on_copy(ci):
        def cb(typ, job):
            name = job["metadata"]["name"]
            if typ != "ADDED" or name not in names:
                return
            with st.lock:
                if name in st.placed:
                    st.dups += 1
                    return
                st.placed[name] = (time.monotonic(), ci)
                if len(st.placed) == st.n:
                    st.done.set()

        return cb

    specs = [(hub, "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads", on_workload)]
    specs += [
        (w, "/apis/batch/v1/namespaces/default/jobs", on_copy(i + 1)) for i, w in enumerate(workers)
    ]
    for cl, path, cb in specs:
        threading.Thread(target=watch, args=(cl, path, cb, st), daemon=True).start()
    for _ in specs:
        st.ready.acquire()
    if st.error:
        sys.exit("measure: " + st.error)

    local = threading.local()

    def create(i):
        if not hasattr(local, "c"):
            local.c = hub.conn()
        hub.call("POST", "/apis/batch/v1/namespaces/default/jobs", hub_job(i, a.queue), local.c)

    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(WINDOW) as ex:
        list(ex.map(create, range(a.n)))
    t_created = time.monotonic()
    t_release = None
    if a.release:
        # reserved first: every dispatch held until all N hold quota, then released and timed
        st.all_reserved.wait(max(1.0, timeout - (t_created - t0)))
        if not st.all_reserved.is_set() or st.placed:
            st.error = st.error or "%d of %d reserved, %d placed before the release" % (
                len(st.reserved), a.n, len(st.placed))
            st.done.set()
        else:
            with st.lock:
                st.released = True
            t_release = time.monotonic()
            rc = subprocess.call(a.release, shell=True, stdout=sys.stderr)
            if rc:
                st.error = "release command exited %d" % rc
                st.done.set()
    st.done.wait(max(1.0, timeout - (time.monotonic() - t0)))
    st.done.set()
    with st.lock:
        reserved, placed, dups = dict(st.reserved), dict(st.placed), st.dups
        nominated = dict(st.nominated)
    # the dispatch of a job starts at its reservation, or with --release at MultiKueue's
    # nomination (its first write), else at the release
    starts = dict(reserved)
    if t_release is not None:
        starts = {k: nominated.get(k, t_release) for k in reserved}
    lat = sorted((placed[k][0] - starts[k]) * 1000 for k in placed if k in starts) or [0.0]
    first_res = min(reserved.values()) if reserved else t0
    first = min(starts.values()) if starts else t0
    last_place = max((v[0] for v in placed.values()), default=first)
    secs = max(last_place - first, 1e-3)
    res_span = max(reserved.values(), default=first_res) - first_res

    def pct(p):
        return lat[min(len(lat) - 1, int(p * len(lat)))]

    out = {
        "n": a.n,
        "placed": len(placed),
        "duplicates": dups,
        "cluster1": sum(1 for v in placed.values() if v[1] == 1),
        "cluster2": sum(1 for v in placed.values() if v[1] == 2),
        "seconds": round(secs, 3),
        "per_s": round(len(placed) / secs, 1),
        "p50_ms": round(pct(0.50), 1),
        "p99_ms": round(pct(0.99), 1),
        "max_ms": round(lat[-1], 1),
        "create_seconds": round(t_created - t0, 3),
        "reserve_seconds": round(max(reserved.values(), default=t0) - t0, 3),
        "reserved": len(reserved),
        "reserve_per_s": round(len(reserved) / max(res_span, 1e-3), 1),
        "release_to_first_s": round(first - t_release, 3) if t_release is not None else None,
    }
    print(json.dumps(out))
    if st.error:
        print("measure: " + st.error, file=sys.stderr)
    sys.exit(0 if len(placed) == a.n and not st.error else 1)


if __name__ == "__main__":
    main()
