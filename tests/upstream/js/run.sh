#!/usr/bin/env bash
# Runs upstream toolnexus's JS tests (js/test/*.test.ts) against our Node package
# (docs/upstream-suites.md). Not part of `make test`: CI has no checkout of upstream.
#
#   run.sh [--package DIR] [--record out.tsv] CHECKOUT [file.test.ts ...]
#
# CHECKOUT is a directory holding upstream's tree (js/, examples/), e.g.
#   git -C <clone> archive HEAD js examples | tar -x -C CHECKOUT
# --package takes a built package (a folder like bindings-node with toolnexus.node in it);
# without it, the addon is built here with cargo into $CARGO_TARGET_DIR and assembled as one.
# Everything lands under $CARGO_TARGET_DIR/upstream-js; nothing is written into the source
# tree or the checkout.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
work="$CARGO_TARGET_DIR/upstream-js"
npm_ci=(npm ci --no-audit --no-fund --loglevel=error)

package="" record=()
while [ $# -gt 0 ]; do
  case "$1" in
    --package) package="$(realpath "$2")"; shift 2 ;;
    --record) record=(--record "$(realpath -m "$2")"); shift 2 ;;
    *) break ;;
  esac
done
if [ $# -lt 1 ] || [ ! -f "$1/js/package.json" ]; then
  echo "usage: $0 [--package DIR] [--record out.tsv] CHECKOUT [file.test.ts ...]" >&2
  echo "  (CHECKOUT must hold upstream's js/ and examples/)" >&2
  exit 2
fi
checkout="$(realpath "$1")"; shift
mkdir -p "$work"

# 1. The TypeScript our repo pins (bindings-node's lock): its node_modules when installed,
# else installed here from the same package.json and lock.
ts="$repo/bindings-node/node_modules/typescript"
if [ ! -f "$ts/package.json" ]; then
  tools="$work/tools"
  if ! cmp -s "$repo/bindings-node/package-lock.json" "$tools/package-lock.json" || [ ! -d "$tools/node_modules/typescript" ]; then
    rm -rf "$tools" && mkdir -p "$tools"
    cp "$repo/bindings-node/package.json" "$repo/bindings-node/package-lock.json" "$tools/"
    (cd "$tools" && "${npm_ci[@]}" --ignore-scripts)
  fi
  ts="$tools/node_modules/typescript"
fi

# 2. Upstream's runtime dependencies (the MCP SDK, yaml), pinned by upstream's own lock;
# installed again only when that lock changes.
deps="$work/deps"
if ! cmp -s "$checkout/js/package-lock.json" "$deps/package-lock.json" || [ ! -d "$deps/node_modules" ]; then
  rm -rf "$deps" && mkdir -p "$deps"
  cp "$checkout/js/package.json" "$checkout/js/package-lock.json" "$deps/"
  (cd "$deps" && "${npm_ci[@]}" --omit=dev --ignore-scripts)
fi

# 3. Our package: the one given, or the addon built here (a debug build, as
# `npm run build:debug` makes; cargo directly, so that nothing lands in bindings-node/).
if [ -z "$package" ]; then
  package="$work/package"
  (cd "$repo" && cargo build --locked -p toolnexus-node --quiet)
  mkdir -p "$package"
  for f in index.js index.mjs errors.js index.d.ts package.json; do cp "$repo/bindings-node/$f" "$package/$f"; done
  cp "$CARGO_TARGET_DIR/debug/libtoolnexus_node.so" "$package/toolnexus.node.tmp"
  mv "$package/toolnexus.node.tmp" "$package/toolnexus.node"
fi
[ -f "$package/toolnexus.node" ] || { echo "upstream js: $package has no toolnexus.node" >&2; exit 2; }

# 4. The tree the tests run in, laid out as upstream's: js/test, js/dist (the shim),
# js/node_modules, and the checkout's examples/ beside js/.
tree="$work/tree"
rm -rf "$tree" && mkdir -p "$tree/js"
ln -s "$deps/node_modules" "$tree/js/node_modules"
[ -d "$checkout/examples" ] && ln -s "$checkout/examples" "$tree/examples"
node "$here/prepare.mjs" "$ts" "$checkout/js" "$package" "$tree"

# 5. The tests, with no network but loopback (as the Python suite: upstream names fake hosts),
# and no API key from the caller's environment.
netns=()
if unshare -n true 2>/dev/null; then netns=(unshare -n python3 "$repo/tests/upstream/python/loopback.py")
elif unshare -rn true 2>/dev/null; then netns=(unshare -rn python3 "$repo/tests/upstream/python/loopback.py")
else echo "upstream js: no network namespace (unshare -n): running with the host's network" >&2
fi
exec env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u OPENROUTER_API_KEY \
  "${netns[@]}" "$(command -v node)" "$here/suite.mjs" "$tree" ${record[@]+"${record[@]}"} "$@"
