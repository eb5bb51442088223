#!/usr/bin/env bash
# One prefix per module (issue 14): every global symbol a module's release object defines
# (nm -g) starts with one of its prefixes, and each symbol belongs to the module whose
# prefix is its longest match — so two modules cannot share a prefix (kube_watch_start is
# watch.c's, not client.c's kube_). A module's prefix is its file name and "_" unless
# PREFIXES says otherwise (the map in docs/development.md). Covers pkg/, controllers/,
# devhub/ and cmd/; `main` is every binary's.
set -u
cd "$(dirname "$0")/../.." || exit 1
OBJ=build/rel
# module (file without .c): its prefixes
PREFIXES="
cmd/kueue-ks/agent cmd_agent
cmd/kueue-ks/explain cmd_explain
cmd/kueue-ks/run cmd_run
cmd/kueue-ks/status cmd_status
controllers/quota/aggregate agg_
controllers/quota/controller quota_
controllers/workload/clustersel clsel_
controllers/workload/controller wlc_
controllers/workload/kinds kind_
controllers/workload/placement place_
devhub/defaults dflt_
devhub/registry reg_
devhub/server srv_
devhub/sim_api simapi_
devhub/sim_flags simflags_
devhub/sim_jobs simjobs_
devhub/sim_kueue simkueue_
devhub/sim_res simres_
devhub/sim_watch simwatch_
devhub/validate valid_
pkg/json/jsonx jx_
pkg/kube/client kube_
pkg/kube/discovery disc_
pkg/kube/restconfig kube_rest_config_ kube_exec_config_
pkg/kube/watch watch_ kube_watch_
pkg/manager/manager mgr_
pkg/manager/mgrflags mgr_flags
pkg/quantity/quantity qty_
pkg/util/xalloc x
pkg/workqueue/workqueue wq_
pkg/yaml/yaml2json yaml_
"
fails=0
fail() {
  echo "FAIL $*"
  fails=$((fails + 1))
}
mapfile -t mods < <(find pkg controllers devhub cmd -name '*.c' | sed 's/\.c$//' | sort)
objs=()
for m in "${mods[@]}"; do
  objs+=("$OBJ/$m.o")
  [ -f "$OBJ/$m.o" ] || fail "$OBJ/$m.o not built (make bins first)"
done
[ $fails = 0 ] || exit 1
# One awk over "P <module> <prefix>..." (the map), "M <module>" (every module) and
# "S <object>:<address> <type> <symbol>" (nm -A: every global symbol defined). A module's
# prefixes are the map's, else "<file name>_"; a main.c defines main only (skipped).
out=$(awk '
  $1 == "P" { for (i = 3; i <= NF; i++) decl[$2] = decl[$2] " " $i; named[$2] = 1; next }
  $1 == "M" {
    m = $2; base = m; sub(/.*\//, "", base)
    if (base == "main") next
    delete named[m]
    list = (m in decl) ? decl[m] : base "_"
    k = split(list, ps, " ")
    for (i = 1; i <= k; i++) {
      if (ps[i] in owner) print "FAIL prefix " ps[i] " of both " owner[ps[i]] " and " m
      owner[ps[i]] = m
    }
    next
  }
  $1 == "S" && NF == 4 {
    obj = $2; sub(/\.o:.*/, "", obj); sub(/^build\/rel\//, "", obj)
    sym = $4
    if (sym == "main") next
    n++; best = 0; o = ""
    for (p in owner) if (index(sym, p) == 1 && length(p) > best) { best = length(p); o = owner[p] }
    if (o != obj) print "FAIL " obj ".c defines " sym ", " (o ? "the prefix of " o : "no module prefix")
  }
  END { for (m in named) print "FAIL PREFIXES names " m ", not a module"; print "N " n }
' <(awk 'NF { print "P", $0 }' <<<"$PREFIXES"; printf 'M %s\n' "${mods[@]}"
    nm -g --defined-only -A "${objs[@]}" | sed 's/^/S /'))
grep '^FAIL' <<<"$out"
fails=$((fails + $(grep -c '^FAIL' <<<"$out")))
n=$(sed -n 's/^N //p' <<<"$out")
[ $fails = 0 ] && echo "ok   $n global symbols of ${#mods[@]} modules, each with its own module prefix"
[ $fails = 0 ]
