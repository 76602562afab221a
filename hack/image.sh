#!/usr/bin/env bash
# Builds the manager's container image without a container engine and without pulling anything:
# a static Go build of the manager, put into an image FROM scratch by Debian's buildah
# (hack/image/Containerfile, the final stage of the Dockerfile) with the CA bundle of Debian's
# ca-certificates. Reproducible: the same sources give the same digest.
#
#   hack/image.sh [ARCH...]      default: amd64; arm64 too
#
# Writes out/image/manager-<version>-linux-<arch>.tar (an OCI archive, as `podman load` and
# `skopeo copy oci-archive:` read it) and, beside it, .digest; prints the archives' paths.
# RELEASE_VERSION (default v0.3.0) is what the binary's --version says.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/hack/lib.sh"
version="${RELEASE_VERSION:-v0.3.0}"
arches=("$@")
[ ${#arches[@]} -gt 0 ] || arches=(amd64)

apt_ensure buildah runc ca-certificates
out="$root/out/image"
mkdir -p "$out"
for arch in "${arches[@]}"; do
  start=$SECONDS
  ctx="$(mktemp -d)"
  trap 'rm -rf "$ctx"' EXIT
  (cd "$root" && CGO_ENABLED=0 GOOS=linux GOARCH="$arch" \
    go build -trimpath -ldflags "-s -w -buildid= -X main.version=$version" -o "$ctx/manager" .)
  cp /etc/ssl/certs/ca-certificates.crt "$ctx/"
  archive="$out/manager-$version-linux-$arch.tar"
  rm -f "$archive"
  buildah build --quiet --layers=false --timestamp 0 --disable-compression=false --os linux --arch "$arch" --build-arg VERSION="$version" \
    -f "$root/hack/image/Containerfile" -t "oci-archive:$archive" "$ctx" >/dev/null
  rm -rf "$ctx"
  trap - EXIT
  (cd "$root" && go run ./hack/ociimage digest "$archive") >"$archive.digest"
  log "$(basename "$archive") $(cat "$archive.digest") $(du -h "$archive" | cut -f1) in $((SECONDS - start))s"
  echo "$archive"
done
