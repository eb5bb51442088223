#!/usr/bin/env bash
# Controllers do not include each other (shared vocabulary lives in pkg/); the one
# exception is controllers/agent, a leaf (it includes no controller) that the workload
# controller runs in-process for each worker. pkg/ and devhub/ include no controller.
# A grep over every #include of the tree.
set -u
cd "$(dirname "$0")/../.." || exit 1
fails=0
for d in controllers/*/; do
  c=$(basename "$d")
  hits=$(grep -rnE '#include "controllers/' "$d" | grep -v "#include \"controllers/$c/")
  [ "$c" = agent ] || hits=$(grep -v '#include "controllers/agent/' <<<"$hits")
  if [ -z "$hits" ]; then echo "ok   controllers/$c includes no other controller"; else
    echo "FAIL controllers/$c includes another controller:"
    echo "$hits"
    fails=$((fails + 1))
  fi
done
hits=$(grep -rnE '#include "(controllers|cmd)/' pkg devhub)
if [ -z "$hits" ]; then echo "ok   pkg/ and devhub/ include no controller or command"; else
  echo "FAIL pkg/ or devhub/ include a controller or command:"
  echo "$hits"
  fails=$((fails + 1))
fi
hits=$(grep -rnE '#include "devhub/' pkg controllers cmd/kueue-ks)
if [ -z "$hits" ]; then echo "ok   the operator's sources include no devhub header"; else
  echo "FAIL the operator's sources include devhub headers:"
  echo "$hits"
  fails=$((fails + 1))
fi
[ $fails = 0 ]
