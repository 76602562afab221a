#!/usr/bin/env bash
# Stops the management plane hack/mgmt/up.sh started: both managers, then kube-apiserver and
# etcd (whose data goes with them). Logs stay in $CAPO_MGMT_DIR/logs.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/hack/lib.sh"
dir="${CAPO_MGMT_DIR:-/var/tmp/capo-management-plane}"

pid=$(cat "$dir/mgmtplane.pid" 2>/dev/null || true)
if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
  rm -f "$dir/mgmtplane.pid" "$dir/ready"
  exit 0
fi
kill -TERM "$pid"
deadline=$((SECONDS + 60))
while kill -0 "$pid" 2>/dev/null; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    log "still running after 60s: killing its process group"
    kill -KILL -- "-$pid" 2>/dev/null || true
    break
  fi
  sleep 0.2
done
# A provider container whose runc was killed outlives it.
if command -v runc >/dev/null; then
  for id in $(runc --root "$dir/runc" list -q 2>/dev/null); do
    runc --root "$dir/runc" delete --force "$id" || true
  done
fi
rm -f "$dir/mgmtplane.pid" "$dir/ready"
log "stopped"
