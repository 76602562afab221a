#!/usr/bin/env bash
# Shared settings of the single-node cluster's scripts (hack/kube). Sourced, never run.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

KUBE_DIR="${CAPO_KUBE_DIR:-/var/tmp/capo-kube}"
# The node's address: the pod bridge's gateway, so that the API server, the kubelet and the
# Services' backends are reachable from the pods and from this machine, and from nowhere else.
KUBE_NODE_IP=10.244.0.1
KUBE_POD_CIDR=10.244.0.0/16
KUBE_NODE_POD_CIDR=10.244.0.0/24
KUBE_BRIDGE=capo-kube0
KUBE_SERVICE_CIDR=10.96.0.0/16
KUBE_API_SERVICE_IP=10.96.0.1
KUBE_API_PORT=6443
KUBE_ETCD_PORT=2479
KUBE_NODE_NAME=capo-node
KUBE_CONTAINERD_SOCK="$KUBE_DIR/run/containerd.sock"
# The pod sandbox image: built here from hack/kube/pause (no registry is reachable).
KUBE_PAUSE_IMAGE=registry.k8s.io/pause:3.10-capo

# The node's processes, each with its pid in $KUBE_DIR/pids/<name>.
KUBE_COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy)

# kube_component_runs NAME: whether that component's recorded process is alive.
kube_component_runs() {
  local p
  p=$(cat "$KUBE_DIR/pids/$1" 2>/dev/null) && [ -n "$p" ] && kill -0 "$p" 2>/dev/null
}

# kube_running: whether every component runs and the node was Ready once.
kube_running() {
  local c
  [ -e "$KUBE_DIR/ready" ] || return 1
  for c in "${KUBE_COMPONENTS[@]}"; do kube_component_runs "$c" || return 1; done
}

kube_ctr() { ctr --address "$KUBE_CONTAINERD_SOCK" --namespace k8s.io "$@"; }

# kube_import ARCHIVE [NAME] imports an image archive (docker-archive or OCI) into the node's
# containerd, where the kubelet finds it; an OCI archive without a name in it takes NAME.
kube_import() {
  local archive=$1 name=${2:-}
  if [ -n "$name" ]; then
    kube_ctr images import --index-name "$name" "$archive" >/dev/null
  else
    kube_ctr images import "$archive" >/dev/null
  fi
}

# kube_image_from_binary NAME BINARY ARCHIVE [ENTRYPOINT_ARGS...] writes ARCHIVE, a docker-archive
# of an image FROM scratch named NAME that holds BINARY as /<its base name> and the CA bundle, runs
# it as 65532 and takes ENTRYPOINT_ARGS as its entrypoint's first arguments; kept when ARCHIVE's
# stamp says it holds this BINARY already.
kube_image_from_binary() {
  local name=$1 binary=$2 archive=$3
  shift 3
  local sum; sum="$(sha256sum "$binary" | cut -d' ' -f1) $name $*"
  [ -s "$archive" ] && [ "$(cat "$archive.stamp" 2>/dev/null)" = "$sum" ] && return 0
  apt_ensure buildah runc ca-certificates
  local ctx base entry=""
  ctx=$(mktemp -d)
  base=$(basename "$binary")
  cp "$binary" "$ctx/$base"
  cp /etc/ssl/certs/ca-certificates.crt "$ctx/"
  for a in "/$base" "$@"; do entry+="\"$a\","; done
  cat >"$ctx/Containerfile" <<CF
FROM scratch
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY $base /$base
USER 65532:65532
ENTRYPOINT [${entry%,}]
CF
  mkdir -p "$(dirname "$archive")"
  rm -f "$archive"
  buildah build --quiet --layers=false --timestamp 0 -f "$ctx/Containerfile" -t "docker-archive:$archive:$name" "$ctx" >/dev/null
  rm -rf "$ctx"
  echo "$sum" >"$archive.stamp"
}
