#!/usr/bin/env bash
# Starts a Cluster API management plane as local processes (no container runtime needed):
# etcd + kube-apiserver (built from the module proxy, as for envtest), the Cluster API core
# manager (built from the module proxy) and this provider's manager (built from this tree), both
# serving their webhooks on 127.0.0.1. Idempotent: when it is up, prints where and returns.
#
#   hack/mgmt/up.sh      then: export KUBECONFIG=$CAPO_MGMT_DIR/kubeconfig
#
# Everything goes under $CAPO_MGMT_DIR (default /var/tmp/capo-management-plane): kubeconfig,
# logs/ (one file per manager, mgmtplane.log for the supervisor), certs/. hack/mgmt/down.sh stops
# it. Extra flags for the provider's manager: CAPO_MANAGER_ARGS.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/hack/lib.sh"
dir="${CAPO_MGMT_DIR:-/var/tmp/capo-management-plane}"
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
# No -trimpath: the build then reuses what the tests compiled (a cold CI saves minutes).
(cd "$root" && go build -o bin/manager . && go build -o bin/mgmtplane ./hack/mgmtplane)
log "binaries ready ($((SECONDS - start))s)"

rm -f "$dir/ready"
KUBEBUILDER_ASSETS="$assets" setsid nohup "$root/bin/mgmtplane" --dir "$dir" --repo "$root" \
  --capi-source "$capi_source" --capi-manager "$capi_bin/cluster-api-manager" \
  --provider-manager "$root/bin/manager" --provider-args "${CAPO_MANAGER_ARGS:-}" \
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
