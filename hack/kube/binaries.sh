#!/usr/bin/env bash
# Builds the Kubernetes binaries of the single-node management cluster (hack/kube/up.sh) from the
# Go module proxy, k8s.io/kubernetes v$KUBERNETES_VERSION in a throwaway module (no binary
# downloads), and prints the directory that holds them: kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet, kube-proxy, kubectl, and etcd (the one envtest uses). Idempotent: a
# directory whose binaries all report the pinned version is kept, so a re-run costs well under a
# second. About 12 minutes cold on 2 cores; CI starts it while the OpenStack installs.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"

dir="${CAPO_CACHE_DIR}/kubernetes/v${KUBERNETES_VERSION}"
mkdir -p "$dir"
minor=$(cut -d. -f2 <<<"$KUBERNETES_VERSION")
# What the binaries were built as, kept beside them: a change here rebuilds them.
stamp="v${KUBERNETES_VERSION} gitMinor=${minor}"
components=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)

version_ok() {
  local c out
  [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$stamp" ] || return 1
  for c in "${components[@]}"; do
    [ -x "$dir/$c" ] || return 1
    if [ "$c" = kubectl ]; then
      out=$("$dir/$c" version --client 2>/dev/null) || return 1
      [[ "$out" == *"v${KUBERNETES_VERSION}"* ]] || return 1
    else
      out=$("$dir/$c" --version 2>/dev/null) || return 1
      [ "$out" = "Kubernetes v${KUBERNETES_VERSION}" ] || return 1
    fi
  done
}

build() {
  local work; work=$(mktemp -d)
  log "building ${components[*]} v${KUBERNETES_VERSION} (about 12 minutes when cold)"
  (cd "$work"
   cat >go.mod <<MOD
module capo/kubernetes

go 1.26

godebug default=go1.26

require k8s.io/kubernetes v${KUBERNETES_VERSION}
MOD
   go mod download k8s.io/kubernetes@v${KUBERNETES_VERSION}
   local kdir="$(go env GOMODCACHE)/k8s.io/kubernetes@v${KUBERNETES_VERSION}"
   # k8s.io/kubernetes requires its staging modules at v0.0.0 through ./staging replaces, which a
   # dependent module cannot use: point each one at the published k8s.io/<name> v0.<minor>.<patch>.
   local staging_version="v0.${KUBERNETES_VERSION#*.}"
   sed -n 's#^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/.*#\1#p' "$kdir/go.mod" | while read -r mod; do
     go mod edit -replace "${mod}=${mod}@${staging_version}"
   done
   { echo '//go:build tools'; echo; echo 'package tools'; echo
     for c in "${components[@]}"; do echo "import _ \"k8s.io/kubernetes/cmd/$c\""; done; } >tools.go
   go mod tidy
   mkdir -p out
   go build -trimpath \
     -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=v${KUBERNETES_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor} -X k8s.io/client-go/pkg/version.gitVersion=v${KUBERNETES_VERSION} -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=${minor}" \
     -o out/ $(printf 'k8s.io/kubernetes/cmd/%s ' "${components[@]}"))
  for c in "${components[@]}"; do mv "$work/out/$c" "$dir/$c"; done
  echo "$stamp" >"$dir/.stamp"
  rm -rf "$work"
}

version_ok || build
version_ok || { log "the binaries in $dir do not all report v${KUBERNETES_VERSION}"; exit 1; }
etcd_dir="$("$(dirname "$0")/../envtest-assets.sh")"
ln -sf "$etcd_dir/etcd" "$dir/etcd"
echo "$dir"
