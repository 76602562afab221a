#!/usr/bin/env bash
# Checks that the rig keeps its traffic on this machine (hack/lib.sh: RIG_RANGES); fails, naming
# what is wrong, when it does not. hack/e2e.sh runs it after its teardown, `make demo-down` after
# stopping everything:
#
#   - the guard was in place, and no packet for the rig's ranges was dropped on its way out of
#     another interface since the run began (hack/lib.sh: rig_guard_reset, rig_leaks);
#   - for each part of the rig that is stopped (no process of it runs: the local OpenStack, the
#     single-node Kubernetes), every address:port its files name (clouds.yaml, the services'
#     configuration, the kubeconfigs) fails here at once: connection refused or no route, never a
#     time-out or an answer from somewhere.
#
# The end-to-end suite checks that every subnet a spec makes lies in the ranges
# (CAPO_E2E_RIG_RANGES).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/hack/local-openstack/lib.sh"
source "$root/hack/kube/lib.sh"
rc=0
fail() { log "FAIL: $*"; rc=1; }

# Read before anything puts the guard back: a guard missing now guarded nothing.
if ! leaks=$(rig_leaks); then
  fail "the guard ($RIG_GUARD_CHAIN, first in OUTPUT and FORWARD) was not in place"
  leaks=unknown
elif [ "$leaks" != 0 ]; then
  fail "$leaks packet(s) for the rig's ranges (${RIG_RANGES[*]}) were headed out of an interface other than ${RIG_INTERFACES[*]} (dropped by the $RIG_GUARD_CHAIN chain)"
fi
rig_guard

# in_rig ADDRESS: whether ADDRESS is inside one of RIG_RANGES.
in_rig() {
  python3 -c 'import ipaddress, sys
a = ipaddress.ip_network(sys.argv[1], strict=False)
sys.exit(0 if any(a.subnet_of(ipaddress.ip_network(r)) for r in sys.argv[2:]) else 1)' "$1" "${RIG_RANGES[@]}"
}

# refused_here URL: the connection fails at once on this machine (curl's exit status 7: refused, or
# no route), not after a time-out and not with an answer from somewhere; never through a proxy.
refused_here() {
  local out status=0
  out=$(curl -sS -o /dev/null --noproxy '*' --connect-timeout 5 -m 8 "$1" 2>&1) || status=$?
  [ "$status" -eq 7 ] || fail "$1 did not fail at once on this machine (curl exit status $status: ${out:-an answer})"
}

# The address:port pairs that the files and directories given name.
urls_in() {
  local f
  for f in "$@"; do [ -e "$f" ] && grep -rhoE '(https?://)?\b[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+:[0-9]+' "$f" || true; done |
    sed -E 's#^https?://##' | sort -u
}

# A part is stopped when none of its processes runs; one that runs in part is not probed (its
# live daemons answer) but said.
openstack_state=stopped
for name in "${SERVICES[@]}"; do
  if running "$name"; then openstack_state=running; break; fi
done
kube_state=stopped
for c in "${KUBE_COMPONENTS[@]}"; do
  if kube_component_runs "$c"; then kube_state=running; break; fi
done

checked=0
for hostport in $(urls_in "$STATE_DIR/clouds.yaml" "$CONF_DIR" "$KUBE_DIR/kubeconfig" "$KUBE_DIR/etc" /var/tmp/capo-*management-plane/kubeconfig); do
  host=${hostport%:*}
  in_rig "$host" || continue
  case "$host" in
  "$ADDRESS") [ "$openstack_state" = stopped ] || continue ;;
  *) [ "$kube_state" = stopped ] || continue ;;
  esac
  # The scheme does not matter for a connection that must not open.
  refused_here "http://$hostport/"
  checked=$((checked + 1))
done
log "packets headed off the machine: $leaks; local OpenStack $openstack_state, single-node Kubernetes $kube_state; $checked address(es) of stopped parts checked"
exit "$rc"
