#!/usr/bin/env bash
# Builds cert-manager $CERT_MANAGER_VERSION from the Go module proxy, as its release does, without
# a registry: the controller, webhook and cainjector binaries in a throwaway module; their images
# (named as the release names them, quay.io/jetstack/cert-manager-<name>:<version>, so that the
# manifest needs no change) as docker archives; and the release manifest, cert-manager.yaml,
# rendered from the chart in the module with helm the way cert-manager's release renders it.
# Prints the directory that holds cert-manager.yaml and images/. Cached: a re-run whose stamp
# matches costs well under a second. About 4 minutes cold on 2 cores (helm included).
#
# One change to the release: v1.11.5's cainjector writes each CustomResourceDefinition it injects
# a CA into back whole, through the CRD types of Kubernetes 1.26, which drop what later versions
# added to a validation rule (fieldPath, reason, messageExpression, optionalOldSelf): every CRD
# would lose them. Its build takes those types from apiextensions-apiserver
# $CAINJECTOR_APIEXTENSIONS_VERSION (the rest of Kubernetes' libraries stay at the release's
# v0.26.4), which keep them; its code is the release's.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

dir="${CAPO_CACHE_DIR}/cert-manager/${CERT_MANAGER_VERSION}"
CAINJECTOR_APIEXTENSIONS_VERSION=v0.31.14
stamp="${CERT_MANAGER_VERSION} images+manifest cainjector-apiextensions-${CAINJECTOR_APIEXTENSIONS_VERSION}"
if [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$stamp" ] && [ -s "$dir/cert-manager.yaml" ]; then
  echo "$dir"
  exit 0
fi
source "$(dirname "$0")/kube/lib.sh"
helm="$("$(dirname "$0")/tools.sh" helm)/helm"
mkdir -p "$dir/bin" "$dir/images"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log "building cert-manager ${CERT_MANAGER_VERSION} (a few minutes, once)"
binaries=(controller webhook)
mkdir -p "$work/release" "$work/cainjector"
(cd "$work/release"
 cat >go.mod <<MOD
module capo/cert-manager

go 1.26

require github.com/cert-manager/cert-manager ${CERT_MANAGER_VERSION}
MOD
 { echo '//go:build tools'; echo; echo 'package tools'; echo
   for b in "${binaries[@]}"; do echo "import _ \"github.com/cert-manager/cert-manager/cmd/$b\""; done; } >tools.go
 GOFLAGS=-mod=mod go mod tidy
 CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath \
   -ldflags "-s -w -X github.com/cert-manager/cert-manager/pkg/util.AppVersion=${CERT_MANAGER_VERSION}" \
   -o "$dir/bin/" $(printf 'github.com/cert-manager/cert-manager/cmd/%s ' "${binaries[@]}"))
(cd "$work/cainjector"
 cat >go.mod <<MOD
module capo/cert-manager-cainjector

go 1.26

require (
	github.com/cert-manager/cert-manager ${CERT_MANAGER_VERSION}
	k8s.io/apiextensions-apiserver ${CAINJECTOR_APIEXTENSIONS_VERSION}
)

replace (
	k8s.io/api => k8s.io/api v0.26.4
	k8s.io/apimachinery => k8s.io/apimachinery v0.26.4
	k8s.io/apiserver => k8s.io/apiserver v0.26.4
	k8s.io/client-go => k8s.io/client-go v0.26.4
	k8s.io/component-base => k8s.io/component-base v0.26.4
	k8s.io/kube-aggregator => k8s.io/kube-aggregator v0.26.4
	k8s.io/kube-openapi => k8s.io/kube-openapi v0.0.0-20221012153701-172d655c2280
)
MOD
 # No `go mod tidy`: packages the build does not need (the newer clientset) do not build with the
 # release's client-go; -mod=mod resolves what the cainjector imports.
 CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath \
   -ldflags "-s -w -X github.com/cert-manager/cert-manager/pkg/util.AppVersion=${CERT_MANAGER_VERSION}" \
   -o "$dir/bin/cainjector" github.com/cert-manager/cert-manager/cmd/cainjector)
binaries+=(cainjector)
for b in "${binaries[@]}"; do
  kube_image_from_binary "quay.io/jetstack/cert-manager-$b:${CERT_MANAGER_VERSION}" "$dir/bin/$b" "$dir/images/$b.tar"
done

# The chart as the release packages it: the templates, the CRDs behind installCRDs, the version.
src="$(go env GOMODCACHE)/github.com/cert-manager/cert-manager@${CERT_MANAGER_VERSION}"
chart="$work/chart/cert-manager"
mkdir -p "$chart/templates"
cp "$src"/deploy/charts/cert-manager/templates/* "$chart/templates/"
cp "$src/deploy/charts/cert-manager/values.yaml" "$chart/"
sed -e "s/^version: .*/version: ${CERT_MANAGER_VERSION}/" -e "s/^appVersion: .*/appVersion: ${CERT_MANAGER_VERSION}/" \
  -e 's/{{IS_PRERELEASE}}/false/' "$src/deploy/charts/cert-manager/Chart.template.yaml" >"$chart/Chart.yaml"
{ echo '{{- if .Values.installCRDs }}'
  first=1
  for f in "$src"/deploy/crds/crd-*.yaml; do
    [ "$first" = 1 ] || echo '---'
    first=0
    cat "$f"
  done
  echo '{{- end }}'; } >"$chart/templates/crds.yaml"
chmod -R u+w "$work/chart"
{ cat "$src/deploy/manifests/namespace.yaml"
  echo '---'
  "$helm" template --kube-version="v${KUBERNETES_VERSION}" --api-versions="" --namespace=cert-manager --set installCRDs=true --set creator=static \
    --set startupapicheck.enabled=false cert-manager "$chart" | sed -e '1{/^---$/d;}'; } >"$dir/cert-manager.yaml.tmp"
mv "$dir/cert-manager.yaml.tmp" "$dir/cert-manager.yaml"
echo "$stamp" >"$dir/.stamp"
echo "$dir"
