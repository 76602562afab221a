#!/usr/bin/env bash
# Builds the OpenStack Resource Controller's manager (ORC) from the Go module proxy (no release
# downloads are reachable here) and prints the directory holding it with ORC's CRDs. Cached: a
# binary whose stamp matches the pinned version is not rebuilt, so a re-run costs well under a
# second. Only the end-to-end tests and the demo use it: a machine's image.imageRef names an ORC
# Image, which ORC resolves to a Glance image.
#
#   hack/orc.sh     build (if needed) and print the directory: manager, crds/*.yaml
#
# A throwaway module requires the pinned version and builds its manager: ORC pins its own
# controller-runtime and gophercloud, never mixed with ours.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

work="${CAPO_CACHE_DIR}/orc-build"
out="${CAPO_CACHE_DIR}/orc/${ORC_VERSION}"

if [ -x "$out/manager" ] && [ -d "$out/crds" ] && [ "$(cat "$out/.stamp" 2>/dev/null)" = "$ORC_VERSION" ]; then
  echo "$out"
  exit 0
fi
mkdir -p "$work" "$out"
if [ "$(cat "$work/.version" 2>/dev/null)" != "$ORC_VERSION" ]; then
  rm -f "$work/go.mod" "$work/go.sum"
  cat >"$work/go.mod" <<MOD
module capo-multiaz.local/orc-build

go 1.26.0

godebug default=go1.26

require github.com/k-orc/openstack-resource-controller/v2 ${ORC_VERSION}
MOD
  echo "$ORC_VERSION" >"$work/.version"
fi
log "building ORC's manager ${ORC_VERSION} (a few minutes, once)"
(cd "$work" && GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$out/manager" github.com/k-orc/openstack-resource-controller/v2/cmd/manager)
src="$(cd "$work" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' github.com/k-orc/openstack-resource-controller/v2)"
rm -rf "$out/crds" && mkdir -p "$out/crds"
install -m 0644 "$src"/config/crd/bases/*.yaml "$out/crds/"
echo "$ORC_VERSION" >"$out/.stamp"
echo "$out"
