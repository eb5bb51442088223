#!/usr/bin/env bash
# Real-stack e2e: `make run REAL=1` as a user runs it, on a terminal (a pty,
# test/e2e/lib/on_terminal.py): the hint comes after the operator is ready and says how to
# stop; Ctrl-C typed on the terminal stops
# everything, make exits 0 (not 130: the terminal's SIGINT must not reach make), and no
# process of the stack is left.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=test/e2e/lib/real_harness.sh
. "$ROOT/test/e2e/lib/real_harness.sh"
cd "$ROOT" || exit 1

next r
python3 test/e2e/lib/on_terminal.py "$WORK/term.out" "Ctrl-C stops everything" 300 -- \
  make --no-print-directory run REAL=1
rc=$?
out=$(tail -30 "$WORK/term.out")
[ $rc = 0 ] || die "make run REAL=1, Ctrl-C on its terminal: exit code $rc, want 0" "$out"
grep -q "make: \*\*\*" "$WORK/term.out" && die "make reports a failure" "$out"
grep -q 'msg="signal received, shutting down" signal=SIGINT' "$WORK/term.out" ||
  die "the operator did not get the terminal's SIGINT" "$out"
hint=$(grep -n "The real stack is up" "$WORK/term.out" | head -1 | cut -d: -f1)
started=$(grep -n 'msg="controller started"' "$WORK/term.out" | head -1 | cut -d: -f1)
{ [ -n "$hint" ] && [ -n "$started" ]; } || die "no hint, or the operator never started" "$out"
[ "$started" -lt "$hint" ] || die "the hint is printed before the operator is ready" "$out"
[ -e "$WORK/pids" ] && die "the stack's pid file is left: make run did not stop it"
# every process the stack started is gone
for f in "$WORK"/*.pid; do
  pid=$(cat "$f")
  wait_until 120 "$(basename "$f" .pid) stopped" bash -c "! kill -0 $pid 2>/dev/null"
done
pass "make run REAL=1: hint after start-up, Ctrl-C on the terminal exits 0, nothing left running"
echo "real_run: all steps passed"
