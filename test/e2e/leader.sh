#!/usr/bin/env bash
# Two kueue-ks operators with --leader-elect against a devhub: exactly one
# leads; kill -9 of the leader hands the Lease to the standby once the lease
# duration has passed (waited for as a state, up to a 120 s safety deadline: a loaded machine
# may take longer); SIGTERM of the leader releases the Lease and exits 0.
set -u
cd "$(dirname "$0")/../.." || exit 1
[ -x bin/kueue-ks-devhub ] || { echo "SKIP: bin/kueue-ks-devhub not built"; exit 77; }
tmp=$(mktemp -d)
pids=()
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAIL: $*"; fails=$((fails + 1)); }

# port 0: the devhub binds a free port and writes it into the kubeconfig once it listens
bin/kueue-ks-devhub --listen 127.0.0.1:0 --name hub --kubeconfig-out "$tmp/kc" >"$tmp/devhub.log" 2>&1 &
pids+=($!)
export KUBECONFIG=$tmp/kc
deadline=$((SECONDS + 120))
until [ -s "$tmp/kc" ] && kubectl get --raw /readyz >/dev/null 2>&1; do
  [ $SECONDS -le $deadline ] || { echo "FAIL: devhub not ready within 120 s"; cat "$tmp/devhub.log"; exit 1; }
  sleep 0.1
done
printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kueue-ks-system\n' | kubectl apply -f - >/dev/null

start_op() { # index
  bin/kueue-ks run --leader-elect --leader-election-namespace kueue-ks-system \
    --leader-election-lease-duration 3s --leader-election-renew-deadline 2s \
    --leader-election-retry-period 500ms --metrics-bind-address 0 \
    --health-probe-bind-address 0 >"$tmp/op$1.log" 2>&1 &
  pids+=($!)
  eval "op$1=$!"
}
identity() { sed -n 's/.*waiting to become leader.*identity=\([^ ]*\).*/\1/p' "$tmp/op$1.log" | head -1; }
holder() { kubectl get lease -n kueue-ks-system kueue-ks-leader -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
transitions() { kubectl get lease -n kueue-ks-system kueue-ks-leader -o jsonpath='{.spec.leaseTransitions}' 2>/dev/null; }
leaders() { grep -l 'became leader' "$tmp"/op*.log 2>/dev/null | wc -l; }

echo "step: two candidates, one leader"
start_op 1
start_op 2
deadline=$((SECONDS + 120))
until [ "$(leaders)" -ge 1 ] || [ $SECONDS -gt $deadline ]; do sleep 0.1; done
sleep 1 # the other candidate must not lead too (a state that never comes: nothing to wait on)
if [ "$(leaders)" -eq 1 ]; then ok "exactly one leader"; else bad "$(leaders) leaders"; fi
first=1
grep -q 'became leader' "$tmp/op2.log" && first=2
second=$((3 - first))
if [ "$(holder)" = "$(identity $first)" ]; then ok "Lease holder is op$first ($(holder))"
else bad "Lease holder '$(holder)' is not op$first '$(identity $first)'"; fi
t0=$(transitions)

echo "step: kill -9 the leader; the standby takes over"
eval "kill -9 \$op$first"
took=""
t=$SECONDS
deadline=$((SECONDS + 120))
while [ $SECONDS -le $deadline ]; do
  if grep -q 'became leader' "$tmp/op$second.log"; then took=$((SECONDS - t)); break; fi
  sleep 0.1
done
if [ -n "$took" ]; then ok "op$second became leader after about ${took}s"
else bad "standby did not take over within 120s"; fi
if [ "$(holder)" = "$(identity $second)" ]; then ok "Lease holder is op$second"; else bad "holder $(holder)"; fi
if [ "$(transitions)" -gt "$t0" ]; then ok "leaseTransitions $t0 -> $(transitions)"; else bad "leaseTransitions not incremented"; fi

echo "step: SIGTERM releases the Lease and exits 0"
eval "kill -TERM \$op$second"
eval "wait \$op$second"
rc=$?
if [ $rc -eq 0 ]; then ok "exit 0"; else bad "exit $rc"; fi
if [ -z "$(holder)" ]; then ok "Lease released (empty holder)"; else bad "holder still $(holder)"; fi
if grep -q 'leader lease released' "$tmp/op$second.log"; then ok "logged release"; else bad "no release log"; fi

if [ $fails -eq 0 ]; then echo "leader: all steps passed"; exit 0; fi
cat "$tmp"/op*.log
echo "leader: $fails step(s) failed"
exit 1
