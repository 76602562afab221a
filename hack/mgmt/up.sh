#!/usr/bin/env bash
# Starts a Cluster API management cluster on this machine, the way a user makes one: the
# single-node Kubernetes of hack/kube, then `clusterctl init` with a clusterctl configuration that
# points at local files (nothing here reaches a release download): Cluster API's core provider and
# its kubeadm bootstrap and control plane providers, as `clusterctl init` installs by default
# (hack/cluster-api.sh release), this provider's release (make release: out/) and cert-manager's
# release manifest (hack/cert-manager.sh), which clusterctl installs first. Their images are built
# here and imported into the node's containerd. Idempotent: when it is up, prints where and returns.
#
#   hack/mgmt/up.sh      then: export KUBECONFIG=$CAPO_MGMT_DIR/kubeconfig
#
# Under $CAPO_MGMT_DIR (default /var/tmp/capo-management-plane): kubeconfig, repository/ (the
# clusterctl configuration and the local repository), logs/ (the peers' output), ready. The node
# itself lives under $CAPO_KUBE_DIR (hack/kube; one per machine). hack/mgmt/down.sh stops it all.
# The components' clusterctl variables come from the environment (docs/getting-started.md);
# CAPO_INSECURE_DIAGNOSTICS defaults to true here, so that /metrics is plain HTTP on the pod's
# address, and CAPO_DNS_SUFFIXES to example.com, the local DNS server's zone.
#
# Peers that are not under test run beside the cluster as processes of this machine, restarted
# when they exit: when the DNS server of hack/dns/up.sh runs ($CAPO_DNS_DIR/env exists),
# ExternalDNS (hack/external-dns.sh), which publishes the provider's DNSEndpoints into it, as an
# owner of its own in the zone's TXT registry (capo-<the base name of $CAPO_MGMT_DIR>; with
# CAPO_MGMT_DNS_DOMAIN only the names under that domain); with CAPO_MGMT_ORC set to the OpenStack
# Resource Controller's directory (hack/orc.sh), ORC. With CAPO_MGMT_UPSTREAM set to upstream
# CAPO's directory (hack/upstream-capo.sh), its release is laid out in the local repository too,
# for the end-to-end takeover spec; with CAPO_MGMT_PREVIOUS (hack/previous-release.sh), this
# provider's previous release, for the upgrade spec.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/hack/kube/lib.sh"
dir="${CAPO_MGMT_DIR:-/var/tmp/capo-management-plane}"
dns_env="${CAPO_DNS_DIR:-/var/tmp/capo-dns}/env"
mkdir -p "$dir/logs" "$dir/pids"
kubeconfig="$dir/kubeconfig"

if [ -e "$dir/ready" ] && kube_running; then
  log "already running; KUBECONFIG=$kubeconfig"
  exit 0
fi
rm -f "$dir/ready"

start=$SECONDS
version="${RELEASE_VERSION:-v0.3.0}"
capi_release="$("$root/hack/cluster-api.sh" release)"
clusterctl="$("$root/hack/cluster-api.sh")/clusterctl"
cert_manager="$("$root/hack/cert-manager.sh")"
(cd "$root" && make --no-print-directory release RELEASE_VERSION="$version" IMAGE_ARCHES="$(go env GOARCH)" >/dev/null)
log "releases and images ready ($((SECONDS - start))s)"

"$root/hack/kube/up.sh"
cp "$KUBE_DIR/kubeconfig" "$kubeconfig"
export KUBECONFIG="$kubeconfig"
kubectl() { "${CAPO_CACHE_DIR}/kubernetes/v${KUBERNETES_VERSION}/kubectl" "$@"; }

