#!/usr/bin/env python3
"""bench/scale/real_lists.py: what the operator's restart lists cost the servers, real and devhub.

Starts etcd + kube-apiserver (build/realstack/bin, scripts/realstack/build.sh) and a devhub
(bin/kueue-ks-devhub), creates N suspended Jobs (one container with requests, labels, an
annotation: about the size of bench-scale's hub Jobs) on each, then times on each, three
times in turn (the median is printed), one list of the N Jobs:

  rv0_s         resourceVersion=0&limit=500: the informer's first list now (kube-apiserver
                answers it from its watch cache, whole; the devhub too);
  paged_s       limit=500 + continue: the informer's first list before (a consistent read);
  consistent_s  no resourceVersion, no limit: the bench-scale baseline's list.

Client: one keep-alive HTTPS connection, the body read whole, the continue token taken from
the body's metadata (no JSON parse), so the figures are the server's and the transfer's.

    bench/scale/real_lists.py [--n N]      # default 10000
    DEVHUB_BIN=... REALSTACK_BIN=...       # other binaries (e.g. an older devhub)

Prints one JSON line {"bench":"real_lists","n":..,"real":{..},"devhub":{..},"kube_apiserver":..}.
"""
import argparse, base64, http.client, json, os, re, socket, ssl, statistics, subprocess
import sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RS = os.environ.get("REALSTACK_BIN", os.path.join(ROOT, "build/realstack/bin"))
DEVHUB = os.environ.get("DEVHUB_BIN", os.path.join(ROOT, "bin/kueue-ks-devhub"))
CONT = re.compile(rb'"continue":"([^"]*)"')


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


class Server:
    def __init__(self, host, port, ctx, headers):
        self.host, self.port, self.ctx, self.headers = host, port, ctx, headers
        self.conn = None

    def req(self, method, path, body=None):
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                                        timeout=120)
            try:
                h = dict(self.headers)
                if body is not None:
                    h["Content-Type"] = "application/json"
                self.conn.request(method, path, body=body, headers=h)
                r = self.conn.getresponse()
                return r.status, r.read()
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
        raise RuntimeError("unreachable")


def job(i):
    return json.dumps({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "scale-%d" % i, "labels": {"kueue.x-k8s.io/queue-name": "q",
                                                       "app": "bench-scale"},
                     "annotations": {"note": "x" * 200}},
        "spec": {"suspend": True, "template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                            "command": ["sleep", "30"],
                            "env": [{"name": "E%d" % k, "value": "v" * 20} for k in range(4)],
                            "resources": {"requests": {"cpu": "100m", "memory": "1Mi"}}}]}}}})


def create(srv, n):
    path = "/apis/batch/v1/namespaces/default/jobs"
    for i in range(n):
        st, body = srv.req("POST", path, job(i))
        if st != 201:
            sys.exit("create %d: %d %s" % (i, st, body[:300]))


def list_once(srv, query, paged):
    path = "/apis/batch/v1/namespaces/default/jobs"
    t0 = time.monotonic()
    items = 0
    q = query
    while True:
        st, body = srv.req("GET", path + ("?" + q if q else ""))
        if st != 200:
            sys.exit("list %s: %d %s" % (q, st, body[:300]))
        items += body.count(b'"name":"scale-')
        m = CONT.search(body, 0, 4096)  # metadata comes before the items
        if not paged or not m or not m.group(1):
            break
        q = "limit=500&continue=" + m.group(1).decode()
    return time.monotonic() - t0, items


