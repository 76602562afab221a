#!/usr/bin/env bash
# Stops the management cluster hack/mgmt/up.sh started: the peers (ExternalDNS, ORC), then the
# single-node Kubernetes (hack/kube/down.sh), whose state goes with it (CAPO_MGMT_KEEP_STATE=1
# keeps etcd, so that a later up.sh finds the providers and objects as they were). Logs stay in
# $CAPO_MGMT_DIR/logs and $CAPO_KUBE_DIR/logs.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/hack/lib.sh"
dir="${CAPO_MGMT_DIR:-/var/tmp/capo-management-plane}"

rm -f "$dir/ready"
for f in "$dir"/pids/*; do
  [ -e "$f" ] || continue
  p=$(cat "$f")
  [ -z "$p" ] || kill -- "-$p" 2>/dev/null || true
  rm -f "$f"
done
if [ "${CAPO_MGMT_KEEP_STATE:-}" = 1 ]; then
  "$root/hack/kube/down.sh"
else
  CAPO_KUBE_WIPE=1 "$root/hack/kube/down.sh"
fi
log "stopped"
