#!/usr/bin/env bash
# Makes this machine as new as a fresh one for the scripts, to time their cold path (README's cold
# times are measured after it): stops the demo and the end-to-end rig, purges the Debian packages
# the scripts install that a fresh machine lacks (`go run ./hack/installcheck -packages`) and what
# they pulled in, deletes the rig's state under /var/tmp, the build caches (the project's, Go's
# build cache and module cache) and the rig's routes and guard chain. Asks nothing with --yes;
# without it, says what it would do and stops.
#
#   hack/fresh-machine.sh --yes
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/hack/local-openstack/lib.sh"
cd "$root"
[ "$(id -u)" -eq 0 ] || { log "run as root"; exit 1; }

packages=$(go run ./hack/installcheck -packages | tr '\n' ' ')
caches=("$CAPO_CACHE_DIR" "$(go env GOCACHE)" "$(go env GOMODCACHE)")
if [ "${1:-}" != --yes ]; then
  log "would stop the rig, purge: $packages"
  log "and delete /var/tmp/capo-*, ${caches[*]}, the rig's routes and its $RIG_GUARD_CHAIN chain; run with --yes"
  exit 2
fi

hack/demo.sh down || true
CAPO_MGMT_DIR=/var/tmp/capo-e2e-management-plane hack/mgmt/down.sh || true
hack/local-openstack/down.sh --purge || true
# Daemons the packages' maintainer scripts may have left running.
pkill -x epmd 2>/dev/null || true
# Rules stay in the kernel when their package goes: the guard, and the local OpenStack's rule
# and address (hack/local-openstack/up.sh: listen_address).
if command -v iptables >/dev/null; then
  for c in OUTPUT FORWARD; do iptables -D "$c" -j "$RIG_GUARD_CHAIN" 2>/dev/null || true; done
  iptables -F "$RIG_GUARD_CHAIN" 2>/dev/null && iptables -X "$RIG_GUARD_CHAIN" 2>/dev/null || true
  while iptables -D INPUT -d "$ADDRESS/32" ! -i lo ! -s "$POD_CIDR" -j DROP 2>/dev/null; do :; done
fi
ip addr del "$ADDRESS/32" dev lo 2>/dev/null || true
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq $packages >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get autoremove --purge -y -qq >/dev/null
rm -rf /var/tmp/capo-* /var/lib/cni/networks/capo-pods
go clean -modcache
rm -rf "${caches[@]}"
for r in "${RIG_RANGES[@]}"; do ip route del unreachable "$r" metric "$RIG_ROUTE_METRIC" 2>/dev/null || true; done
log "purged: $packages; the caches, the rig's state, routes, rules and address are gone"
