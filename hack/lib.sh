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
# Kube API Linter, as golangci-lint with the linter built in (its own module pins that
# golangci-lint); the module proxy serves it by commit only.
KUBE_API_LINTER_VERSION=v0.0.0-20260716143926-092fe0c72997
KUSTOMIZE_VERSION=v5.8.2
HELM_VERSION=v3.21.4
KUBERNETES_VERSION=1.36.3
ETCD_VERSION=3.6.16
CLUSTER_API_VERSION=v1.14.2
EXTERNAL_DNS_VERSION=v0.21.0
UPSTREAM_CAPO_VERSION=v0.14.7
# The OpenStack Resource Controller: the version upstream CAPO v0.14.7 builds with, so that its
# Image CRD and ORC's own are one.
ORC_VERSION=v2.4.0
# cert-manager for the single-node cluster (hack/cert-manager.sh): the last release whose binaries'
# main packages are in its root module, which the module proxy serves (since v1.12 they are
# modules of their own whose paths the proxy does not serve).
CERT_MANAGER_VERSION=v1.11.5
# This provider's previous release, which the end-to-end upgrade spec starts from: the tag of the
# last release that stores v1beta1 (hack/previous-release.sh builds it).
PREVIOUS_RELEASE=v0.2.0
PREVIOUS_RELEASE_COMMIT=97a65bc660388612a7ec49a244d650b6542e9ab5

ENVTEST_ASSETS_DIR="${CAPO_CACHE_DIR}/envtest/${KUBERNETES_VERSION}-linux-amd64"

# The address ranges of the rig: the single-node Kubernetes (pods 10.244.0.0/16, Services
# 10.96.0.0/16), the local OpenStack (10.254.0.1 and its load balancer management network), and
# what the OpenStack serves: floating IPs (public, 172.24.4.0/24) and the networks the demo and the
# tests make in it (10.6.0.0/16 the demo's cluster, 10.40.0.0/14 the end-to-end suite's, 10.50.0.0/16
# the demo's load balancer network, 10.250.0.0/24 the contract suite's, 10.20.0.0/16 the clusterctl
# test's load balancer network, 10.30.0.0/16 and 10.31.0.0/24 the real-cloud benchmarks'). No
# packet for them may leave this machine: rig_guard routes each as unreachable
# (an address of this machine's, the pod bridge's route and the node's Service route are
# preferred while they exist), so that a client using a file the rig wrote fails here once the rig
# is stopped, and drops, counting, anything that would still go out through another interface
# (rig_leaks).
RIG_RANGES=(10.244.0.0/16 10.96.0.0/16 10.254.0.0/24 172.24.4.0/24 10.6.0.0/16 10.40.0.0/14 10.50.0.0/16
  10.250.0.0/24 10.20.0.0/16 10.30.0.0/16 10.31.0.0/24)
RIG_GUARD_CHAIN=CAPO-RIG-GUARD
# The route metric of the unreachable routes: above the kernel's and the node's own routes.
RIG_ROUTE_METRIC=4242
# The interfaces the rig's packets may use: the loopback and the pod bridge (hack/kube/lib.sh:
# KUBE_BRIDGE).
RIG_INTERFACES=(lo capo-kube0)

