#!/usr/bin/env bash
# Starts a single-node Kubernetes cluster on this machine, as root: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubelet and kube-proxy built from k8s.io/kubernetes
# through the module proxy (hack/kube/binaries.sh), Debian's containerd, runc and CNI plugins. The
# node is Ready, the scheduler places pods, kube-proxy routes Services (iptables), the controller
# manager deletes namespaces and collects garbage. Idempotent: when it is up, prints where and
# returns.
#
#   hack/kube/up.sh      then: export KUBECONFIG=$CAPO_KUBE_DIR/kubeconfig
#
# Everything goes under $CAPO_KUBE_DIR (default /var/tmp/capo-kube): kubeconfig (an
# administrator's), pki/, etc/ (each component's configuration), logs/ (one file per component),
# run/ (containerd's socket), the kubelet's and containerd's state. hack/kube/down.sh stops it and
# removes its pods, bridge and iptables rules.
#
# The node's address is the pod bridge's gateway (10.244.0.1): the API server listens there and
# on nothing this machine's network can reach. No registry is reachable, so images are imported
# into the node's containerd (hack/kube/lib.sh: kube_import), the pod sandbox image too (built
# from hack/kube/pause). There is no cluster DNS: pods resolve names as this machine does.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/hack/kube/lib.sh"
dir="$KUBE_DIR"
kubeconfig="$dir/kubeconfig"
mkdir -p "$dir"/{pki,etc/cni,logs,run,pids,etcd,kubelet,containerd/root,containerd/state,images}

[ "$(id -u)" -eq 0 ] || { log "run as root: the kubelet, containerd and kube-proxy need it"; exit 1; }

if kube_running; then
  log "already running; KUBECONFIG=$kubeconfig"
  exit 0
fi
start=$SECONDS
apt_ensure containerd runc containernetworking-plugins iptables conntrack openssl buildah ca-certificates kmod
"$root/hack/kube/down.sh" >/dev/null 2>&1 || true
# Before the first file that names the node's ranges: they never leave this machine (hack/lib.sh).
rig_guard
bin="$("$root/hack/kube/binaries.sh")"
log "binaries ready ($((SECONDS - start))s)"

