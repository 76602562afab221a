#!/usr/bin/env bash
# Builds kube-apiserver and etcd for envtest from the Go module proxy (no binary downloads) and
# prints the directory to use as KUBEBUILDER_ASSETS. Idempotent: binaries whose --version already
# matches the pinned version are kept, so a re-run costs well under a second.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

dir="$ENVTEST_ASSETS_DIR"
mkdir -p "$dir"

# Capture --version before matching: piping into `grep -q` under pipefail fails at random when grep
# exits first and the binary gets SIGPIPE.
etcd_ok() {
  local out
  [ -x "$dir/etcd" ] && out=$("$dir/etcd" --version 2>/dev/null) && [[ "$out" == *"etcd Version: ${ETCD_VERSION}"$'\n'* ]]
}
apiserver_ok() { [ -x "$dir/kube-apiserver" ] && [ "$("$dir/kube-apiserver" --version 2>/dev/null)" = "Kubernetes v${KUBERNETES_VERSION}" ]; }

build_etcd() {
  local work; work=$(mktemp -d)
  log "building etcd v${ETCD_VERSION} (about a minute when cold)"
  cat >"$work/go.mod" <<MOD
module envtest/etcd

go 1.26

require go.etcd.io/etcd/server/v3 v${ETCD_VERSION}
MOD
  (cd "$work"
   cat >"$work/tools.go" <<'GO'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
GO
   go mod tidy && go build -trimpath -o "$dir/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$dir/etcd.tmp" "$dir/etcd"
  rm -rf "$work"
}

build_apiserver() {
  log "building kube-apiserver v${KUBERNETES_VERSION} (about four minutes when cold)"
  kubernetes_build "$dir/.build" kube-apiserver
  mv "$dir/.build/kube-apiserver" "$dir/kube-apiserver"
  rm -rf "$dir/.build"
}

etcd_ok || build_etcd
apiserver_ok || build_apiserver
etcd_ok || { log "etcd at $dir does not report v${ETCD_VERSION}"; exit 1; }
apiserver_ok || { log "kube-apiserver at $dir does not report v${KUBERNETES_VERSION}"; exit 1; }
echo "$dir"
