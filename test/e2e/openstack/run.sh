#!/bin/bash
# npm run test:e2e — bring the real-Nova lab up (or reuse a live one), run the e2e suite against it,
# print how long each part took. Needs root (Debian packages, MariaDB, RabbitMQ); see README.md.
# KEEP_LAB=0 stops the lab afterwards (default: leave it running for the next run).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
export NOVALAB=${NOVALAB:-${TMPDIR:-/tmp}/drainbridge-novalab}
export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost

# One suite at a time per lab: two runs against the same Nova would delete each other's servers.
mkdir -p "$(dirname "$NOVALAB")"
exec 9>"$NOVALAB.lock"
if ! flock -n 9; then
  echo "# another e2e run holds $NOVALAB.lock: waiting for it"
  flock 9
fi

t0=$(date +%s)
# The lab's daemons outlive this script: they must not inherit the lock (fd 9), or it is never released.
bash "$HERE/lab/lab.sh" up 9>&-
t1=$(date +%s)
echo "# timing: harness start (lab.sh up): $((t1 - t0)) s"

rc=0
cd "$ROOT"
# The project's Node 24 (npm puts node_modules/.bin first on PATH; called directly, use it explicitly).
NODE=$ROOT/node_modules/.bin/node
[ -x "$NODE" ] || NODE=node
# A case that hangs (an outcome waiting on a daemon the case stopped) fails after 20 min instead of
# running into CI's limit with nothing reported.
"$NODE" --test --test-timeout=1200000 --test-concurrency=1 --test-reporter=spec "test/e2e/openstack/*.e2e.ts" || rc=$?
t2=$(date +%s)
echo "# timing: e2e suite: $((t2 - t1)) s; total with harness: $((t2 - t0)) s"
if [ "${KEEP_LAB:-1}" = 0 ]; then bash "$HERE/lab/lab.sh" down; fi
exit "$rc"
