#!/usr/bin/env bash
# Builds and installs the package from source (pip + maturin) into its own venv, then checks
# the committed stub against the native module (mypy.stubtest), type-checks the package, and
# runs the tests (seed examples, every conformance scenario, behaviour, fork).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
venv="${PY_BINDING_VENV:-$CARGO_TARGET_DIR/py-binding-venv}"
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null 2>&1 || python=python3

[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements-test.txt"
# The official MCP SDK (its client drives MCP serve; its fixture server feeds MCP loading), pinned by hash.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes -r "$repo/tests/mcp/requirements.txt"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$here"

cd "$here"
"$venv/bin/python" -m mypy.stubtest toolnexus._native
"$venv/bin/python" -m mypy python/toolnexus
"$venv/bin/python" -m pytest -q -p no:cacheprovider tests
