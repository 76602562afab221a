#!/usr/bin/env bash
# Shared settings for the hack/ scripts. Sourced, never run.
#
# Everything the scripts build is cached outside the work tree, so that a fresh clone on the same
# machine (CI, a second checkout) reuses it. Override the location with CAPO_CACHE_DIR.

CAPO_CACHE_DIR="${CAPO_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/capo-multiaz}"
TOOLS_BIN="${CAPO_CACHE_DIR}/bin"

# Pinned versions: see ../shared/notes/offline-toolchain.md for why these build together.
CONTROLLER_GEN_VERSION=v0.21.0
MOCKGEN_VERSION=v0.6.0
GINKGO_VERSION=v2.34.0
GOLANGCI_LINT_VERSION=v2.15.0
KUSTOMIZE_VERSION=v5.8.2
KUBERNETES_VERSION=1.36.3
ETCD_VERSION=3.6.16
CLUSTER_API_VERSION=v1.14.2

ENVTEST_ASSETS_DIR="${CAPO_CACHE_DIR}/envtest/${KUBERNETES_VERSION}-linux-amd64"

log() { printf '[%s] %s\n' "$(basename "$0")" "$*" >&2; }
