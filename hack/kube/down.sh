#!/usr/bin/env bash
# Stops the single-node cluster hack/kube/up.sh started: its pods' containers, the kubelet,
# kube-proxy (and its iptables rules), containerd and the control plane; removes the pod bridge.
# Keeps $CAPO_KUBE_DIR's certificates; CAPO_KUBE_WIPE=1 removes the cluster's state (etcd, the
# kubelet's and containerd's directories) too, for a fresh cluster next time.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/hack/kube/lib.sh"
dir="$KUBE_DIR"
rm -f "$dir/ready"
# The kubeconfigs keep naming the node's address: its ranges stay on this machine (hack/lib.sh).
rig_guard

stop() {
  local name=$1 p
  p=$(cat "$dir/pids/$name" 2>/dev/null) || return 0
  if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
    kill "$p" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$p" 2>/dev/null
  fi
  rm -f "$dir/pids/$name"
}

# The kubelet first, so that it restarts nothing; then every pod's containers and sandboxes.
stop kubelet
if [ -S "$KUBE_CONTAINERD_SOCK" ] && command -v ctr >/dev/null; then
  for t in $(kube_ctr tasks ls -q 2>/dev/null); do kube_ctr tasks kill -s SIGKILL "$t" >/dev/null 2>&1; done
  sleep 0.5
  for t in $(kube_ctr tasks ls -q 2>/dev/null); do kube_ctr tasks delete -f "$t" >/dev/null 2>&1; done
  for c in $(kube_ctr containers ls -q 2>/dev/null); do kube_ctr containers delete "$c" >/dev/null 2>&1; done
fi
stop kube-proxy
bin="${CAPO_CACHE_DIR}/kubernetes/v${KUBERNETES_VERSION}"
[ ! -x "$bin/kube-proxy" ] || "$bin/kube-proxy" --cleanup >/dev/null 2>&1 || true
for c in containerd kube-scheduler kube-controller-manager kube-apiserver etcd; do stop "$c"; done
# The pods' network namespaces and mounts the runtime leaves behind when killed.
for m in $(awk -v d="$dir/" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r); do umount -l "$m" 2>/dev/null; done
ip link del "$KUBE_BRIDGE" 2>/dev/null
# The bridge plugin's masquerade rules for the pod network.
nat=$(iptables-save -t nat 2>/dev/null)
[[ "$nat" != *CNI-* ]] || {
  iptables-save -t nat 2>/dev/null | grep -E '^-A POSTROUTING .*CNI-' | sed 's/^-A/-D/' | while read -r rule; do eval iptables -t nat "$rule" 2>/dev/null; done
  iptables-save -t nat 2>/dev/null | grep -oE '^:CNI-[^ ]+' | tr -d : | while read -r chain; do iptables -t nat -F "$chain" 2>/dev/null; iptables -t nat -X "$chain" 2>/dev/null; done
}
rm -rf /var/lib/cni/networks/capo-pods
if [ "${CAPO_KUBE_WIPE:-}" = 1 ]; then
  rm -rf "$dir/etcd" "$dir/kubelet" "$dir/containerd" "$dir/logs"
fi
log "stopped"
