#!/usr/bin/env python3
"""Maps the requests a devhub logged (--v 3: msg=request method=M path=P) to
"group resource verb" and checks each one is listed in an expected-calls file
(config/rbac/expected-calls*.txt), i.e. granted by config/rbac.

Usage: rbac-observed.py EXPECTED_CALLS DEVHUB_LOG [FIRST_LINE [OPERATOR_NS]]
Prints every observed call; exit 1 when one is not granted, 2 when nothing was observed.
Lines marked "namespace" grant a call only inside OPERATOR_NS (default
kueue-ks-system), as the Role does; the other lines grant it everywhere.
"""
import re
import sys

def expected(path):
    cluster, namespaced = set(), set()
    for line in open(path):
        line = line.split("#", 1)[0].split()
        if len(line) >= 3:
            t = ("" if line[0] == "core" else line[0], line[1], line[2])
            (namespaced if len(line) > 3 else cluster).add(t)
    return cluster, namespaced

def call_of(method, path):
    path, _, query = path.partition("?")
    p = [x for x in path.split("/") if x]
    if p[:1] == ["api"] and len(p) >= 2:
        group, rest = "", p[2:]
    elif p[:1] == ["apis"] and len(p) >= 3:
        group, rest = p[1], p[3:]
    else:
        return None  # /version, /healthz, discovery roots
    if not rest:
        return None  # discovery of a group version
    ns = None
    if rest[0] == "namespaces" and len(rest) >= 3:
        ns = rest[1]
        rest = rest[2:]  # namespaced object: namespaces/NS/RES[/NAME[/SUB]]
    res = rest[0]
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else None
    if sub:
        res = f"{res}/{sub}"
    m = method.upper()
    watch = re.search(r"(^|&)watch=(1|true)", query) is not None
    if m == "GET":
        verb = "get" if name else ("watch" if watch else "list")
    elif m == "POST":
        verb = "create"
    elif m == "PUT":
        verb = "update"
    elif m == "PATCH":
        verb = "patch"
    elif m == "DELETE":
        verb = "delete" if name else "deletecollection"
    else:
        return None
    return (group, res, verb, ns)

def main():
    exp_path, log_path = sys.argv[1], sys.argv[2]
    first = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    own_ns = sys.argv[4] if len(sys.argv) > 4 else "kueue-ks-system"
    cluster, namespaced = expected(exp_path)
    seen = {}
    rx = re.compile(r"msg=request method=(\S+) path=(\S+)")
    for n, line in enumerate(open(log_path, errors="replace"), 1):
        if n < first:
            continue
        m = rx.search(line)
        if not m:
            continue
        c = call_of(m.group(1), m.group(2))
        if c:
            seen.setdefault(c, m.group(1) + " " + m.group(2))
    if not seen:
        print("no API calls observed")
        return 2
    bad = 0
    for c in sorted(seen, key=lambda c: (c[0], c[1], c[2], c[3] or "")):
        t = c[:3]
        ok = t in cluster or (t in namespaced and c[3] == own_ns)
        bad += not ok
        where = f" in namespace {c[3]}" if c[3] else ""
        print(f"{'ok  ' if ok else 'NOT GRANTED'} {c[0] or 'core'} {c[1]} {c[2]}{where}   (e.g. {seen[c]})")
    return 1 if bad else 0

if __name__ == "__main__":
    sys.exit(main())
