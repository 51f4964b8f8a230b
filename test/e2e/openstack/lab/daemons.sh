# Starting, stopping and waiting for the lab's daemons. Sourced by lab.sh.
#
# Every daemon runs in its own session with its pid in $NOVALAB/run/NAME.pid, output in
# $NOVALAB/log/NAME.out; stopping goes by that pid and checks the process belongs to this lab, so
# nothing else on the machine is ever signalled.

KEYSTONE_URL=http://127.0.0.1:5000
PLACEMENT_URL=http://127.0.0.1:8778
NOVA_URL=http://127.0.0.1:8774
NEUTRON_STUB_PORT=9696

pid_of() { cat "$NOVALAB/run/$1.pid" 2>/dev/null; }
running() { local pid; pid=$(pid_of "$1") && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }

# The command line of a named daemon, in the global array DAEMON_ARGV.
daemon_argv() {
  local nova_conf=$NOVALAB/etc/nova/nova.conf
  case "$1" in
    epmd) DAEMON_ARGV=(/usr/bin/epmd -address 127.0.0.1 -port 4369) ;;
    rabbitmq) DAEMON_ARGV=(/usr/lib/rabbitmq/bin/rabbitmq-server) ;;
    mariadb) DAEMON_ARGV=(/usr/sbin/mariadbd --no-defaults --user=root --datadir="$NOVALAB/mariadb"
      --socket="$NOVALAB/run/mariadb.sock" --pid-file="$NOVALAB/run/mariadbd.self.pid"
      --bind-address=127.0.0.1 --port=3306 --skip-name-resolve --skip-log-bin --max-connections=800
      --log-error="$NOVALAB/log/mariadb.err" --character-set-server=utf8mb4
      --innodb-buffer-pool-size=128M --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0
      --innodb-use-native-aio=0) ;;
    keystone) DAEMON_ARGV=(/usr/bin/uwsgi-core --ini "$NOVALAB/etc/keystone/uwsgi.ini") ;;
    placement) DAEMON_ARGV=(/usr/bin/uwsgi-core --ini "$NOVALAB/etc/placement/uwsgi.ini") ;;
    neutron-stub) DAEMON_ARGV=("$LAB_PYTHON" "$HERE/neutron_stub.py" "$NEUTRON_STUB_PORT" "$NOVALAB/log/neutron-stub.requests") ;;
    nova-api | nova-conductor | nova-scheduler)
      DAEMON_ARGV=("$NOVALAB/bin/$1" --config-file "$nova_conf" --log-file "$NOVALAB/log/$1.log") ;;
    nova-compute-*)
      DAEMON_ARGV=("$NOVALAB/bin/nova-compute" --config-file "$NOVALAB/etc/nova/compute-common.conf"
        --config-file "$NOVALAB/etc/nova/${1#nova-}.conf" --log-file "$NOVALAB/log/$1.log") ;;
    *) fail "unknown daemon $1" ;;
  esac
}

start_daemon() {
  local name=$1
  if running "$name"; then return; fi
  daemon_argv "$name"
  rm -f "$NOVALAB/run/$name.pid"
  # RabbitMQ keeps its cookie in $HOME and reads its layout from the environment.
  (
    [[ $name == rabbitmq || $name == epmd ]] && rabbit_environment
    setsid -f /bin/bash -c 'echo $$ >"$0"; exec "$@"' "$NOVALAB/run/$name.pid" "${DAEMON_ARGV[@]}" \
      >>"$NOVALAB/log/$name.out" 2>&1 </dev/null
  )
  local _
  for _ in $(seq 50); do [ -s "$NOVALAB/run/$name.pid" ] && break; sleep 0.1; done
  say "started $name (pid $(pid_of "$name"))"
}

belongs_to_lab() {
  local cmdline
  cmdline=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null) || return 1
  [[ $cmdline == *"$NOVALAB"* || $cmdline == *rabbitmq* || $cmdline == *beam.smp* || $cmdline == *"epmd -address 127.0.0.1"* ]]
}

stop_daemon() {
  local name=$1 pid _
  pid=$(pid_of "$name") || return 0
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && belongs_to_lab "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    say "stopped $name ($pid)"
  fi
  rm -f "$NOVALAB/run/$name.pid"
}

