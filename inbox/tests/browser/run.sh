#!/usr/bin/env bash
# The inbox's browser test: builds the inbox_demo example, installs the pinned
# playwright-core (npm ci; it downloads no browser) and drives Debian's /usr/bin/chromium
# against the demo (inbox.test.mjs). Screenshots go to $CARGO_TARGET_DIR/inbox-browser.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
[ -x /usr/bin/chromium ] || { echo "inbox browser test: /usr/bin/chromium is missing (tests/setup.sh installs it)" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "inbox browser test: npm is missing (tests/setup.sh installs it)" >&2; exit 1; }
(cd "$root" && ${CARGO:-cargo} build -q -p toolnexus-inbox --example inbox_demo --locked)
cd "$here"
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --silent --no-audit --no-fund
rm -rf "$target/inbox-browser"
INBOX_DEMO="$target/debug/examples/inbox_demo" INBOX_SCREENSHOTS="$target/inbox-browser" \
  timeout 180 node inbox.test.mjs
