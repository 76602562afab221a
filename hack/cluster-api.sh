#!/usr/bin/env bash
# Builds Cluster API's core manager and clusterctl from the Go module proxy (no release downloads
# are reachable here) and prints the directory holding them. Cached: a binary whose stamp matches
# the pinned version is not rebuilt, so a re-run costs well under a second.
#
#   hack/cluster-api.sh          build (if needed) and print the bin directory
#   hack/cluster-api.sh source   print the cluster-api module's source directory (CRDs, webhooks)
#   hack/cluster-api.sh release  build the core provider's release as Cluster API publishes it and
#                                print its directory: core-components.yaml (rendered from the
#                                module's config, image and pull policy set as its release sets
#                                them), metadata.yaml, and the manager's image as a docker archive
#                                (image.tar) named as the components name it
#
# cluster-api's go.mod carries replace directives, so `go install ...@version` is refused; a
# throwaway module that requires both cluster-api modules at the same tag builds both binaries.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

work="${CAPO_CACHE_DIR}/cluster-api-build"
bin="${CAPO_CACHE_DIR}/cluster-api/${CLUSTER_API_VERSION}"
# The binaries' stamp: the version, and static (the core manager also runs in an image FROM scratch).
stamp="${CLUSTER_API_VERSION} static"

prepare_module() {
  mkdir -p "$work"
  if [ "$(cat "$work/.version" 2>/dev/null)" != "$CLUSTER_API_VERSION" ]; then
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
	_ "sigs.k8s.io/cluster-api/core"
)
SRC
    (cd "$work" && GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 || true)
    (cd "$work" && GOFLAGS=-mod=mod go mod download sigs.k8s.io/cluster-api)
    echo "$CLUSTER_API_VERSION" >"$work/.version"
  fi
}

case "${1:-build}" in
source)
  prepare_module
  (cd "$work" && go list -m -f '{{.Dir}}' sigs.k8s.io/cluster-api)
  ;;
build)
  if [ -x "$bin/cluster-api-manager" ] && [ -x "$bin/clusterctl" ] &&
    [ "$(cat "$bin/.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "$bin"
    exit 0
  fi
  prepare_module
  mkdir -p "$bin"
  log "building the Cluster API core manager and clusterctl ${CLUSTER_API_VERSION} (a few minutes, once)"
  ldflags="-X sigs.k8s.io/cluster-api/version.gitVersion=${CLUSTER_API_VERSION} -X sigs.k8s.io/cluster-api/version.gitMajor=1 -X sigs.k8s.io/cluster-api/version.gitMinor=14"
  (cd "$work" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "$bin/cluster-api-manager" sigs.k8s.io/cluster-api/core)
  (cd "$work" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "$bin/clusterctl" sigs.k8s.io/cluster-api/cmd/clusterctl)
  echo "$stamp" >"$bin/.stamp"
  echo "$bin"
  ;;
release)
  bin="$("$0" build)"
  src="$("$0" source)"
  out="${CAPO_CACHE_DIR}/cluster-api/${CLUSTER_API_VERSION}-release"
  image="registry.k8s.io/cluster-api/cluster-api-controller:${CLUSTER_API_VERSION}"
  mkdir -p "$out"
  # The release's image: the manager as /manager, as Cluster API's Dockerfile lays it out.
  cp "$bin/cluster-api-manager" "$out/manager"
  source "$(dirname "$0")/kube/lib.sh"
  kube_image_from_binary "$image" "$out/manager" "$out/image.tar"
  kustomize="$("$(dirname "$0")/tools.sh" kustomize)/kustomize"
  "$kustomize" build "$src/core/config/default" |
    sed -e "s|image: gcr.io/k8s-staging-cluster-api/cluster-api-controller:main|image: $image|" \
      -e 's|imagePullPolicy: Always|imagePullPolicy: IfNotPresent|' >"$out/core-components.yaml"
  grep -q "image: $image" "$out/core-components.yaml" || { log "the core components name no $image"; exit 1; }
  install -m 0644 "$src/metadata.yaml" "$out/metadata.yaml"
  echo "$out"
  ;;
*)
  log "usage: $0 [build|source|release]"
  exit 2
  ;;
esac
