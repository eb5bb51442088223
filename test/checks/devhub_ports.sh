#!/usr/bin/env bash
# Every devhub (and operator probe) the tests, benches and scripts start binds port 0 and reads
# the port it got (the devhub's kubeconfig, written by rename once it listens; the operator's
# "serving health probes" port=N line): a port picked first (RANDOM, a bind-0-then-close
# helper) can be taken before the process binds it, and the run fails with "cannot listen on
# 127.0.0.1:N (address in use ...)" now and then. Exceptions carry "same-port:" on the line
# or the one above, saying why (a restart that must keep its address, a user's chosen port).
# The real stack (scripts/realstack, real_* e2e, bench/scale/real_lists.py) starts etcd and
# kube-apiserver, which need their ports up front, and is not checked.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
fails=0
while IFS=: read -r file line text; do
  case $text in *'127.0.0.1:0'*) continue ;; esac
  prev=$(sed -n "$((line > 1 ? line - 1 : 1))p" "$file")
  case "$prev $text" in *same-port:*) continue ;; esac
  # the C benches pass the address as the next argv element
  next=$(sed -n "$((line + 1))p" "$file")
  case $text in *'"--listen",'*) case $next in *'"127.0.0.1:0"'*) continue ;; esac ;; esac
  echo "FAIL $file:$line: a devhub started on a port other than 0: $text"
  fails=$((fails + 1))
done < <(grep -rn --include='*.sh' --include='*.c' -e '--listen\b' test/e2e test/checks bench scripts |
  grep -v -- '--listen-\|real_\|scripts/realstack\|test/checks/devhub_ports.sh')
while IFS=: read -r file line text; do
  echo "FAIL $file:$line: a port picked before the process binds it: $text"
  fails=$((fails + 1))
done < <(grep -rnE --include='*.sh' --include='*.c' -e 'port=\$\(\(.*RANDOM|free_port\(' test/e2e test/checks bench scripts |
  grep -v 'real_\|scripts/realstack\|test/checks/devhub_ports.sh')
[ $fails = 0 ] && echo "devhub_ports: every devhub and probe binds port 0"
exit $((fails > 0))
