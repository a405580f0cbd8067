#!/usr/bin/env bash
# make dist / make dist-check: every release artefact into dist/, then each one checked.
#   packaging/dist.sh [ARTEFACT...]           build (default: all, in this order)
#   packaging/dist.sh --check [ARTEFACT...]   check what was built
#   packaging/dist.sh --compile [ARTEFACT...] only the release cargo builds the build starts with
#                                             (make test runs them beside the suites)
# Artefacts: c rust python go node clojure cli. Each is packaging/<artefact>.sh build|check.
# One release build of libtoolnexus serves the C tarball, the Go module and the Clojure jar;
# the Python and Node builds share its compiled engine through the one CARGO_TARGET_DIR.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

mode=build
case ${1:-} in
  --check) mode=check; shift ;;
  --compile) mode=compile; shift ;;
esac
artefacts=("$@")
[[ ${#artefacts[@]} -gt 0 ]] || artefacts=(c rust python go node clojure cli)
for artefact in "${artefacts[@]}"; do
  [[ -x "$repo/packaging/$artefact.sh" ]] || die "unknown artefact: $artefact"
done

# npm and Maven need a version in their own files: they must say the workspace's; the Python
# package's `__version__` must say pyproject.toml's (it is imported from a plain folder too,
# by the upstream suite, where no installed metadata could give it).
versions_agree() {
  local node clojure python
  python="$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$repo/bindings-python/python/toolnexus/__init__.py")"
  [[ $python == "$python_version" ]] ||
    die "bindings-python/python/toolnexus/__init__.py says $python, bindings-python/pyproject.toml $python_version"
  node="$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$repo/bindings-node/package.json")"
  clojure="$(sed -n '0,/<version>/s/^  <version>\(.*\)<\/version>$/\1/p' "$repo/bindings-clojure/pom.xml")"
  [[ $node == "$engine_version" ]] || die "bindings-node/package.json says $node, Cargo.toml $engine_version"
  [[ $clojure == "$engine_version" ]] || die "bindings-clojure/pom.xml says $clojure, Cargo.toml $engine_version"
  echo "versions: $engine_version (engine, C, Rust, Go, Node, Clojure), $python_version (Python: upstream's API)"
}

# The release builds. The C library has a cargo run of its own: in one run with the Node
# addon, cargo would unify the engine's features and libtoolnexus would allocate with the
# addon's mimalloc (DECISIONS.md, "The bindings allocate with mimalloc"). The Node addon and
# the CLI share a run, so they link side by side on the machine's cores (node.sh and cli.sh
# package what it made); the wheel's build takes the engine from here too, or python-tests
# already made it. Run a second time, each is cargo finding nothing to do.
release_builds() {
  local packages=()
  say "release build: -p toolnexus-ffi"
  (cd "$repo" && cargo build --release --locked -p toolnexus-ffi)
  [[ " ${artefacts[*]} " == *" node "* ]] && packages+=(-p toolnexus-node)
  [[ " ${artefacts[*]} " == *" cli "* ]] && packages+=(-p toolnexus-cli)
  if [[ ${#packages[@]} -gt 0 ]]; then
    say "release build: ${packages[*]}"
    (cd "$repo" && cargo build --release --locked "${packages[@]}")
  fi
}

started=$SECONDS
versions_agree
if [[ $mode == compile ]]; then
  release_builds
  say "release builds ($((SECONDS - started)) s)"
  exit 0
fi
if [[ $mode == build ]]; then
  [[ $# -gt 0 ]] || rm -rf "$dist"
  mkdir -p "$dist"
  release_builds
fi
for artefact in "${artefacts[@]}"; do
  say "$artefact: $mode"
  t=$SECONDS
  "$repo/packaging/$artefact.sh" "$mode"
  echo "($artefact $mode: $((SECONDS - t)) s)"
done
if [[ $mode == build ]]; then
  (cd "$dist" && find . -type f ! -name SHA256SUMS -printf '%P\n' | sort |
    xargs sha256sum >SHA256SUMS)
  say "dist/ ($((SECONDS - started)) s)"
  (cd "$dist" && find . -type f -printf '%s\t%P\n' | sort -k2 | awk -F'\t' '{printf "%12d  %s\n", $1, $2}')
else
  say "every artefact checked ($((SECONDS - started)) s): ${artefacts[*]}"
fi