# The images the components name, imported as a registry would have served them.
t=$SECONDS
for i in "$cert_manager"/images/*.tar "$capi_release"/image.tar "$capi_release"/bootstrap-image.tar "$capi_release"/control-plane-image.tar; do
  kube_import "$i"
done
manager_image="$(sed -n 's/^ *image: \(.*cluster-api-provider-openstack:.*\)$/\1/p' "$root/out/infrastructure-components.yaml" | head -1)"
kube_import "$root/out/image/manager-$version-linux-$(go env GOARCH).tar" "$manager_image"
log "images imported into the node's containerd ($((SECONDS - t))s)"

# The local repository: <repository>/<provider label>/<version>/<files>, as clusterctl reads it.
repo="$dir/repository"
rm -rf "$repo" && mkdir -p "$repo"
capi_dir="$repo/cluster-api/${CLUSTER_API_VERSION}"
kb_dir="$repo/bootstrap-kubeadm/${CLUSTER_API_VERSION}"
kcp_dir="$repo/control-plane-kubeadm/${CLUSTER_API_VERSION}"
ours_dir="$repo/infrastructure-openstack/$version"
cm_dir="$repo/cert-manager/${CERT_MANAGER_VERSION}"
mkdir -p "$capi_dir" "$kb_dir" "$kcp_dir" "$ours_dir" "$cm_dir"
cp "$capi_release/core-components.yaml" "$capi_release/metadata.yaml" "$capi_dir/"
cp "$capi_release/bootstrap-components.yaml" "$capi_release/metadata.yaml" "$kb_dir/"
cp "$capi_release/control-plane-components.yaml" "$capi_release/metadata.yaml" "$kcp_dir/"
cp "$root"/out/*.yaml "$ours_dir/"
cp "$cert_manager/cert-manager.yaml" "$cm_dir/"
cat >"$repo/clusterctl.yaml" <<EOF
providers:
- name: cluster-api
  type: CoreProvider
  url: file://$capi_dir/core-components.yaml
- name: kubeadm
  type: BootstrapProvider
  url: file://$kb_dir/bootstrap-components.yaml
- name: kubeadm
  type: ControlPlaneProvider
  url: file://$kcp_dir/control-plane-components.yaml
- name: openstack
  type: InfrastructureProvider
  url: file://$ours_dir/infrastructure-components.yaml
cert-manager:
  url: file://$cm_dir/cert-manager.yaml
  version: ${CERT_MANAGER_VERSION}
# The provider's clusterctl variables, here so that every clusterctl command with this
# configuration (init, upgrade, generate yaml) uses them.
CAPO_INSECURE_DIAGNOSTICS: "${CAPO_INSECURE_DIAGNOSTICS:-true}"
CAPO_DNS_SUFFIXES: "${CAPO_DNS_SUFFIXES:-example.com}"
EOF
if [ -n "${CAPO_MGMT_PREVIOUS:-}" ]; then
  # This provider's previous release, for the upgrade spec: `clusterctl init --infrastructure
  # openstack:<previous>`, then `clusterctl upgrade apply` to this one.
  prev_dir="$repo/infrastructure-openstack/${PREVIOUS_RELEASE}"
  mkdir -p "$prev_dir"
  cp "$CAPO_MGMT_PREVIOUS"/*.yaml "$prev_dir/"
  prev_image="$(sed -n 's/^ *image: \(.*cluster-api-provider-openstack:.*\)$/\1/p' "$prev_dir/infrastructure-components.yaml" | head -1)"
  kube_import "$CAPO_MGMT_PREVIOUS/image.tar" "$prev_image"
fi
if [ -n "${CAPO_MGMT_UPSTREAM:-}" ]; then
  # Upstream CAPO's release, for the takeover spec: `clusterctl init --infrastructure
  # openstack:<upstream's version>` with a configuration of its own installs it as upstream's
  # users do. Its own: in this provider's repository, upstream's v0.14.7 would be the latest
  # `openstack` release, whose metadata clusterctl upgrade reads (and knows none of ours).
  up_repo="$dir/repository-upstream"
  up_dir="$up_repo/infrastructure-openstack/${UPSTREAM_CAPO_VERSION}"
  rm -rf "$up_repo" && mkdir -p "$up_dir"
  cp "$CAPO_MGMT_UPSTREAM/infrastructure-components.yaml" "$CAPO_MGMT_UPSTREAM/metadata.yaml" "$up_dir/"
  sed "s|file://$ours_dir/infrastructure-components.yaml|file://$up_dir/infrastructure-components.yaml|" \
    "$repo/clusterctl.yaml" >"$up_repo/clusterctl.yaml"
  kube_import "$CAPO_MGMT_UPSTREAM/image.tar"
fi

export CLUSTERCTL_DISABLE_VERSIONCHECK=true
if [ -z "$(kubectl get providers.clusterctl.cluster.x-k8s.io -A -o name 2>/dev/null)" ]; then
  t=$SECONDS
  "$clusterctl" init --config "$repo/clusterctl.yaml" --kubeconfig "$kubeconfig" \
    --core "cluster-api:${CLUSTER_API_VERSION}" --bootstrap "kubeadm:${CLUSTER_API_VERSION}" --control-plane "kubeadm:${CLUSTER_API_VERSION}" \
    --infrastructure "openstack:$version" --wait-providers --wait-provider-timeout 300 >"$dir/logs/clusterctl-init.log" 2>&1 ||
    { cat "$dir/logs/clusterctl-init.log" >&2; log "clusterctl init failed"; exit 1; }
  echo "clusterctl_init_seconds=$((SECONDS - t))" >"$dir/init"
  log "clusterctl init: cert-manager ${CERT_MANAGER_VERSION}, Cluster API ${CLUSTER_API_VERSION} (core, kubeadm bootstrap and control plane) and this provider $version ready in $((SECONDS - t))s"
fi
# A cluster whose state was kept from before the kubeadm providers were installed here gets them:
# `clusterctl init` on a cluster with a core provider installs only what it is asked for.
providers="$(kubectl get providers.clusterctl.cluster.x-k8s.io -A -o name)"
if ! grep -q '/bootstrap-kubeadm$' <<<"$providers"; then
  "$clusterctl" init --config "$repo/clusterctl.yaml" --kubeconfig "$kubeconfig" \
    --bootstrap "kubeadm:${CLUSTER_API_VERSION}" --control-plane "kubeadm:${CLUSTER_API_VERSION}" \
    --wait-providers --wait-provider-timeout 300 >"$dir/logs/clusterctl-init-kubeadm.log" 2>&1 ||
    { cat "$dir/logs/clusterctl-init-kubeadm.log" >&2; log "clusterctl init of the kubeadm providers failed"; exit 1; }
fi

# peer NAME COMMAND... runs COMMAND as a process of this machine, started again a second after it
# exits, its output in logs/NAME.log.
peer() {
  local name=$1; shift
  local p; p=$(cat "$dir/pids/$name" 2>/dev/null || true)
  [ -z "$p" ] || kill -- "-$p" 2>/dev/null || true
  setsid bash -c 'while true; do "$@"; echo "exited with status $?; starting again"; sleep 1; done' "$name" "$@" \
    >>"$dir/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$dir/pids/$name"
}
# What the end-to-end specs act with, as an operator would.
ready=("kube_dir=$KUBE_DIR" "containerd=$KUBE_CONTAINERD_SOCK" "clusterctl=$clusterctl"
  "kubectl=${CAPO_CACHE_DIR}/kubernetes/v${KUBERNETES_VERSION}/kubectl" "clusterctl_config=$repo/clusterctl.yaml"
  "components=$ours_dir/infrastructure-components.yaml")
if [ -s "$dns_env" ]; then
  declare -A dns=()
  while IFS='=' read -r k v; do [ -z "$k" ] || dns[$k]=$v; done <"$dns_env"
  edns="$("$root/hack/external-dns.sh")"
  kubectl apply --server-side -f "$edns/dnsendpoints.yaml" >/dev/null
  EXTERNAL_DNS_RFC2136_TSIG_SECRET="$(tr -d '[:space:]' <"${dns[secret_file]}")" peer external-dns "$edns/external-dns" \
    --kubeconfig "$kubeconfig" --source=crd --provider=rfc2136 \
    --rfc2136-host="${dns[server]}" --rfc2136-port="${dns[port]}" --rfc2136-zone="${dns[zone]}" \
    --rfc2136-tsig-keyname="${dns[keyname]}" --rfc2136-tsig-secret-alg="${dns[algorithm]}" --rfc2136-tsig-axfr \
    --domain-filter="${CAPO_MGMT_DNS_DOMAIN:-${dns[zone]}}" --managed-record-types=A --managed-record-types=AAAA \
    --registry=txt --txt-owner-id="capo-$(basename "$dir")" --txt-prefix=edns- --policy=sync \
    --events --interval=10s --min-event-sync-interval=1s --metrics-address=127.0.0.1:17979
  ready+=("dns_server=${dns[server]}:${dns[port]}")
fi
if [ -n "${CAPO_MGMT_ORC:-}" ]; then
  kubectl apply --server-side -f "$CAPO_MGMT_ORC/crds" >/dev/null
  peer orc "$CAPO_MGMT_ORC/manager" --kubeconfig "$kubeconfig" --metrics-bind-address=0 --health-probe-bind-address=127.0.0.1:18081
  ready+=("orc=$CAPO_MGMT_ORC")
fi
[ -z "${CAPO_MGMT_PREVIOUS:-}" ] || ready+=("previous_version=${PREVIOUS_RELEASE}")
[ -z "${CAPO_MGMT_UPSTREAM:-}" ] || ready+=("upstream=$CAPO_MGMT_UPSTREAM" "upstream_version=${UPSTREAM_CAPO_VERSION}" "clusterctl_config_upstream=$up_repo/clusterctl.yaml")
printf '%s\n' "${ready[@]}" >"$dir/ready"
log "up in $((SECONDS - start))s; export KUBECONFIG=$kubeconfig (peers' logs in $dir/logs; kubectl logs for the providers)"
