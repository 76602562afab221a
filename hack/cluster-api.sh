#!/usr/bin/env bash
# Builds Cluster API's core manager, its kubeadm bootstrap and control plane managers and clusterctl
# from the Go module proxy (no release downloads are reachable here) and prints the directory
# holding them. Cached: a binary whose stamp matches
# the pinned version is not rebuilt, so a re-run costs well under a second.
#
#   hack/cluster-api.sh          build (if needed) and print the bin directory
#   hack/cluster-api.sh source   print the cluster-api module's source directory (CRDs, webhooks)
#   hack/cluster-api.sh release  build the releases of the core provider and the kubeadm bootstrap
#                                and control plane providers as Cluster API publishes them, and
#                                print their directory: core-components.yaml,
#                                bootstrap-components.yaml and control-plane-components.yaml
#                                (rendered from the module's config, image and pull policy set as
#                                its release sets them), metadata.yaml, and each manager's image as
#                                a docker archive (image.tar, bootstrap-image.tar,
#                                control-plane-image.tar) named as the components name it
#
# cluster-api's go.mod carries replace directives, so `go install ...@version` is refused; a
# throwaway module that requires both cluster-api modules at the same tag builds the binaries.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

work="${CAPO_CACHE_DIR}/cluster-api-build"
bin="${CAPO_CACHE_DIR}/cluster-api/${CLUSTER_API_VERSION}"
# The binaries' stamp: the version, static (the managers run in images FROM scratch), and kubeadm
# (the bootstrap and control plane managers are built too).
stamp="${CLUSTER_API_VERSION} static kubeadm"

prepare_module() {
  mkdir -p "$work"
  # The module's key: the version, and the binaries its tools.go names (kubeadm: the kubeadm
  # providers' managers too), so that a module made for fewer is made again.
  if [ "$(cat "$work/.version" 2>/dev/null)" != "$CLUSTER_API_VERSION kubeadm" ]; then
    rm -f "$work/go.mod" "$work/go.sum"
    cat >"$work/go.mod" <<MOD
module capo-multiaz.local/cluster-api-build

go 1.26.0

godebug default=go1.26

require (
	sigs.k8s.io/cluster-api ${CLUSTER_API_VERSION}
	sigs.k8s.io/cluster-api/api ${CLUSTER_API_VERSION}
)
MOD
    cat >"$work/tools.go" <<'SRC'
//go:build tools

// Package tools pins the Cluster API binaries this module builds.
package tools

import (
	_ "sigs.k8s.io/cluster-api/cmd/clusterctl"
	_ "sigs.k8s.io/cluster-api/bootstrap/kubeadm"
	_ "sigs.k8s.io/cluster-api/controlplane/kubeadm"
	_ "sigs.k8s.io/cluster-api/core"
)
SRC
    (cd "$work" && GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 || true)
    (cd "$work" && GOFLAGS=-mod=mod go mod download sigs.k8s.io/cluster-api)
    echo "$CLUSTER_API_VERSION kubeadm" >"$work/.version"
  fi
}

case "${1:-build}" in
source)
  prepare_module
  (cd "$work" && go list -m -f '{{.Dir}}' sigs.k8s.io/cluster-api)
  ;;
build)
  if [ -x "$bin/cluster-api-manager" ] && [ -x "$bin/kubeadm-bootstrap-manager" ] &&
    [ -x "$bin/kubeadm-control-plane-manager" ] && [ -x "$bin/clusterctl" ] &&
    [ "$(cat "$bin/.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "$bin"
    exit 0
  fi
  prepare_module
  mkdir -p "$bin"
  log "building the Cluster API core and kubeadm managers and clusterctl ${CLUSTER_API_VERSION} (a few minutes, once)"
  ldflags="-X sigs.k8s.io/cluster-api/version.gitVersion=${CLUSTER_API_VERSION} -X sigs.k8s.io/cluster-api/version.gitMajor=1 -X sigs.k8s.io/cluster-api/version.gitMinor=14"
  (cd "$work" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "$bin/cluster-api-manager" sigs.k8s.io/cluster-api/core)
  (cd "$work" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "$bin/kubeadm-bootstrap-manager" sigs.k8s.io/cluster-api/bootstrap/kubeadm)
  (cd "$work" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "$bin/kubeadm-control-plane-manager" sigs.k8s.io/cluster-api/controlplane/kubeadm)
  (cd "$work" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "$bin/clusterctl" sigs.k8s.io/cluster-api/cmd/clusterctl)
  echo "$stamp" >"$bin/.stamp"
  echo "$bin"
  ;;
release)
  bin="$("$0" build)"
  src="$("$0" source)"
  out="${CAPO_CACHE_DIR}/cluster-api/${CLUSTER_API_VERSION}-release"
  source "$(dirname "$0")/kube/lib.sh"
  kustomize="$("$(dirname "$0")/tools.sh" kustomize)/kustomize"
  mkdir -p "$out"
  # component BINARY CONFIG IMAGE_NAME COMPONENTS ARCHIVE: the manager as /manager in an image
  # named as Cluster API's release names it (its Dockerfile's layout), and the components rendered
  # from the module's config with that image, pulled only when absent.
  component() {
    local image="registry.k8s.io/cluster-api/$3:${CLUSTER_API_VERSION}" staging="gcr.io/k8s-staging-cluster-api/$3:main"
    rm -rf "$out/$3" && mkdir -p "$out/$3"
    cp "$bin/$1" "$out/$3/manager"
    kube_image_from_binary "$image" "$out/$3/manager" "$out/$5"
    rm -rf "$out/$3"
    "$kustomize" build "$src/$2/config/default" |
      sed -e "s|image: $staging|image: $image|" \
        -e 's|imagePullPolicy: Always|imagePullPolicy: IfNotPresent|' >"$out/$4"
    grep -q "image: $image" "$out/$4" || { log "$4 names no $image"; exit 1; }
  }
  component cluster-api-manager core cluster-api-controller core-components.yaml image.tar
  component kubeadm-bootstrap-manager bootstrap/kubeadm kubeadm-bootstrap-controller bootstrap-components.yaml bootstrap-image.tar
  component kubeadm-control-plane-manager controlplane/kubeadm kubeadm-control-plane-controller control-plane-components.yaml control-plane-image.tar
  install -m 0644 "$src/metadata.yaml" "$out/metadata.yaml"
  echo "$out"
  ;;
*)
  log "usage: $0 [build|source|release]"
  exit 2
  ;;
esac
