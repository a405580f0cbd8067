#!/usr/bin/env bash
# Runs upstream toolnexus 0.21.0's own tests/ against our binding (docs/upstream-suites.md).
#
# Everything lands under $CARGO_TARGET_DIR/upstream-python (never in the source tree): the sdist,
# fetched from PyPI pinned by hash (sdist.txt) and extracted there; a venv with upstream's
# test dependencies, pinned by hash (requirements.txt, from the sdist's own uv.lock); and our
# binding, which is the one bindings-python/test.sh installed into its venv (installed here
# the same way only when missing or older than its sources), made importable in that venv.
# pytest then runs upstream's tests in a network namespace that has only loopback, with
# upstream_plugin.py applying expectations.txt.
#
#   run.sh                          the whole suite, checked against expectations.txt
#   run.sh tests/test_pending.py    some of it (extra arguments go to pytest)
#   run.sh --record out.tsv [...]   no expectations: writes each test's outcome and error line
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
work="$CARGO_TARGET_DIR/upstream-python"
binding_venv="${PY_BINDING_VENV:-$CARGO_TARGET_DIR/py-binding-venv}"
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null 2>&1 || python=python3
pip_install=(-m pip install --quiet --disable-pip-version-check)
version="$(sed -n 's/^toolnexus==\([^ ]*\) .*/\1/p' "$here/sdist.txt")"

record=""
if [ "${1:-}" = "--record" ]; then record="$(realpath -m "$2")"; shift 2; fi

# 1. The sdist: downloaded once, its hash checked by pip; extracted afresh when missing.
sdist="$work/toolnexus-$version"
if [ ! -f "$sdist/pyproject.toml" ]; then
  rm -rf "$work/sdist" "$sdist"
  mkdir -p "$work/sdist"
  "$python" -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
    --require-hashes -r "$here/sdist.txt" -d "$work/sdist"
  tar -xzf "$work/sdist/toolnexus-$version.tar.gz" -C "$work"
fi
# The media fixture test_multimodal.py reads from upstream's repository (not in the sdist).
[ -f "$work/examples/media/fixture.png.base64" ] || "$python" "$here/media_fixture.py" "$work/examples/media"

# 2. Upstream's test dependencies in a venv of their own, made anew when requirements.txt changes.
venv="$work/venv"
if ! cmp -s "$here/requirements.txt" "$venv/requirements.txt"; then
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" "${pip_install[@]}" --require-hashes -r "$here/requirements.txt"
  cp "$here/requirements.txt" "$venv/requirements.txt"
fi

# 3. Our binding: the one in bindings-python/test.sh's venv, unless missing or stale.
site() { "$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }
native=""
if [ -x "$binding_venv/bin/python" ]; then
  native="$(ls "$(site "$binding_venv")"/toolnexus/_native*.so 2>/dev/null | head -n 1 || true)"
fi
sources=(core/src core/Cargo.toml bindings-python/src bindings-python/python
         bindings-python/Cargo.toml bindings-python/pyproject.toml Cargo.toml Cargo.lock)
if [ -z "$native" ] || [ -n "$(cd "$repo" && find "${sources[@]}" -newer "$native" -type f \
     -not -path '*/__pycache__/*' -not -name '*.so' -print -quit)" ]; then
  echo "upstream-suite: (re)installing the binding into $binding_venv"
  [ -x "$binding_venv/bin/python" ] || "$python" -m venv "$binding_venv"
  "$binding_venv/bin/python" "${pip_install[@]}" --force-reinstall --no-deps "$repo/bindings-python"
fi
# Only the toolnexus package is shared: a folder holding a link to it, on the venv's path.
mkdir -p "$work/binding"
ln -sfn "$(site "$binding_venv")/toolnexus" "$work/binding/toolnexus"
echo "$work/binding" > "$(site "$venv")/toolnexus_binding.pth"

# 4. The tests, with no network but loopback: upstream's tests name fake hosts (http://stub,
# http://mock.local, ...) and fake the model through seams; where ours miss one, our transport
# would try those hosts for real.
netns=()
if unshare -n true 2>/dev/null; then netns=(unshare -n)
elif unshare -rn true 2>/dev/null; then netns=(unshare -rn)
elif [ "${CI:-}" = true ]; then
  echo "upstream-suite: FAILED: cannot make a network namespace (unshare -n) to run upstream's tests in" >&2; exit 1
else
  echo "upstream-suite: SKIPPED: cannot make a network namespace (unshare -n); the suite needs one" >&2; exit 0
fi

export UPSTREAM_SUITE_EXPECTATIONS="${UPSTREAM_SUITE_EXPECTATIONS:-$here/expectations.txt}"
export UPSTREAM_SUITE_RECORD="$record"
if [ $# -eq 0 ]; then export UPSTREAM_SUITE_FULL=1; fi  # the whole suite: stale lines fail too
export PYTHONPATH="$here"
export PYTHONDONTWRITEBYTECODE=1
cd "$sdist"
# No API key from the caller's environment may reach a test: upstream's tests set their own.
exec env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u OPENROUTER_API_KEY \
  "${netns[@]}" "$venv/bin/python" "$here/loopback.py" \
  "$venv/bin/python" -m pytest -p upstream_plugin -p no:cacheprovider -q --no-header -rfE \
  --continue-on-collection-errors --disable-warnings "${@:-tests}"
