#!/usr/bin/env bash
# Installs the pinned developer tools from the Go module proxy into $CAPO_CACHE_DIR/bin and prints
# that directory. Idempotent: a tool whose stamp matches its pinned version is not rebuilt.
#
#   hack/tools.sh            all tools
#   hack/tools.sh NAME...    only these (controller-gen mockgen ginkgo golangci-lint
#                            golangci-lint-kube-api-linter kustomize helm)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

declare -A PKG=(
  [controller-gen]="sigs.k8s.io/controller-tools/cmd/controller-gen@${CONTROLLER_GEN_VERSION}"
  [mockgen]="go.uber.org/mock/mockgen@${MOCKGEN_VERSION}"
  [ginkgo]="github.com/onsi/ginkgo/v2/ginkgo@${GINKGO_VERSION}"
  [golangci-lint]="github.com/golangci/golangci-lint/v2/cmd/golangci-lint@${GOLANGCI_LINT_VERSION}"
  [golangci-lint-kube-api-linter]="sigs.k8s.io/kube-api-linter/cmd/golangci-lint-kube-api-linter@${KUBE_API_LINTER_VERSION}"
  [kustomize]="sigs.k8s.io/kustomize/kustomize/v5@${KUSTOMIZE_VERSION}"
  # Renders cert-manager's release manifest from its chart (hack/cert-manager.sh); not in "all".
  [helm]="helm.sh/helm/v3/cmd/helm@${HELM_VERSION}"
)

names=("$@")
[ ${#names[@]} -gt 0 ] || names=(controller-gen mockgen ginkgo golangci-lint golangci-lint-kube-api-linter kustomize)

mkdir -p "$TOOLS_BIN"
for name in "${names[@]}"; do
  pkg="${PKG[$name]:-}"
  [ -n "$pkg" ] || { log "unknown tool: $name"; exit 2; }
  stamp="${TOOLS_BIN}/.${name}.version"
  if [ -x "${TOOLS_BIN}/${name}" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$pkg" ]; then
    continue
  fi
  log "installing ${pkg}"
  # Build outside any module so the project's go.mod does not influence the tool's dependencies.
  (cd / && GOBIN="$TOOLS_BIN" GOFLAGS=-buildvcs=false go install "$pkg")
  echo "$pkg" >"$stamp"
done
echo "$TOOLS_BIN"
