#!/usr/bin/env python3
"""One dispatch measurement on a running real stack (bench/multikueue/run.sh).

Creates N suspended Jobs bench-<i> in namespace default of the hub, labelled with the
LocalQueue QUEUE (16 requests in flight, as bench-dispatch), while watches (no polling) time,
per job, the moment its hub Workload's QuotaReserved condition turned True and the moment a
Job of the same name appeared on a worker (watch ADDED): the worker copy that kueue-ks
creates, or the Job MultiKueue creates on the worker whose Kueue reserved first. Both
dispatchers keep the name. Prints one JSON line

  {"n":..,"placed":..,"duplicates":..,"cluster1":..,"cluster2":..,"seconds":..,"per_s":..,
   "p50_ms":..,"p99_ms":..,"max_ms":..,"create_seconds":..,"reserve_seconds":..}

seconds: from the first reservation seen to the last worker Job (the dispatch window);
per_s = placed / seconds; p50/p99/max: from a job's reservation to its worker Job;
create_seconds: the N creates; reserve_seconds: from the first create to the last reservation.
Exit 0 when all N were placed before --timeout, 1 otherwise.

usage: measure.py --hub KC --worker KC --worker KC --queue LOCALQUEUE [--n N] [--timeout S]
"""
import argparse
import base64
import concurrent.futures
import http.client
import json
import os
import ssl
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
        self.dups = 0
        self.done = threading.Event()
        self.error = None


def reserved_job(wl):
    """The Job name of a Workload whose QuotaReserved is True, else None."""
    conds = (wl.get("status") or {}).get("conditions") or []
    if not any(c.get("type") == "QuotaReserved" and c.get("status") == "True" for c in conds):
        return None
    for o in wl["metadata"].get("ownerReferences") or []:
        if o.get("kind") == "Job":
            return o.get("name")
    return None


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
    a = ap.parse_args()
    timeout = a.timeout or 120 + 2 * a.n
    tmp = tempfile.mkdtemp(prefix="bench-mk-")
    hub = Cluster(a.hub, tmp)
    workers = [Cluster(w, tmp) for w in a.worker]
    st = State(a.n)
    st.ready = threading.Semaphore(0)
    names = {"bench-%d" % i for i in range(a.n)}

    def on_workload(typ, wl):
        job = reserved_job(wl) if typ in ("ADDED", "MODIFIED") else None
        if job in names:
            with st.lock:
                st.reserved.setdefault(job, time.monotonic())

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
    st.done.wait(max(1.0, timeout - (t_created - t0)))
    st.done.set()
    with st.lock:
        reserved, placed, dups = dict(st.reserved), dict(st.placed), st.dups
    lat = sorted(
        (placed[k][0] - reserved[k]) * 1000 for k in placed if k in reserved
    ) or [0.0]
    first_res = min(reserved.values()) if reserved else t0
    last_place = max((v[0] for v in placed.values()), default=first_res)
    secs = max(last_place - first_res, 1e-3)

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
    }
    print(json.dumps(out))
    if st.error:
        print("measure: " + st.error, file=sys.stderr)
    sys.exit(0 if len(placed) == a.n and not st.error else 1)


if __name__ == "__main__":
    main()
