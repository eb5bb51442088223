#!/usr/bin/env bash
# The real-stack test tier of make test (and make real-test [T=name]): the pinned components
# (scripts/realstack/build.sh), then test/e2e/real_*.sh, each of which starts its own real
# stack (scripts/realstack/stack.sh) in a temporary directory.
#
#   tier.sh --build      only build the components (make test does this first, so that every
#                        e2e script uses the pinned kubectl of build/realstack/bin)
#   tier.sh [FILTER]     build what is missing, then run the real_*.sh scenarios
#
# Without a Go toolchain it prints a SKIP line naming what is missing and succeeds, except
# under CI (CI set), where a tier that cannot run fails.
set -u
cd "$(dirname "$0")/../.." || exit 1
build_only=0
if [ "${1:-}" = --build ]; then
  build_only=1
  shift
fi
filter=${1:-}
start=$(date +%s)
scripts/realstack/build.sh
rc=$?
if [ $rc -eq 3 ] && [ -z "${CI:-}" ]; then
  echo "SKIP: real-stack tier: no Go toolchain (install Go 1.24 or newer into /usr/local/go)"
  exit 0
fi
if [ $rc -ne 0 ]; then
  echo "real-stack tier: the components did not build (exit $rc); see the messages above"
  exit 1
fi
if [ $build_only = 1 ]; then
  echo "real-stack components built or up to date in $(($(date +%s) - start)) s"
  exit 0
fi
KKS_REAL=1 KKS_TEST_TIMEOUT=${KKS_TEST_TIMEOUT:-900} scripts/run-tests.sh e2e test/e2e "$filter"
rc=$?
echo "real-stack tier: $(($(date +%s) - start)) s"
exit $rc
