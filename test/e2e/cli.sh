#!/usr/bin/env bash
# End-to-end checks of the kueue-ks command line (issue: foundation §4):
# version, run --help flags, and clear one-line failures for a malformed
# kubeconfig and an unreachable server (never a crash).
set -u
cd "$(dirname "$0")/../.." || exit 1
BIN=bin/kueue-ks
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
step() { echo "step: $*"; }
ok() { echo "  ok: $*"; }
bad() { echo "  FAIL: $*"; fails=$((fails + 1)); }

step "version"
out=$($BIN version 2>&1)
if [[ "$out" =~ ^kueue-ks\ [0-9]+\.[0-9]+\.[0-9]+ ]]; then ok "$out"; else bad "version printed: $out"; fi

step "run --help lists the flags"
help=$($BIN run --help 2>&1)
for f in --kubeconfig --context "--metrics-bind-address string.*(default :8080)" \
  "--health-probe-bind-address string.*(default :8081)" --leader-elect \
  --leader-election-namespace --qps --burst "--http2 " "--v int" --log-format \
  "--packed-cache .*\(default true\)"; do
  if grep -qE -- "$f" <<<"$help"; then ok "$f"; else bad "missing $f in run --help"; fi
done

# Runs kueue-ks run with a deadline (a hang guard: each case ends on its own at once, or
# after --startup-timeout); prints stderr; returns its exit code.
run_expect_fail() {
  local what=$1
  shift
  local rc
  timeout 120 "$BIN" run --metrics-bind-address 0 --health-probe-bind-address 0 "$@" \
    >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ $rc -eq 0 ] || [ $rc -eq 124 ] || [ $rc -ge 128 ]; then
    bad "$what: exit code $rc (want a clean non-zero exit)"
    cat "$tmp/err"
    return 1
  fi
  if grep -qE 'AddressSanitizer|Segmentation|core dumped' "$tmp/err"; then
    bad "$what: crashed"
    return 1
  fi
  return 0
}

step "malformed kubeconfig: one clear line naming file and position"
printf 'apiVersion: v1\nclusters:\n- name: a\n  cluster: [unclosed\n' >"$tmp/bad.yaml"
if run_expect_fail "malformed" --kubeconfig "$tmp/bad.yaml"; then
  errl=$(grep -c 'level=error' "$tmp/err")
  if grep -q "$tmp/bad.yaml" "$tmp/err" && [ "$errl" -eq 1 ]; then ok "$(grep level=error "$tmp/err")"
  else bad "error does not name the file in one line: $(cat "$tmp/err")"; fi
fi

step "kubeconfig with a missing field: names the field"
cat >"$tmp/nouser.yaml" <<YAML
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:1
contexts:
- name: dev
  context:
    cluster: c
    user: bob
users: []
YAML
if run_expect_fail "missing user" --kubeconfig "$tmp/nouser.yaml"; then
  if grep -q 'bob' "$tmp/err"; then ok "$(grep level=error "$tmp/err")"; else bad "$(cat "$tmp/err")"; fi
fi

step "missing kubeconfig file"
if run_expect_fail "missing file" --kubeconfig "$tmp/nope.yaml"; then
  if grep -q "$tmp/nope.yaml" "$tmp/err"; then ok "$(grep level=error "$tmp/err")"; else bad "$(cat "$tmp/err")"; fi
fi

step "unreachable server: clear error, non-zero exit"
# Port 1 on loopback: nothing listens there, the connection is refused at once.
cat >"$tmp/unreach.yaml" <<YAML
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:1
    insecure-skip-tls-verify: true
contexts:
- name: dev
  context: {cluster: c, user: u}
users:
- name: u
  user: {token: not-logged-secret}
YAML
# With --startup-timeout it gives up: exit 1 naming the server.
if run_expect_fail "unreachable" --kubeconfig "$tmp/unreach.yaml" --startup-timeout 2s; then
  if grep -q 'level=error.*127.0.0.1:1' "$tmp/err"; then ok "$(grep level=error "$tmp/err")"; else bad "$(cat "$tmp/err")"; fi
  if grep -q 'not-logged-secret' "$tmp/err"; then bad "token was logged"; else ok "token not logged"; fi
fi
# By default it keeps asking (a control-plane restart must not crash-loop the operator):
# a warning per attempt with the server and the next delay, then SIGTERM ends it cleanly.
step "unreachable server, default: retries with backoff, SIGTERM exits 0"
$BIN run --metrics-bind-address 0 --health-probe-bind-address 0 --kubeconfig "$tmp/unreach.yaml" \
  >"$tmp/out" 2>"$tmp/err" &
pid=$!
deadline=$((SECONDS + 120))
while [ $SECONDS -le $deadline ]; do
  [ "$(grep -c 'cannot reach the API server; retrying' "$tmp/err")" -ge 2 ] && break
  sleep 0.1
done
kill -TERM "$pid"
wait "$pid"
rc=$?
n=$(grep -c 'cannot reach the API server; retrying.*127.0.0.1:1.*retry_in_s=' "$tmp/err")
if [ "$n" -ge 2 ] && [ $rc = 0 ]; then ok "$n retry warnings, exit $rc on SIGTERM"
else bad "retries: $n warnings, exit $rc"; cat "$tmp/err"; fi

step "unknown flag"
if timeout 60 $BIN run --no-such-flag >/dev/null 2>"$tmp/err"; then bad "accepted unknown flag"
elif grep -q 'no-such-flag' "$tmp/err"; then ok "$(head -1 "$tmp/err")"; else bad "$(cat "$tmp/err")"; fi

if [ $fails -eq 0 ]; then echo "cli: all steps passed"; exit 0; fi
echo "cli: $fails step(s) failed"
exit 1
