#!/usr/bin/env bash
# kueue-ks builds its JSON trees in a slab pool (pkg/util/slab.h, cmd/kueue-ks/main.c), so a
# string jansson allocates (json_dumps) must go back through jansson's free function, never
# free(). The operator's sources take such strings only through jx_dumps_flags (pkg/json/jsonx.c),
# which copies them to malloc's. A grep of the sources that bin/kueue-ks links.
set -u
cd "$(dirname "$0")/../.." || exit 1
hits=$(grep -rnE '\bjson_dumps[[:space:]]*\(' pkg controllers cmd/kueue-ks --include='*.c' |
    grep -v '^pkg/json/jsonx.c:' | grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/\*|\*|//)')
if [ -z "$hits" ]; then
    echo "ok   json_dumps only in pkg/json/jsonx.c (jx_dumps_flags)"
else
    echo "FAIL json_dumps outside jx_dumps_flags: its result would reach free() (use jx_dumps_flags):"
    echo "$hits"
    exit 1
fi
# The release binary does build its trees in the pool (the sanitizer and valgrind builds do not).
BIN=bin/kueue-ks
[ -x "$BIN" ] || { echo "FAIL: bin/kueue-ks not built"; exit 1; }
line=$("$BIN" run --kubeconfig /nonexistent/kc --v 2 2>&1 | grep 'msg="malloc settings"')
if grep -qF 'json_trees="slab pool"' <<<"$line"; then
    echo "ok   kueue-ks run builds its JSON trees in the slab pool"
else
    echo "FAIL kueue-ks run: want json_trees=\"slab pool\", got: ${line:-no malloc settings line}"
    exit 1
fi
