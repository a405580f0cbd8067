#!/usr/bin/env bash
# The Node binding's checks, from a clean clone: install the pinned napi-rs CLI, build the
# addon from source (debug), check the committed index.d.ts against the generated one and
# typecheck it (with the TypeScript the CLI pins), and run the tests with node's built-in
# runner. Ends with "N passed, M failed".
set -euo pipefail
cd "$(dirname "$0")"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/tmp/tn-node-target}"

npm ci --no-audit --no-fund --loglevel=error

committed="$(mktemp)"
tap="$(mktemp)"
trap 'rm -f "$committed" "$tap"' EXIT
cp index.d.ts "$committed"
npm run --silent build:debug
drift=0
if ! diff -u "$committed" index.d.ts; then
  echo "index.d.ts is stale: commit the regenerated file (npm run build:debug)" >&2
  drift=1
fi
if ! node_modules/.bin/tsc --noEmit --strict --lib es2022,dom index.d.ts; then
  echo "index.d.ts does not typecheck" >&2
  drift=$((drift + 1))
fi

status=0
node --test --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$tap" test/ || status=$?

passed="$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$tap" | tail -1)"
failed="$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$tap" | tail -1)"
passed="${passed:-0}"
failed="$(( ${failed:-0} + drift ))"
if [[ "$status" -ne 0 && "$failed" -eq 0 ]]; then failed=1; fi
echo "${passed} passed, ${failed} failed"
[[ "$failed" -eq 0 ]]