def measure(srv, n):
    shapes = {"rv0_s": ("resourceVersion=0&limit=500", True),
              "paged_s": ("limit=500", True),
              "consistent_s": ("", False)}
    out = {k: [] for k in shapes}
    for _ in range(3):
        for k, (q, paged) in shapes.items():
            dt, items = list_once(srv, q, paged)
            if items != n:
                sys.exit("%s: %d items, want %d" % (k, items, n))
            out[k].append(dt)
    return {k: round(statistics.median(v), 3) for k, v in out.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10000)
    a = ap.parse_args()
    for b in ("etcd", "kube-apiserver"):
        if not os.access(os.path.join(RS, b), os.X_OK):
            sys.exit("real_lists: %s/%s not built (scripts/realstack/build.sh)" % (RS, b))
    work = tempfile.mkdtemp(prefix="real-lists-")
    procs = []
    try:
        ep, pp, apport = free_ports(3)
        token = "bench-%d" % os.getpid()
        with open(os.path.join(work, "tokens.csv"), "w") as f:
            f.write("%s,admin,admin,system:masters\n" % token)
        subprocess.run(["openssl", "genrsa", "-out", work + "/sa.key", "2048"], check=True,
                       capture_output=True)
        subprocess.run(["openssl", "rsa", "-in", work + "/sa.key", "-pubout", "-out",
                        work + "/sa.pub"], check=True, capture_output=True)
        log = open(os.path.join(work, "servers.log"), "w")
        procs.append(subprocess.Popen([
            RS + "/etcd", "--name", "b", "--data-dir", work + "/etcd", "--log-level", "warn",
            "--unsafe-no-fsync", "--listen-client-urls", "http://127.0.0.1:%d" % ep,
            "--advertise-client-urls", "http://127.0.0.1:%d" % ep,
            "--listen-peer-urls", "http://127.0.0.1:%d" % pp,
            "--initial-advertise-peer-urls", "http://127.0.0.1:%d" % pp,
            "--initial-cluster", "b=http://127.0.0.1:%d" % pp], stdout=log, stderr=log))
        procs.append(subprocess.Popen([
            RS + "/kube-apiserver", "--etcd-servers", "http://127.0.0.1:%d" % ep,
            "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
            "--secure-port", str(apport), "--endpoint-reconciler-type", "none",
            "--cert-dir", work + "/apiserver", "--token-auth-file", work + "/tokens.csv",
            "--authorization-mode", "RBAC", "--service-account-issuer",
            "https://kubernetes.default.svc", "--service-account-key-file", work + "/sa.pub",
            "--service-account-signing-key-file", work + "/sa.key",
            "--service-cluster-ip-range", "10.96.0.0/16", "--enable-admission-plugins", "",
            "--disable-admission-plugins", "ServiceAccount",
            "--enable-priority-and-fairness=false", "--profiling=false"],
            stdout=log, stderr=log))
        dkc = os.path.join(work, "dev.kc")
        procs.append(subprocess.Popen([
            DEVHUB, "--listen", "127.0.0.1:0", "--name", "dev",
            "--kubeconfig-out", dkc], stdout=log, stderr=log))
        insecure = ssl.create_default_context()
        insecure.check_hostname = False
        insecure.verify_mode = ssl.CERT_NONE
        real = Server("127.0.0.1", apport, insecure, {"Authorization": "Bearer " + token})
        deadline = time.monotonic() + 60
        while True:
            try:
                if real.req("GET", "/readyz")[0] == 200 and os.path.getsize(dkc) > 0:
                    break
            except (OSError, http.client.HTTPException):
                pass
            if time.monotonic() > deadline:
                sys.exit("real_lists: servers not ready in 60 s (%s)" % work)
            time.sleep(0.2)
        kc = open(dkc).read()
        server = re.search(r"server: https://127\.0\.0\.1:(\d+)", kc).group(1)
        for field, name in (("client-certificate-data", "crt"), ("client-key-data", "key")):
            data = re.search(field + r": (\S+)", kc).group(1)
            with open(os.path.join(work, "dev." + name), "wb") as f:
                f.write(base64.b64decode(data))
        dctx = ssl.create_default_context()
        dctx.check_hostname = False
        dctx.verify_mode = ssl.CERT_NONE
        dctx.load_cert_chain(work + "/dev.crt", work + "/dev.key")
        dev = Server("127.0.0.1", int(server), dctx, {})
        version = json.loads(real.req("GET", "/version")[1])["gitVersion"]
        # the default namespace exists on both (the devhub makes it; kube-apiserver's
        # system namespaces controller too, shortly after start)
        for _ in range(100):
            if real.req("GET", "/api/v1/namespaces/default")[0] == 200:
                break
            time.sleep(0.1)
        t0 = time.monotonic()
        create(real, a.n)
        create(dev, a.n)
        setup_s = time.monotonic() - t0
        res = {"bench": "real_lists", "n": a.n, "kube_apiserver": version,
               "real": measure(real, a.n), "devhub": measure(dev, a.n),
               "setup_s": round(setup_s, 1), "load1": os.getloadavg()[0]}
        print(json.dumps(res))
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