# --- certificates: one CA signs every serving and client certificate; a key pair signs the
# ServiceAccount tokens.
pki="$dir/pki"
if [ ! -s "$pki/ca.crt" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$pki/ca.key" -out "$pki/ca.crt" -days 3650 \
    -subj "/CN=capo-kube-ca" -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
fi
# cert NAME SUBJECT USAGE [SAN] writes pki/NAME.{crt,key}, signed by the CA.
cert() {
  local name=$1 subject=$2 usage=$3 san=${4:-}
  [ -s "$pki/$name.crt" ] && return 0
  local ext; ext=$(mktemp)
  { echo "basicConstraints=critical,CA:FALSE"; echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$usage"; [ -z "$san" ] || echo "subjectAltName=$san"; } >"$ext"
  openssl req -newkey rsa:2048 -nodes -keyout "$pki/$name.key" -out "$pki/$name.csr" -subj "$subject" 2>/dev/null
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -out "$pki/$name.crt" -days 3650 -extfile "$ext" 2>/dev/null
  rm -f "$ext" "$pki/$name.csr"
}
cert apiserver "/CN=kube-apiserver" serverAuth \
  "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:$KUBE_NODE_IP,IP:$KUBE_API_SERVICE_IP,IP:127.0.0.1"
cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
cert admin "/O=system:masters/CN=capo-kube-admin" clientAuth
cert controller-manager "/CN=system:kube-controller-manager" clientAuth
cert scheduler "/CN=system:kube-scheduler" clientAuth
cert kube-proxy "/CN=system:kube-proxy" clientAuth
cert node "/O=system:nodes/CN=system:node:$KUBE_NODE_NAME" clientAuth
cert kubelet "/CN=$KUBE_NODE_NAME" serverAuth "DNS:$KUBE_NODE_NAME,IP:$KUBE_NODE_IP,IP:127.0.0.1"

# kubeconfig FILE CERT writes a kubeconfig that authenticates with pki/CERT.
write_kubeconfig() {
  cat >"$1" <<KC
apiVersion: v1
kind: Config
clusters:
- name: capo-kube
  cluster:
    server: https://$KUBE_NODE_IP:$KUBE_API_PORT
    certificate-authority-data: $(base64 -w0 "$pki/ca.crt")
users:
- name: $2
  user:
    client-certificate-data: $(base64 -w0 "$pki/$2.crt")
    client-key-data: $(base64 -w0 "$pki/$2.key")
contexts:
- name: capo-kube
  context: {cluster: capo-kube, user: $2}
current-context: capo-kube
KC
  chmod 600 "$1"
}
write_kubeconfig "$kubeconfig" admin
for c in controller-manager scheduler kube-proxy node; do write_kubeconfig "$dir/etc/$c.kubeconfig" "$c"; done

# --- the node's network: the pod bridge (holding the node's address), forwarding, and bridged
# traffic through iptables so that kube-proxy's rules see pod-to-Service packets.
ip link show "$KUBE_BRIDGE" >/dev/null 2>&1 || ip link add "$KUBE_BRIDGE" type bridge
# Captured first: `grep -q` ending the pipe early would fail it under pipefail.
bridge_addrs=$(ip -4 addr show dev "$KUBE_BRIDGE")
[[ "$bridge_addrs" == *"inet $KUBE_NODE_IP/"* ]] || ip addr add "$KUBE_NODE_IP/24" dev "$KUBE_BRIDGE"
ip link set "$KUBE_BRIDGE" up
# This machine's own connections to Services (the API server calling a webhook) are routed before
# kube-proxy's rules rewrite them to a pod: through the bridge, preferred over the rig's
# unreachable route; the route goes with the bridge.
ip route replace "$KUBE_SERVICE_CIDR" dev "$KUBE_BRIDGE" metric 100
sysctl -qw net.ipv4.ip_forward=1
[ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] || modprobe br_netfilter 2>/dev/null || true
[ ! -e /proc/sys/net/bridge/bridge-nf-call-iptables ] || sysctl -qw net.bridge.bridge-nf-call-iptables=1

cat >"$dir/etc/cni/10-capo.conflist" <<CNI
{
  "cniVersion": "0.4.0",
  "name": "capo-pods",
  "plugins": [
    {"type": "bridge", "bridge": "$KUBE_BRIDGE", "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$KUBE_NODE_POD_CIDR", "gateway": "$KUBE_NODE_IP"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
CNI

cat >"$dir/etc/containerd.toml" <<TOML
version = 2
root = "$dir/containerd/root"
state = "$dir/containerd/state"
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$KUBE_CONTAINERD_SOCK"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$KUBE_PAUSE_IMAGE"
  # This machine refuses an oom_score_adj below a process's current one (0), which the kubelet
  # asks for the pod sandbox (-998) and Guaranteed pods (-997): keep them at the current one.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$dir/etc/cni"
TOML

cat >"$dir/etc/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $KUBE_NODE_IP
port: 10250
healthzBindAddress: 127.0.0.1
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $pki/kubelet.crt
tlsPrivateKeyFile: $pki/kubelet.key
containerRuntimeEndpoint: unix://$KUBE_CONTAINERD_SOCK
cgroupDriver: cgroupfs
# This machine's cgroups are v1 (hybrid): kubelets since v1.35 refuse them unless told.
failCgroupV1: false
failSwapOn: false
resolvConf: /etc/resolv.conf
# The disk is shared with the local OpenStack and the build caches: evict late, collect images
# never (every image is imported, none can be pulled again).
evictionHard: {memory.available: "200Mi", nodefs.available: "2%", imagefs.available: "2%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
maxPods: 60
# The end-to-end crash specs kill the provider's manager many times within minutes: restart a
# container within 5 s at most, not after the default's growing delay of up to 5 minutes.
crashLoopBackOff: {maxContainerRestartPeriod: 5s}
YAML

cat >"$dir/etc/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: $dir/etc/kube-proxy.kubeconfig}
clusterCIDR: $KUBE_POD_CIDR
hostnameOverride: $KUBE_NODE_NAME
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
# Leave this machine's conntrack table and timeouts, and its loopback's routing, as they are.
conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: false}
# A score below 0 is refused here (see containerd's configuration).
oomScoreAdj: 0
YAML

# launch NAME COMMAND... runs COMMAND in the background, its output in logs/NAME.log.
launch() {
  local name=$1; shift
  setsid nohup "$@" >>"$dir/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$dir/pids/$name"
}
# wait_for WHAT SECONDS COMMAND... polls COMMAND every 0.3 s until it succeeds.
wait_for() {
  local what=$1 limit=$2 deadline=$((SECONDS + $2)); shift 2
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || { log "$what not within ${limit}s; logs in $dir/logs"; tail -5 "$dir/logs/"*.log >&2; exit 1; }
    sleep 0.3
  done
}
kubectl() { "$bin/kubectl" --kubeconfig "$kubeconfig" "$@"; }

launch etcd "$bin/etcd" --name capo-kube --data-dir "$dir/etcd" \
  --listen-client-urls "http://127.0.0.1:$KUBE_ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$KUBE_ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$((KUBE_ETCD_PORT + 1))" --initial-advertise-peer-urls "http://127.0.0.1:$((KUBE_ETCD_PORT + 1))" \
  --initial-cluster "capo-kube=http://127.0.0.1:$((KUBE_ETCD_PORT + 1))" --listen-metrics-urls "" --quota-backend-bytes 4294967296
launch kube-apiserver "$bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$KUBE_ETCD_PORT" \
  --bind-address "$KUBE_NODE_IP" --advertise-address "$KUBE_NODE_IP" --secure-port "$KUBE_API_PORT" \
  --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" --client-ca-file "$pki/ca.crt" \
  --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" --kubelet-client-key "$pki/apiserver-kubelet-client.key" \
  --kubelet-certificate-authority "$pki/ca.crt" --kubelet-preferred-address-types InternalIP \
  --service-account-issuer https://kubernetes.default.svc.cluster.local --service-account-key-file "$pki/sa.pub" \
  --service-account-signing-key-file "$pki/sa.key" --service-cluster-ip-range "$KUBE_SERVICE_CIDR" \
  --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction --allow-privileged=true \
  --profiling=false --endpoint-reconciler-type lease
wait_for "the API server" 120 kubectl get --raw /readyz
launch kube-controller-manager "$bin/kube-controller-manager" --kubeconfig "$dir/etc/controller-manager.kubeconfig" \
  --authentication-kubeconfig "$dir/etc/controller-manager.kubeconfig" --authorization-kubeconfig "$dir/etc/controller-manager.kubeconfig" \
  --bind-address 127.0.0.1 --leader-elect=false --use-service-account-credentials \
  --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
  --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" \
  --allocate-node-cidrs --cluster-cidr "$KUBE_POD_CIDR" --node-cidr-mask-size 24 --service-cluster-ip-range "$KUBE_SERVICE_CIDR" \
  --controllers '*,-cloud-node-lifecycle,-service-lb-controller,-node-route-controller'
launch kube-scheduler "$bin/kube-scheduler" --kubeconfig "$dir/etc/scheduler.kubeconfig" \
  --authentication-kubeconfig "$dir/etc/scheduler.kubeconfig" --authorization-kubeconfig "$dir/etc/scheduler.kubeconfig" \
  --bind-address 127.0.0.1 --leader-elect=false
launch containerd containerd --config "$dir/etc/containerd.toml"
wait_for "containerd" 60 ctr --address "$KUBE_CONTAINERD_SOCK" version

# The pod sandbox image, before the kubelet wants it.
go build -trimpath -ldflags "-s -w -buildid=" -o "$dir/images/pause" "$root/hack/kube/pause"
kube_image_from_binary "$KUBE_PAUSE_IMAGE" "$dir/images/pause" "$dir/images/pause.tar"
kube_import "$dir/images/pause.tar"

launch kubelet "$bin/kubelet" --config "$dir/etc/kubelet.yaml" --kubeconfig "$dir/etc/node.kubeconfig" \
  --root-dir "$dir/kubelet" --hostname-override "$KUBE_NODE_NAME" --node-ip "$KUBE_NODE_IP" --oom-score-adj 0
launch kube-proxy "$bin/kube-proxy" --config "$dir/etc/kube-proxy.yaml"

node_ready() { [ "$(kubectl get node "$KUBE_NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
wait_for "the node Ready" 180 node_ready
# Service accounts: the controller manager makes each namespace's "default"; pods wait for it.
wait_for "the default ServiceAccount" 60 kubectl get serviceaccount default
date -u +%FT%TZ >"$dir/ready"
log "up in $((SECONDS - start))s: node $KUBE_NODE_NAME Ready; export KUBECONFIG=$kubeconfig (logs in $dir/logs)"
