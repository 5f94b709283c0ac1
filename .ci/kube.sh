#!/usr/bin/env bash
# A real single-node Kubernetes cluster for the cluster tests, built from
# the registries this project may use and run in a network namespace of
# its own.
#
#   .ci/kube.sh build            builds the binaries once per machine and
#                                prints LLMLOAD_KUBE_BIN=DIR
#   .ci/kube.sh up STATE [PID]   starts a cluster whose state lives in STATE
#                                (a new or empty directory); prints
#                                KUBECONFIG=... and LLMLOAD_KUBE_NETNS=...;
#                                with PID, the cluster is torn down when
#                                that process ends, however it ends
#   .ci/kube.sh down STATE       stops it and removes its state
#
# Where everything comes from: kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet, kube-proxy and kubectl from the k8s.io/kubernetes
# Go module, built in a module of ours that puts its staging modules
# (k8s.io/api, k8s.io/apiserver, ...) at their matching v0.x versions in
# place of ./staging; etcd from the go.etcd.io/etcd/server/v3 module at the
# version Kubernetes itself requires; the pause binary compiled from the
# Kubernetes module's own build/pause/linux/pause.c; containerd, runc, the
# CNI plugins, iptables and conntrack from Debian. The Go builds (about
# 10 minutes on 2 cores with an empty module cache) land in a cache outside
# the repository, so a machine builds them once.
#
# The cluster: etcd and the control plane listen on 127.0.0.1 inside the
# namespace; the node's address is on a veth there; pods get a
# bridge and addresses of the namespace's own; kube-proxy's iptables rules
# and containerd's mounts belong to this cluster alone. Deleting the
# namespace takes every interface with it.
set -euo pipefail

KUBE_VERSION=v1.34.4
STAGING_VERSION=v0.34.4
CACHE=${LLMLOAD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/llmload}
BIN=$CACHE/kube-$KUBE_VERSION/bin
# The names the cluster's pods run: the pause image is ours, so it carries
# a name of ours, never registry.k8s.io's.
PAUSE_IMAGE=localhost/llmload/pause:$KUBE_VERSION
COMPONENTS="kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl"
REPO=$(cd "$(dirname "$0")/.." && pwd)
SELF=$REPO/.ci/kube.sh

log() { echo "kube.sh: $*" >&2; }
die() { log "$*"; exit 1; }

need() {
	command -v "$1" >/dev/null 2>&1 && return
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		log "installing $2 from Debian"
		apt-get update -qq >/dev/null
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null
	fi
	command -v "$1" >/dev/null 2>&1 || die "needs $1 (Debian package $2)"
}

# runtime_deps installs what a cluster runs beside the built binaries.
runtime_deps() {
	need ip iproute2
	need containerd containerd
	need runc runc
	need iptables iptables
	need conntrack conntrack
	need socat socat
	need openssl openssl
	need nsenter util-linux
	[ -x /usr/lib/cni/bridge ] || need /usr/lib/cni/bridge containernetworking-plugins
}

built() {
	for c in $COMPONENTS etcd pause; do [ -x "$BIN/$c" ] || return 1; done
	[ -f "$BIN/pause.tar" ]
}

