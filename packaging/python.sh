#!/usr/bin/env bash
# The Python artefacts: dist/python/toolnexus-<v>-cp39-abi3-manylinux_<glibc>_x86_64.whl (one
# abi3 wheel for CPython 3.9+, tagged by maturin's own audit) and the sdist toolnexus-<v>.tar.gz.
#   packaging/python.sh build   maturin build --release, maturin sdist
#   packaging/python.sh check   auditwheel show agrees with the wheel's tag; the wheel installs
#                               into a fresh venv with no Rust on PATH and runs a two-line
#                               program and the seed examples; the sdist builds and installs
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

tools="$CARGO_TARGET_DIR/dist-tools/venv"
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null 2>&1 || python=python3
# The interpreter itself, not a shim: the checks run it with a PATH of the system's only.
python="$("$python" -c 'import sys; print(sys.executable)')"

tool_venv() {
  [[ -x "$tools/bin/python" ]] || "$python" -m venv "$tools"
  "$tools/bin/python" -m pip install --quiet --disable-pip-version-check -r "$repo/packaging/requirements.txt"
}

build() {
  tool_venv
  rm -rf "$dist/python" && mkdir -p "$dist/python"
  (cd "$repo/bindings-python" &&
    "$tools/bin/maturin" build --release --locked --quiet --out "$dist/python" &&
    "$tools/bin/maturin" sdist --out "$dist/python")
  ls "$dist/python"
}

wheel() { ls "$dist/python"/toolnexus-"$python_version"-cp39-abi3-manylinux_*_x86_64.whl; }

check() {
  local whl dir tag shown
  whl="$(wheel)" || die "no abi3 manylinux wheel of toolnexus $python_version in $dist/python"
  tag="$(basename "$whl" .whl | sed 's/.*-abi3-//')"
  # auditwheel: the wheel's own tag must be one its external symbols allow, and nothing outside
  # the manylinux policy may be needed.
  shown="$("$tools/bin/auditwheel" show "$whl")"
  echo "$shown" | sed 's/^/    /'
  contains "$(tr -s ' \n' ' ' <<<"$shown")" "consistent with the following platform tag: \"$tag\"" ||
    die "auditwheel does not give the wheel's own tag $tag"

  dir="$(scratch python)"
  assert_norust "$dir"
  "$python" -m venv "$dir/venv"
  norust "$dir" "$dir/venv/bin" pip install --quiet --disable-pip-version-check --no-index "$whl"
  cat >"$dir/hello.py" <<'PY'
import toolnexus
print(toolnexus.__version__, toolnexus.ENGINE_VERSION, toolnexus.answer_output("r1", "yes").ok)
PY
  out="$(cd "$dir" && norust "$dir" "$dir/venv/bin" python hello.py)"
  echo "python (wheel): $out"
  [[ "$out" == "$python_version $engine_version True" ]] || die "the two-line program printed: $out"
  for seed in "$repo"/tests/seeds/python/example*.py; do
    out="$(cd "$dir" && norust "$dir" "$dir/venv/bin" python "$seed")"
    [[ "$out" == ok:* ]] || die "$seed printed: $out"
    echo "python seed $(basename "$seed"): $out"
  done

  # The sdist is a source build: it alone needs Rust, and it builds here from its own contents
  # (debug, to keep it short), into the shared target dir so the registry crates are reused.
  local sdist="$dist/python/toolnexus-$python_version.tar.gz"
  [[ -f $sdist ]] || die "no sdist $sdist"
  grep -qx "toolnexus-$python_version/Cargo.lock" <<<"$(tar -tzf "$sdist")" || die "the sdist has no Cargo.lock"
  # Unpacked as pip would, its files dated now: cargo must compile the engine from these
  # sources, not take a build of the same crate from the shared target dir as fresh.
  mkdir -p "$dir/sdist" && tar -C "$dir/sdist" -xzf "$sdist"
  find "$dir/sdist" -type f -exec touch {} +
  PATH="$tools/bin:$PATH" MATURIN_PEP517_ARGS="--profile dev" CARGO_PROFILE_DEV_DEBUG=line-tables-only \
    "$tools/bin/pip" wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation --no-index \
    -w "$dir/from-sdist" "$dir/sdist/toolnexus-$python_version"
  "$python" -m venv "$dir/sdist-venv"
  norust "$dir" "$dir/sdist-venv/bin" pip install --quiet --disable-pip-version-check --no-index "$dir"/from-sdist/*.whl
  out="$(cd "$dir" && norust "$dir" "$dir/sdist-venv/bin" python hello.py)"
  echo "python (sdist, built from its own contents): $out"
  [[ "$out" == "$python_version $engine_version True" ]] || die "the sdist's build printed: $out"
}

"${1:?usage: packaging/python.sh build|check}"
