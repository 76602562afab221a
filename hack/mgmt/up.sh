#!/usr/bin/env bash
# Starts a Cluster API management plane on this machine: etcd + kube-apiserver (built from the
# module proxy, as for envtest), the Cluster API core manager (built from the module proxy) as a
# process, and this provider as clusterctl installs it: the release's components file
# (make release) applied, and the manager run from the release's image (make image) with runc, as
# its Deployment's pod would run. Both serve their webhooks on 127.0.0.1. Idempotent: when it is
# up, prints where and returns.
#
#   hack/mgmt/up.sh      then: export KUBECONFIG=$CAPO_MGMT_DIR/kubeconfig
#
# Everything goes under $CAPO_MGMT_DIR (default /var/tmp/capo-management-plane): kubeconfig,
# logs/ (one file per manager, mgmtplane.log for the supervisor), certs/. hack/mgmt/down.sh stops
# it. Extra flags for the provider's manager: CAPO_MANAGER_ARGS. The components' clusterctl
# variables come from the environment (docs/getting-started.md); CAPO_INSECURE_DIAGNOSTICS
# defaults to true here, so that /metrics is plain HTTP on 127.0.0.1, and CAPO_DNS_SUFFIXES to
# example.com, the local DNS server's zone, so that clusters may publish their records there.
#
# When the DNS server of hack/dns/up.sh runs ($CAPO_DNS_DIR/env exists), the plane also runs
# ExternalDNS (hack/external-dns.sh), which publishes the provider's DNSEndpoints into it, as an
# owner of its own in the zone's TXT registry (capo-<the base name of $CAPO_MGMT_DIR>), so that
# the demo's plane and the end-to-end suite's never delete each other's records; with
# CAPO_MGMT_DNS_DOMAIN it manages only the names under that domain.
#
# The plane restarts a manager that exits unasked, as a kubelet would, and serves a control
# endpoint on 127.0.0.1 (its ready file's control= line) that kills, stops and starts managers
# (the end-to-end crash and leader election specs use it). With CAPO_MGMT_UPSTREAM set to upstream
# CAPO's directory (hack/upstream-capo.sh), the endpoint also runs upstream's manager in place of
# this provider's and back: the end-to-end takeover spec uses it. With CAPO_MGMT_ORC set to the
# OpenStack Resource Controller's directory (hack/orc.sh), the plane runs ORC too.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/hack/lib.sh"
dir="${CAPO_MGMT_DIR:-/var/tmp/capo-management-plane}"
dns_env="${CAPO_DNS_DIR:-/var/tmp/capo-dns}/env"
mkdir -p "$dir/logs"

pid=$(cat "$dir/mgmtplane.pid" 2>/dev/null || true)
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ -e "$dir/ready" ]; then
  log "already running (pid $pid); KUBECONFIG=$dir/kubeconfig"
  exit 0
fi

start=$SECONDS
assets="$("$root/hack/envtest-assets.sh")"
capi_bin="$("$root/hack/cluster-api.sh")"
capi_source="$("$root/hack/cluster-api.sh" source)"
version="${RELEASE_VERSION:-v0.2.0}"
(cd "$root" && make --no-print-directory release RELEASE_VERSION="$version" IMAGE_ARCHES="$(go env GOARCH)" >/dev/null)
image="$root/out/image/manager-$version-linux-$(go env GOARCH).tar"
(cd "$root" && go build -o bin/mgmtplane ./hack/mgmtplane)
dns_args=()
if [ -s "$dns_env" ]; then
  dns_args=(--external-dns "$("$root/hack/external-dns.sh")" --dns-env "$dns_env")
  [ -z "${CAPO_MGMT_DNS_DOMAIN:-}" ] || dns_args+=(--dns-domain "$CAPO_MGMT_DNS_DOMAIN")
fi
upstream_args=()
if [ -n "${CAPO_MGMT_UPSTREAM:-}" ]; then
  upstream_args=(--upstream "$CAPO_MGMT_UPSTREAM")
fi
if [ -n "${CAPO_MGMT_ORC:-}" ]; then
  upstream_args+=(--orc "$CAPO_MGMT_ORC")
fi
log "release, image and plane ready ($((SECONDS - start))s)"

rm -f "$dir/ready"
KUBEBUILDER_ASSETS="$assets" CAPO_INSECURE_DIAGNOSTICS="${CAPO_INSECURE_DIAGNOSTICS:-true}" CAPO_DNS_SUFFIXES="${CAPO_DNS_SUFFIXES:-example.com}" \
  setsid nohup "$root/bin/mgmtplane" --dir "$dir" \
  --capi-source "$capi_source" --capi-manager "$capi_bin/cluster-api-manager" \
  --components "$root/out/infrastructure-components.yaml" --provider-image "$image" \
  --provider-args "${CAPO_MANAGER_ARGS:-}" "${dns_args[@]}" "${upstream_args[@]}" \
  >"$dir/logs/mgmtplane.log" 2>&1 </dev/null &
echo $! >"$dir/mgmtplane.pid"

deadline=$((SECONDS + 300))
until [ -e "$dir/ready" ]; do
  if ! kill -0 "$(cat "$dir/mgmtplane.pid")" 2>/dev/null; then
    tail -20 "$dir/logs/mgmtplane.log" >&2
    log "the management plane exited; logs in $dir/logs"
    exit 1
  fi
  [ "$SECONDS" -lt "$deadline" ] || { log "not ready within 300s; logs in $dir/logs"; exit 1; }
  sleep 0.3
done
log "up in $((SECONDS - start))s; export KUBECONFIG=$dir/kubeconfig (logs in $dir/logs)"
