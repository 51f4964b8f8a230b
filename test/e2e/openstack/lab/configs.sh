# Configuration files of the lab, regenerated on every `lab.sh up`. Sourced by lab.sh.

db_url() { echo "mysql+pymysql://lab:$LAB_DB_PASSWORD@127.0.0.1:3306/$1?charset=utf8"; }

write_console_scripts() {
  # python3-nova ships modules but no console scripts (those come with the service packages we avoid).
  local entry
  for entry in nova-manage:manage nova-api:api nova-conductor:conductor nova-scheduler:scheduler nova-compute:compute; do
    printf '#!%s\nimport sys\nfrom nova.cmd.%s import main\nsys.exit(main())\n' "$LAB_PYTHON" "${entry#*:}" >"$NOVALAB/bin/${entry%%:*}"
    chmod 0755 "$NOVALAB/bin/${entry%%:*}"
  done
}

# uwsgi_ini PORT WSGI_FILE ENV_ASSIGNMENT
uwsgi_ini() {
  cat <<EOF
[uwsgi]
plugins = python3
http-socket = 127.0.0.1:$1
master = true
processes = 2
threads = 1
enable-threads = true
lazy-apps = true
die-on-term = true
no-orphans = true
need-app = true
buffer-size = 65535
http-auto-chunked = true
http-chunked-input = true
wsgi-manage-chunked-input = true
; uwsgi's http-socket closes every connection: say so, or keep-alive clients reuse a dead socket
add-header = Connection: close
wsgi-file = $2
env = $3
EOF
}

write_rabbitmq_config() {
  cat >"$NOVALAB/etc/rabbitmq/rabbitmq.conf" <<EOF
listeners.tcp.default = 127.0.0.1:5672
loopback_users.guest = true
disk_free_limit.absolute = 50MB
vm_memory_high_watermark.absolute = 512MiB
log.file.level = warning
EOF
  echo '[].' >"$NOVALAB/etc/rabbitmq/enabled_plugins"
}

write_keystone_config() {
  cat >"$NOVALAB/etc/keystone/keystone.conf" <<EOF
[DEFAULT]
log_file = $NOVALAB/log/keystone.log
[database]
connection = $(db_url keystone)
[token]
provider = fernet
expiration = ${KEYSTONE_TOKEN_EXPIRATION:-14400}
[fernet_tokens]
key_repository = $NOVALAB/etc/keystone/fernet-keys
[fernet_receipts]
key_repository = $NOVALAB/etc/keystone/fernet-keys
[credential]
key_repository = $NOVALAB/etc/keystone/credential-keys
EOF
  uwsgi_ini 5000 /usr/bin/keystone-wsgi-public "OS_KEYSTONE_CONFIG_DIR=$NOVALAB/etc/keystone" >"$NOVALAB/etc/keystone/uwsgi.ini"
}

# service_auth USER: a keystoneauth password section for a service user
service_auth() {
  cat <<EOF
auth_type = password
auth_url = $KEYSTONE_URL/v3
project_name = service
project_domain_name = Default
user_domain_name = Default
region_name = RegionOne
valid_interfaces = public
username = $1
password = $LAB_SERVICE_PASSWORD
EOF
}

token_validation() {
  # token_cache_time = 5: validated tokens are re-checked with Keystone after 5 s, so that a revoked token is refused
  # soon (the suite revokes drainbridge's token mid-run); the default caches them for 300 s.
  cat <<EOF
[keystone_authtoken]
token_cache_time = 5
www_authenticate_uri = $KEYSTONE_URL/
$(service_auth "$1" | grep -v -e region_name -e valid_interfaces)
EOF
}

write_placement_config() {
  {
    printf '[placement_database]\nconnection = %s\n[api]\nauth_strategy = keystone\n' "$(db_url placement)"
    token_validation placement
  } >"$NOVALAB/etc/placement/placement.conf"
  uwsgi_ini 8778 /usr/bin/placement-api "OS_PLACEMENT_CONFIG_DIR=$NOVALAB/etc/placement" >"$NOVALAB/etc/placement/uwsgi.ini"
}