# The one dialect of the hack/ scripts: log says what happens, on standard error, with the time and
# the script's path under hack/; die logs an error and exits; phase times a step and passes its exit
# status on; apt_ensure installs what a step needs. hack/kube/lib.sh and hack/local-openstack/lib.sh
# add their settings and their own domain's helpers, never another way to log.
log() {
  local who=$0
  who=${who##*/hack/}
  printf '[%s %s] %s\n' "$(date +%T)" "${who#hack/}" "$*" >&2
}
die() {
  log "error: $*"
  exit 1
}

# kubernetes_build OUT COMMAND... builds k8s.io/kubernetes/cmd/<COMMAND> v$KUBERNETES_VERSION for
# each COMMAND into directory OUT, from the Go module proxy in a throwaway module, with the
# version their --version prints (hack/envtest-assets.sh, hack/kube/binaries.sh).
kubernetes_build() {
  local out=$1 work minor
  shift
  work=$(mktemp -d)
  minor=$(cut -d. -f2 <<<"$KUBERNETES_VERSION")
  mkdir -p "$out"
  (cd "$work"
   printf 'module capo/kubernetes\n\ngo 1.26\n\ngodebug default=go1.26\n\nrequire k8s.io/kubernetes v%s\n' "$KUBERNETES_VERSION" >go.mod
   go mod download "k8s.io/kubernetes@v${KUBERNETES_VERSION}"
   # k8s.io/kubernetes requires its staging modules at v0.0.0 through ./staging replaces, which a
   # dependent module cannot use: point each one at the published k8s.io/<name> v0.<minor>.<patch>.
   sed -n 's#^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/.*#\1#p' "$(go env GOMODCACHE)/k8s.io/kubernetes@v${KUBERNETES_VERSION}/go.mod" |
     while read -r mod; do go mod edit -replace "${mod}=${mod}@v0.${KUBERNETES_VERSION#*.}"; done
   { printf '//go:build tools\n\npackage tools\n\n'
     for c in "$@"; do echo "import _ \"k8s.io/kubernetes/cmd/$c\""; done; } >tools.go
   go mod tidy
   local v="-X k8s.io/component-base/version.gitVersion=v${KUBERNETES_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor}"
   go build -trimpath -ldflags "-s -w $v ${v//component-base/client-go/pkg}" -o "$out/" $(printf 'k8s.io/kubernetes/cmd/%s ' "$@")) || { rm -rf "$work"; return 1; }
  rm -rf "$work"
}

# rig_guard puts the unreachable routes and the counting drop rules of RIG_RANGES in place
# (idempotent; the up and down scripts of the rig's parts call it, so that they hold from the first
# file the rig writes on, a stopped rig included).
rig_guard() {
  apt_ensure iptables
  local r i
  for r in "${RIG_RANGES[@]}"; do ip route replace unreachable "$r" metric "$RIG_ROUTE_METRIC"; done
  # The chain is rebuilt only when its rules are not these (a rebuild resets the counters).
  local want=("-N $RIG_GUARD_CHAIN") have
  for i in "${RIG_INTERFACES[@]}"; do want+=("-A $RIG_GUARD_CHAIN -o $i -j RETURN"); done
  for r in "${RIG_RANGES[@]}"; do want+=("-A $RIG_GUARD_CHAIN -d $r -j DROP"); done
  have=$(iptables -S "$RIG_GUARD_CHAIN" 2>/dev/null || true)
  if [ "$have" != "$(printf '%s\n' "${want[@]}")" ]; then
    iptables -N "$RIG_GUARD_CHAIN" 2>/dev/null || iptables -F "$RIG_GUARD_CHAIN"
    for i in "${RIG_INTERFACES[@]}"; do iptables -A "$RIG_GUARD_CHAIN" -o "$i" -j RETURN; done
    for r in "${RIG_RANGES[@]}"; do iptables -A "$RIG_GUARD_CHAIN" -d "$r" -j DROP; done
  fi
  for i in OUTPUT FORWARD; do
    iptables -C "$i" -j "$RIG_GUARD_CHAIN" 2>/dev/null || iptables -I "$i" 1 -j "$RIG_GUARD_CHAIN"
  done
}

# rig_guard_reset puts the guard in place and zeroes its counters: what rig_leaks reports is from
# then on (the demo and the end-to-end run call it as they start).
rig_guard_reset() {
  rig_guard
  iptables -Z "$RIG_GUARD_CHAIN"
}

# rig_leaks prints how many packets for RIG_RANGES the guard dropped on their way out of another
# interface since rig_guard_reset; fails when the guard is not in place (its chain or a hook is
# missing: then it guarded nothing).
rig_leaks() {
  apt_ensure iptables
  local rules c
  rules=$(iptables -L "$RIG_GUARD_CHAIN" -n -v -x) || return 1
  for c in OUTPUT FORWARD; do iptables -C "$c" -j "$RIG_GUARD_CHAIN" || return 1; done
  awk '$3 == "DROP" {n += $1} END {print n + 0}' <<<"$rules"
}

# phase NAME COMMAND... runs COMMAND between two lines that name it, the second with the seconds
# it took, and returns COMMAND's exit status: a failed phase fails its caller whether the caller
# runs under errexit or collects the status (`phase ... || rc=$?`, where bash ignores errexit
# inside the function). PHASE_PREFIX (for example "e2e: ") is put before NAME.
phase() {
  local name=$1 start=$SECONDS rc=0
  shift
  echo "=== ${PHASE_PREFIX:-}${name}"
  "$@" || rc=$?
  if [ "$rc" -eq 0 ]; then
    echo "=== ${PHASE_PREFIX:-}${name}: $((SECONDS - start))s"
  else
    echo "=== ${PHASE_PREFIX:-}${name}: FAILED (exit status $rc) after $((SECONDS - start))s"
  fi
  return "$rc"
}

# apt_ensure PACKAGE... installs, as root, those of the Debian packages that are missing, without
# starting any daemon their maintainer scripts would start; apt's output goes to $APT_LOG
# (default: a temporary file, printed on failure). Waits for another apt to finish.
apt_ensure() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  [ "$(id -u)" -eq 0 ] || { log "missing Debian packages ${missing[*]}: install them, or run as root"; return 1; }
  log "installing ${missing[*]}"
  local policy=/usr/sbin/policy-rc.d ours=0 out="${APT_LOG:-$(mktemp)}" rc=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && ours=1
  fi
  { apt-get -o DPkg::Lock::Timeout=600 update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"; } >"$out" 2>&1 || rc=$?
  [ "$ours" -eq 0 ] || rm -f "$policy"
  [ "$rc" -eq 0 ] || { tail -20 "$out" >&2; return "$rc"; }
}
