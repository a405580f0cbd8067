#!/usr/bin/env bash
# The load runs (bench/load/README.md): RUNS concurrent runs with tools and suspensions, ROUNDS
# rounds, in one Rust, one Python and one Node process, each against its own load-mock. Prints
# each process's JSON lines, then one summary line per language:
#   <lang> <runs>x<rounds>: all correct, ms/round p50 <n>, rss first/last round <a>/<b> MB
# Exits non-zero when any run's result was wrong. Expects the Python binding installed in
# $CARGO_TARGET_DIR/py-binding-venv and the Node addon built (their test.sh do both).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
runs="${RUNS:-1000}"
rounds="${ROUNDS:-10}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

cargo build --release --quiet -p toolnexus-bench --bin load --bin load-mock
mock="$CARGO_TARGET_DIR/release/load-mock"
"$CARGO_TARGET_DIR/release/load" --mock "$mock" --runs "$runs" --rounds "$rounds" | tee "$out/rust"
"$CARGO_TARGET_DIR/py-binding-venv/bin/python" "$here/load.py" --mock "$mock" --runs "$runs" --rounds "$rounds" | tee "$out/python"
# --expose-gc: each round's memory is read after a collection, so it shows what is retained.
node --expose-gc "$here/load.mjs" --mock "$mock" --runs "$runs" --rounds "$rounds" | tee "$out/node"

python3 - "$out" <<'PY'
import json, statistics, sys, pathlib
for lang in ("rust", "python", "node"):
    rows = [json.loads(l) for l in pathlib.Path(sys.argv[1], lang).read_text().splitlines() if l.startswith("{")]
    ms = statistics.median(r["ms"] for r in rows)
    print(f"{lang} {rows[0]['runs']}x{len(rows)}: all correct, ms/round p50 {ms:.0f}, "
          f"rss first/last round {rows[0]['rss_kb'] / 1024:.0f}/{rows[-1]['rss_kb'] / 1024:.0f} MB")
PY
