#!/usr/bin/env bash
# Two builds' bench-dispatch --real, alternating, one fresh real stack per run: the real
# stack's rates move with the machine by more than most changes make, so a change is judged
# over runs taken in turn (docs/performance.md).
#
#   bench/dispatch/real-ab.sh OUTDIR BASE_BIN NEW_BIN ORDER...
#     BASE_BIN, NEW_BIN  directories holding each build's bench-dispatch and kueue-ks (bin/
#                        of a checkout; a worktree: git worktree add /tmp/base COMMIT, make bins)
#     ORDER              base|new per run, e.g. base new base new
#   env: REAL_DIR (the stack, default /tmp/kks-ab-stack), N (300), JOB_SECONDS (25),
#        BENCH_ARGS (more bench-dispatch flags, split on spaces)
#
# Per run OUTDIR/<i>.<which>.log (the bench's output) and one line in OUTDIR/summary: the
# rate and ratio, the whole stack's CPU per dispatch and per job (also counted in raw
# Workload status writes of the same run), hub job writes per job, goal 6's p99s.
# The real-stack components must be built (scripts/realstack/build.sh).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 4 ] || {
  sed -n '6,14p' "$0" >&2
  exit 2
}
out=$1 base=$2 new=$3
shift 3
export REAL_DIR=${REAL_DIR:-/tmp/kks-ab-stack}
mkdir -p "$out"
i=0
for which in "$@"; do
  i=$((i + 1))
  case $which in
  base) bin=$base ;;
  new) bin=$new ;;
  *)
    echo "ORDER: base or new, not $which" >&2
    exit 2
    ;;
  esac
  "$ROOT/scripts/realstack/stack.sh" down >/dev/null 2>&1
  if ! REAL_NO_OPERATOR=1 "$ROOT/scripts/realstack/stack.sh" up >"$out/up.$i.log" 2>&1; then
    echo "$i $which: stack did not come up (see $out/up.$i.log)" >>"$out/summary"
    continue
  fi
  log="$out/$i.$which.log"
  # shellcheck disable=SC2086 # BENCH_ARGS is a list of flags
  "$bin/bench-dispatch" --real "$REAL_DIR" --n "${N:-300}" --job-seconds "${JOB_SECONDS:-25}" \
    ${BENCH_ARGS:-} >"$log" 2>&1
  rc=$?
  python3 - "$log" "$i $which rc=$rc" >>"$out/summary" <<'PY'
import json, sys
d, c = {}, {}
for line in open(sys.argv[1]):
    if line.startswith('{"bench":"dispatch",'):
        d = json.loads(line)
    elif line.startswith('{"bench":"dispatch-real-cost"'):
        c = json.loads(line)
raw = c.get("cpu_ms_per_raw_wl_status_total") or 0
job = c.get("cpu_ms_per_job_total") or 0
w = c.get("hub_writes_per_job", {})
print(sys.argv[2], "dispatch/s", d.get("dispatch_per_s"), "ratio", d.get("ratio"),
      "cpu_ms/dispatch", c.get("cpu_ms_per_dispatch_total"), "cpu_ms/raw_wl_status", raw,
      "cpu_ms/job", job, "job_in_raw_writes", round(job / raw, 2) if raw else None,
      "hub PATCH jobs|jobs/status per job", w.get("PATCH jobs", 0), w.get("PATCH jobs/status"),
      "progress_p99_ms", d.get("progress_p99_ms"), "final_p99_ms", d.get("final_p99_ms"))
PY
done
"$ROOT/scripts/realstack/stack.sh" down >/dev/null 2>&1
cat "$out/summary"
