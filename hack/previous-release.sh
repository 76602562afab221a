#!/usr/bin/env bash
# Builds this provider's previous release, the one `clusterctl upgrade` starts from in the
# end-to-end upgrade spec, from its git tag ($PREVIOUS_RELEASE, the last release that stores v1beta1)
# with that tree's own `make release`, and prints the directory that holds it: the components,
# metadata.yaml and the image's archive. Cached by the tag's commit: a re-run costs well under a
# second. About 2 minutes cold (the manager's build, sharing the build cache).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/hack/lib.sh"

# The tag's commit, named here too so that a clone without tags builds the same.
commit="$(git -C "$root" rev-parse --verify --quiet "${PREVIOUS_RELEASE}^{commit}" || echo "$PREVIOUS_RELEASE_COMMIT")"
[ "$commit" = "$PREVIOUS_RELEASE_COMMIT" ] || { log "tag ${PREVIOUS_RELEASE} is $commit, not $PREVIOUS_RELEASE_COMMIT"; exit 1; }
out="${CAPO_CACHE_DIR}/releases/${PREVIOUS_RELEASE}"
if [ "$(cat "$out/.stamp" 2>/dev/null)" = "$commit" ] && [ -s "$out/infrastructure-components.yaml" ]; then
  echo "$out"
  exit 0
fi
log "building ${PREVIOUS_RELEASE} (${commit:0:7}) from its tag"
work="$(mktemp -d)"
trap 'git -C "$root" worktree remove --force "$work/tree" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$root" worktree add --detach "$work/tree" "$commit" >/dev/null 2>&1
(cd "$work/tree" && make --no-print-directory release RELEASE_VERSION="$PREVIOUS_RELEASE" IMAGE_ARCHES="$(go env GOARCH)" >/dev/null)
rm -rf "$out" && mkdir -p "$out"
cp "$work/tree"/out/*.yaml "$out/"
cp "$work/tree/out/image/manager-${PREVIOUS_RELEASE}-linux-$(go env GOARCH).tar" "$out/image.tar"
echo "$commit" >"$out/.stamp"
echo "$out"
