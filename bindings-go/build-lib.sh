#!/usr/bin/env bash
# Builds libtoolnexus and puts its static archive where cgo links it (bindings-go/lib/<GOOS>-<GOARCH>),
# so that `go build` gives a self-contained binary. The one step before using this module from a
# checkout (a released module carries the archive: make dist).
#
#   bindings-go/build-lib.sh [release|debug]     (default: release)
#
# Honours CARGO_TARGET_DIR (default: <repo>/target). Works from any directory.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
profile="${1:-release}"
case "$profile" in
  release) flags=(--release) ;;
  debug) flags=() ;;
  *) echo "usage: $0 [release|debug]" >&2; exit 2 ;;
esac
target="${CARGO_TARGET_DIR:-$repo/target}"
(cd "$repo" && CARGO_TARGET_DIR="$target" cargo build -p toolnexus-ffi --locked ${flags[@]+"${flags[@]}"})
# cgo.go links lib/<GOOS>-<GOARCH>/libtoolnexus.a, the layout a released module ships.
platform="$(cd "$here" && go env GOOS)-$(cd "$here" && go env GOARCH)"
mkdir -p "$here/lib/$platform"
cp "$target/$profile/libtoolnexus.a" "$here/lib/$platform/libtoolnexus.a.tmp"
mv "$here/lib/$platform/libtoolnexus.a.tmp" "$here/lib/$platform/libtoolnexus.a"
"$here/write-libstamp.sh" "$here/lib/$platform/libtoolnexus.a" "$here/libstamp.go"
echo "bindings-go/lib/$platform/libtoolnexus.a: libtoolnexus ($profile) from $target/$profile"
