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

# Started through the dynamic loader, /proc/self/exe is the loader: nothing is executed
# again, and the default log level says so with the setting to use.
ld=$(readelf -l "$BIN" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
out=$(env -u GLIBC_TUNABLES "$ld" "$BIN" run --kubeconfig /nonexistent/kc 2>&1)
if [ -n "$ld" ] && grep -q "malloc settings: glibc's defaults" <<<"$out" &&
    grep -qF "GLIBC_TUNABLES=$want" <<<"$out" && grep -q "cannot read /nonexistent/kc" <<<"$out"; then
    echo "ok   started through the loader ($ld): defaults, said at the default level"
else
    echo "FAIL loader '$ld': want the defaults line and the kubeconfig error, got: $out"
    fails=$((fails + 1))
fi

# A running operator keeps its process name (ps, pgrep, top read it): the exec is of the
# binary's own path, not of /proc/self/exe. The server refuses connections, so it retries.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/kc" <<'KC'
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
KC
env -u GLIBC_TUNABLES "$BIN" run --kubeconfig "$tmp/kc" --metrics-bind-address 0 \
    --health-probe-bind-address 0 --v 2 >"$tmp/log" 2>&1 &
pid=$!
deadline=$((SECONDS + 120)) # a safety deadline: the line comes at start-up, slow under load
until grep -q 'msg="malloc settings"' "$tmp/log" || [ $SECONDS -gt $deadline ]; do sleep 0.1; done
comm=$(cat "/proc/$pid/comm" 2>/dev/null)
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
if [ "$comm" = kueue-ks ] && grep -qF "GLIBC_TUNABLES=\"$want\"" "$tmp/log"; then
    echo "ok   the running operator is still named kueue-ks, with the tunables"
else
    echo "FAIL process name '$comm' (want kueue-ks) or no tunables; log:"
    head -5 "$tmp/log"
    fails=$((fails + 1))
fi
[ $fails = 0 ] || exit 1
