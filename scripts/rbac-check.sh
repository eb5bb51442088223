#!/usr/bin/env bash
# Checks that the RBAC in config/rbac grants exactly the API calls kueue-ks makes:
#   - ClusterRole manager-role   == lines of config/rbac/expected-calls.txt without "namespace"
#   - Role manager-namespace-role == lines of config/rbac/expected-calls.txt with "namespace"
#   - ClusterRole agent-role     == config/rbac/expected-calls-agent.txt
# Every rule is expanded to "group resource verb" triples; missing and extra
# triples are both errors (least privilege). Wildcards ("*") are refused.
# Usage: scripts/rbac-check.sh [RBAC_DIR]   (default config/rbac). Exit 0 = exact match.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-config/rbac}
command -v kubectl >/dev/null || { echo "rbac-check: kubectl is required (for kubectl kustomize)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "rbac-check: python3 is required" >&2; exit 2; }
python3 -c 'import yaml' 2>/dev/null || { echo "rbac-check: python3 PyYAML is required (apt-get install python3-yaml)" >&2; exit 2; }

rendered=$(mktemp)
trap 'rm -f "$rendered"' EXIT
kubectl kustomize "$dir" >"$rendered"

python3 - "$rendered" "$dir/expected-calls.txt" "$dir/expected-calls-agent.txt" <<'PY'
import sys, yaml

rendered, manager_file, agent_file = sys.argv[1:4]

def read_expected(path):
    cluster, namespaced = set(), set()
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) not in (3, 4) or (len(parts) == 4 and parts[3] != "namespace"):
                sys.exit(f"{path}:{n}: want '<group> <resource> <verb> [namespace]', got {line!r}")
            g = "" if parts[0] == "core" else parts[0]
            (namespaced if len(parts) == 4 else cluster).add((g, parts[1], parts[2]))
    return cluster, namespaced

def grants(obj):
    out = set()
    for i, r in enumerate(obj.get("rules") or []):
        name = f"{obj['kind']} {obj['metadata']['name']} rule {i}"
        if r.get("nonResourceURLs") or r.get("resourceNames"):
            sys.exit(f"{name}: nonResourceURLs/resourceNames are not expected")
        for field in ("apiGroups", "resources", "verbs"):
            if "*" in (r.get(field) or []):
                sys.exit(f"{name}: wildcard in {field} is not least privilege")
        for g in r.get("apiGroups") or []:
            for res in r.get("resources") or []:
                for v in r.get("verbs") or []:
                    out.add((g, res, v))
    return out

with open(rendered) as f:
    objs = [o for o in yaml.safe_load_all(f) if o]
def find(kind, suffix):
    hits = [o for o in objs if o.get("kind") == kind and o["metadata"]["name"].endswith(suffix)]
    if len(hits) != 1:
        sys.exit(f"expected exactly one {kind} named *{suffix}, found {len(hits)}")
    return hits[0]

m_cluster, m_ns = read_expected(manager_file)
a_cluster, a_ns = read_expected(agent_file)
if a_ns:
    sys.exit(f"{agent_file}: the agent makes no namespace-only calls")
checks = [
    ("ClusterRole manager-role", grants(find("ClusterRole", "manager-role")), m_cluster, manager_file),
    ("Role manager-namespace-role", grants(find("Role", "manager-namespace-role")), m_ns, manager_file),
    ("ClusterRole agent-role", grants(find("ClusterRole", "agent-role")), a_cluster, agent_file),
]
def fmt(t):
    return f"{t[0] or 'core'} {t[1]} {t[2]}"
bad = 0
for name, have, want, src in checks:
    for t in sorted(want - have):
        print(f"MISSING {name}: {fmt(t)} (listed in {src})"); bad += 1
    for t in sorted(have - want):
        print(f"EXTRA   {name}: {fmt(t)} (granted but not listed in {src})"); bad += 1
    if have == want:
        print(f"ok {name}: {len(have)} grants match")
sys.exit(1 if bad else 0)
PY
