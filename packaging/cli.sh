#!/usr/bin/env bash
# The CLI artefact: dist/cli/toolnexus-<version>-linux-x86_64.tar.gz, the release `toolnexus`
# binary and its README. The check unpacks it where no Rust is on PATH and drives the demo
# through a durable halt, the store's list and a resume from a second process.
#   packaging/cli.sh build|check
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

name="toolnexus-$engine_version-linux-x86_64"
tarball="$dist/cli/$name.tar.gz"

build() {
  local stage="$CARGO_TARGET_DIR/dist-stage/$name"
  rm -rf "$stage" && mkdir -p "$stage" "$dist/cli"
  cp "$release_dir/toolnexus" "$stage/"
  cp "$repo/cli/README.md" "$stage/"
  tar -C "$(dirname "$stage")" -czf "$tarball" "$name"
  echo "$tarball"
}

check() {
  local dir out id
  dir="$(scratch cli)"
  tar -C "$dir" -xzf "$tarball"
  assert_norust "$dir"
  local bin="$dir/$name/toolnexus"
  out="$(norust "$dir" "" "$bin" --version)"
  [[ "$out" == "toolnexus $engine_version" ]] || die "toolnexus --version printed: $out"
  # The demo halts on its approval (exit 3) in a SQLite store; another process resumes it.
  set +e
  norust "$dir" "" "$bin" demo --durable "$dir/runs.db" </dev/null >"$dir/demo.out" 2>&1
  [[ $? -eq 3 ]] || { cat "$dir/demo.out"; die "toolnexus demo --durable did not halt (exit 3)"; }
  set -e
  id="$(norust "$dir" "" "$bin" pending --store "$dir/runs.db" | cut -d' ' -f1)"
  [[ -n $id ]] || die "toolnexus pending listed no run"
  out="$(norust "$dir" "" "$bin" resume "$id" --store "$dir/runs.db" --demo --approve 2>&1)" ||
    { echo "$out"; die "toolnexus resume failed"; }
  grep -q "Build 42 is live" <<<"$out" || { echo "$out"; die "the resumed demo did not finish"; }
  echo "cli: $name: demo halted, listed and resumed without Rust"
}

"${1:?usage: packaging/cli.sh build|check}"
