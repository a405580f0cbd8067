#!/usr/bin/env bash
# The core's own unit tests under Miri (undefined behaviour, leaks, data races in the pure
# modules: the answer vocabulary, options, redaction, relay, wire formats, the JSON writer,
# toolkit, errors).
# Installs the pinned nightly (tests/nightly.env) with its miri and rust-src components when
# missing. Isolation is off because request ids read the clock. Without the default features
# (MCP, the stores): none of these tests needs them, and their crates took a minute of the
# build (measured: 46 s from nothing instead of 2 min, the same 80 tests).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=nightly.env
. "$here/nightly.env"
root="${CARGO_TARGET_DIR:-$here/../target}"
if ! rustup run "$NIGHTLY" cargo miri --version >/dev/null 2>&1; then
  rustup toolchain install "$NIGHTLY" --profile minimal --component miri,rust-src
fi
cd "$here/.."
# The pure modules only: Miri cannot run what spawns processes or opens sockets.
MIRIFLAGS=-Zmiri-disable-isolation CARGO_TARGET_DIR="$root/miri" \
  cargo "+$NIGHTLY" miri test --quiet -p toolnexus --no-default-features --lib -- \
  answer:: client:: error:: hooks:: json_scan:: json_write:: redact:: relay:: tool:: toolkit:: types:: warning::
