#!/usr/bin/env bash
# Deployment manifests, examples, RBAC, dashboard and shell scripts
# (issue 6): runs scripts/manifests-check.sh, which starts a devhub when
# bin/kueue-ks-devhub is built and dry-runs the rendered manifests against it.
set -u
cd "$(dirname "$0")/../.." || exit 1
command -v kubectl >/dev/null || {
  echo "SKIP: kubectl not installed"
  exit 77
}
exec scripts/manifests-check.sh
