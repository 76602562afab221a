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
  local work; work=$(mktemp -d)
  log "building kube-apiserver v${KUBERNETES_VERSION} (about four minutes when cold)"
  (cd "$work"
   cat >go.mod <<MOD
module envtest/apiserver

go 1.26

godebug default=go1.26

require k8s.io/kubernetes v${KUBERNETES_VERSION}
MOD
   go mod download k8s.io/kubernetes@v${KUBERNETES_VERSION}
   local kdir; kdir=$(go list -m -f '{{.Dir}}' k8s.io/kubernetes@v${KUBERNETES_VERSION} 2>/dev/null || true)
   [ -n "$kdir" ] || kdir="$(go env GOMODCACHE)/k8s.io/kubernetes@v${KUBERNETES_VERSION}"
   # k8s.io/kubernetes requires its staging modules at v0.0.0 through ./staging replaces, which a
   # dependent module cannot use: point each one at the published k8s.io/<name> v0.<minor>.<patch>.
   local staging_version="v0.${KUBERNETES_VERSION#*.}"
   sed -n 's#^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/.*#\1#p' "$kdir/go.mod" | while read -r mod; do
     go mod edit -replace "${mod}=${mod}@${staging_version}"
   done
   cat >tools.go <<'GO'
//go:build tools

package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
GO
   go mod tidy
   go build -trimpath \
     -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=v${KUBERNETES_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(cut -d. -f2 <<<"$KUBERNETES_VERSION")" \
     -o "$dir/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver)
  mv "$dir/kube-apiserver.tmp" "$dir/kube-apiserver"
  rm -rf "$work"
}

etcd_ok || build_etcd
apiserver_ok || build_apiserver
etcd_ok || { log "etcd at $dir does not report v${ETCD_VERSION}"; exit 1; }
apiserver_ok || { log "kube-apiserver at $dir does not report v${KUBERNETES_VERSION}"; exit 1; }
echo "$dir"
