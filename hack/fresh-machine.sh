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

# What the scripts install, and everything apt installed with it: the packages of each apt run in
# apt's history whose command line is apt_ensure's (hack/lib.sh). Packages a fresh machine's own
# packages only recommend would outlive an autoremove.
from_history() {
  local f
  for f in /var/log/apt/history.log /var/log/apt/history.log.*; do
    [ -r "$f" ] || continue
    zcat -f "$f" | awk '/^Commandline: apt-get -o DPkg::Lock::Timeout=600 install/ {ours = 1; next}
         /^Start-Date:/ {ours = 0}
         ours && /^Install: / {sub(/^Install: /, ""); n = split($0, p, /\), /); for (i = 1; i <= n; i++) {split(p[i], w, ":"); print w[1]}}'
  done
}
installed() { local s; s=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) && [[ "$s" == *" installed" ]]; }
# to_purge prints what is installed of those, on one line.
to_purge() {
  { go run ./hack/installcheck -packages; from_history; } | sort -u |
    while read -r p; do if installed "$p"; then echo "$p"; fi; done | tr '\n' ' '
}
caches=("$CAPO_CACHE_DIR" "$(go env GOCACHE)" "$(go env GOMODCACHE)")
if [ "${1:-}" != --yes ]; then
  log "would stop the rig, purge: $(to_purge)"
  log "and delete /var/tmp/capo-*, ${caches[*]}, the rig's routes and its $RIG_GUARD_CHAIN chain; run with --yes"
  exit 2
fi

hack/demo.sh down || true
CAPO_MGMT_DIR=/var/tmp/capo-e2e-management-plane hack/mgmt/down.sh || true
hack/local-openstack/down.sh --purge || true
# After the rig's down scripts, which install iptables for its guard when it is missing.
packages=$(to_purge)
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
# sudo, which the OpenStack packages bring, refuses to go on a machine without a root password
# unless told.
out=$(mktemp)
# shellcheck disable=SC2086
{ [ -z "$packages" ] || SUDO_FORCE_REMOVE=yes DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq $packages
  DEBIAN_FRONTEND=noninteractive apt-get autoremove --purge -y -qq; } >"$out" 2>&1 || { tail -20 "$out" >&2; exit 1; }
rm -f "$out"
# And what the tools the scripts run keep in the cache directory.
rm -rf /var/tmp/capo-* /var/lib/cni/networks/capo-pods "$HOME"/.cache/{kubebuilder-envtest,python-entrypoints,golangci-lint,goimports}
go clean -modcache
rm -rf "${caches[@]}"
for r in "${RIG_RANGES[@]}"; do ip route del unreachable "$r" metric "$RIG_ROUTE_METRIC" 2>/dev/null || true; done
log "purged: $packages; the caches, the rig's state, routes, rules and address are gone"
