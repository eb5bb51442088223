#!/usr/bin/env bash
# Installs the Debian build dependencies of kueue-ks when any is missing.
# Idempotent and fast when everything is present (only dpkg queries run).
# Usage: scripts/deps.sh [--check]   (--check: report only, exit 1 if missing)
set -euo pipefail

PKGS=(
  build-essential pkg-config
  libcurl4-openssl-dev libyaml-dev libev-dev libssl-dev libjansson-dev
  libmicrohttpd-dev libgnutls28-dev libcmocka-dev libsqlite3-dev
  clang libclang-rt-14-dev clang-format cppcheck valgrind
  openssl curl jq shellcheck python3 python3-yaml iproute2
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

if [ "${1:-}" = "--check" ]; then
  echo "missing packages: ${missing[*]}" >&2
  exit 1
fi

echo "deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "deps: not root and no sudo; install as root: apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
# Retry once: the package index may be stale on a fresh machine.
if ! $SUDO apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
  $SUDO apt-get update -qq >/dev/null 2>&1 || true
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "deps: done" >&2