write_nova_config() {
  # compute-common.conf has no database credentials: nova-compute talks to the cells only over RPC.
  cat >"$NOVALAB/etc/nova/compute-common.conf" <<EOF
[DEFAULT]
transport_url = rabbit://guest:guest@127.0.0.1:5672/
my_ip = 127.0.0.1
state_path = $NOVALAB/state/nova
; holds every live migration 'running' for ~5 s (50 x 0.1 s) unless aborted or force-completed
compute_driver = fake.FakeLiveMigrateDriver
enabled_apis = osapi_compute
osapi_compute_listen = 127.0.0.1
osapi_compute_listen_port = 8774
osapi_compute_workers = 1
; a stopped nova-compute shows 'down' after ~20 s instead of 60
report_interval = 5
service_down_time = 20
; no real Neutron: no periodic cache refresh, no waiting for vif-plugged events
heal_instance_info_cache_interval = -1
vif_plugging_timeout = 0
vif_plugging_is_fatal = false
use_rootwrap_daemon = false
migrate_max_retries = 3
default_log_levels = amqp=WARN,amqplib=WARN,sqlalchemy=WARN,oslo_messaging=INFO,oslo_messaging.rpc.client=ERROR,iso8601=WARN,urllib3.connectionpool=WARN,keystonemiddleware=WARN,routes.middleware=WARN,stevedore=WARN,keystoneauth=WARN,oslo_policy=INFO
[api]
auth_strategy = keystone
[wsgi]
api_paste_config = $NOVALAB/etc/nova/api-paste.ini
$(token_validation nova)
[placement]
$(service_auth placement)
[neutron]
$(service_auth nova)
[glance]
; no Glance: servers boot from a blank local disk, but nova still wants an image endpoint to format URLs
api_servers = http://127.0.0.1:9292
[cinder]
os_region_name = RegionOne
[scheduler]
workers = 1
discover_hosts_in_cells_interval = -1
[filter_scheduler]
; the fake computes weigh the same: without shuffling every server lands on the first host
shuffle_best_same_weighed_hosts = true
[conductor]
workers = 1
[vnc]
enabled = false
[oslo_concurrency]
lock_path = $NOVALAB/state/nova/lock
[oslo_messaging_notifications]
driver = noop
[quota]
instances = -1
cores = -1
ram = -1
EOF
  {
    cat "$NOVALAB/etc/nova/compute-common.conf"
    printf '[api_database]\nconnection = %s\n[database]\nconnection = %s\n' "$(db_url nova_api)" "$(db_url nova_cell1)"
  } >"$NOVALAB/etc/nova/nova.conf"
  local i
  for i in $(seq "$NCOMPUTE"); do
    mkdir -p "$NOVALAB/state/compute-$i/lock"
    printf '[DEFAULT]\nhost = compute-%s\nstate_path = %s\n[oslo_concurrency]\nlock_path = %s\n' \
      "$i" "$NOVALAB/state/compute-$i" "$NOVALAB/state/compute-$i/lock" >"$NOVALAB/etc/nova/compute-$i.conf"
  done
}

# Debian ships the paste pipeline only with nova-common (which we avoid): the keystone-authenticated
# v2.1 API plus the version documents, nothing else.
write_api_paste() {
  cat >"$NOVALAB/etc/nova/api-paste.ini" <<'PASTE'
[composite:osapi_compute]
use = call:nova.api.openstack.urlmap:urlmap_factory
/: version_list
/v2.1: version_v21
/v2.1/+: compute_v21
[composite:compute_v21]
use = call:nova.api.auth:pipeline_factory_v21
keystone = request_id faultwrap request_log sizelimit authtoken keystonecontext compute_app
[pipeline:version_list]
pipeline = faultwrap request_log proxy_headers version_list_app
[pipeline:version_v21]
pipeline = request_id faultwrap request_log proxy_headers version_v21_app
[app:compute_app]
paste.app_factory = nova.api.openstack.compute:APIRouterV21.factory
[app:version_list_app]
paste.app_factory = nova.api.openstack.compute.versions:Versions.factory
[app:version_v21_app]
paste.app_factory = nova.api.openstack.compute.versions:VersionsV2.factory
[filter:request_id]
paste.filter_factory = nova.api.compute_req_id:ComputeReqIdMiddleware.factory
[filter:faultwrap]
paste.filter_factory = nova.api.openstack:FaultWrapper.factory
[filter:request_log]
paste.filter_factory = nova.api.openstack.requestlog:RequestLog.factory
[filter:sizelimit]
paste.filter_factory = oslo_middleware:RequestBodySizeLimiter.factory
[filter:proxy_headers]
paste.filter_factory = oslo_middleware.http_proxy_to_wsgi:HTTPProxyToWSGI.factory
[filter:authtoken]
paste.filter_factory = keystonemiddleware.auth_token:filter_factory
[filter:keystonecontext]
paste.filter_factory = nova.api.auth:NovaKeystoneContext.factory
PASTE
}

write_openrc() {
  cat >"$NOVALAB/openrc" <<EOF
export OS_AUTH_URL=$KEYSTONE_URL/v3
export OS_USERNAME=admin
export OS_PASSWORD=$LAB_ADMIN_PASSWORD
export OS_PROJECT_NAME=admin
export OS_USER_DOMAIN_NAME=Default
export OS_PROJECT_DOMAIN_NAME=Default
export OS_REGION_NAME=RegionOne
export OS_INTERFACE=public
export OS_IDENTITY_API_VERSION=3
EOF
  chmod 0600 "$NOVALAB/openrc"
}

write_configs() {
  mkdir -p "$NOVALAB"/{bin,etc/keystone,etc/placement,etc/nova,etc/rabbitmq,state/nova/lock,log,run,rabbitmq}
  write_console_scripts
  write_rabbitmq_config
  write_keystone_config
  write_placement_config
  write_nova_config
  write_api_paste
  write_openrc
}
