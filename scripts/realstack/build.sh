#!/usr/bin/env bash
# Builds the real-stack components (Kubernetes, etcd, kwok, Kueue) from the Go modules pinned
# in test/realstack/tools/<component>/go.mod into build/realstack/bin/.
#
# Test tooling only: nothing of these projects is committed, the pins name them and the Go
# module proxy serves them. A component is rebuilt only when its pin (go.mod, go.sum) or the
# flags below change: build/realstack/stamps/<component> holds the hash of what it was built
# from.
#
#   scripts/realstack/build.sh [COMPONENT...]   build what is out of date (all by default:
#                                               kubernetes etcd kwok kueue)
#   scripts/realstack/build.sh --check    exit 0 when everything is up to date, 1 otherwise
#
# Exit 3 when no Go toolchain is found (the callers turn that into a SKIP line or, under CI,
# a failure).
set -euo pipefail
cd "$(dirname "$0")/../.."
TOOLS=test/realstack/tools
OUT=build/realstack/bin
STAMPS=build/realstack/stamps
K8S_VERSION=v1.34.4

log() { echo "realstack-build: $*" >&2; }

find_go() {
  if [ -n "${GO:-}" ] && [ -x "$GO" ]; then echo "$GO"; return 0; fi
  command -v go 2>/dev/null && return 0
  [ -x /usr/local/go/bin/go ] && { echo /usr/local/go/bin/go; return 0; }
  return 1
}

# Binaries each component provides, and how to build them ("-" = every tool of the module).
binaries() {
  case $1 in
  kubernetes) echo kube-apiserver kube-controller-manager kube-scheduler kubectl ;;
  etcd) echo etcd ;;
  kwok) echo kwok ;;
  kueue) echo kueue ;;
  esac
}

ldflags() {
  case $1 in
  kubernetes)
    # Without these the binaries report v0.0.0-master, which kubectl and Kueue read as a
    # server older than every feature gate they check.
    local v=$K8S_VERSION minor
    minor=$(echo "$v" | cut -d. -f2)
    local f="-s -w"
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      f="$f -X $p.gitVersion=$v -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
    done
    echo "$f -X k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z"
    ;;
  *) echo "-s -w" ;;
  esac
}

stamp_of() { # component -> hash of its pins and its build flags
  { cat "$TOOLS/$1/go.mod" "$TOOLS/$1/go.sum"; ldflags "$1"; } | sha256sum | cut -d' ' -f1
}

up_to_date() {
  local c=$1 b
  [ -f "$STAMPS/$c" ] && [ "$(cat "$STAMPS/$c")" = "$(stamp_of "$c")" ] || return 1
  for b in $(binaries "$c"); do [ -x "$OUT/$b" ] || return 1; done
}

build_one() {
  local c=$1 start
  start=$(date +%s)
  log "building $c ($(binaries "$c")) from $TOOLS/$c/go.mod"
  (
    cd "$TOOLS/$c"
    case $c in
    etcd) "$GOBIN" build -trimpath -ldflags "$(ldflags "$c")" -o "$ROOT/$OUT/etcd" go.etcd.io/etcd/server/v3 ;;
    *) "$GOBIN" build -trimpath -ldflags "$(ldflags "$c")" -o "$ROOT/$OUT/" tool ;;
    esac
  )
  stamp_of "$c" >"$STAMPS/$c"
  log "built $c in $(($(date +%s) - start)) s"
}

ROOT=$PWD
COMPONENTS="kubernetes etcd kwok kueue"
if [ $# -gt 0 ] && [ "$1" != --check ]; then COMPONENTS="$*"; fi

if [ "${1:-}" = --check ]; then
  for c in $COMPONENTS; do up_to_date "$c" || exit 1; done
  exit 0
fi

if ! GOBIN=$(find_go); then
  log "no Go toolchain: looked for \$GO, 'go' on PATH and /usr/local/go/bin/go."
  log "install Go 1.24 or newer into /usr/local/go (Debian's golang packages are too old);"
  log "the module proxy serves the pinned components from test/realstack/tools/."
  exit 3
fi
mkdir -p "$OUT" "$STAMPS"
for c in $COMPONENTS; do
  if up_to_date "$c"; then continue; fi
  build_one "$c"
done
