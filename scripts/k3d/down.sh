#!/usr/bin/env bash
# Removes what scripts/k3d/up.sh created, as recorded in .dev/k3d/state:
# the k3d clusters (with everything deployed in them), the Docker network if
# up.sh created it, and the image if up.sh built it. Anything not in the state
# file is left alone.
# Usage: scripts/k3d/down.sh [--keep-image] [-h]
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

KEEP_IMAGE=0
while [ $# -gt 0 ]; do
  case "$1" in
  --keep-image) KEEP_IMAGE=1 ;;
  -h | --help)
    sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *) die "unknown argument $1 (see --help)" ;;
  esac
  shift
done

if [ ! -s "$K3D_STATE" ]; then
  log "nothing to remove: no state file at $K3D_STATE"
  exit 0
fi
command -v docker >/dev/null 2>&1 || die "docker is not installed; cannot remove $(state_list cluster | tr '\n' ' ')"
command -v k3d >/dev/null 2>&1 || die "k3d is not installed; cannot remove $(state_list cluster | tr '\n' ' ')"

# Deleting a cluster removes the Helm releases and deployments inside it.
for c in $(state_list cluster); do
  if cluster_exists "$c"; then
    log "deleting k3d cluster $c"
    k3d cluster delete "$c" >/dev/null
  fi
  state_remove cluster "$c"
  rm -f "$(kubeconfig_of "$c")" "$K3D_STATE_DIR/$c.in-network.kubeconfig"
done
for kind in helm deploy; do
  for x in $(state_list "$kind"); do state_remove "$kind" "$x"; done
done

for n in $(state_list network); do
  if docker network inspect "$n" >/dev/null 2>&1; then
    log "removing docker network $n"
    docker network rm "$n" >/dev/null || log "network $n still in use; left in place"
  fi
  state_remove network "$n"
done

if [ "$KEEP_IMAGE" = 0 ]; then
  for i in $(state_list image); do
    if docker image inspect "$i" >/dev/null 2>&1; then
      log "removing image $i"
      docker image rm "$i" >/dev/null || log "image $i in use; left in place"
    fi
    state_remove image "$i"
  done
fi

for m in $(state_list mode); do state_remove mode "$m"; done
if [ ! -s "$K3D_STATE" ]; then
  rm -rf "$K3D_STATE_DIR"
  log "all removed"
else
  log "left in $K3D_STATE: $(tr '\n' ' ' <"$K3D_STATE")"
fi
