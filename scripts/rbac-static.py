#!/usr/bin/env python3
"""Static half of the RBAC comparison: finds the API resources the C code
names and checks each is listed in config/rbac/expected-calls*.txt (so granted,
as scripts/rbac-check.sh verifies). The verbs are checked at run time by
scripts/rbac-observed.py; this catches a resource whose calls a short run does
not exercise.

Found: kube_path("group", version, "resource", ns, name, "sub") with literal (or
#define'd) group and resource, and struct initialisers that set .group = "G"
and .resource = "R" together (informer options, the job kind table).
Scanned: pkg/, controllers/, cmd/ (not devhub/: that is the server side).

Usage: rbac-static.py [SOURCE_ROOT [RBAC_DIR]] (defaults: this repository and
its config/rbac). Exit 1 when a resource is not listed.
"""
import glob
import os
import re
import sys

here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
root = sys.argv[1] if len(sys.argv) > 1 else here
rbac = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "config/rbac"))
os.chdir(root)

def listed():
    out = set()
    for f in (os.path.join(rbac, "expected-calls.txt"), os.path.join(rbac, "expected-calls-agent.txt")):
        for line in open(f):
            p = line.split("#", 1)[0].split()
            if len(p) >= 3:
                out.add(("" if p[0] == "core" else p[0], p[1]))
    return out

defines = {}
sources = sorted(glob.glob("pkg/**/*.[ch]", recursive=True) + glob.glob("controllers/**/*.[ch]", recursive=True)
                 + glob.glob("cmd/**/*.[ch]", recursive=True))
texts = {f: open(f, errors="replace").read() for f in sources}
for t in texts.values():
    for m in re.finditer(r'^\s*#\s*define\s+([A-Z_][A-Z0-9_]*)\s+"([^"]*)"', t, re.M):
        defines[m.group(1)] = m.group(2)

def lit(tok):
    tok = tok.strip()
    if tok.startswith('"') and tok.endswith('"'):
        return tok[1:-1]
    return defines.get(tok)

found = {}
call = re.compile(r'kube_path\(\s*([^,]+),\s*[^,]+,\s*([^,]+),\s*[^,]+,\s*[^,]+,\s*([^)]+)\)')
for f, t in texts.items():
    for m in call.finditer(t):
        g, r, sub = lit(m.group(1)), lit(m.group(2)), lit(m.group(3))
        if g is None or not r:
            continue
        res = f"{r}/{sub}" if sub else r
        found.setdefault((g, res), f"{f}:{t.count(chr(10), 0, m.start()) + 1}")
    # .group = "G" ... .resource = "R" within one initialiser (at most 12 lines apart)
    for m in re.finditer(r'\.group\s*=\s*("[^"]*"|[A-Z_][A-Z0-9_]*)\s*,', t):
        window = t[m.end():m.end() + 600]
        r = re.search(r'\.resource\s*=\s*("[^"]*"|[A-Z_][A-Z0-9_]*)', window)
        stop = re.search(r'\}', window)
        if not r or (stop and stop.start() < r.start()):
            continue
        g, res = lit(m.group(1)), lit(r.group(1))
        if g is None or not res:
            continue
        found.setdefault((g, res), f"{f}:{t.count(chr(10), 0, m.start()) + 1}")

have = listed()
bad = 0
for k in sorted(found):
    ok = k in have
    bad += not ok
    print(f"{'ok  ' if ok else 'NOT LISTED'} {k[0] or 'core'} {k[1]}   ({found[k]})")
if not found:
    print("no API resources found in the sources")
    sys.exit(2)
sys.exit(1 if bad else 0)
