#!/usr/bin/env bash
# Builds every fuzz target and runs each for a while, one after the other, one job each:
#
#   fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]     (default: 10 seconds, every target)
#   FUZZ_PROFILE=dev fuzz/run.sh ...                 a quicker build for short runs (Cargo.toml)
#
# Each target starts from its committed seeds (fuzz/corpus/<target>/); what it finds on the
# way is kept under the target directory, not in the repository. Prints, per target, the
# executions and whether it crashed, hung, leaked or ran out of memory; exits non-zero if
# any did (the input is then in fuzz/artifacts/<target>/). Installs the pinned nightly and
# cargo-fuzz first when they are missing. Build output goes to $CARGO_TARGET_DIR/fuzz, apart
# from the stable builds.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# The nightly is pinned once for the project (tests/nightly.env); cargo-fuzz here.
# shellcheck source=../tests/nightly.env
. "$here/../tests/nightly.env"
CARGO_FUZZ_VERSION=0.13.2
# Per input: longer than this is a hang. Memory past this is a failure too.
TIMEOUT_S=10
RSS_LIMIT_MB=2048

seconds=${1:-10}
shift || true
root=${CARGO_TARGET_DIR:-$here/../target}
build_dir=$root/fuzz
tools=$root/tools/cargo-fuzz-$CARGO_FUZZ_VERSION

if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(sed -n 's/^name = "\(.*\)"$/\1/p' "$here/Cargo.toml" | grep -v '^toolnexus')
fi

if ! rustup run "$NIGHTLY" rustc --version >/dev/null 2>&1; then
  rustup toolchain install "$NIGHTLY" --profile minimal
fi
if [ ! -x "$tools/bin/cargo-fuzz" ]; then
  # Built in cargo's own temporary directory, not in the fuzz or the stable build; unoptimised,
  # so that it installs sooner: it only drives cargo.
  env -u CARGO_TARGET_DIR cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked --quiet --debug --root "$tools"
fi
export PATH=$tools/bin:$PATH RUSTUP_TOOLCHAIN=$NIGHTLY

# ASan, debug assertions and overflow checks (cargo-fuzz's defaults); 16 codegen units keep
# the first build short, at some cost in executions per second.
cd "$here"
profile=${FUZZ_PROFILE:-release}
case $profile in
  release) profile_flag=() ;;
  dev) profile_flag=(--dev) ;;
  *) echo "fuzz/run.sh: FUZZ_PROFILE is release or dev, not $profile" >&2; exit 2 ;;
esac
cargo fuzz build "${profile_flag[@]}" --target-dir "$build_dir" --codegen-units 16

bin_dir=$build_dir/x86_64-unknown-linux-gnu/${profile/dev/debug}
failed=0
printf '%-16s %12s %8s  %s\n' target executions seconds outcome
for t in "${targets[@]}"; do
  found=$build_dir/found/$t
  mkdir -p "$found" "$here/artifacts/$t" "$here/corpus/$t"
  log=$build_dir/logs/$t.log
  mkdir -p "$(dirname "$log")"
  case $t in
    http_*) dict=$here/dict/http.dict ;;
    *) dict=$here/dict/json.dict ;;
  esac
  start=$(date +%s)
  set +e
  # New inputs go to the first directory ($found); the seeds stay as committed.
  "$bin_dir/$t" "$found" "$here/corpus/$t" -max_total_time="$seconds" -timeout="$TIMEOUT_S" \
    -rss_limit_mb="$RSS_LIMIT_MB" -malloc_limit_mb="$RSS_LIMIT_MB" -print_final_stats=1 \
    -dict="$dict" -artifact_prefix="$here/artifacts/$t/" >"$log" 2>&1
  rc=$?
  set -e
  took=$(($(date +%s) - start))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  if [ $rc -eq 0 ]; then
    outcome="ok: 0 crashes, 0 hangs"
  else
    failed=1
    why=$(grep -m1 -oE 'ERROR: libFuzzer: [a-z-]+|ERROR: AddressSanitizer: [a-z-]+|panicked at' "$log" || echo "exit $rc")
    outcome="FAILED ($why): see $log and $here/artifacts/$t/"
  fi
  printf '%-16s %12s %8s  %s\n' "$t" "${execs:-?}" "$took" "$outcome"
done
exit $failed
