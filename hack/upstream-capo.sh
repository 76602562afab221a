#!/usr/bin/env bash
# Builds upstream Cluster API Provider OpenStack's manager from the Go module proxy (no release
# downloads are reachable here) and prints the directory holding it with the CRDs it runs with.
# Only the end-to-end takeover spec uses it: upstream's manager creates a cluster, then this
# provider takes it over (docs/switching-from-upstream.md). Cached: a binary whose stamp matches
# the pinned version is not rebuilt, so a re-run costs well under a second.
#
#   hack/upstream-capo.sh    build (if needed) and print the directory: manager, crds/*.yaml,
#                            and its release as upstream publishes it: infrastructure-components.yaml
#                            (rendered from the module's config, image and pull policy set as its
#                            release sets them), metadata.yaml, and the image (image.tar, a
#                            docker archive named as the components name it)
#
# crds/ holds upstream's own CRDs (config/crd/bases of the module) with the Cluster API contract
# label its release puts on them (config/crd/kustomization.yaml: cluster.x-k8s.io/v1beta1:
# v1beta1; without it Cluster API does not reconcile the objects), and the one ORC CRD upstream's
# manager watches (ORC Images). A throwaway module requires the pinned version and builds its
# main package: upstream pins its own Cluster API and controller-runtime, never mixed with ours.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

work="${CAPO_CACHE_DIR}/upstream-capo-build"
out="${CAPO_CACHE_DIR}/upstream-capo/${UPSTREAM_CAPO_VERSION}"
# The cache's stamp: the version, and how crds/ is made.
stamp="${UPSTREAM_CAPO_VERSION} crds-labelled static release"
image="registry.k8s.io/capi-openstack/capi-openstack-controller:${UPSTREAM_CAPO_VERSION}"

if [ -x "$out/manager" ] && [ -d "$out/crds" ] && [ -s "$out/image.tar" ] &&
  [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "$out"
  exit 0
fi
mkdir -p "$work" "$out"
if [ "$(cat "$work/.version" 2>/dev/null)" != "$UPSTREAM_CAPO_VERSION" ]; then
  rm -f "$work/go.mod" "$work/go.sum"
  cat >"$work/go.mod" <<MOD
module capo-multiaz.local/upstream-capo-build

go 1.26.0

godebug default=go1.26

require sigs.k8s.io/cluster-api-provider-openstack ${UPSTREAM_CAPO_VERSION}
MOD
  echo "$UPSTREAM_CAPO_VERSION" >"$work/.version"
fi
if [ ! -x "$out/manager" ] || [ "$(cat "$out/.stamp" 2>/dev/null)" != "$stamp" ]; then
  log "building upstream CAPO's manager ${UPSTREAM_CAPO_VERSION} (about 4 minutes, once)"
  # Static: it also runs in an image FROM scratch.
  (cd "$work" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$out/manager" sigs.k8s.io/cluster-api-provider-openstack)
fi
src="$(cd "$work" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' sigs.k8s.io/cluster-api-provider-openstack)"
orc="$(cd "$work" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' github.com/k-orc/openstack-resource-controller/v2)"
rm -rf "$out/crds" && mkdir -p "$out/crds"
for f in "$src"/config/crd/bases/*.yaml; do
  # The label goes into the CRD's metadata, right after its first line.
  awk '!done && /^metadata:$/ { print; print "  labels:"; print "    cluster.x-k8s.io/v1beta1: v1beta1"; done = 1; next } { print }' \
    "$f" >"$out/crds/$(basename "$f")"
done
install -m 0644 "$orc/config/crd/bases/openstack.k-orc.cloud_images.yaml" "$out/crds/"
# The release: what upstream's `make release` renders, its image as /manager (upstream's
# Dockerfile), its pull policy IfNotPresent.
source "$(dirname "$0")/kube/lib.sh"
kube_image_from_binary "$image" "$out/manager" "$out/image.tar"
kustomize="$("$(dirname "$0")/tools.sh" kustomize)/kustomize"
"$kustomize" build "$src/config/default" |
  sed -e "s|image: gcr.io/k8s-staging-capi-openstack/capi-openstack-controller:dev|image: $image|" \
    -e 's|imagePullPolicy: Always|imagePullPolicy: IfNotPresent|' >"$out/infrastructure-components.yaml"
grep -q "image: $image" "$out/infrastructure-components.yaml" || { log "upstream's components name no $image"; exit 1; }
install -m 0644 "$src/metadata.yaml" "$out/metadata.yaml"
echo "$stamp" >"$out/.stamp"
echo "$out"
