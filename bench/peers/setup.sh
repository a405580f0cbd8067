#!/usr/bin/env bash
# Builds and installs everything `make bench-peers` runs, under $CARGO_TARGET_DIR/bench-peers
# (never in the source tree): the mock model and floor, the engine's Rust runner, release builds
# of the Python, Node and Go bindings, and the peers from PyPI and npm, pinned (Python by hash:
# requirements/*.txt, made by pip-compile from requirements/*.in; Node by package-lock.json).
# Idempotent: a venv or folder already installed from the same pins is kept. A peer that fails
# to install is reported and left out; the bench lists it as missing.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
out="$CARGO_TARGET_DIR/bench-peers"
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null 2>&1 || python=python3
mkdir -p "$out/logs"
status=0

step() { # step NAME COMMAND...: runs it, its output in logs/NAME.log
  local name=$1; shift
  if "$@" >"$out/logs/$name.log" 2>&1; then echo "ok    $name"; else echo "FAIL  $name (see $out/logs/$name.log)"; status=1; fi
}

# A venv per Python row, installed from its hash-pinned requirements; the pins' digest is kept
# beside it so a changed pin reinstalls.
py_peer() {
  local name=$1 req="$here/requirements/$1.txt" venv="$out/venvs/$1"
  local sum; sum="$(sha256sum "$req" | cut -c1-16)"
  [[ -f "$venv/.pins" && "$(cat "$venv/.pins")" == "$sum" ]] && { echo "ok    $name (installed)"; return; }
  rm -rf "$venv" && "$python" -m venv "$venv" &&
    "$venv/bin/pip" install --quiet --disable-pip-version-check --require-hashes -r "$req" && echo "$sum" >"$venv/.pins"
}

build_mock() {
  (cd "$here/mock" && CARGO_TARGET_DIR="$out/mock-target" cargo build --release --locked --quiet)
}

build_rust_runner() {
  (cd "$repo" && cargo build --release --locked --quiet -p toolnexus-bench --bin runner)
}

# Our binding, built from this tree by pip (maturin, release), in a venv of its own.
python_binding() {
  local venv="$out/venvs/ours"
  [[ -x "$venv/bin/python" ]] || "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$repo/bindings-python"
}

# The Node addon, release, assembled with the package's JS files into a package folder.
node_binding() {
  local pkg="$out/node-toolnexus"
  (cd "$repo" && cargo build --release --locked --quiet -p toolnexus-node) || return 1
  mkdir -p "$pkg"
  cp "$repo"/bindings-node/{package.json,index.js,index.mjs,errors.js,index.d.ts} "$pkg/"
  cp "$CARGO_TARGET_DIR/release/libtoolnexus_node.so" "$pkg/toolnexus.node"
}

node_peers() {
  local dir="$out/node-peers"
  mkdir -p "$dir"
  cp "$here/node-peers/package.json" "$here/node-peers/package-lock.json" "$dir/"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
}

# The Go runners link the release libtoolnexus (build-lib.sh puts it where cgo looks).
go_runners() {
  "$repo/bindings-go/build-lib.sh" release || return 1
  (cd "$here/runners/go" && go build -o "$out/go/toolnexus" ./toolnexus && go build -o "$out/go/rawloop" ./rawloop)
}

step mock build_mock
step rust-runner build_rust_runner
step python-binding python_binding
step node-binding node_binding
step go-runners go_runners
for peer in upstream pydantic-ai langgraph openai-agents; do step "py-$peer" py_peer "$peer"; done
step node-peers node_peers
exit $status
