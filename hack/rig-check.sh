#!/usr/bin/env bash
# Checks that the rig keeps its traffic on this machine (hack/lib.sh: RIG_RANGES); fails, naming
# what is wrong, when it does not. hack/e2e.sh runs it after the suite and after its teardown,
# `make demo-down` after stopping everything.
#
#   hack/rig-check.sh            no packet for the rig's ranges was dropped on its way out of
#                                another interface (the guard's counters are 0); for each part of
#                                the rig that is stopped (the local OpenStack, the single-node
#                                Kubernetes), every address:port its files name (clouds.yaml,
#                                kubeconfigs, the services' configuration) fails here at once:
#                                connection refused or no route, never a time-out or an answer
#   hack/rig-check.sh subnets    also: every subnet of the running local OpenStack lies inside
#                                the rig's ranges (a test that makes one elsewhere fails the run)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/hack/local-openstack/lib.sh"
source "$root/hack/kube/lib.sh"
rc=0
fail() { log "FAIL: $*"; rc=1; }

rig_guard
leaks=$(rig_leaks)
[ "$leaks" = 0 ] || fail "$leaks packet(s) for the rig's ranges (${RIG_RANGES[*]}) were headed out of an interface other than ${RIG_INTERFACES[*]} (dropped by the $RIG_GUARD_CHAIN chain)"

# in_rig ADDRESS: whether ADDRESS is inside one of RIG_RANGES.
in_rig() {
  python3 -c 'import ipaddress, sys
a = ipaddress.ip_network(sys.argv[1], strict=False)
sys.exit(0 if any(a.subnet_of(ipaddress.ip_network(r)) for r in sys.argv[2:]) else 1)' "$1" "${RIG_RANGES[@]}"
}

# refused_here URL: the connection fails at once on this machine (curl's exit status 7: refused, or
# no route), not after a time-out and not with an answer from somewhere.
refused_here() {
  local out status=0
  out=$(curl -sS -o /dev/null --connect-timeout 5 -m 8 "$1" 2>&1) || status=$?
  [ "$status" -eq 7 ] || fail "$1 did not fail at once on this machine (curl exit status $status: ${out:-an answer})"
}

# The address:port pairs inside the rig's ranges that the files under DIR... name.
urls_in() {
  local f
  for f in "$@"; do [ -e "$f" ] && grep -rhoE '(https?://)?\b[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+:[0-9]+' "$f" || true; done |
    sed -E 's#^https?://##' | sort -u
}

openstack_up=0
"$root/hack/local-openstack/status.sh" >/dev/null && openstack_up=1
kube_up=0
kube_running && kube_up=1

checked=0
for hostport in $(urls_in "$STATE_DIR/clouds.yaml" "$CONF_DIR" "$KUBE_DIR/kubeconfig" "$KUBE_DIR/etc" /var/tmp/capo-*management-plane/kubeconfig); do
  host=${hostport%:*}
  in_rig "$host" || continue
  case "$host" in
  "$ADDRESS") [ "$openstack_up" = 0 ] || continue ;;
  *) [ "$kube_up" = 0 ] || continue ;;
  esac
  # The scheme does not matter for a connection that must not open.
  refused_here "http://$hostport/"
  checked=$((checked + 1))
done
log "$checked address(es) of stopped parts checked; packets headed off the machine: $leaks"

if [ "${1:-}" = subnets ]; then
  [ "$openstack_up" = 1 ] && command -v openstack >/dev/null || { fail "subnets: the local OpenStack is not running"; exit 1; }
  cidrs=$(OS_CLIENT_CONFIG_FILE="$STATE_DIR/clouds.yaml" openstack --os-cloud capo-admin subnet list -f value -c Subnet)
  n=0
  for c in $cidrs; do
    n=$((n + 1))
    in_rig "$c" || fail "subnet $c of the local OpenStack is outside the rig's ranges (hack/lib.sh: RIG_RANGES)"
  done
  log "$n subnet(s) of the local OpenStack inside the rig's ranges"
fi
exit "$rc"
