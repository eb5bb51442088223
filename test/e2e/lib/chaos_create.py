#!/usr/bin/env python3
"""Job creator of test/e2e/chaos.sh: creates batch/v1 Jobs on a hub at a
steady pace, straight over HTTPS (one kubectl per job is too slow on a busy
machine to keep the pace), retrying through injected failures and a hub
restart until each job exists.

  chaos_create.py KUBECONFIG PER_SECOND < jobs

Each input line is "NAME DURATION CPU MEMORY"; the Job has one pod of that
size whose container runs DURATION (the devhub's job runner reads it from
args), queued to LocalQueue user-queue-ks in namespace default. Job i is sent
no earlier than i / PER_SECOND seconds after the start. A 201 or a 409
AlreadyExists (an earlier try that got through) is success; anything else is
retried every 0.2 s for up to 120 s per job, then exit 1.
"""
import base64
import http.client
import json
import os
import ssl
import sys
import tempfile
import time

import yaml  # python3-yaml (scripts/deps.sh)


def context(kc_path):
    """(host, port, SSLContext) from the kubeconfig's current context."""
    with open(kc_path, encoding="utf-8") as f:
        kc = yaml.safe_load(f)
    ctx_name = kc["current-context"]
    ctx = next(c["context"] for c in kc["contexts"] if c["name"] == ctx_name)
    cl = next(c["cluster"] for c in kc["clusters"] if c["name"] == ctx["cluster"])
    user = next(u["user"] for u in kc["users"] if u["name"] == ctx["user"])
    hostport = cl["server"].split("://", 1)[1].rstrip("/")
    host, port = hostport.rsplit(":", 1)
    sc = ssl.create_default_context(cadata=base64.b64decode(cl["certificate-authority-data"]).decode())
    with tempfile.TemporaryDirectory() as d:  # load_cert_chain reads files
        crt, key = os.path.join(d, "c.crt"), os.path.join(d, "c.key")
        with open(crt, "wb") as f:
            f.write(base64.b64decode(user["client-certificate-data"]))
        with open(key, "wb") as f:
            f.write(base64.b64decode(user["client-key-data"]))
        sc.load_cert_chain(crt, key)
    return host, int(port), sc


def job(name, duration, cpu, memory):
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default",
                     "labels": {"kueue.x-k8s.io/queue-name": "user-queue-ks"}},
        "spec": {
            "parallelism": 1, "completions": 1, "suspend": True,
            "template": {"spec": {"restartPolicy": "Never", "containers": [{
                "name": "c", "image": "busybox", "args": [duration],
                "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}},
        },
    }


def main():
    kc, rate = sys.argv[1], float(sys.argv[2])
    specs = [line.split() for line in sys.stdin if line.strip()]
    conn = None
    t0 = time.monotonic()
    for i, (name, duration, cpu, memory) in enumerate(specs):
        time.sleep(max(0.0, t0 + i / rate - time.monotonic()))
        body = json.dumps(job(name, duration, cpu, memory))
        give_up = time.monotonic() + 120
        last = ""
        while True:
            try:
                if conn is None:
                    host, port, sc = context(kc)
                    conn = http.client.HTTPSConnection(host, port, context=sc, timeout=10)
                conn.request("POST", "/apis/batch/v1/namespaces/default/jobs", body,
                             {"Content-Type": "application/json"})
                r = conn.getresponse()
                data = r.read()
                if r.status == 201:
                    break
                reason = ""
                try:
                    reason = json.loads(data).get("reason", "")
                except ValueError:
                    pass
                if r.status == 409 and reason == "AlreadyExists":
                    break
                last = f"{r.status} {reason}"
            except (OSError, http.client.HTTPException, yaml.YAMLError, KeyError) as e:
                last = repr(e)
                if conn is not None:
                    conn.close()
                conn = None
            if time.monotonic() > give_up:
                print(f"job {name} not created within 120 s: {last}", file=sys.stderr)
                sys.exit(1)
            time.sleep(0.2)
    print(f"{len(specs)} jobs created in {time.monotonic() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
