# Shared by packaging/*.sh (sourced, not run): where things are, the versions, and the
# scratch environment the artefacts are checked in.
#
# Versions come from one place per rule (DECISIONS.md, "Release artefacts"): the workspace's
# `version` in Cargo.toml for the engine and every artefact but the Python package, whose
# version is the upstream API it mirrors, from bindings-python/pyproject.toml.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
dist="${DIST_DIR:-$repo/dist}"
engine_version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/Cargo.toml" | head -n 1)"
python_version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/bindings-python/pyproject.toml" | head -n 1)"
# The one release build of libtoolnexus every artefact over the C ABI takes (make dist builds it).
release_dir="$CARGO_TARGET_DIR/release"
checks="$CARGO_TARGET_DIR/dist-check"

say() { echo "== $*"; }
die() { echo "packaging: $*" >&2; exit 1; }

# A fresh, empty directory for one check, removed by the next run of the same check.
scratch() {
  local dir="$checks/$1"
  rm -rf "$dir"
  mkdir -p "$dir/home" "$dir/tmp"
  echo "$dir"
}

# Runs a command as a user without Rust would: PATH is the system's plus the given tool
# directories (never ~/.cargo/bin or rustup's), HOME and CARGO_HOME are the scratch dir's.
#   norust SCRATCH "DIR:DIR" CMD...
norust() {
  local dir="$1" extra="$2"
  shift 2
  env -i PATH="${extra:+$extra:}/usr/bin:/bin" HOME="$dir/home" CARGO_HOME="$dir/home/.cargo" \
    RUSTUP_HOME="$dir/home/.rustup" LANG=C.UTF-8 TMPDIR="$dir/tmp" "$@"
}

# Fails unless the environment norust gives has no Rust toolchain.
assert_norust() {
  if norust "$1" "${2:-}" sh -c 'command -v cargo || command -v rustc || command -v rustup'; then
    die "a Rust toolchain is reachable from the check's PATH"
  fi
}

# Whether TEXT has a line matching the extended regex PATTERN:  contains TEXT PATTERN
# Checks grep a captured string, never a pipe: under pipefail `cmd | grep -q` fails whenever
# grep stops reading before cmd has written everything (cmd dies of SIGPIPE), so a match
# could read as "no match".
contains() { grep -qE -- "$2" <<<"$1"; }
