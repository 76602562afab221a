#!/usr/bin/env bash
# Faults that only an administrator of the local OpenStack can cause, for the end-to-end tests of
# how the provider lives through them. The end-to-end suite finds this script in
# CAPO_E2E_FAULT (hack/e2e.sh sets it when the tests run against the local OpenStack).
#
#   fault.sh lb-error ID    Octavia's database marks load balancer ID ERROR, as Octavia itself
#                           does when a change or an amphora failover fails
set -euo pipefail
source "$(dirname "$0")/lib.sh"
command -v mariadb >/dev/null || { log "the local OpenStack is not installed here: hack/local-openstack/up.sh"; exit 1; }

case "${1:-}" in
lb-error)
  id="${2:?usage: $0 lb-error LOAD_BALANCER_ID}"
  [[ "$id" =~ ^[0-9a-f-]{36}$ ]] || { log "not a load balancer ID: $id"; exit 2; }
  n=$(mariadb --defaults-file="$CONF_DIR/mysql/client.cnf" -N -e "
    UPDATE octavia.load_balancer SET provisioning_status = 'ERROR' WHERE id = '$id';
    SELECT ROW_COUNT();")
  [ "$n" = 1 ] || { log "no load balancer $id"; exit 1; }
  log "load balancer $id is ERROR"
  ;;
*)
  log "usage: $0 lb-error LOAD_BALANCER_ID"
  exit 2
  ;;
esac
