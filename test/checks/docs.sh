#!/usr/bin/env bash
# docs/operations.md lists every flag the binary has, with its default (issue 6
# acceptance): scripts/docs-check.sh against bin/kueue-ks.
set -u
cd "$(dirname "$0")/../.." || exit 1
exec scripts/docs-check.sh bin/kueue-ks docs/operations.md
