#!/usr/bin/env bash
# Settings and helpers shared by up.sh and down.sh. Sourced, never run.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# Where configuration, databases, logs and pid files live; down.sh --purge deletes it.
STATE_DIR="${CAPO_OPENSTACK_DIR:-/var/tmp/capo-local-openstack}"
CONF_DIR="$STATE_DIR/etc"
DATA_DIR="$STATE_DIR/data"
LOG_DIR="$STATE_DIR/log"
PID_DIR="$STATE_DIR/run"
WRAPPER_DIR="$STATE_DIR/bin"
# Steps that need doing only once per state directory leave a stamp here.
DONE_DIR="$STATE_DIR/done"
PYTHON_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/python"

PASSWORD="${CAPO_OPENSTACK_PASSWORD:-secret}"
# Every daemon listens on this address, on this machine's loopback interface: reachable from this
# machine and from the pods of its single-node Kubernetes (hack/kube), whose provider talks to
# the cloud as a user's would, and from nowhere else (up.sh drops what other interfaces bring
# for it). 127.0.0.1 would be out of the pods' reach: it is each pod's own.
ADDRESS=10.254.0.1
# The pods that may reach it: hack/kube's pod network.
POD_CIDR=10.244.0.0/16
KEYSTONE_URL="http://$ADDRESS:5000"
# The message broker serves the OpenStack daemons only: it stays on 127.0.0.1, where RabbitMQ lets
# its guest user log in.
BROKER_ADDRESS=127.0.0.1
RABBIT_URL="rabbit://guest:guest@$BROKER_ADDRESS:5672/"
# Nova compute hosts and the availability zone each one is in.
COMPUTE_HOSTS=(compute-az1:az1 compute-az2:az2)
ZONES=(az1 az2)
# Daemons in start order; down.sh stops them in reverse.
SERVICES=(mariadb rabbitmq keystone placement glance-api neutron-server neutron-fake-agents
  nova-api nova-conductor nova-scheduler nova-compute-az1 nova-compute-az2 cinder-api cinder-scheduler
  cinder-volume octavia-api octavia-worker
  octavia-health-manager octavia-fake-amphora)

# Debian's Python and OpenStack libraries, whatever else is on PATH.
PY=/usr/bin/python3
export PATH="/usr/sbin:/usr/bin:/sbin:/bin:$PATH"
export PYTHONPATH="$PYTHON_DIR"
export DEBIAN_FRONTEND=noninteractive

pid_of() { cat "$PID_DIR/$1.pid" 2>/dev/null; }
running() { local pid; pid=$(pid_of "$1") && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }

# port_owner PORT: prints the pid listening on 127.0.0.1:PORT (or on every address), if any.
port_owner() {
  ss -Hltnp "sport = :$1" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\),.*/\1/p' | head -1
}

# daemon NAME [--user USER] -- COMMAND ARGS...: starts COMMAND in the background in a session of
# its own, its output in $LOG_DIR/NAME.out and its pid in $PID_DIR/NAME.pid; nothing when it runs.
daemon() {
  local name=$1 user=()
  shift
  if [ "${1:-}" = --user ]; then user=(--chuid "$2"); shift 2; fi
  [ "${1:-}" = -- ] && shift
  if running "$name"; then
    return 0
  fi
  start-stop-daemon --start --background --make-pidfile --pidfile "$PID_DIR/$name.pid" \
    "${user[@]}" --output "$LOG_DIR/$name.out" --startas "$1" -- "${@:2}"
  log "started $name (pid $(pid_of "$name"))"
}

# wsgi_daemon NAME PORT FACTORY [APPLICATION ARGS...]: serves a WSGI application with gunicorn.
wsgi_daemon() {
  local name=$1 port=$2 factory=$3
  shift 3
  local call="'$factory'" arg
  for arg in "$@"; do call+=",'$arg'"; done
  daemon "$name" -- "$PY" -m gunicorn --name "$name" --bind "$ADDRESS:$port" --workers 1 \
    --threads 8 --timeout 300 --error-logfile "$LOG_DIR/$name-gunicorn.log" "capo_wsgi:app($call)"
}

# wrapper NAME MODULE: an executable named like the service, so that ps and pidfiles read well.
wrapper() {
  printf '#!%s\nimport sys\nfrom %s import main\nsys.exit(main())\n' "$PY" "$2" >"$WRAPPER_DIR/$1"
  chmod +x "$WRAPPER_DIR/$1"
}

# wait_for URL DAEMON [SECONDS]: until URL answers anything; fails early when DAEMON died.
wait_for() {
  local url=$1 name=$2 deadline=$((SECONDS + ${3:-180}))
  until curl -s -o /dev/null -m 5 "$url"; do
    if ! running "$name"; then
      tail -20 "$LOG_DIR/$name.out" >&2 || true
      die "$name exited; its logs are in $LOG_DIR"
    fi
    [ "$SECONDS" -lt "$deadline" ] || die "$name did not answer on $url within ${3:-180}s"
    sleep 0.3
  done
}

# once STAMP COMMAND...: runs COMMAND unless STAMP says it already succeeded for this state.
once() {
  local stamp="$DONE_DIR/$1"
  shift
  [ -e "$stamp" ] && return 0
  "$@"
  touch "$stamp"
}

db_url() { echo "mysql+pymysql://$1:$PASSWORD@$ADDRESS/$2?charset=utf8"; }

# database NAME USER: creates the database and its user (idempotent).
database() {
  mariadb --defaults-file="$CONF_DIR/mysql/client.cnf" -e "
    CREATE DATABASE IF NOT EXISTS \`$1\` CHARACTER SET utf8;
    CREATE USER IF NOT EXISTS '$2'@'$ADDRESS' IDENTIFIED BY '$PASSWORD';
    CREATE USER IF NOT EXISTS '$2'@'localhost' IDENTIFIED BY '$PASSWORD';
    GRANT ALL PRIVILEGES ON \`$1\`.* TO '$2'@'$ADDRESS';
    GRANT ALL PRIVILEGES ON \`$1\`.* TO '$2'@'localhost';"
}

# service_credentials USER: the options keystonemiddleware and keystoneauth read.
service_credentials() {
  cat <<EOF
www_authenticate_uri = $KEYSTONE_URL
auth_url = $KEYSTONE_URL
auth_type = password
user_domain_name = Default
project_domain_name = Default
project_name = service
username = $1
password = $PASSWORD
region_name = RegionOne
EOF
}

bootstrap() { OS_CLIENT_CONFIG_FILE="$STATE_DIR/clouds.yaml" "$PY" "$PYTHON_DIR/capo_bootstrap.py" "$@"; }
