#!/usr/bin/env bash
# Checks docs/operations.md against the binary: for every subcommand listed by
# `kueue-ks --help` that has flags, every flag of `kueue-ks <cmd> --help` must
# have a row in the "### `kueue-ks <cmd>`" table, with the same default when the
# help prints "(default X)"; every row marked "available" must be a real flag.
# A row still marked "planned" for a flag that now exists is reported (warning).
# Usage: scripts/docs-check.sh [BIN] [DOC]   (defaults bin/kueue-ks, docs/operations.md)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
BIN=${1:-bin/kueue-ks}
DOC=${2:-docs/operations.md}
[ -x "$BIN" ] || {
  echo "docs-check: $BIN is not built (make)"
  exit 2
}
[ -f "$DOC" ] || {
  echo "docs-check: $DOC is missing"
  exit 1
}
fails=0
bad() {
  echo "FAIL $*"
  fails=$((fails + 1))
}

# The table rows of section "### `kueue-ks CMD`": "flag|default|status" lines.
doc_rows() {
  awk -v h="### \`kueue-ks $1\`" '
    $0 == h { on = 1; next }
    on && /^#/ { on = 0 }
    on && /^\| `--/ {
      n = split($0, c, "|")
      f = c[2]; gsub(/[ `]/, "", f)
      d = c[3]; gsub(/^ +| +$/, "", d)
      s = c[4]; gsub(/ /, "", s)
      print f "|" d "|" s
    }' "$DOC"
}

cmds=$("$BIN" --help 2>&1 | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')
[ -n "$cmds" ] || bad "no commands found in '$BIN --help'"
checked=0
for cmd in $cmds; do
  help=$("$BIN" "$cmd" --help 2>&1)
  # "  --name type  help" or "  -x, --name type  help"
  flags=$(sed -n 's/^  *\(-[a-z], \)\{0,1\}--\([a-z0-9][a-z0-9-]*\).*/\2/p' <<<"$help")
  [ -n "$flags" ] || continue
  rows=$(doc_rows "$cmd")
  if [ -z "$rows" ]; then
    bad "$DOC has no flag table under '### \`kueue-ks $cmd\`'"
    continue
  fi
  for f in $flags; do
    checked=$((checked + 1))
    row=$(grep -E "^--$f\|" <<<"$rows" | head -1)
    if [ -z "$row" ]; then
      bad "kueue-ks $cmd --$f is not documented in $DOC"
      continue
    fi
    IFS='|' read -r _ ddef status <<<"$row"
    [ "$status" = available ] || echo "warn kueue-ks $cmd --$f exists but $DOC says '$status'"
    def=$(grep -E "^  *(-[a-z], )?--$f( |$)" <<<"$help" | sed -n 's/.*(default \([^)]*\))[[:space:]]*$/\1/p')
    if [ -n "$def" ] && [[ "$ddef" != *"\`$def\`"* ]]; then
      bad "kueue-ks $cmd --$f: help says default $def, $DOC says '$ddef'"
    fi
  done
  while IFS='|' read -r f _ status; do
    [ "$status" = available ] || continue
    grep -qx -- "${f#--}" <<<"$flags" || bad "$DOC lists kueue-ks $cmd $f as available but the binary has no such flag"
  done <<<"$rows"
done
if [ $fails -eq 0 ]; then
  echo "docs-check: $checked flags of '$(echo "$cmds" | tr '\n' ' ')' documented in $DOC"
else
  echo "docs-check: $fails problems"
fi
[ $fails -eq 0 ]
