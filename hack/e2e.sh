#!/usr/bin/env bash
# The end-to-end run (`make test-e2e`): the suite under test/e2e and the fake-vs-real contract
# suite, against a real OpenStack and a Cluster API management cluster: a single-node Kubernetes
# where clusterctl init installed cert-manager, Cluster API and this provider (hack/mgmt).
#
# Without CAPO_E2E_CLOUDS_YAML it uses the local OpenStack (hack/local-openstack): started here
# and stopped afterwards, or left running if it already ran (the demo's). With it (and
# CAPO_E2E_CLOUD, CAPO_E2E_ZONES, ... see test/e2e) it uses that cloud instead, for example a
# devstack. The suite's management plane is its own, started fresh from this tree under
# $CAPO_E2E_MGMT_DIR and stopped afterwards, so a running demo keeps its own. On failure, the
# managers' logs, the OpenStack services' logs and the failed specs' objects and project
# inventory are copied to $CAPO_E2E_ARTIFACTS (default _artifacts/e2e in the work tree).
#
# CAPO_E2E_KEEP=1 leaves everything running afterwards. CAPO_E2E_FOCUS runs only the specs whose
# text matches that regular expression (Ginkgo's focus), for a quicker look at one scenario.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/hack/lib.sh"
cd "$root"
openstack_dir="${CAPO_OPENSTACK_DIR:-/var/tmp/capo-local-openstack}"
mgmt_dir="${CAPO_E2E_MGMT_DIR:-/var/tmp/capo-e2e-management-plane}"
export CAPO_MGMT_DIR="$mgmt_dir"
artifacts="${CAPO_E2E_ARTIFACTS:-$root/_artifacts/e2e}"
export CAPO_E2E_ARTIFACTS="$artifacts/specs"

PHASE_PREFIX="e2e: "

# The peers built from the module proxy (the Kubernetes binaries of the node, cert-manager and
# Cluster API's release for clusterctl init, this provider's previous release for the upgrade
# spec, upstream CAPO's release for the takeover spec,
# ExternalDNS, ORC for the machines whose image is an ORC Image), once per version into the
# cache: in the background while the OpenStack and the DNS server start, which wait on apt and on
# services more than on the CPU.
peers_log="$(mktemp)"
peers_start=$SECONDS
(set -e; t=$SECONDS
 for p in kube/binaries.sh cert-manager.sh "cluster-api.sh release" previous-release.sh upstream-capo.sh external-dns.sh orc.sh; do
   hack/$p >/dev/null; echo "  $p: $((SECONDS - t))s"; t=$SECONDS
 done) >"$peers_log" 2>&1 &
peers_pid=$!

# The rig's guard counts from here on (hack/rig-check.sh reads it at the end).
rig_guard_reset
# 1: the local OpenStack is used; 2: and this run started it, so it stops it.
local_openstack=0
if [ -z "${CAPO_E2E_CLOUDS_YAML:-}" ]; then
  local_openstack=1
  hack/local-openstack/status.sh >/dev/null || local_openstack=2
  phase "local OpenStack" hack/local-openstack/up.sh
  export CAPO_E2E_CLOUDS_YAML="$openstack_dir/clouds.yaml" CAPO_E2E_CLOUD=capo-e2e
  export CAPO_E2E_FAULT="$root/hack/local-openstack/fault.sh"
  # Every subnet a spec makes must lie in the rig's ranges, which never leave this machine.
  export CAPO_E2E_RIG_RANGES="${RIG_RANGES[*]}"
fi
# The DNS server ExternalDNS publishes into: started here (the zone starts empty), and stopped
# afterwards unless it ran before (the demo's).
dns_dir="${CAPO_DNS_DIR:-/var/tmp/capo-dns}"
dns_started=1
if [ -s "$dns_dir/env" ] && kill -0 "$(cat "$dns_dir/named.pid" 2>/dev/null || echo 0)" 2>/dev/null; then
  dns_started=0
fi
phase "DNS server" hack/dns/up.sh
wait_peers() {
  wait "$peers_pid" || { cat "$peers_log" >&2; return 1; }
  cat "$peers_log"
  echo "Kubernetes ${KUBERNETES_VERSION}, cert-manager ${CERT_MANAGER_VERSION}, Cluster API ${CLUSTER_API_VERSION}, upstream CAPO ${UPSTREAM_CAPO_VERSION}, ExternalDNS ${EXTERNAL_DNS_VERSION} and ORC ${ORC_VERSION} built or cached, $((SECONDS - peers_start))s after they started"
}
phase "peers (wait)" wait_peers
CAPO_MGMT_UPSTREAM="$(hack/upstream-capo.sh)"
CAPO_MGMT_ORC="$(hack/orc.sh)"
CAPO_MGMT_PREVIOUS="$(hack/previous-release.sh)"
export CAPO_MGMT_UPSTREAM CAPO_MGMT_ORC CAPO_MGMT_PREVIOUS
# The suite's plane manages only its clusters' names (*.e2e.example.com), under an owner of its
# own in the zone, beside a demo's plane; a spec runs a third ExternalDNS with these.
CAPO_E2E_EXTERNAL_DNS="$(hack/external-dns.sh)"
export CAPO_E2E_EXTERNAL_DNS CAPO_E2E_DNS_ENV="$dns_dir/env" CAPO_MGMT_DNS_DOMAIN=e2e.example.com
hack/mgmt/down.sh
phase "management plane" hack/mgmt/up.sh
export KUBECONFIG="$mgmt_dir/kubeconfig"

# After the teardown, the rig's check (hack/rig-check.sh): nothing for its ranges left this machine,
# and the files of what was stopped name addresses that fail here at once; its failure fails the
# run.
teardown() {
  local rc=$?
  [ "${CAPO_E2E_KEEP:-}" = 1 ] && { log "CAPO_E2E_KEEP=1: leaving everything running"; return; }
  hack/mgmt/down.sh || true
  [ "$dns_started" = 0 ] || hack/dns/down.sh || true
  [ "$local_openstack" != 2 ] || hack/local-openstack/down.sh >/dev/null || true
  phase "the rig's traffic stayed on this machine" hack/rig-check.sh || rc=1
  exit "$rc"
}
trap teardown EXIT

rc=0
focus=()
[ -z "${CAPO_E2E_FOCUS:-}" ] || focus=(-ginkgo.focus "$CAPO_E2E_FOCUS")
phase "end-to-end suite" go test -tags e2e -count=1 -v -timeout 60m ./test/e2e/ -ginkgo.v -ginkgo.no-color "${focus[@]}" || rc=$?
if [ "$rc" -eq 0 ]; then
  CAPO_CONTRACT_CLOUDS_YAML="$CAPO_E2E_CLOUDS_YAML" CAPO_CONTRACT_CLOUD="${CAPO_E2E_CLOUD:-capo-e2e}" \
    phase "contract suite against the real cloud" go test -tags contract -count=1 -timeout 20m ./test/contract/ || rc=$?
fi
if [ "$rc" -ne 0 ]; then
  mkdir -p "$artifacts"
  cp -r "$mgmt_dir/logs" "$artifacts/management-plane" 2>/dev/null || true
  cp "$dns_dir/named.log" "$artifacts/named.log" 2>/dev/null || true
  [ "$local_openstack" = 0 ] || cp -r "$openstack_dir/log" "$artifacts/openstack" 2>/dev/null || true
  log "failed; logs and the failed specs' objects are in $artifacts"
fi
exit "$rc"
