#!/usr/bin/env bash
# No function in controllers/ is longer than 80 lines (signature to closing brace): split a
# longer one into named steps (issue 14).
set -u
cd "$(dirname "$0")/../.." || exit 1
MAX=80
fails=0
# Functions start with a line "{" alone (clang-format, BreakBeforeBraces for functions) and end
# with a line "}" alone; the signature is the run of lines above the "{".
# Prints file:function:lines for each function longer than max.
# shellcheck disable=SC2016
LONG_FUNCS='
  FNR == 1 { start = 0; sig = "" }
  /^[a-z].*\(/ && !/;$/ { start = FNR; sig = $0 }
  /^\{$/ && start { open = start }
  /^\}$/ && open {
    n = FNR - open + 1
    if (n > max) {
      name = sig; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
      print FILENAME ":" name ":" n
    }
    open = 0; start = 0
  }'
while IFS=: read -r file name len; do
  echo "FAIL $file: $name is $len lines (at most $MAX)"
  fails=$((fails + 1))
done < <(find controllers -name '*.c' | sort | xargs awk -v max=$MAX "$LONG_FUNCS")
[ $fails = 0 ] && echo "ok   no function in controllers/ over $MAX lines"
[ $fails = 0 ]
