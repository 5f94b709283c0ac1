#!/usr/bin/env bash
# Builds Shopify's Toxiproxy server once per machine, for the fault tests
# (engine/toxitest): a TCP proxy on loopback whose toxics (latency,
# bandwidth, slicer, timeout, reset_peer, limit_data) stand in for netem,
# which this kernel lacks. Prints one environment assignment on stdout
# (LLMLOAD_TOXIPROXY=...); everything else goes to stderr.
#
# The source comes from the Go module proxy (`go install` of its
# cmd/server package at a fixed version); the binary lands in a cache
# outside the repository, so a machine builds it once (about a minute on
# 2 cores).
set -euo pipefail

VERSION=v2.5.0
CACHE=${LLMLOAD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/llmload}
DIR=$CACHE/toxiproxy-$VERSION
BIN=$DIR/toxiproxy-server

log() { echo "toxiproxy.sh: $*" >&2; }

build() {
	local tmp start=$SECONDS
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' RETURN
	log "building toxiproxy-server $VERSION from the Go module proxy"
	# Outside any module, so the repository's go.mod plays no part; the
	# binary is named after its package (server), renamed below.
	(cd "$tmp" && GOBIN=$tmp/bin GOFLAGS=-mod=mod go install "github.com/Shopify/toxiproxy/v2/cmd/server@$VERSION") >&2
	mkdir -p "$DIR"
	# Through a temporary name, so that an interrupted build never leaves a
	# binary that a later run would trust.
	cp "$tmp/bin/server" "$BIN.tmp"
	mv "$BIN.tmp" "$BIN"
	log "built $BIN in $((SECONDS - start)) s"
}

[ -x "$BIN" ] || build
"$BIN" -version >&2 || { log "$BIN does not run"; exit 1; }
echo "LLMLOAD_TOXIPROXY=$BIN"
