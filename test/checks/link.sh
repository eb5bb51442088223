#!/usr/bin/env bash
# The operator binary carries no devhub: bin/kueue-ks links neither SQLite nor a devhub
# symbol (the devhub is libdevhub.a, linked only into kueue-ks-devhub, bench-devhub, tests
# and fuzz targets), so the production image needs no libsqlite3.
set -u
cd "$(dirname "$0")/../.." || exit 1
KKS=bin/kueue-ks
[ -x "$KKS" ] || { echo "FAIL $KKS not built"; exit 1; }
fails=0
n=$(ldd "$KKS" | grep -c sqlite)
if [ "$n" = 0 ]; then echo "ok   ldd $KKS: no sqlite"; else
  echo "FAIL ldd $KKS: $n sqlite libraries"
  fails=$((fails + 1))
fi
# The toolchain may drop an unused -lsqlite3 on its own (--as-needed): the link line itself
# must not name it.
line=$(KKS_SKIP_DEPS=1 make -s -n -B MODE=rel "$KKS" 2>/dev/null | grep -- "-o $KKS ")
if [ -z "$line" ]; then
  echo "FAIL no link line for $KKS in make -n"
  fails=$((fails + 1))
elif grep -qE 'sqlite|libdevhub' <<<"$line"; then
  echo "FAIL the link line of $KKS names SQLite or libdevhub.a"
  fails=$((fails + 1))
else echo "ok   the link line of $KKS names neither SQLite nor libdevhub.a"; fi
# No global symbol of libdevhub.a is defined in the operator.
if [ -f build/rel/libdevhub.a ]; then
  dup=$(comm -12 <(nm -g --defined-only build/rel/libdevhub.a 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u) \
    <(nm -g --defined-only "$KKS" | awk 'NF == 3 { print $3 }' | sort -u) | head -5 | tr '\n' ' ')
  if [ -z "$dup" ]; then echo "ok   $KKS defines no symbol of libdevhub.a"; else
    echo "FAIL $KKS defines devhub symbols: $dup"
    fails=$((fails + 1))
  fi
fi
if grep -q 'libsqlite3' Dockerfile; then
  echo "FAIL Dockerfile installs libsqlite3"
  fails=$((fails + 1))
else echo "ok   Dockerfile installs no libsqlite3"; fi
[ $fails = 0 ]