all_daemons() {
  local i
  for i in $(seq "$NCOMPUTE"); do echo "nova-compute-$i"; done
  echo nova-api nova-scheduler nova-conductor placement keystone neutron-stub mariadb rabbitmq epmd | tr ' ' '\n'
}

# Every nova-compute with a recorded pid, whatever NCOMPUTE says now (a lab brought up with NCOMPUTE=6 for
# bench:nova --hosts and stopped with the default 3 would otherwise keep compute-4..6 running).
recorded_computes() {
  local file
  for file in "$NOVALAB"/run/nova-compute-*.pid; do [ -e "$file" ] && basename "$file" .pid; done
  return 0
}

stop_all() {
  local name
  for name in $(recorded_computes) $(all_daemons); do stop_daemon "$name"; done
  # RabbitMQ's Erlang VM detaches from the wrapper script: stop it by the pid it recorded.
  local beam; beam=$(cat "$NOVALAB/run/rabbitmq-beam.pid" 2>/dev/null || true)
  if [ -n "$beam" ] && kill -0 "$beam" 2>/dev/null && belongs_to_lab "$beam"; then kill -TERM "$beam"; fi
  rm -f "$NOVALAB/run/rabbitmq-beam.pid"
  if [ "$1" = --purge ]; then
    rm -rf "${NOVALAB:?}"/{mariadb,rabbitmq,state,log,run,etc}
    say "purged $NOVALAB"
  fi
}

show_status() {
  local name
  for name in $(all_daemons); do
    if running "$name"; then echo "$name running (pid $(pid_of "$name"))"; else echo "$name stopped"; fi
  done
}

restart_one() {
  start_daemon "$1"
  [[ $1 == nova-compute-* ]] && "$LAB_PYTHON" "$HERE/bootstrap.py" wait-computes
  return 0
}

wait_port() { # port seconds
  local _
  for _ in $(seq "$2"); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 1; done
  return 1
}

wait_url() { # url seconds daemon
  local _
  for _ in $(seq "$2"); do
    curl -s -o /dev/null -m 3 "$1" && return 0
    running "$3" || { tail -20 "$NOVALAB/log/$3.out"; fail "$3 exited"; }
    sleep 1
  done
  fail "$3 does not answer on $1"
}

rabbit_environment() {
  export HOME=$NOVALAB/rabbitmq RABBITMQ_NODENAME=rabbit@localhost RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
  export RABBITMQ_NODE_PORT=5672 RABBITMQ_DIST_PORT=25672 ERL_EPMD_ADDRESS=127.0.0.1
  export RABBITMQ_CONFIG_FILE=$NOVALAB/etc/rabbitmq/rabbitmq.conf
  export RABBITMQ_ENABLED_PLUGINS_FILE=$NOVALAB/etc/rabbitmq/enabled_plugins
  export RABBITMQ_MNESIA_BASE=$NOVALAB/rabbitmq/mnesia RABBITMQ_LOG_BASE=$NOVALAB/log
  export RABBITMQ_LOGS=$NOVALAB/log/rabbitmq.log RABBITMQ_PID_FILE=$NOVALAB/run/rabbitmq-beam.pid
  export RABBITMQ_CONF_ENV_FILE=/dev/null
  export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS='-kernel inet_dist_use_interface {127,0,0,1}'
  export RABBITMQ_CTL_ERL_ARGS='-kernel inet_dist_use_interface {127,0,0,1}'
}

# Runs a set-up command with its chatter (eventlet warnings, alembic progress) in log/setup.log;
# shows the tail only when it fails.
quiet() {
  "$@" >>"$NOVALAB/log/setup.log" 2>&1 || { tail -30 "$NOVALAB/log/setup.log"; fail "failed: $*"; }
}

mariadb_sql() { mariadb --no-defaults -S "$NOVALAB/run/mariadb.sock" -u root "$@"; }

