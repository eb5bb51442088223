#!/usr/bin/env bash
# kueue-ks builds its JSON trees in a slab pool (pkg/util/slab.h, cmd/kueue-ks/main.c), so a
# string jansson allocates (json_dumps) must go back through jansson's free function, never
# free(). The operator's sources take such strings only through jx_dumps_flags (pkg/json/jsonx.c),
# which copies them to malloc's: no other object linked into bin/kueue-ks references json_dumps.
set -u
cd "$(dirname "$0")/../.." || exit 1
# The objects, not the sources: a call through a macro, a header or a pointer counts too.
OBJS=$(find build/rel/pkg build/rel/controllers build/rel/cmd/kueue-ks -name '*.o' 2>/dev/null)
[ -n "$OBJS" ] || { echo "FAIL: no release objects (make bins)"; exit 1; }
hits=""
for o in $OBJS; do
    [ "$o" = build/rel/pkg/json/jsonx.o ] && continue
    nm -u "$o" | grep -qw json_dumps && hits="$hits $o"
done
if [ -z "$hits" ]; then
    echo "ok   json_dumps only in pkg/json/jsonx.o (jx_dumps_flags)"
else
    echo "FAIL json_dumps referenced outside jx_dumps_flags: its result would reach free() (use jx_dumps_flags):$hits"
    exit 1
fi
# Within jsonx.c, jx_dumps_flags alone calls it.
n=$(grep -cE '\bjson_dumps[[:space:]]*\(' pkg/json/jsonx.c)
if [ "$n" = 1 ]; then
    echo "ok   jsonx.c calls json_dumps once (jx_dumps_flags)"
else
    echo "FAIL pkg/json/jsonx.c calls json_dumps $n times: only jx_dumps_flags may"
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
