#!/usr/bin/env bash
# `return err_prefix(e, ...)` returns 0 when the caller passed no struct err (e == NULL):
# the failure would be reported as success. Callers keep the code and return it
# (pkg/util/err.h). This check finds the pattern in every C source.
set -u
cd "$(dirname "$0")/../.." || exit 1
hits=$(grep -rnE 'return[[:space:]]+err_prefix[[:space:]]*\(' --include='*.c' \
  pkg controllers devhub cmd bench 2>/dev/null)
if [ -n "$hits" ]; then
  echo "FAIL: 'return err_prefix(...)' is 0 when e is NULL; keep the code and return it:"
  echo "$hits"
  exit 1
fi
echo "ok   no 'return err_prefix(...)'"
