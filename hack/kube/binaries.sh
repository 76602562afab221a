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
  log "building ${components[*]} v${KUBERNETES_VERSION} (about 12 minutes when cold)"
  kubernetes_build "$dir/.build" "${components[@]}"
  for c in "${components[@]}"; do mv "$dir/.build/$c" "$dir/$c"; done
  rm -rf "$dir/.build"
  echo "$stamp" >"$dir/.stamp"
}

version_ok || build
version_ok || { log "the binaries in $dir do not all report v${KUBERNETES_VERSION}"; exit 1; }
etcd_dir="$("$(dirname "$0")/../envtest-assets.sh")"
ln -sf "$etcd_dir/etcd" "$dir/etcd"
echo "$dir"
