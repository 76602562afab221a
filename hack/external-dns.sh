#!/usr/bin/env bash
# Builds ExternalDNS from the Go module proxy (no release downloads are reachable here) and prints
# the directory holding the binary and the DNSEndpoint CRD of that version. Cached: a binary whose
# stamp matches the pinned version is not rebuilt, so a re-run costs well under a second. Only the
# end-to-end tests and the demo use it: the provider writes DNSEndpoint objects, ExternalDNS
# publishes them.
#
#   hack/external-dns.sh     build (if needed) and print the directory: external-dns, dnsendpoints.yaml
#
# A throwaway module requires the pinned version and builds its main package; `go mod tidy` is not
# run there (one of ExternalDNS's indirect modules is not on the proxy, and the build needs none
# of it). See ../shared/notes/offline-toolchain.md for why this version.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

work="${CAPO_CACHE_DIR}/external-dns-build"
out="${CAPO_CACHE_DIR}/external-dns/${EXTERNAL_DNS_VERSION}"

if [ -x "$out/external-dns" ] && [ -s "$out/dnsendpoints.yaml" ] &&
  [ "$(cat "$out/.stamp" 2>/dev/null)" = "$EXTERNAL_DNS_VERSION" ]; then
  echo "$out"
  exit 0
fi
mkdir -p "$work" "$out"
if [ "$(cat "$work/.version" 2>/dev/null)" != "$EXTERNAL_DNS_VERSION" ]; then
  rm -f "$work/go.mod" "$work/go.sum"
  cat >"$work/go.mod" <<MOD
module capo-multiaz.local/external-dns-build

go 1.26.1

godebug default=go1.26

require sigs.k8s.io/external-dns ${EXTERNAL_DNS_VERSION}
MOD
  echo "$EXTERNAL_DNS_VERSION" >"$work/.version"
fi
log "building ExternalDNS ${EXTERNAL_DNS_VERSION} (about 7 minutes, once)"
(cd "$work" && GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$out/external-dns" sigs.k8s.io/external-dns)
src="$(cd "$work" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' sigs.k8s.io/external-dns)"
install -m 0644 "$src/config/crd/standard/dnsendpoints.externaldns.k8s.io.yaml" "$out/dnsendpoints.yaml"
echo "$EXTERNAL_DNS_VERSION" >"$out/.stamp"
echo "$out"
