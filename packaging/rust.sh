#!/usr/bin/env bash
# The Rust artefact: dist/rust/toolnexus-<version>.crate, made by `cargo package -p toolnexus`,
# which also builds the packaged crate on its own (its verification), so a crate that only
# builds inside the workspace fails here. A warning from cargo fails too.
#   packaging/rust.sh build     (the check is the verification: `check` lists what shipped)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

crate="toolnexus-$engine_version.crate"

build() {
  local flags=(--locked) log="$CARGO_TARGET_DIR/dist-stage/cargo-package.log"
  mkdir -p "$dist/rust" "$(dirname "$log")"
  # A release is made from a committed tree; a working copy with changes is packaged as it is.
  if [[ -n "$(git -C "$repo" status --porcelain 2>/dev/null)" ]]; then
    echo "packaging/rust.sh: the working tree has changes; packaging it as it is (--allow-dirty)"
    flags+=(--allow-dirty)
  fi
  # The verification builds with the packaged crate's own manifest, which has no [profile]:
  # the workspace's dev debug level, given here, lets it reuse the dependencies the tests built.
  (cd "$repo" && CARGO_PROFILE_DEV_DEBUG=line-tables-only cargo package -p toolnexus "${flags[@]}") 2>&1 | tee "$log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || die "cargo package failed"
  if grep -q '^warning' "$log"; then die "cargo package warned (see above)"; fi
  cp "$CARGO_TARGET_DIR/package/$crate" "$dist/rust/"
  echo "$dist/rust/$crate"
}

check() {
  local files
  files="$(tar -tzf "$dist/rust/$crate")"
  grep -qx "toolnexus-$engine_version/Cargo.toml" <<<"$files" || die "$crate has no Cargo.toml"
  grep -qx "toolnexus-$engine_version/src/lib.rs" <<<"$files" || die "$crate has no src/lib.rs"
  echo "rust: $crate, $(wc -l <<<"$files") files, $(du -h "$dist/rust/$crate" | cut -f1)"
}

"${1:?usage: packaging/rust.sh build|check}"