build() {
	if built; then
		runtime_deps
		echo "LLMLOAD_KUBE_BIN=$BIN"
		return
	fi
	need gcc gcc
	runtime_deps
	local src=$CACHE/kube-$KUBE_VERSION/src
	mkdir -p "$src" "$BIN"
	cd "$src"
	log "fetching k8s.io/kubernetes@$KUBE_VERSION from the module proxy"
	cat >go.mod <<-EOF
		module llmload.local/kubebuild

		go 1.24.0

		require k8s.io/kubernetes $KUBE_VERSION
	EOF
	go mod download k8s.io/kubernetes@$KUBE_VERSION
	local mod
	mod=$(go mod download -json k8s.io/kubernetes@$KUBE_VERSION | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[ -d "$mod" ] || die "k8s.io/kubernetes@$KUBE_VERSION did not download"
	# Kubernetes' own go.mod points its staging modules at ./staging, which
	# a module download does not have; the proxy serves each at v0.x. The
	# sample-* ones are not served, and no component needs them.
	{
		echo
		echo "replace ("
		sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/k8s.io/.*#\1#p' "$mod/go.mod" |
			grep -v '^k8s.io/sample-' | while read -r m; do echo "	$m => $m $STAGING_VERSION"; done
		echo ")"
	} >>go.mod
	local etcd
	etcd=$(sed -n 's#^[[:space:]]*go.etcd.io/etcd/server/v3 \(v[^ ]*\).*#\1#p' "$mod/go.mod")
	[ -n "$etcd" ] || die "k8s.io/kubernetes@$KUBE_VERSION names no etcd server version"
	echo "require go.etcd.io/etcd/server/v3 $etcd" >>go.mod
	# Stamped as a release build does: the control plane compares versions,
	# and an unstamped build calls itself v0.0.0-master.
	local minor=${KUBE_VERSION#v1.}
	minor=${minor%%.*}
	local ld="-s -w"
	for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ld="$ld -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
		ld="$ld -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
	done
	local pkgs=""
	for c in $COMPONENTS; do pkgs="$pkgs k8s.io/kubernetes/cmd/$c"; done
	log "building $COMPONENTS and etcd $etcd (about 10 minutes on 2 cores)"
	local tmp
	tmp=$(mktemp -d "$CACHE/kube-build.XXXXXX")
	trap 'rm -rf "$tmp"' RETURN
	# -mod=mod: our module lists only what it builds; the go command fills
	# in the rest from Kubernetes' own requirements.
	CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ld" -o "$tmp/" $pkgs
	CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3
	gcc -Os -static -DVERSION="$KUBE_VERSION" -o "$tmp/pause" "$mod/build/pause/linux/pause.c"
	# Its report goes to stderr: stdout is the KEY=value lines .ci/run reads.
	(cd "$REPO" && go run ./cmd/llmload-image --binary "$tmp/pause" --entrypoint /pause \
		--user 65535 --name "$PAUSE_IMAGE" --no-certs --out "$tmp/pause.tar") >&2
	# Through temporary names, so that an interrupted build never leaves
	# binaries that a later run would trust.
	for f in $COMPONENTS etcd pause pause.tar; do mv "$tmp/$f" "$BIN/$f"; done
	echo "LLMLOAD_KUBE_BIN=$BIN"
}


# The cluster's addresses, all inside its own network namespace: the
# node's on a veth, the pods' on the bridge, the Services'
# virtual ones behind kube-proxy's rules.
NODE_IP=10.213.0.1
NODE_NAME=llmload-node
POD_CIDR=10.214.0.0/24
SERVICE_CIDR=10.215.0.0/24
SERVICE_IP=10.215.0.1 # the kubernetes Service: the first of SERVICE_CIDR

# cert NAME CN [O] [SANS]: a key and a certificate signed by the cluster's
# CA, for a client (no SANS) or a server.
cert() {
	local name=$1 cn=$2 org=${3:-} sans=${4:-} subj="/CN=$2"
	[ -n "$org" ] && subj="/O=$org$subj"
	openssl req -new -newkey rsa:2048 -nodes -keyout "$PKI/$name.key" -subj "$subj" -out "$PKI/$name.csr" 2>/dev/null
	{
		echo "basicConstraints=CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		if [ -n "$sans" ]; then
			echo "extendedKeyUsage=serverAuth,clientAuth"
			echo "subjectAltName=$sans"
		else
			echo "extendedKeyUsage=clientAuth"
		fi
	} >"$PKI/$name.ext"
	openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
		-days 2 -sha256 -extfile "$PKI/$name.ext" -out "$PKI/$name.crt" 2>/dev/null
}

# kubeconfig FILE SERVER NAME: a kubeconfig with NAME's client certificate.
kubeconfig() {
	cat >"$1" <<-EOF
		apiVersion: v1
		kind: Config
		clusters:
		- name: llmload
		  cluster:
		    server: $2
		    certificate-authority: $PKI/ca.crt
		users:
		- name: $3
		  user:
		    client-certificate: $PKI/$3.crt
		    client-key: $PKI/$3.key
		contexts:
		- name: llmload
		  context: {cluster: llmload, user: $3, namespace: default}
		current-context: llmload
	EOF
}

pki() {
	mkdir -p "$PKI"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$PKI/ca.key" -out "$PKI/ca.crt" \
		-days 2 -subj "/CN=llmload-test-cluster-ca" 2>/dev/null
	cert apiserver kube-apiserver "" "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:$NODE_IP,IP:$SERVICE_IP"
	cert admin admin system:masters
	cert apiserver-kubelet apiserver-kubelet system:masters
	cert controller-manager system:kube-controller-manager
	cert scheduler system:kube-scheduler
	cert kube-proxy system:kube-proxy
	cert kubelet "system:node:$NODE_NAME" system:nodes
	openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
	openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
	local c
	for c in admin controller-manager scheduler kube-proxy kubelet; do
		kubeconfig "$STATE/$c.kubeconfig" https://127.0.0.1:6443 "$c"
	done
}

configs() {
	mkdir -p "$STATE/cni" "$STATE/containerd" "$STATE/kubelet" "$STATE/pv"
	cat >"$STATE/cni/10-bridge.conflist" <<-EOF
		{"cniVersion": "1.0.0", "name": "llmload", "plugins": [
		  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
		   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}],
		     "dataDir": "$STATE/cni/ipam"}},
		  {"type": "portmap", "capabilities": {"portMappings": true}}
		]}
	EOF
	cat >"$STATE/containerd/config.toml" <<-EOF
		version = 2
		root = "$STATE/containerd/root"
		state = "$STATE/containerd/state"
		[grpc]
		  address = "$STATE/containerd/containerd.sock"
		[ttrpc]
		  address = "$STATE/containerd/containerd.sock.ttrpc"
		[plugins."io.containerd.internal.v1.opt"]
		  path = "$STATE/containerd/opt"
		[plugins."io.containerd.grpc.v1.cri"]
		  sandbox_image = "$PAUSE_IMAGE"
		  stream_server_address = "127.0.0.1"
		  enable_selinux = false
		  # This machine's root lacks CAP_SYS_RESOURCE, so no process may
		  # lower its OOM score below containerd's (the kubelet asks -998
		  # for a pod's sandbox): clamped instead of failing every pod.
		  restrict_oom_score_adj = true
		  [plugins."io.containerd.grpc.v1.cri".cni]
		    bin_dir = "/usr/lib/cni"
		    conf_dir = "$STATE/cni"
		  [plugins."io.containerd.grpc.v1.cri".containerd]
		    snapshotter = "overlayfs"
		    default_runtime_name = "runc"
		    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
		      runtime_type = "io.containerd.runc.v2"
		      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
		        BinaryName = "$(command -v runc)"
		        SystemdCgroup = false
	EOF
	# cgroup v1 with cgroupfs, as this machine has; no QoS hierarchy, so
	# that the cluster leaves no cgroups of its own behind; eviction only
	# when the disk is nearly full, since CI disks run close to it.
	cat >"$STATE/kubelet/config.yaml" <<-EOF
		apiVersion: kubelet.config.k8s.io/v1beta1
		kind: KubeletConfiguration
		authentication:
		  anonymous: {enabled: false}
		  webhook: {enabled: false}
		  x509: {clientCAFile: "$PKI/ca.crt"}
		authorization: {mode: AlwaysAllow}
		address: "$NODE_IP"
		healthzBindAddress: 127.0.0.1
		cgroupDriver: cgroupfs
		failCgroupV1: false
		cgroupsPerQOS: false
		enforceNodeAllocatable: []
		failSwapOn: false
		containerRuntimeEndpoint: "unix://$STATE/containerd/containerd.sock"
		podCIDR: "$POD_CIDR"
		resolvConf: "$STATE/resolv.conf"
		evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
		imageGCHighThresholdPercent: 100
		imageGCLowThresholdPercent: 99
		serializeImagePulls: false
		registerNode: true
		rotateCertificates: false
		serverTLSBootstrap: false
		tlsCertFile: "$PKI/kubelet-serving.crt"
		tlsPrivateKeyFile: "$PKI/kubelet-serving.key"
	EOF
	cert kubelet-serving "system:node:$NODE_NAME" system:nodes "DNS:$NODE_NAME,IP:$NODE_IP"
	# No resolver: the cluster reaches nothing outside, and pods name
	# Services by address.
	: >"$STATE/resolv.conf"
}

