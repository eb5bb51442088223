#!/usr/bin/env bash
# Fails when a source file uses a banned function (house style: unsafe or
# non-reentrant libc calls, or a shell for child processes).
set -u
banned='\b(strtok|sprintf|vsprintf|strcpy|strcat|strncpy|atoi|atol|gets|popen|system)[[:space:]]*\('
bad=$(grep -nE "$banned" "$@" 2>/dev/null | grep -vE '//[[:space:]]*banned-ok|/\*[[:space:]]*banned-ok')
if [ -n "$bad" ]; then
  echo "banned functions used (see scripts/check-banned.sh):"
  echo "$bad"
  exit 1
fi
exit 0
