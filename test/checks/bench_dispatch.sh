#!/usr/bin/env bash
# Keeps bench/dispatch from rotting: `bin/bench-dispatch --n 50` starts its
# devhubs and the operator, places 50 workloads, and prints a JSON line with
# every field, placed == 50, no duplicates, positive rates, ratio =
# dispatch_per_s / baseline_per_s (half the raw create rate on the devhub); the
# children are gone afterwards and the work directory removed. Then
# `--reserved-first --n 30` (the operator stopped while the jobs are reserved,
# then timed alone) places all 30. The status return (issue 12 goal 6): the bench
# starts and then finishes each of the 50 copies (2 count changes each), and the
# JSON line times all 100 changes to the hub's annotation and all 50 completions
# to the hub job's final status. The ideal (goal 1's latency): ideal_ms from 20 chains, and
# p99_ideal_ratio = p99_ms / ideal_ms. Then `--pace 20 --n 20`: the jobs created 20 per
# second, every one placed, pace_per_s 20. No figure is compared with a target: --timeout is a
# safety deadline for each run (3 x 180 s within run-tests.sh's 600 s), not a speed bound.
# Skipped (exit 77) when the devhub binary or jq is missing.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BENCH=$ROOT/bin/bench-dispatch
[ -x "$BENCH" ] || { echo "FAIL: $BENCH not built"; exit 1; }
[ -x "$ROOT/bin/kueue-ks" ] || { echo "FAIL: bin/kueue-ks not built"; exit 1; }
[ -x "$ROOT/bin/kueue-ks-devhub" ] || { echo "SKIP: bin/kueue-ks-devhub not built"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }

out=$("$BENCH" --n 50 --timeout 180 2>&1)
rc=$?
fail() { echo "FAIL $1"; echo "---- output:"; echo "$out" | head -20; exit 1; }
[ $rc = 0 ] || fail "bench-dispatch exit $rc"
json=$(grep '^{"bench":"dispatch"' <<<"$out")
[ -n "$json" ] || fail "no JSON line"
jq -e '[.n,.placed,.duplicates,.cluster1,.cluster2,.seconds,.dispatch_per_s,.p50_ms,.p99_ms,
        .max_ms,.raw_seconds,.raw_creates_per_s,.reserve_seconds,.label_p50_ms,
        .label_p99_ms,.baseline_per_s,.ratio,.start_to_first_s,.job_seconds,.status_changes,
        .status_returned,.status_p50_ms,.status_p99_ms,.status_max_ms,.progress_p50_ms,
        .progress_p99_ms,.finished,.final_returned,.final_p50_ms,
        .final_p99_ms,.ideal_ms,.p99_ideal_ratio]|all(type=="number")' <<<"$json" >/dev/null ||
  fail "JSON line lacks a field: $json"
jq -e '.n==50 and .placed==50 and .duplicates==0 and .cluster1+.cluster2==50 and
       .dispatch_per_s>0 and .raw_creates_per_s>0 and .p50_ms<=.p99_ms and .p99_ms<=.max_ms and
       .reserve_seconds>0 and .label_p50_ms<=.label_p99_ms and .mode=="devhub" and
       (.baseline_per_s - .raw_creates_per_s/2 | fabs) < 0.2 and
       (.ratio - .dispatch_per_s/.baseline_per_s | fabs) < 0.01 and
       .status_changes==100 and .status_returned==100 and .finished==50 and
       .final_returned==50 and .status_p50_ms<=.status_p99_ms and
       .status_p99_ms<=.status_max_ms and .progress_p50_ms<=.progress_p99_ms and
       .final_p50_ms<=.final_p99_ms and .pace_per_s==null and .created_per_s==null and
       .ideal_ms>0 and
       (.p99_ideal_ratio - .p99_ms/.ideal_ms | fabs) < 0.02 * .p99_ideal_ratio + 0.01' \
  <<<"$json" >/dev/null || fail "unexpected figures: $json"
cpu=$(grep '^{"bench":"dispatch-cpu"' <<<"$out")
jq -e '.placed==50 and .op_cpu_s>0 and .op_cpu_ms_per_dispatch>0 and .raw_cpu_ms_per_create>=0 and
       (.raw_cpu_ms_per_create==0 or (.op_cpu_ratio - .op_cpu_ms_per_dispatch/.raw_cpu_ms_per_create | fabs) < 0.01)' \
  <<<"$cpu" >/dev/null || fail "no or bad dispatch-cpu line: $cpu"
grep -q '^dispatch: 50/50 workloads placed' <<<"$out" || fail "no human line"
grep -q '^status return: 100 of 100 copy changes' <<<"$out" || fail "no status return line"
grep -q '^latency against the ideal: .*not paced' <<<"$out" || fail "no latency line"
grep -q 'logs kept' <<<"$out" && fail "work directory kept after success"
echo "ok   bench-dispatch --n 50: $(grep '^dispatch:' <<<"$out")"

out=$("$BENCH" --n 30 --reserved-first --timeout 180 2>&1)
rc=$?
[ $rc = 0 ] || fail "bench-dispatch --reserved-first exit $rc"
json=$(grep '^{"bench":"dispatch"' <<<"$out")
jq -e '.reserved_first==true and .placed==30 and .duplicates==0 and .dispatch_per_s>0 and
       .start_to_first_s>0 and .ratio>0' <<<"$json" >/dev/null ||
  fail "unexpected --reserved-first figures: $json"
echo "ok   bench-dispatch --n 30 --reserved-first: $(grep '^dispatch:' <<<"$out")"

out=$("$BENCH" --n 20 --pace 20 --timeout 180 2>&1)
rc=$?
[ $rc = 0 ] || fail "bench-dispatch --pace exit $rc"
json=$(grep '^{"bench":"dispatch"' <<<"$out")
jq -e '.placed==20 and .duplicates==0 and .pace_per_s==20 and .created_per_s>0 and
       .reserved_first==false and
       .ideal_ms>0 and .p99_ideal_ratio>0 and .p50_ms<=.p99_ms' <<<"$json" >/dev/null ||
  fail "unexpected --pace figures: $json"
grep -q '^latency against the ideal: ' <<<"$out" || fail "no paced latency line"
grep -q 'not paced' <<<"$out" && fail "a paced run's latency line says it was not paced"
echo "ok   bench-dispatch --n 20 --pace 20: $(grep '^latency' <<<"$out")"
