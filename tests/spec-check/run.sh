#!/usr/bin/env bash
# Runs check_requests.py in its own venv (created and filled on first use, refilled when
# requirements.txt changes). Args go to the script: run.sh [SCENARIO_DIR]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${SPEC_CHECK_VENV:-$HOME/.cache/toolnexus/spec-check-venv}"
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null 2>&1 || python=python3

if [ ! -x "$venv/bin/python" ]; then
  mkdir -p "$(dirname "$venv")"
  "$python" -m venv "$venv"
fi

want="$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)"
stamp="$venv/.requirements.sha256"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
  echo "$want" >"$stamp"
fi

exec "$venv/bin/python" "$here/check_requests.py" "$@"
