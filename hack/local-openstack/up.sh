#!/usr/bin/env bash
# Starts a real OpenStack on 10.254.0.1 (an address on this machine's loopback interface, see
# lib.sh) from Debian's packages, for the end-to-end tests and the
# demo: Keystone, Placement, Glance, Neutron (ML2 with a bind-everything driver and stand-in agents
# in az1/az2), Nova (fake virt driver, one compute host per zone, zones az1/az2), Cinder (Cinder's
# fake volume driver, one backend per zone), Octavia (amphora provider; amphorae are fake Nova
# servers, VIPs are real Neutron ports), MariaDB and RabbitMQ.
#
#   hack/local-openstack/up.sh     install what is missing, configure, start; idempotent
#
# A re-run with everything running returns in about a second; after down.sh (data kept) it only
# starts the daemons. The result is written to $CAPO_OPENSTACK_DIR/clouds.yaml (default
# /var/tmp/capo-local-openstack): cloud `capo-e2e` is the unprivileged tenant demo/demo the tests
# and the demo use, `capo-admin` the cloud administrator. Also there: an external network
# `public` (172.24.4.0/24), flavors m1.tiny/m1.small/m1.medium (and m1.zero-disk, with no root
# disk, and m1.ephemeral, with a 5 GiB ephemeral disk), image `fake-image`, Nova, Neutron, Cinder
# and Octavia availability zones az1 and az2. Needs root (packages, service users).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || die "run as root: it installs packages and runs daemons as service users"
mkdir -p "$CONF_DIR" "$DATA_DIR" "$LOG_DIR" "$PID_DIR" "$WRAPPER_DIR" "$DONE_DIR"

# The port each daemon listens on, to refuse to start next to another OpenStack on this machine.
declare -A PORT=([mariadb]=3306 [rabbitmq]=5672 [keystone]=5000 [placement]=8778 [glance-api]=9292
  [neutron-server]=9696 [nova-api]=8774 [cinder-api]=8776 [octavia-api]=9876)

check_ports() {
  local name owner
  for name in "${!PORT[@]}"; do
    running "$name" && continue
    owner=$(port_owner "${PORT[$name]}")
    [ -z "$owner" ] || die "port ${PORT[$name]} (for $name) is taken by pid $owner ($(ps -o args= -p "$owner" | cut -c1-80)); stop that first"
  done
}

PACKAGES=(python3-keystone python3-placement python3-glance python3-neutron python3-nova
  python3-cinder python3-octavia python3-openstackclient python3-octaviaclient python3-pymysql python3-gunicorn
  mariadb-server mariadb-client rabbitmq-server curl openssl iproute2)

install_packages() {
  # Only the library packages: the daemon packages would pull systemd units and debconf prompts.
  # apt_ensure keeps the maintainer scripts of mariadb and rabbitmq from starting their daemons.
  APT_LOG="$LOG_DIR/apt.log" apt_ensure "${PACKAGES[@]}"
}

start_mariadb() {
  mkdir -p "$CONF_DIR/mysql" "$DATA_DIR/mysql" "$PID_DIR/mysql"
  chown mysql:mysql "$DATA_DIR/mysql" "$PID_DIR/mysql"
  cat >"$CONF_DIR/mysql/my.cnf" <<EOF
[mysqld]
user = mysql
bind-address = $ADDRESS
port = 3306
datadir = $DATA_DIR/mysql
socket = $PID_DIR/mysql/mysqld.sock
pid-file = $PID_DIR/mysql/mysqld.pid
log-error = $LOG_DIR/mariadb.log
skip-name-resolve
character-set-server = utf8
collation-server = utf8_general_ci
max_connections = 1000
performance_schema = OFF
innodb_buffer_pool_size = 128M
# Test data: durability is not worth the fsyncs.
innodb_flush_log_at_trx_commit = 0
innodb_doublewrite = 0
sync_binlog = 0
EOF
  printf '[client]\nuser = root\nsocket = %s\n' "$PID_DIR/mysql/mysqld.sock" >"$CONF_DIR/mysql/client.cnf"
  [ -d "$DATA_DIR/mysql/mysql" ] ||
    mariadb-install-db --defaults-file="$CONF_DIR/mysql/my.cnf" --skip-test-db >"$LOG_DIR/mariadb-install.log" 2>&1
  daemon mariadb -- /usr/sbin/mariadbd --defaults-file="$CONF_DIR/mysql/my.cnf"
  local deadline=$((SECONDS + 60))
  until mariadb --defaults-file="$CONF_DIR/mysql/client.cnf" -e 'SELECT 1' >/dev/null 2>&1; do
    running mariadb || die "mariadb exited; see $LOG_DIR/mariadb.log"
    [ "$SECONDS" -lt "$deadline" ] || die "mariadb did not accept connections within 60s"
    sleep 0.3
  done
}

