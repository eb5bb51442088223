#!/usr/bin/env bash
# kueue-ks run and kueue-ks agent execute themselves once with glibc's malloc
# tunables set (pkg/util/mtune.h), and keep a GLIBC_TUNABLES the user set. The
# commands log the value in effect at --v 2 before they read the kubeconfig, so a
# missing kubeconfig is enough to see it.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/bin/kueue-ks
[ -x "$BIN" ] || { echo "FAIL: bin/kueue-ks not built"; exit 1; }
want=$(sed -n 's/^#define MTUNE_GLIBC_TUNABLES "\(.*\)"$/\1/p' "$ROOT/pkg/util/mtune.h")
[ -n "$want" ] || { echo "FAIL: no MTUNE_GLIBC_TUNABLES in pkg/util/mtune.h"; exit 1; }
fails=0
check() { # name, expected value, command...
    local name=$1 exp=$2
    shift 2
    local out
    out=$("$@" 2>&1 | grep 'msg="malloc settings"')
    if grep -qF "GLIBC_TUNABLES=\"$exp\"" <<<"$out"; then
        echo "ok   $name"
    else
        echo "FAIL $name: want GLIBC_TUNABLES=$exp, got: ${out:-no malloc settings line}"
        fails=$((fails + 1))
    fi
}
check "run sets the tunables" "$want" \
    env -u GLIBC_TUNABLES "$BIN" run --kubeconfig /nonexistent/kc --v 2
check "run without the subcommand" "$want" \
    env -u GLIBC_TUNABLES "$BIN" --kubeconfig /nonexistent/kc --v 2
check "agent sets the tunables" "$want" \
    env -u GLIBC_TUNABLES "$BIN" agent --cluster-name c1 --kubeconfig /nonexistent/kc --v 2
check "the user's value is kept" "glibc.malloc.tcache_count=7" \
    env GLIBC_TUNABLES=glibc.malloc.tcache_count=7 "$BIN" run --kubeconfig /nonexistent/kc --v 2
[ $fails = 0 ] || exit 1
