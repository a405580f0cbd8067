#!/usr/bin/env bash
# make test's second lane: runs CMD (the suites) while `packaging/dist.sh --compile`, the
# release builds dist-check packages, compiles in the background at the lowest CPU priority.
#
#   tests/with-release-builds.sh CMD...
#
# Much of the suites' time leaves a core idle (valgrind, Miri, the bindings' own test runs);
# the release builds take it, and dist-check then finds them made. At nice 19 they get next to
# no CPU while a suite wants both cores. cargo locks target/release, so a suite that builds
# there too (python-tests' wheel) waits for the build in progress instead of racing it; the
# debug builds go on beside it. The builds' output is kept in a file and printed, stamped with
# the time of each line, once CMD is done; a failure of either fails the whole.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
[[ $# -gt 0 ]] || { echo "usage: $0 CMD..." >&2; exit 2; }
mkdir -p "$CARGO_TARGET_DIR"
log="$CARGO_TARGET_DIR/release-builds.log"

# Started under job control, it has a process group of its own, so that the whole build (cargo
# and every rustc) stops with it if CMD fails.
set -m
(nice -n 19 "$repo/packaging/dist.sh" --compile 2>&1 | "$repo/tests/stamp-lines.sh") </dev/null >"$log" &
builds=$!
set +m
trap 'kill -- -"$builds" 2>/dev/null || true' EXIT

status=0
"$@" || status=$?
if [[ $status -ne 0 ]]; then
  echo "with-release-builds: the suites failed (exit $status); the release builds are stopped" >&2
  exit "$status"
fi

echo "== the release builds beside the suites ($log):"
built=0
wait "$builds" || built=$?
trap - EXIT
sed 's/^/  /' "$log"
if [[ $built -ne 0 ]]; then
  echo "with-release-builds: packaging/dist.sh --compile failed (exit $built)" >&2
  exit "$built"
fi