start_infrastructure() {
  mkdir -p "$NOVALAB/rabbitmq"
  start_daemon epmd
  wait_port 4369 10 || fail "epmd did not listen"
  start_daemon rabbitmq
  if [ ! -d "$NOVALAB/mariadb/mysql" ]; then
    mkdir -p "$NOVALAB/mariadb"
    mariadb-install-db --no-defaults --datadir="$NOVALAB/mariadb" --user=root \
      --auth-root-authentication-method=socket --skip-test-db >"$NOVALAB/log/mariadb-install.log" 2>&1 ||
      fail "mariadb-install-db failed, see $NOVALAB/log/mariadb-install.log"
  fi
  start_daemon mariadb
  local _
  for _ in $(seq 60); do mariadb_sql -e 'select 1' >/dev/null 2>&1 && break; sleep 0.5; done
  mariadb_sql <<SQL || fail "mariadb does not accept statements"
CREATE DATABASE IF NOT EXISTS keystone; CREATE DATABASE IF NOT EXISTS placement;
CREATE DATABASE IF NOT EXISTS nova_api; CREATE DATABASE IF NOT EXISTS nova_cell0;
CREATE DATABASE IF NOT EXISTS nova_cell1;
CREATE USER IF NOT EXISTS 'lab'@'127.0.0.1' IDENTIFIED BY '$LAB_DB_PASSWORD';
GRANT ALL PRIVILEGES ON *.* TO 'lab'@'127.0.0.1';
SQL
  wait_port 5672 90 || { tail -20 "$NOVALAB/log/rabbitmq.out"; fail "rabbitmq did not listen on 5672"; }
  say "rabbitmq and mariadb up"
}

# Schemas are created once per MariaDB data directory; a re-run on a live lab skips the slow syncs.
SCHEMA_MARK=$NOVALAB/mariadb/.drainbridge-schemas-ready
schemas_ready() { [ -e "$SCHEMA_MARK" ]; }

start_identity_and_placement() {
  local kconf=(--config-file "$NOVALAB/etc/keystone/keystone.conf")
  schemas_ready || setup_keystone_db
  start_daemon keystone
  wait_url "$KEYSTONE_URL/v3" 60 keystone
  "$LAB_PYTHON" "$HERE/bootstrap.py" register
  schemas_ready || quiet placement-manage --config-file "$NOVALAB/etc/placement/placement.conf" db sync
  start_daemon placement
  wait_url "$PLACEMENT_URL/" 60 placement
  start_daemon neutron-stub
  wait_url "http://127.0.0.1:$NEUTRON_STUB_PORT/" 20 neutron-stub
  say "keystone, placement and the neutron stub answer"
}

setup_keystone_db() {
  local kconf=(--config-file "$NOVALAB/etc/keystone/keystone.conf")
  quiet keystone-manage "${kconf[@]}" db_sync
  [ -e "$NOVALAB/etc/keystone/fernet-keys/0" ] || quiet keystone-manage "${kconf[@]}" fernet_setup --keystone-user root --keystone-group root
  [ -e "$NOVALAB/etc/keystone/credential-keys/0" ] || quiet keystone-manage "${kconf[@]}" credential_setup --keystone-user root --keystone-group root
  quiet keystone-manage "${kconf[@]}" bootstrap --bootstrap-password "$LAB_ADMIN_PASSWORD" \
    --bootstrap-admin-url "$KEYSTONE_URL/v3/" --bootstrap-internal-url "$KEYSTONE_URL/v3/" \
    --bootstrap-public-url "$KEYSTONE_URL/v3/" --bootstrap-region-id RegionOne
}

start_nova() {
  schemas_ready || setup_nova_dbs
  local name
  for name in nova-conductor nova-scheduler nova-api; do start_daemon "$name"; done
  for name in $(seq "$NCOMPUTE"); do start_daemon "nova-compute-$name"; done
  wait_url "$NOVA_URL/" 90 nova-api
  touch "$SCHEMA_MARK"
}

setup_nova_dbs() {
  local nconf=(--config-file "$NOVALAB/etc/nova/nova.conf")
  quiet nova-manage "${nconf[@]}" api_db sync
  quiet nova-manage "${nconf[@]}" cell_v2 map_cell0 \
    --database_connection "mysql+pymysql://lab:$LAB_DB_PASSWORD@127.0.0.1:3306/nova_cell0?charset=utf8"
  local cells; cells=$(nova-manage "${nconf[@]}" cell_v2 list_cells 2>/dev/null)
  grep -q ' cell1 ' <<<"$cells" || quiet nova-manage "${nconf[@]}" cell_v2 create_cell --name cell1
  quiet nova-manage "${nconf[@]}" db sync
}