rabbit_environment() {
  export HOME=/var/lib/rabbitmq RABBITMQ_NODENAME=rabbit@localhost RABBITMQ_NODE_IP_ADDRESS=$BROKER_ADDRESS \
    RABBITMQ_NODE_PORT=5672 RABBITMQ_DIST_PORT=25672 ERL_EPMD_ADDRESS=$BROKER_ADDRESS \
    RABBITMQ_CONFIG_FILE="$CONF_DIR/rabbitmq/rabbitmq.conf" \
    RABBITMQ_CONF_ENV_FILE="$CONF_DIR/rabbitmq/rabbitmq-env.conf" \
    RABBITMQ_ENABLED_PLUGINS_FILE="$CONF_DIR/rabbitmq/enabled_plugins" \
    RABBITMQ_MNESIA_BASE="$DATA_DIR/rabbitmq" RABBITMQ_LOG_BASE="$LOG_DIR/rabbitmq" \
    RABBITMQ_PID_FILE="$PID_DIR/rabbitmq/rabbit.pid" \
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
}

start_rabbitmq() {
  mkdir -p "$CONF_DIR/rabbitmq" "$DATA_DIR/rabbitmq" "$LOG_DIR/rabbitmq" "$PID_DIR/rabbitmq"
  chown -R rabbitmq:rabbitmq "$DATA_DIR/rabbitmq" "$LOG_DIR/rabbitmq" "$PID_DIR/rabbitmq"
  cat >"$CONF_DIR/rabbitmq/rabbitmq.conf" <<EOF
listeners.tcp.default = $BROKER_ADDRESS:5672
loopback_users.guest = true
log.console = false
log.file.level = warning
vm_memory_high_watermark.relative = 0.2
EOF
  echo 'NODENAME=rabbit@localhost' >"$CONF_DIR/rabbitmq/rabbitmq-env.conf"
  echo '[].' >"$CONF_DIR/rabbitmq/enabled_plugins"
  chmod 755 "$CONF_DIR/rabbitmq" && chmod 644 "$CONF_DIR/rabbitmq"/*
  if ! running rabbitmq; then
    # The package's install script leaves an epmd listening on every address; ours listens on
    # 127.0.0.1 only and is started by the broker.
    local pid
    for pid in $(pgrep -u rabbitmq -x epmd || true); do
      ss -Hltnp "sport = :4369" | grep -q "$BROKER_ADDRESS:4369.*pid=$pid," || kill "$pid" || true
    done
  fi
  (rabbit_environment && daemon rabbitmq --user rabbitmq -- /usr/lib/rabbitmq/bin/rabbitmq-server)
  local deadline=$((SECONDS + 120))
  until (exec 3<>"/dev/tcp/$BROKER_ADDRESS/5672") 2>/dev/null; do
    running rabbitmq || die "rabbitmq exited; see $LOG_DIR/rabbitmq"
    [ "$SECONDS" -lt "$deadline" ] || die "rabbitmq did not listen within 120s"
    sleep 0.3
  done
  # epmd daemonises itself: remember it so that down.sh stops it too.
  pgrep -u rabbitmq -x epmd >"$PID_DIR/epmd.pid" || true
}

write_clouds_yaml() {
  local cloud name user project
  {
    echo 'clouds:'
    for cloud in capo-e2e:demo:demo capo-admin:admin:admin; do
      IFS=: read -r name user project <<<"$cloud"
      cat <<EOF
  $name:
    auth:
      auth_url: $KEYSTONE_URL/v3
      username: $user
      password: $PASSWORD
      project_name: $project
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
    identity_api_version: 3
    interface: public
EOF
    done
  } >"$STATE_DIR/clouds.yaml"
  chmod 600 "$STATE_DIR/clouds.yaml"
}

start_keystone() {
  database keystone keystone
  mkdir -p "$CONF_DIR/keystone" "$DATA_DIR/keystone"
  cat >"$CONF_DIR/keystone/keystone.conf" <<EOF
[DEFAULT]
log_file = $LOG_DIR/keystone.log
[database]
connection = $(db_url keystone keystone)
[token]
provider = fernet
expiration = 86400
[fernet_tokens]
key_repository = $DATA_DIR/keystone/fernet-keys
[fernet_receipts]
key_repository = $DATA_DIR/keystone/fernet-keys
[credential]
key_repository = $DATA_DIR/keystone/credential-keys
# Fast logins: a test cloud needs no expensive password hashing, and a cache saves database trips.
[identity]
password_hash_rounds = 4
[cache]
enabled = true
backend = dogpile.cache.memory
expiration_time = 60
EOF
  keystone_manage() { keystone-manage --config-file "$CONF_DIR/keystone/keystone.conf" "$@" >>"$LOG_DIR/keystone-manage.log" 2>&1; }
  keystone_first_time() {
    keystone_manage db_sync
    keystone_manage fernet_setup --keystone-user root --keystone-group root
    keystone_manage credential_setup --keystone-user root --keystone-group root
    keystone_manage bootstrap --bootstrap-password "$PASSWORD" --bootstrap-username admin \
      --bootstrap-project-name admin --bootstrap-role-name admin --bootstrap-service-name keystone \
      --bootstrap-region-id RegionOne --bootstrap-admin-url "$KEYSTONE_URL/v3" \
      --bootstrap-internal-url "$KEYSTONE_URL/v3" --bootstrap-public-url "$KEYSTONE_URL/v3"
  }
  once keystone-database keystone_first_time
  (export OS_KEYSTONE_CONFIG_DIR="$CONF_DIR/keystone" OS_KEYSTONE_CONFIG_FILES=keystone.conf &&
    wsgi_daemon keystone 5000 keystone.server.wsgi:initialize_public_application)
  write_clouds_yaml
  wait_for "$KEYSTONE_URL/v3" keystone
  # Re-run when a service joins (the step is a find-or-create): Cinder's user and endpoint.
  once identity-cinder bootstrap identity "$PASSWORD" "http://$ADDRESS"
}

configure_placement() {
  database placement placement
  mkdir -p "$CONF_DIR/placement"
  cat >"$CONF_DIR/placement/placement.conf" <<EOF
[DEFAULT]
log_file = $LOG_DIR/placement.log
[api]
auth_strategy = keystone
[keystone_authtoken]
$(service_credentials placement)
[placement_database]
connection = $(db_url placement placement)
EOF
  once placement-database placement-manage --config-file "$CONF_DIR/placement/placement.conf" db sync \
    >>"$LOG_DIR/placement-manage.log" 2>&1
}

start_placement() {
  (export OS_PLACEMENT_CONFIG_DIR="$CONF_DIR/placement" &&
    wsgi_daemon placement 8778 placement.wsgi:init_application)
}

configure_glance() {
  database glance glance
  mkdir -p "$CONF_DIR/glance" "$DATA_DIR/glance/images" "$DATA_DIR/glance/staging" "$DATA_DIR/glance/locks"
  wrapper glance-api glance.cmd.api
  wrapper glance-manage glance.cmd.manage
  cat >"$CONF_DIR/glance/glance-api.conf" <<EOF
[DEFAULT]
bind_host = $ADDRESS
bind_port = 9292
workers = 1
log_file = $LOG_DIR/glance-api.log
node_staging_uri = file://$DATA_DIR/glance/staging
image_cache_dir = $DATA_DIR/glance/cache
[database]
connection = $(db_url glance glance)
[keystone_authtoken]
$(service_credentials glance)
[paste_deploy]
flavor = keystone
config_file = $CONF_DIR/glance/glance-api-paste.ini
[glance_store]
stores = file,http
default_store = file
filesystem_store_datadir = $DATA_DIR/glance/images
[oslo_concurrency]
lock_path = $DATA_DIR/glance/locks
EOF
  # Debian's python3-glance ships no paste file: the pipeline is the upstream keystone flavour.
  cat >"$CONF_DIR/glance/glance-api-paste.ini" <<'EOF'
[pipeline:glance-api-keystone]
pipeline = cors healthcheck http_proxy_to_wsgi versionnegotiation osprofiler authtoken context rootapp

[composite:rootapp]
paste.composite_factory = glance.api:root_app_factory
/: apiversions
/v2: apiv2app

[app:apiversions]
paste.app_factory = glance.api.versions:create_resource

[app:apiv2app]
paste.app_factory = glance.api.v2.router:API.factory

[filter:healthcheck]
paste.filter_factory = oslo_middleware:Healthcheck.factory
backends = disable_by_file
disable_by_file_path = /nonexistent/healthcheck_disable

[filter:versionnegotiation]
paste.filter_factory = glance.api.middleware.version_negotiation:VersionNegotiationFilter.factory

[filter:context]
paste.filter_factory = glance.api.middleware.context:ContextMiddleware.factory

[filter:authtoken]
paste.filter_factory = keystonemiddleware.auth_token:filter_factory
delay_auth_decision = true

[filter:osprofiler]
paste.filter_factory = osprofiler.web:WsgiMiddleware.factory

[filter:cors]
paste.filter_factory = oslo_middleware.cors:filter_factory
oslo_config_project = glance
oslo_config_program = glance-api

[filter:http_proxy_to_wsgi]
paste.filter_factory = oslo_middleware:HTTPProxyToWSGI.factory
EOF
  once glance-database "$WRAPPER_DIR/glance-manage" --config-file "$CONF_DIR/glance/glance-api.conf" db_sync \
    >>"$LOG_DIR/glance-manage.log" 2>&1
}

start_glance() {
  daemon glance-api -- "$WRAPPER_DIR/glance-api" --config-file "$CONF_DIR/glance/glance-api.conf"
}

NEUTRON_ARGS=()
configure_neutron() {
  database neutron neutron
  mkdir -p "$CONF_DIR/neutron" "$DATA_DIR/neutron/locks"
  wrapper neutron-server neutron.cmd.eventlet.server
  wrapper neutron-db-manage neutron.db.migration.cli
  cat >"$CONF_DIR/neutron/neutron.conf" <<EOF
[DEFAULT]
bind_host = $ADDRESS
bind_port = 9696
core_plugin = ml2
service_plugins = router,trunk
auth_strategy = keystone
transport_url = $RABBIT_URL
api_workers = 1
rpc_workers = 1
rpc_state_report_workers = 1
allow_overlapping_ips = true
dhcp_agent_notification = false
notify_nova_on_port_status_changes = true
notify_nova_on_port_data_changes = true
api_paste_config = $CONF_DIR/neutron/api-paste.ini
state_path = $DATA_DIR/neutron
log_file = $LOG_DIR/neutron-server.log
# Schedulers that honour availability_zone_hints against the agents' zones.
router_scheduler_driver = neutron.scheduler.l3_agent_scheduler.AZLeastRoutersScheduler
network_scheduler_driver = neutron.scheduler.dhcp_agent_scheduler.AZAwareWeightScheduler
[database]
connection = $(db_url neutron neutron)
[keystone_authtoken]
$(service_credentials neutron)
[nova]
$(service_credentials nova)
[oslo_concurrency]
lock_path = $DATA_DIR/neutron/locks
[quotas]
quota_network = -1
quota_subnet = -1
quota_port = -1
quota_router = -1
quota_floatingip = -1
quota_security_group = -1
quota_security_group_rule = -1
EOF
  cat >"$CONF_DIR/neutron/ml2_conf.ini" <<EOF
[ml2]
type_drivers = flat,vlan,vxlan,local
tenant_network_types = vxlan
mechanism_drivers = capo_fake
extension_drivers = port_security
[ml2_type_flat]
flat_networks = *
[ml2_type_vlan]
network_vlan_ranges = physnet1:100:4000
[ml2_type_vxlan]
vni_ranges = 1:100000
[securitygroup]
enable_security_group = true
EOF
  cat >"$CONF_DIR/neutron/api-paste.ini" <<'EOF'
[composite:neutron]
use = egg:Paste#urlmap
/: neutronversions_composite
/healthcheck: healthcheck
/v2.0: neutronapi_v2_0

[composite:neutronapi_v2_0]
use = call:neutron.auth:pipeline_factory
keystone = cors http_proxy_to_wsgi request_id catch_errors osprofiler authtoken keystonecontext extensions neutronapiapp_v2_0

[composite:neutronversions_composite]
use = call:neutron.auth:pipeline_factory
keystone = cors http_proxy_to_wsgi neutronversions

[filter:request_id]
paste.filter_factory = oslo_middleware:RequestId.factory

[filter:catch_errors]
paste.filter_factory = oslo_middleware:CatchErrors.factory

[filter:cors]
paste.filter_factory = oslo_middleware.cors:filter_factory
oslo_config_project = neutron

[filter:http_proxy_to_wsgi]
paste.filter_factory = oslo_middleware.http_proxy_to_wsgi:HTTPProxyToWSGI.factory

[filter:keystonecontext]
paste.filter_factory = neutron.auth:NeutronKeystoneContext.factory

[filter:authtoken]
paste.filter_factory = keystonemiddleware.auth_token:filter_factory

[filter:extensions]
paste.filter_factory = neutron.api.extensions:plugin_aware_extension_middleware_factory

[filter:osprofiler]
paste.filter_factory = osprofiler.web:WsgiMiddleware.factory

[app:neutronversions]
paste.app_factory = neutron.pecan_wsgi.app:versions_factory

[app:neutronapiapp_v2_0]
paste.app_factory = neutron.api.v2.router:APIRouter.factory

[app:healthcheck]
paste.app_factory = oslo_middleware:Healthcheck.app_factory
backends = disable_by_file
disable_by_file_path = /nonexistent/healthcheck_disable
EOF
  NEUTRON_ARGS=(--config-file "$CONF_DIR/neutron/neutron.conf" --config-file "$CONF_DIR/neutron/ml2_conf.ini")
  once neutron-database "$WRAPPER_DIR/neutron-db-manage" "${NEUTRON_ARGS[@]}" upgrade heads \
    >>"$LOG_DIR/neutron-db-manage.log" 2>&1
}

start_neutron() {
  daemon neutron-server -- "$WRAPPER_DIR/neutron-server" "${NEUTRON_ARGS[@]}"
}

start_neutron_agents() {
  local zone zone_args=()
  for zone in "${ZONES[@]}"; do zone_args+=(--zone "$zone"); done
  daemon neutron-fake-agents -- "$PY" "$PYTHON_DIR/capo_fake_agents.py" \
    --config-file "$CONF_DIR/neutron/neutron.conf" "${zone_args[@]}"
}

NOVA_ARGS=()
configure_nova() {
  database nova_api nova
  database nova nova
  database nova_cell0 nova
  mkdir -p "$CONF_DIR/nova" "$DATA_DIR/nova/locks"
  local w
  for w in api conductor scheduler compute manage; do wrapper "nova-$w" "nova.cmd.$w"; done
  cat >"$CONF_DIR/nova/nova.conf" <<EOF
[DEFAULT]
transport_url = $RABBIT_URL
compute_driver = fake.FakeDriver
my_ip = $ADDRESS
host = controller
enabled_apis = osapi_compute
osapi_compute_listen = $ADDRESS
osapi_compute_listen_port = 8774
osapi_compute_workers = 1
state_path = $DATA_DIR/nova
instances_path = $DATA_DIR/nova/instances
[api]
auth_strategy = keystone
[wsgi]
api_paste_config = $CONF_DIR/nova/api-paste.ini
[api_database]
connection = $(db_url nova nova_api)
[database]
connection = $(db_url nova nova)
[keystone_authtoken]
$(service_credentials nova)
[service_user]
send_service_user_token = true
$(service_credentials nova)
[placement]
$(service_credentials nova)
[neutron]
$(service_credentials nova)
[glance]
region_name = RegionOne
[cinder]
os_region_name = RegionOne
$(service_credentials nova)
[conductor]
workers = 1
[scheduler]
workers = 1
# New compute hosts are mapped into cell1 by the scheduler within 10 s.
discover_hosts_in_cells_interval = 10
[oslo_concurrency]
lock_path = $DATA_DIR/nova/locks
[vnc]
enabled = false
[spice]
enabled = false
[compute]
resource_provider_association_refresh = 60
EOF
  cat >"$CONF_DIR/nova/api-paste.ini" <<'EOF'
[composite:osapi_compute]
use = call:nova.api.openstack.urlmap:urlmap_factory
/: oscomputeversions
/v2: oscomputeversion_legacy_v2
/v2.1: oscomputeversion_v2
/v2/+: openstack_compute_api_v21_legacy_v2_compatible
/v2.1/+: openstack_compute_api_v21

[composite:openstack_compute_api_v21]
use = call:nova.api.auth:pipeline_factory_v21
keystone = cors http_proxy_to_wsgi compute_req_id faultwrap request_log sizelimit osprofiler authtoken keystonecontext osapi_compute_app_v21

[composite:openstack_compute_api_v21_legacy_v2_compatible]
use = call:nova.api.auth:pipeline_factory_v21
keystone = cors http_proxy_to_wsgi compute_req_id faultwrap request_log sizelimit osprofiler authtoken keystonecontext legacy_v2_compatible osapi_compute_app_v21

[filter:request_log]
paste.filter_factory = nova.api.openstack.requestlog:RequestLog.factory

[filter:compute_req_id]
paste.filter_factory = nova.api.compute_req_id:ComputeReqIdMiddleware.factory

[filter:faultwrap]
paste.filter_factory = nova.api.openstack:FaultWrapper.factory

[filter:osprofiler]
paste.filter_factory = nova.profiler:WsgiMiddleware.factory

[filter:sizelimit]
paste.filter_factory = oslo_middleware:RequestBodySizeLimiter.factory

[filter:http_proxy_to_wsgi]
paste.filter_factory = oslo_middleware.http_proxy_to_wsgi:HTTPProxyToWSGI.factory

[filter:legacy_v2_compatible]
paste.filter_factory = nova.api.openstack:LegacyV2CompatibleWrapper.factory

[app:osapi_compute_app_v21]
paste.app_factory = nova.api.openstack.compute:APIRouterV21.factory

[pipeline:oscomputeversions]
pipeline = cors faultwrap request_log http_proxy_to_wsgi oscomputeversionapp

[pipeline:oscomputeversion_v2]
pipeline = cors compute_req_id faultwrap request_log http_proxy_to_wsgi oscomputeversionapp_v2

[pipeline:oscomputeversion_legacy_v2]
pipeline = cors compute_req_id faultwrap request_log http_proxy_to_wsgi legacy_v2_compatible oscomputeversionapp_v2

[app:oscomputeversionapp]
paste.app_factory = nova.api.openstack.compute.versions:Versions.factory

[app:oscomputeversionapp_v2]
paste.app_factory = nova.api.openstack.compute.versions:VersionsV2.factory

[filter:cors]
paste.filter_factory = oslo_middleware.cors:filter_factory
oslo_config_project = nova

[filter:keystonecontext]
paste.filter_factory = nova.api.auth:NovaKeystoneContext.factory

[filter:authtoken]
paste.filter_factory = keystonemiddleware.auth_token:filter_factory
EOF
  NOVA_ARGS=(--config-file "$CONF_DIR/nova/nova.conf")
  nova_databases() {
    local manage=("$WRAPPER_DIR/nova-manage" "${NOVA_ARGS[@]}")
    "${manage[@]}" api_db sync
    "${manage[@]}" cell_v2 list_cells 2>/dev/null | grep -q ' cell0 ' ||
      "${manage[@]}" cell_v2 map_cell0 --database_connection "$(db_url nova nova_cell0)"
    "${manage[@]}" cell_v2 list_cells 2>/dev/null | grep -q ' cell1 ' ||
      "${manage[@]}" cell_v2 create_cell --name cell1
    "${manage[@]}" db sync
  }
  once nova-database nova_databases >>"$LOG_DIR/nova-manage.log" 2>&1
}

start_nova() {
  local s entry host
  for s in api conductor scheduler; do
    daemon "nova-$s" -- "$WRAPPER_DIR/nova-$s" "${NOVA_ARGS[@]}" --log-file "$LOG_DIR/nova-$s.log"
  done
  for entry in "${COMPUTE_HOSTS[@]}"; do
    host=${entry%%:*}
    mkdir -p "$DATA_DIR/nova/$host/instances"
    # Compute hosts reach the database through the conductor only.
    cat >"$CONF_DIR/nova/$host.conf" <<EOF
[DEFAULT]
host = $host
state_path = $DATA_DIR/nova/$host
instances_path = $DATA_DIR/nova/$host/instances
[database]
connection =
[api_database]
connection =
EOF
    daemon "nova-compute-${entry#*:}" -- "$WRAPPER_DIR/nova-compute" "${NOVA_ARGS[@]}" \
      --config-file "$CONF_DIR/nova/$host.conf" --log-file "$LOG_DIR/nova-compute-${entry#*:}.log"
  done
}

CINDER_ARGS=()
configure_cinder() {
  database cinder cinder
  mkdir -p "$CONF_DIR/cinder" "$DATA_DIR/cinder/locks"
  local w zone
  for w in api manage scheduler volume; do wrapper "cinder-$w" "cinder.cmd.$w"; done
  # One backend per zone, each in its zone: Cinder's availability zones are Nova's.
  cat >"$CONF_DIR/cinder/cinder.conf" <<EOF
[DEFAULT]
transport_url = $RABBIT_URL
auth_strategy = keystone
host = cinder
my_ip = $ADDRESS
osapi_volume_listen = $ADDRESS
osapi_volume_listen_port = 8776
osapi_volume_workers = 1
api_paste_config = $CONF_DIR/cinder/api-paste.ini
resource_query_filters_file = $CONF_DIR/cinder/resource_filters.json
state_path = $DATA_DIR/cinder
enabled_backends = $(IFS=,; echo "${ZONES[*]}")
storage_availability_zone = ${ZONES[0]}
default_availability_zone = ${ZONES[0]}
allow_availability_zone_fallback = false
[database]
connection = $(db_url cinder cinder)
[keystone_authtoken]
$(service_credentials cinder)
[service_user]
send_service_user_token = true
$(service_credentials cinder)
[nova]
$(service_credentials cinder)
[oslo_concurrency]
lock_path = $DATA_DIR/cinder/locks
EOF
  for zone in "${ZONES[@]}"; do
    # capo_fake_volume.py: Cinder's fake driver, which needs neither disks nor an iSCSI target.
    printf '[%s]\nvolume_driver = capo_fake_volume.Driver\nvolume_backend_name = %s\nbackend_availability_zone = %s\n' \
      "$zone" "$zone" "$zone" >>"$CONF_DIR/cinder/cinder.conf"
  done
  # Nor the filters a user may list by: without them Cinder drops every filter (a list by name
  # answers the whole project). These are a production cloud's defaults.
  cat >"$CONF_DIR/cinder/resource_filters.json" <<'EOF'
{
  "volume": ["name", "status", "metadata", "bootable", "migration_status", "availability_zone", "group_id", "size", "created_at", "updated_at"],
  "backup": ["name", "status", "volume_id"],
  "snapshot": ["name", "status", "volume_id", "metadata", "availability_zone"],
  "group": [],
  "group_snapshot": ["status", "group_id"],
  "attachment": ["volume_id", "status", "instance_id", "attach_status"],
  "message": ["resource_uuid", "resource_type", "event_id", "request_id", "message_level"],
  "pool": ["name", "volume_type"],
  "volume_type": ["is_public"]
}
EOF
  # Debian's python3-cinder ships no paste file: the API behind Keystone, as upstream's is.
  cat >"$CONF_DIR/cinder/api-paste.ini" <<'EOF'
[composite:osapi_volume]
use = call:cinder.api:root_app_factory
/: apiversions
/v3: openstack_volume_api_v3

[composite:openstack_volume_api_v3]
use = call:cinder.api.middleware.auth:pipeline_factory
keystone = cors http_proxy_to_wsgi request_id faultwrap sizelimit authtoken keystonecontext apiv3

[filter:request_id]
paste.filter_factory = oslo_middleware.request_id:RequestId.factory

[filter:http_proxy_to_wsgi]
paste.filter_factory = oslo_middleware.http_proxy_to_wsgi:HTTPProxyToWSGI.factory

[filter:cors]
paste.filter_factory = oslo_middleware.cors:filter_factory
oslo_config_project = cinder

[filter:faultwrap]
paste.filter_factory = cinder.api.middleware.fault:FaultWrapper.factory

[filter:sizelimit]
paste.filter_factory = oslo_middleware.sizelimit:RequestBodySizeLimiter.factory

[filter:keystonecontext]
paste.filter_factory = cinder.api.middleware.auth:CinderKeystoneContext.factory

[filter:authtoken]
paste.filter_factory = keystonemiddleware.auth_token:filter_factory

[app:apiv3]
paste.app_factory = cinder.api.v3.router:APIRouter.factory

[pipeline:apiversions]
pipeline = cors http_proxy_to_wsgi faultwrap osvolumeversionapp

[app:osvolumeversionapp]
paste.app_factory = cinder.api.versions:Versions.factory
EOF
  CINDER_ARGS=(--config-file "$CONF_DIR/cinder/cinder.conf")
  once cinder-database "$WRAPPER_DIR/cinder-manage" "${CINDER_ARGS[@]}" db sync >>"$LOG_DIR/cinder-manage.log" 2>&1
}

start_cinder() {
  wsgi_daemon cinder-api 8776 cinder.wsgi.wsgi:initialize_application "${CINDER_ARGS[@]}" \
    --log-file "$LOG_DIR/cinder-api.log"
  local s
  for s in scheduler volume; do
    daemon "cinder-$s" -- "$WRAPPER_DIR/cinder-$s" "${CINDER_ARGS[@]}" --log-file "$LOG_DIR/cinder-$s.log"
  done
}

OCTAVIA_CONF=""
configure_octavia() {
  database octavia octavia
  mkdir -p "$CONF_DIR/octavia/certs" "$DATA_DIR/octavia"
  wrapper octavia-worker octavia.cmd.octavia_worker
  wrapper octavia-health-manager octavia.cmd.health_manager
  wrapper octavia-db-manage octavia.db.migration.cli
  [ -f "$CONF_DIR/octavia/certs/ca.key" ] ||
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=capo-local-octavia-ca \
      -keyout "$CONF_DIR/octavia/certs/ca.key" -out "$CONF_DIR/octavia/certs/ca.pem" 2>/dev/null
  if [ ! -s "$DATA_DIR/octavia/prerequisites" ]; then
    bootstrap octavia-prerequisites | tail -1 >"$DATA_DIR/octavia/prerequisites"
  fi
  local MGMT_NETWORK AMPHORA_FLAVOR
  eval "$(cat "$DATA_DIR/octavia/prerequisites")"
  OCTAVIA_CONF="$CONF_DIR/octavia/octavia.conf"
  cat >"$OCTAVIA_CONF" <<EOF
[DEFAULT]
transport_url = $RABBIT_URL
[api_settings]
bind_host = $ADDRESS
bind_port = 9876
auth_strategy = keystone
api_base_uri = http://$ADDRESS:9876
default_provider_driver = amphora
[database]
connection = $(db_url octavia octavia)
[keystone_authtoken]
$(service_credentials octavia)
[service_auth]
$(service_credentials octavia)
# Amphorae are Nova servers (fake driver) whose agent is never called; VIPs are real Neutron
# ports, so floating IPs can be associated with them.
[controller_worker]
workers = 1
amphora_driver = amphora_noop_driver
volume_driver = volume_noop_driver
compute_driver = compute_nova_driver
network_driver = allowed_address_pairs_driver
image_driver = image_glance_driver
amp_boot_network_list = $MGMT_NETWORK
amp_flavor_id = $AMPHORA_FLAVOR
amp_image_tag = amphora
amp_active_wait_sec = 1
amp_active_retries = 120
loadbalancer_topology = SINGLE
client_ca = $CONF_DIR/octavia/certs/ca.pem
[task_flow]
jobboard_enabled = false
[certificates]
cert_generator = local_cert_generator
ca_certificate = $CONF_DIR/octavia/certs/ca.pem
ca_private_key = $CONF_DIR/octavia/certs/ca.key
[haproxy_amphora]
server_ca = $CONF_DIR/octavia/certs/ca.pem
client_cert = $CONF_DIR/octavia/certs/ca.pem
# The health manager receives the heartbeats capo_fake_amphora.py sends for the amphorae, and sets
# the operating statuses from them as in production.
[health_manager]
bind_ip = $ADDRESS
bind_port = 5555
heartbeat_key = insecure
heartbeat_interval = 2
health_check_interval = 3
heartbeat_timeout = 60
health_update_threads = 1
stats_update_threads = 1
failover_threads = 1
[oslo_messaging]
topic = octavia_prov
[oslo_concurrency]
lock_path = $DATA_DIR/octavia
[nova]
region_name = RegionOne
enable_anti_affinity = false
[neutron]
region_name = RegionOne
[glance]
region_name = RegionOne
EOF
  once octavia-database "$WRAPPER_DIR/octavia-db-manage" --config-file "$OCTAVIA_CONF" upgrade head \
    >>"$LOG_DIR/octavia-db-manage.log" 2>&1
}

start_octavia() {
  wsgi_daemon octavia-api 9876 octavia.api.app:setup_app --config-file "$OCTAVIA_CONF" \
    --log-file "$LOG_DIR/octavia-api.log"
  daemon octavia-worker -- "$WRAPPER_DIR/octavia-worker" --config-file "$OCTAVIA_CONF" \
    --log-file "$LOG_DIR/octavia-worker.log"
  daemon octavia-health-manager -- "$WRAPPER_DIR/octavia-health-manager" --config-file "$OCTAVIA_CONF" \
    --log-file "$LOG_DIR/octavia-health-manager.log"
  daemon octavia-fake-amphora -- "$PY" "$PYTHON_DIR/capo_fake_amphora.py" --octavia-db "$(db_url octavia octavia)" \
    --nova-db "$(db_url nova nova)" --neutron-db "$(db_url neutron neutron)" --key insecure \
    --health-manager "$ADDRESS:5555" --interval 2
}

step() {
  local name=$1 start=$SECONDS
  shift
  "$@"
  log "$name ready ($((SECONDS - start))s)"
}

all_running() {
  local name
  for name in "${SERVICES[@]}"; do running "$name" || return 1; done
  [ -s "$STATE_DIR/clouds.yaml" ] && [ -e "$DONE_DIR/octavia-zones" ] && [ -e "$DONE_DIR/volumes" ]
}

# listen_address puts $ADDRESS on the loopback interface, with a rule that drops what any other
# interface brings for it unless it comes from the pod network, after the rig's guard (hack/lib.sh:
# rig_guard), which keeps $ADDRESS's range on this machine even when the address is gone.
listen_address() {
  rig_guard
  # Captured first: `grep -q` ending the pipe early would fail it under pipefail.
  local addrs
  addrs=$(ip -4 addr show dev lo)
  [[ "$addrs" == *"inet $ADDRESS/"* ]] || ip addr add "$ADDRESS/32" dev lo
  iptables -C INPUT -d "$ADDRESS/32" ! -i lo ! -s "$POD_CIDR" -j DROP 2>/dev/null ||
    iptables -I INPUT -d "$ADDRESS/32" ! -i lo ! -s "$POD_CIDR" -j DROP
}

# A state directory made for another address (the catalog, the agents' records) is purged and
# made again.
check_address() {
  local was
  was=$(cat "$STATE_DIR/address" 2>/dev/null || echo 127.0.0.1)
  [ ! -e "$DONE_DIR/keystone-database" ] || [ "$was" = "$ADDRESS broker $BROKER_ADDRESS" ] || {
    log "the state in $STATE_DIR is for $was, not $ADDRESS broker $BROKER_ADDRESS: purging it"
    "$(dirname "$0")/down.sh" --purge >/dev/null
    mkdir -p "$CONF_DIR" "$DATA_DIR" "$LOG_DIR" "$PID_DIR" "$WRAPPER_DIR" "$DONE_DIR"
  }
  echo "$ADDRESS broker $BROKER_ADDRESS" >"$STATE_DIR/address"
}

main() {
  local start=$SECONDS
  listen_address
  if all_running && [ "$(cat "$STATE_DIR/address" 2>/dev/null)" = "$ADDRESS broker $BROKER_ADDRESS" ]; then
    log "already running; clouds.yaml: $STATE_DIR/clouds.yaml"
    return 0
  fi
  check_address
  step packages install_packages
  check_ports
  step mariadb start_mariadb
  step rabbitmq start_rabbitmq
  step keystone start_keystone
  # Placement, Glance, Neutron and Nova need only Keystone, the database and the broker:
  # configure them, then start them together and wait for all of them.
  configure_placement
  configure_glance
  configure_neutron
  configure_nova
  configure_cinder
  start_placement
  start_glance
  start_neutron
  start_nova
  start_cinder
  # On a restart Octavia's prerequisites exist already: start it with the others.
  if [ -s "$DATA_DIR/octavia/prerequisites" ]; then
    configure_octavia
    start_octavia
  fi
  wait_for "http://$ADDRESS:8778/" placement
  wait_for "http://$ADDRESS:9292/" glance-api
  wait_for "http://$ADDRESS:9696/" neutron-server
  start_neutron_agents
  wait_for "http://$ADDRESS:8774/" nova-api
  wait_for "http://$ADDRESS:8776/" cinder-api
  log "placement, glance, neutron, nova and cinder answer ($((SECONDS - start))s)"
  first_compute() {
    "$WRAPPER_DIR/nova-manage" "${NOVA_ARGS[@]}" cell_v2 discover_hosts >/dev/null 2>&1 || true
    bootstrap compute "${COMPUTE_HOSTS[@]}"
  }
  step "flavors, image, zones, external network" once compute first_compute
  [ -n "$OCTAVIA_CONF" ] || configure_octavia
  start_octavia
  wait_for "http://$ADDRESS:9876/" octavia-api
  step "octavia zones" once octavia-zones bootstrap octavia-zones "${ZONES[@]}"
  step "compute hosts reporting" bootstrap computes-up "${COMPUTE_HOSTS[@]%%:*}"
  # Every time: after a restart the backends must report again; flavors and quotas are
  # find-or-create.
  step "volume backends, flavors and quotas" bootstrap volumes "${ZONES[@]}"
  touch "$DONE_DIR/volumes"
  log "up in $((SECONDS - start))s; clouds.yaml: $STATE_DIR/clouds.yaml (clouds capo-e2e, capo-admin)"
}

main "$@"
