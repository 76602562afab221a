#!/usr/bin/env bash
# Stops what up.sh started, newest first.
#
#   hack/local-openstack/down.sh           stop the daemons, keep the data (up.sh restarts them)
#   hack/local-openstack/down.sh --purge   also delete configuration, databases and logs
#
# The Debian packages stay installed either way.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
# The clouds.yaml and catalog keep naming $ADDRESS: its range stays on this machine (hack/lib.sh).
rig_guard

# stop NAME SECONDS: TERM to the daemon's whole process group (gunicorn workers, eventlet
# children), KILL after SECONDS.
stop() {
  local name=$1 grace=$2 pid group
  pid=$(pid_of "$name") || return 0
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    group=$(ps -o pgid= -p "$pid" | tr -d ' ')
    kill -TERM -- "-$group" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
    local deadline=$((SECONDS + grace))
    while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
    kill -KILL -- "-$group" 2>/dev/null || true
    log "stopped $name"
  fi
  rm -f "$PID_DIR/$name.pid"
}

# The OpenStack services all at once (each waits for its own exit), then the broker and the
# database they used.
for name in "${SERVICES[@]}"; do
  case "$name" in
  mariadb | rabbitmq) ;;
  *) stop "$name" 20 & ;;
  esac
done
wait
stop rabbitmq 60
stop epmd 10
stop mariadb 60
# Its address goes too: the rig's unreachable route then answers for it ("no route to host"), and
# nothing else on this machine can answer in its place.
ip addr del "$ADDRESS/32" dev lo 2>/dev/null || true

if [ "${1:-}" = --purge ]; then
  rm -rf "$STATE_DIR"
  log "purged $STATE_DIR"
fi
