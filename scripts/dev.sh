#!/usr/bin/env bash
# make run / dev-up / dev-down. With KUBECONFIG set, runs the operator
# against that cluster. The embedded hub path is added with the devhub.
set -euo pipefail
cmd=${1:-run}
case "$cmd" in
run)
  if [ -n "${KUBECONFIG:-}" ]; then
    exec bin/kueue-ks run
  fi
  echo "make run: KUBECONFIG is not set and the embedded hub is not built yet" >&2
  exit 1
  ;;
up | down)
  echo "make dev-$cmd: not available yet (needs the embedded hub)" >&2
  exit 1
  ;;
esac
