#!/usr/bin/env bash
# The local demo (`make demo`): a real OpenStack (hack/local-openstack), a single-node Kubernetes
# with cert-manager, Cluster API and this provider installed by clusterctl init (hack/mgmt), then examples/multi-az-cluster.yaml applied: a
# cluster with one API server load balancer per availability zone (az1, az2) and three control
# plane machines. Prints, per zone, the load balancer, its VIP, floating IP and members, and the
# answer of the DNS server (BIND, hack/dns) that ExternalDNS keeps at the healthy zones' addresses.
# Idempotent; everything stays up for you to look at.
#
#   hack/demo.sh          bring up and apply (first run on a fresh machine: about 25 minutes,
#                         mostly building Kubernetes, Cluster API, cert-manager and ExternalDNS
#                         from the module proxy)
#   hack/demo.sh down     delete the demo cluster, then stop the management plane and OpenStack
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/hack/lib.sh"
cd "$root"
openstack_dir="${CAPO_OPENSTACK_DIR:-/var/tmp/capo-local-openstack}"
mgmt_dir="${CAPO_MGMT_DIR:-/var/tmp/capo-management-plane}"
export KUBECONFIG="$mgmt_dir/kubeconfig"

case "${1:-up}" in
up)
  start=$SECONDS
  # The rig's guard counts from here on; make demo-down reads it (hack/rig-check.sh).
  rig_guard_reset
  hack/local-openstack/up.sh
  hack/dns/up.sh
  # The demo's plane manages only the demo's names, under an owner of its own in the zone, so
  # that the end-to-end suite's plane beside it never touches them (nor they its).
  CAPO_MGMT_DNS_DOMAIN=demo.capo.example.com hack/mgmt/up.sh
  log "environment ready in $((SECONDS - start))s; applying examples/multi-az-cluster.yaml"
  go run ./hack/demo --clouds-yaml "$openstack_dir/clouds.yaml" --mgmt-dir "$mgmt_dir" up
  cat <<EOF

The management cluster keeps running: export KUBECONFIG=$KUBECONFIG
(kubectl: ${CAPO_CACHE_DIR}/kubernetes/v${KUBERNETES_VERSION}/kubectl)
  kubectl get clusters,openstackclusters,machines,openstackmachines -n capo-demo
OpenStack: export OS_CLIENT_CONFIG_FILE=$openstack_dir/clouds.yaml OS_CLOUD=capo-e2e
  openstack loadbalancer list
Logs: kubectl -n capo-system logs deploy/capo-controller-manager, $mgmt_dir/logs (ExternalDNS),
  /var/tmp/capo-kube/logs (the node), $openstack_dir/log (OpenStack)
Tear down: make demo-down
EOF
  ;;
down)
  ran=0
  if [ -e "$mgmt_dir/ready" ] && [ -s "$openstack_dir/clouds.yaml" ]; then
    ran=1
    go run ./hack/demo --clouds-yaml "$openstack_dir/clouds.yaml" down
  fi
  hack/mgmt/down.sh
  hack/dns/down.sh
  hack/local-openstack/down.sh
  # Stopped, the rig keeps its ranges on this machine: its files' addresses fail here at once,
  # and nothing for them left it while the demo ran.
  [ "$ran" = 0 ] || hack/rig-check.sh
  ;;
*)
  log "usage: $0 [up|down]"
  exit 2
  ;;
esac
