#!/usr/bin/env bash
# Runs upstream toolnexus's Go tests (golang/*_test.go) against our Go module
# (docs/upstream-suites.md). Not part of `make test`: CI has no checkout of upstream.
#
#   run.sh [--ours DIR] [--record out.tsv] CHECKOUT [test id or TestName ...]
#
# CHECKOUT is a directory holding upstream's tree (golang/, examples/), e.g.
#   git -C <clone> archive HEAD golang examples | tar -x -C CHECKOUT
# Everything lands under $CARGO_TARGET_DIR/upstream-go: libtoolnexus (debug) is built with
# cargo into $CARGO_TARGET_DIR, a copy of our package gets upstream's test files beside it,
# what does not compile against it is pruned (harness/prune.go), and each remaining test runs
# in its own process. Upstream's test dependencies (mcp-go and its own) come from the Go
# module proxy, pinned by upstream's go.sum. Nothing is written into the source tree or the
# checkout. --ours takes another copy of our Go module than bindings-go/ (e.g. a snapshot).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
work="$CARGO_TARGET_DIR/upstream-go"

ours="$repo/bindings-go" record=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ours) ours="$(realpath "$2")"; shift 2 ;;
    --record) record=(-record "$(realpath -m "$2")"); shift 2 ;;
    *) break ;;
  esac
done
if [ $# -lt 1 ] || [ ! -f "$1/golang/go.mod" ]; then
  echo "usage: $0 [--ours DIR] [--record out.tsv] CHECKOUT [test id or TestName ...]" >&2
  echo "  (CHECKOUT must hold upstream's golang/ and examples/)" >&2
  exit 2
fi
checkout="$(realpath "$1")"; shift
mkdir -p "$work"

(cd "$repo" && cargo build --locked -p toolnexus-ffi --quiet)
(cd "$here/harness" && GOFLAGS=-buildvcs=false go build -o "$work/harness" .)
"$work/harness" prepare -checkout "$checkout" -ours "$ours" -include "$repo/include" \
  -lib "$CARGO_TARGET_DIR/debug/libtoolnexus.a" -work "$work"

# The tests, with no network but loopback (as the Python suite), and no API key from the
# caller's environment.
netns=()
if unshare -n true 2>/dev/null; then netns=(unshare -n python3 "$repo/tests/upstream/python/loopback.py")
elif unshare -rn true 2>/dev/null; then netns=(unshare -rn python3 "$repo/tests/upstream/python/loopback.py")
else echo "upstream go: no network namespace (unshare -n): running with the host's network" >&2
fi
exec env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u OPENROUTER_API_KEY \
  "${netns[@]}" "$work/harness" run -work "$work" -expectations "$here/expectations.txt" \
  -timeout "${UPSTREAM_SUITE_TEST_TIMEOUT:-60}" ${record[@]+"${record[@]}"} "$@"
