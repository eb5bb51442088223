#!/usr/bin/env bash
# kueue-ks builds its JSON trees in a slab pool (pkg/util/slab.h, cmd/kueue-ks/main.c), so a
# string jansson allocates (json_dumps) must go back through jansson's free function, never
# free(). The operator's sources dump JSON text with jx_dumps_flags (pkg/json/jsonx.c), which
# writes it into malloc's memory: no object linked into bin/kueue-ks references json_dumps.
set -u
cd "$(dirname "$0")/../.." || exit 1
# The objects, not the sources: a call through a macro, a header or a pointer counts too.
OBJS=$(find build/rel/pkg build/rel/controllers build/rel/cmd/kueue-ks -name '*.o' 2>/dev/null)
[ -n "$OBJS" ] || { echo "FAIL: no release objects (make bins)"; exit 1; }
hits=""
for o in $OBJS; do
    nm -u "$o" | grep -qw json_dumps && hits="$hits $o"
done
if [ -z "$hits" ]; then
    echo "ok   no object of bin/kueue-ks references json_dumps"
else
    echo "FAIL json_dumps referenced: its result would reach free() (use jx_dumps_flags):$hits"
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
