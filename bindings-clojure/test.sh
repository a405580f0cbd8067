#!/usr/bin/env bash
# The Clojure binding's tests, from any working directory on a clean clone:
#   1. builds libtoolnexus (cargo build -p toolnexus-ffi, into $CARGO_TARGET_DIR or target/);
#   2. fetches the jars (Maven Central, cached in ~/.m2) and writes the classpath;
#   3. runs the three seed examples in tests/seeds/clojure/ unchanged through run-example,
#      with test-support/ (the test-only koine.json) added through TOOLNEXUS_EXTRA_CLASSPATH;
#      each must exit 0 and print OK;
#   4. runs clojure.test: the answer vocabulary and tools, the loop through the client
#      (durable halt + run-with-answer, exceptions), conversation memory (ask by id, resume by id), the engine's tables and the shared
#      bad-option cases, and every conformance scenario.
# Ends with one line `N passed, M failed` (seeds + assertions); exits non-zero on a failure.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cargo_target="${CARGO_TARGET_DIR:-$root/target}"

echo "== building libtoolnexus"
(cd "$root" && CARGO_TARGET_DIR="$cargo_target" cargo build -q -p toolnexus-ffi --locked)
export TOOLNEXUS_LIB="$cargo_target/debug/libtoolnexus.so"

echo "== resolving the classpath"
mkdir -p "$here/target"
if ! mvn -q -B -f "$here/pom.xml" dependency:build-classpath -Dmdep.outputFile="$here/target/classpath.txt" \
  >"$here/target/mvn.log" 2>&1; then
  cat "$here/target/mvn.log"
  echo "0 passed, 1 failed"
  exit 1
fi

passed=0
failed=0

echo "== seed examples"
# The seeds require koine.json, which the library does not ship: test-support/ stands in for
# it, on the classpath of these runs only.
for example in "$root"/tests/seeds/clojure/*.clj; do
  name="${example#"$root"/}"
  if out="$(TOOLNEXUS_EXTRA_CLASSPATH="$here/test-support" "$here/run-example" "$example" 2>"$here/target/seed.err")" \
    && grep -qx 'OK' <<<"$out"; then
    echo "ok: $name"
    passed=$((passed + 1))
  else
    echo "FAILED: $name"
    printf '%s\n' "$out"
    cat "$here/target/seed.err"
    failed=$((failed + 1))
  fi
done

echo "== clojure.test"
report="$here/target/clojure-test.out"
set +e
TOOLNEXUS_EXTRA_CLASSPATH="$here/test" TOOLNEXUS_CONFORMANCE_DIR="$root/tests/conformance" \
  "$here/run-example" -m toolnexus.test-runner >"$report" 2>&1
set -e
grep -v '^TEST-COUNTS ' "$report" || true
counts="$(grep '^TEST-COUNTS ' "$report" | tail -n 1 || true)"
if [ -n "$counts" ]; then
  t_pass="$(sed -E 's/.*pass=([0-9]+).*/\1/' <<<"$counts")"
  t_fail="$(sed -E 's/.*fail=([0-9]+).*/\1/' <<<"$counts")"
  passed=$((passed + t_pass))
  failed=$((failed + t_fail))
else
  echo "FAILED: the clojure.test runner did not finish"
  failed=$((failed + 1))
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
