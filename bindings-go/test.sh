#!/usr/bin/env bash
# The Go binding's test command, from any directory, on a clean clone:
#   1. builds libtoolnexus (debug) and links it in (build-lib.sh),
#   2. go vet ./... and gofmt -l .
#   3. go test -race ./...  (conformance scenarios, suspension, cancel, panics, errors, hooks)
#   4. runs the Go seed examples of tests/seeds/go/, unchanged except their import line, each
#      in a temporary module that replaces this module with this folder, and checks `ok:`.
# Ends with `N passed, M failed` (N counts go tests and subtests, vet, gofmt, the build and
# each seed) and exits non-zero on any failure.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
module="github.com/toolnexus/toolnexus/bindings-go"
upstream_import='toolnexus "github.com/muthuishere/toolnexus/golang"'
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
passed=0
failed=0

ok() { passed=$((passed + 1)); echo "PASS: $1"; }
ko() {
  failed=$((failed + 1))
  echo "FAIL: $1"
  [[ -f ${2:-} ]] && tail -n 60 "$2" | sed 's/^/    /'
  return 0
}
summary() {
  echo "$passed passed, $failed failed"
  [[ $failed -eq 0 ]]
}

cd "$here"
if "$here/build-lib.sh" debug >"$logs/lib.log" 2>&1; then
  ok "libtoolnexus built ($CARGO_TARGET_DIR/debug) and linked from bindings-go/lib"
else
  ko "building libtoolnexus" "$logs/lib.log"
  summary
  exit 1
fi
if go vet ./... >"$logs/vet.log" 2>&1; then ok "go vet ./..."; else ko "go vet ./..." "$logs/vet.log"; fi
unformatted="$(gofmt -l .)"
if [[ -z $unformatted ]]; then ok "gofmt -l ."; else echo "$unformatted" >"$logs/fmt.log"; ko "gofmt: files not formatted" "$logs/fmt.log"; fi

if timeout 600 go test -race -count=1 -v ./... >"$logs/test.log" 2>&1; then
  test_status=0
else
  test_status=$?
fi
tests_passed=$(grep -c -- '--- PASS: ' "$logs/test.log" || true)
tests_failed=$(grep -c -- '--- FAIL: ' "$logs/test.log" || true)
passed=$((passed + tests_passed))
failed=$((failed + tests_failed))
grep -E -- '^(ok|FAIL|---|panic:)|^\s+--- FAIL' "$logs/test.log" | grep -v -- '--- PASS' || true
if [[ $test_status -ne 0 && $tests_failed -eq 0 ]]; then
  ko "go test -race ./... (exit $test_status)" "$logs/test.log"
elif [[ $tests_failed -ne 0 ]]; then
  echo "FAIL: go test -race ./... ($tests_failed failed)"
  grep -B2 -A25 -- '--- FAIL' "$logs/test.log" | head -n 120 | sed 's/^/    /'
else
  echo "PASS: go test -race ./... ($tests_passed tests and subtests)"
fi

for example in "$repo"/tests/seeds/go/example*.go; do
  name="seed go/$(basename "$example")"
  dir="$(mktemp -d "$logs/seed.XXXX")"
  if [[ $(grep -cxF "  $upstream_import" "$example" || true) -ne 1 ]]; then
    ko "$name: the upstream import line was not found exactly once"
    continue
  fi
  sed "s#^  $upstream_import\$#  toolnexus \"$module\"#" "$example" >"$dir/main.go"
  if [[ $(diff "$example" "$dir/main.go" | grep -c '^[<>]' || true) -ne 2 ]]; then
    ko "$name: rewriting the import changed more than one line"
    continue
  fi
  cat >"$dir/go.mod" <<MOD
module seedexample

go 1.22

require $module v0.0.0

replace $module => $here
MOD
  if (cd "$dir" && timeout 300 go run .) >"$dir/out.log" 2>&1 && grep -q '^ok:' "$dir/out.log"; then
    ok "$name: $(grep '^ok:' "$dir/out.log" | head -n 1)"
  else
    ko "$name" "$dir/out.log"
  fi
done

summary
