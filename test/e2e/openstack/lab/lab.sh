#!/bin/bash
# drainbridge's real-Nova lab: Keystone, Placement, Nova API/conductor/scheduler and NCOMPUTE
# fake-driver nova-compute processes (hosts compute-1..N), RabbitMQ and MariaDB, all from Debian
# bookworm packages and all bound to 127.0.0.1. State lives under $NOVALAB (one directory, so a
# purge is one rm).
#
#   lab.sh up                 install what is missing, start what is not running (idempotent)
#   lab.sh down [--purge]     stop every daemon this lab started (by recorded pid); --purge drops state
#   lab.sh status             one line per daemon
#   lab.sh stop NAME          stop one daemon, e.g. nova-compute-2 (the e2e suite kills a destination)
#   lab.sh start NAME         start one daemon again
#   lab.sh token-lifetime S   restart Keystone issuing tokens valid S seconds (`default`: 14400; `up` also
#                             writes the default, but keeps a running Keystone as it is)
#
# Runs as root (package install, MariaDB/RabbitMQ as root). Environment: NOVALAB, NCOMPUTE (3),
# SKIP_INSTALL=1, SKIP_APT_UPDATE=1.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export NOVALAB=${NOVALAB:-${TMPDIR:-/tmp}/drainbridge-novalab}
export NCOMPUTE=${NCOMPUTE:-3}
export LAB_ADMIN_PASSWORD=${LAB_ADMIN_PASSWORD:-lab-admin-pw}
export LAB_SERVICE_PASSWORD=${LAB_SERVICE_PASSWORD:-lab-service-pw}
export LAB_DB_PASSWORD=${LAB_DB_PASSWORD:-lab-db-pw}
# Debian's interpreter: the machine's `python3` may be a pyenv shim that cannot see Debian's modules.
export LAB_PYTHON=/usr/bin/python3

# A proxy or a foreign Python must not get between us and 127.0.0.1.
export PATH=$NOVALAB/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin
export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY PYTHONPATH PYTHONHOME VIRTUAL_ENV || true
export LC_ALL=C.UTF-8

STARTED_AT=$(date +%s)
say() { printf '[novalab %s +%ss] %s\n' "$(date +%T)" "$(($(date +%s) - STARTED_AT))" "$*"; }
fail() { say "FAILED: $*"; exit 1; }

# shellcheck source=packages.sh
. "$HERE/packages.sh"
# shellcheck source=daemons.sh
. "$HERE/daemons.sh"
# shellcheck source=configs.sh
. "$HERE/configs.sh"

cmd_up() {
  [ "$(id -u)" = 0 ] || fail "run as root (packages, MariaDB and RabbitMQ)"
  mkdir -p "$NOVALAB/log" "$NOVALAB/run"
  [ -n "${SKIP_INSTALL:-}" ] || ensure_packages
  local t_services; t_services=$(date +%s)
  write_configs
  start_infrastructure
  start_identity_and_placement
  start_nova
  "$LAB_PYTHON" "$HERE/bootstrap.py" finish
  say "lab ready: services up in $(($(date +%s) - t_services))s, total $(($(date +%s) - STARTED_AT))s; credentials: $NOVALAB/openrc"
}

case "${1:-}" in
  up) cmd_up ;;
  down) stop_all "${2:-}" ;;
  status) show_status ;;
  stop) stop_daemon "${2:?daemon name}" ;;
  start) restart_one "${2:?daemon name}" ;;
  token-lifetime)
    lifetime=${2:?seconds or default}
    [ "$lifetime" = default ] && lifetime=14400
    KEYSTONE_TOKEN_EXPIRATION=$lifetime write_keystone_config
    stop_daemon keystone
    start_daemon keystone
    wait_url "$KEYSTONE_URL/v3" 60 keystone
    say "keystone issues tokens valid ${lifetime}s"
    ;;
  *) sed -n '2,16p' "$0"; exit 2 ;;
esac