# start NAME CMD...: a component in the background, its log in STATE/logs.
start() {
	local name=$1
	shift
	"$@" >"$STATE/logs/$name.log" 2>&1 &
	echo $! >"$STATE/run/$name.pid"
}

# waitfor WHAT SECONDS CMD...: retries CMD until it succeeds.
waitfor() {
	local what=$1 secs=$2 i
	shift 2
	for ((i = 0; i < secs * 5; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	log "$what did not come up within ${secs}s; its log:"
	return 1
}

kctl() { "$BIN/kubectl" --kubeconfig "$STATE/admin.kubeconfig" "$@"; }

# inner runs as the first process of the cluster's own PID and mount
# namespaces, inside its network namespace: when it dies, the kernel
# kills every process of the cluster (containers included, their PID
# namespaces being nested in this one), and the mounts go with the mount
# namespace.
inner() {
	# containerd 1.6 keeps pods' network namespaces under /run/netns: ours.
	mkdir -p /run/netns && mount -t tmpfs -o mode=0755 tmpfs /run/netns
	mkdir -p "$STATE/logs" "$STATE/run"
	ip link set lo up
	# The node's address on one end of a veth pair whose other end stays
	# here unused: this kernel has no dummy interfaces.
	ip link add kube0 type veth peer name kube0-peer
	ip addr add "$NODE_IP/32" dev kube0
	ip link set kube0-peer up
	ip link set kube0 up
	ip route add default dev kube0
	sysctl -qw net.ipv4.ip_forward=1
	sysctl -qw net.bridge.bridge-nf-call-iptables=1 2>/dev/null || true
	start etcd "$BIN/etcd" --data-dir "$STATE/etcd" --listen-client-urls http://127.0.0.1:2379 \
		--advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 \
		--initial-advertise-peer-urls http://127.0.0.1:2380 --initial-cluster default=http://127.0.0.1:2380 \
		--unsafe-no-fsync --quota-backend-bytes 1073741824
	start containerd containerd --config "$STATE/containerd/config.toml"
	start kube-apiserver "$BIN/kube-apiserver" --etcd-servers http://127.0.0.1:2379 \
		--bind-address 0.0.0.0 --advertise-address "$NODE_IP" --secure-port 6443 \
		--tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
		--client-ca-file "$PKI/ca.crt" --service-cluster-ip-range "$SERVICE_CIDR" \
		--service-account-issuer https://kubernetes.default.svc --service-account-key-file "$PKI/sa.pub" \
		--service-account-signing-key-file "$PKI/sa.key" --authorization-mode Node,RBAC \
		--kubelet-client-certificate "$PKI/apiserver-kubelet.crt" --kubelet-client-key "$PKI/apiserver-kubelet.key" \
		--kubelet-preferred-address-types InternalIP --enable-priority-and-fairness=false \
		--profiling=false --v 1
	waitfor kube-apiserver 120 kctl get --raw /readyz || { tail -n 30 "$STATE/logs/kube-apiserver.log" >&2; exit 1; }
	start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig "$STATE/controller-manager.kubeconfig" \
		--bind-address 127.0.0.1 --leader-elect=false --use-service-account-credentials \
		--service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
		--cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
		--controllers '*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-route' --profiling=false --v 1
	start kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$STATE/scheduler.kubeconfig" \
		--bind-address 127.0.0.1 --leader-elect=false --profiling=false --v 1
	waitfor containerd 60 ctr --address "$STATE/containerd/containerd.sock" version ||
		{ tail -n 30 "$STATE/logs/containerd.log" >&2; exit 1; }
	ctr --address "$STATE/containerd/containerd.sock" -n k8s.io images import --no-unpack=false "$BIN/pause.tar" >/dev/null
	start kubelet "$BIN/kubelet" --config "$STATE/kubelet/config.yaml" --kubeconfig "$STATE/kubelet.kubeconfig" \
		--root-dir "$STATE/kubelet/root" --cert-dir "$STATE/kubelet/pki" --hostname-override "$NODE_NAME" \
		--node-ip "$NODE_IP" --v 1
	start kube-proxy "$BIN/kube-proxy" --kubeconfig "$STATE/kube-proxy.kubeconfig" --proxy-mode iptables \
		--hostname-override "$NODE_NAME" --cluster-cidr "$POD_CIDR" --conntrack-max-per-core 0 \
		--metrics-bind-address 127.0.0.1:10249 --healthz-bind-address 127.0.0.1:10256 --v 1
	touch "$STATE/run/started"
	# Stays, as the namespaces' first process, until it is killed.
	while :; do sleep 3600; done
}

up() {
	STATE=$(mkdir -p "$1" && cd "$1" && pwd)
	PKI=$STATE/pki
	local owner=${2:-}
	[ -z "$(ls -A "$STATE")" ] || die "$STATE is not empty: a cluster needs a state directory of its own"
	[ "$(id -u)" = 0 ] || die "a cluster needs root (network namespaces, mounts, containers)"
	build >/dev/null
	local t0=$SECONDS
	mkdir -p "$STATE/logs" "$STATE/run"
	pki
	configs
	local ns
	ns=llmload-kube-$(basename "$STATE" | tr -c 'a-zA-Z0-9-\n' - | tail -c 20)-$$
	echo "$ns" >"$STATE/netns"
	ip netns add "$ns"
	# setsid: the cluster outlives this script, not its owner (below).
	setsid nsenter --net="/run/netns/$ns" unshare --pid --fork --kill-child --mount-proc --propagation slave \
		env STATE="$STATE" PKI="$PKI" "$SELF" _inner >"$STATE/logs/inner.log" 2>&1 </dev/null &
	echo $! >"$STATE/run/cluster.pid"
	# The API server on this namespace's loopback, for kubectl and the
	# tests: each connection crosses into the cluster's namespace.
	local port
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null ||
		echo $((20000 + RANDOM % 20000)))
	setsid socat TCP-LISTEN:"$port",bind=127.0.0.1,reuseaddr,fork \
		EXEC:"nsenter --net=/run/netns/$ns socat STDIO TCP\:127.0.0.1\:6443" >"$STATE/logs/forward.log" 2>&1 </dev/null &
	echo $! >"$STATE/run/forward.pid"
	kubeconfig "$STATE/kubeconfig" "https://127.0.0.1:$port" admin
	if [ -n "$owner" ]; then
		# A killed test still takes its cluster down.
		# It stops only this cluster: a state directory reused by
		# another cluster (its netns file names another namespace) is
		# left alone.
		setsid bash -c 'while kill -0 "$1" 2>/dev/null && [ "$(cat "$2/netns" 2>/dev/null)" = "$4" ]; do sleep 1; done
			if [ "$(cat "$2/netns" 2>/dev/null)" = "$4" ]; then "$3" down "$2"; else kill -KILL "$5" "$6" 2>/dev/null; ip netns delete "$4" 2>/dev/null; fi' \
			watch "$owner" "$STATE" "$SELF" "$ns" "$(cat "$STATE/run/cluster.pid")" "$(cat "$STATE/run/forward.pid")" >/dev/null 2>&1 </dev/null &
	fi
	if ! waitfor "the node" 180 node_ready || ! kill -0 "$(cat "$STATE/run/cluster.pid")" 2>/dev/null; then
		tail -n 20 "$STATE"/logs/*.log >&2 || true
		down "$STATE"
		exit 1
	fi
	log "cluster up in $((SECONDS - t0))s (state in $STATE)"
	echo "KUBECONFIG=$STATE/kubeconfig"
	echo "LLMLOAD_KUBE_NETNS=$ns"
	echo "LLMLOAD_KUBE_BIN=$BIN"
}

node_ready() {
	# A cluster whose first process died will not come up: stop waiting.
	kill -0 "$(cat "$STATE/run/cluster.pid")" 2>/dev/null || { log "the cluster stopped"; return 0; }
	[ -e "$STATE/run/started" ] || return 1
	"$BIN/kubectl" --kubeconfig "$STATE/kubeconfig" get node "$NODE_NAME" \
		-o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null | grep -qx True
}

down() {
	local state
	state=$(cd "$1" 2>/dev/null && pwd) || return 0
	[ -f "$state/netns" ] || [ -d "$state/run" ] || return 0
	local f pid
	for f in "$state/run/forward.pid" "$state/run/cluster.pid"; do
		[ -f "$f" ] || continue
		pid=$(cat "$f")
		# The cluster: killing the namespaces' first process (through
		# its unshare, which passes the kill on) ends all of it.
		pkill -KILL -P "$pid" 2>/dev/null || true
		kill -KILL "$pid" 2>/dev/null || true
	done
	sleep 0.5
	# Anything that escaped (a shim that double-forked out of reach would
	# still be in the namespaces' PID tree, but be thorough).
	pkill -KILL -f "$state/" 2>/dev/null || true
	if [ -f "$state/netns" ]; then
		ip netns delete "$(cat "$state/netns")" 2>/dev/null || true
	fi
	# runc's cgroups of the killed containers (containerd's k8s.io
	# parent): rmdir removes only those with no process and no child, so
	# another cluster's live ones stay.
	find /sys/fs/cgroup/*/k8s.io -depth -type d -exec rmdir {} \; 2>/dev/null || true
	rm -rf "$state"
}

case "${1:-}" in
build) build ;;
up)
	[ $# -ge 2 ] || die "usage: kube.sh up STATE [OWNER_PID]"
	up "$2" "${3:-}"
	;;
down)
	[ $# -eq 2 ] || die "usage: kube.sh down STATE"
	down "$2"
	;;
_inner) inner ;;
*)
	sed -n '2,/^set -e/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
