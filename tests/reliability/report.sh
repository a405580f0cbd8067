#!/usr/bin/env bash
# Refreshes the figures of docs/reliability.md (between its `figures` markers) from fresh runs:
# the fault suite in each binding, the load runs, every fuzz target for FUZZ_SECONDS (default
# 60), the C tests under valgrind and the sanitizers, and Miri. Takes about 20 minutes on the
# 2-core machine. Expects the bindings built as `make test` builds them.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
seconds="${FUZZ_SECONDS:-60}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
cd "$repo"

timed() { # timed NAME CMD...: runs CMD, keeps its output, records its wall time and status
  local name=$1; shift
  local start=$SECONDS status=0
  "$@" >"$out/$name.log" 2>&1 || status=$?
  echo "$name $((SECONDS - start)) $status" >>"$out/times"
}

timed faults-rust cargo test --quiet -p toolnexus --test faults
timed faults-python "$CARGO_TARGET_DIR/py-binding-venv/bin/python" -m pytest -q -p no:cacheprovider bindings-python/tests/test_faults.py
timed faults-node node --test bindings-node/test/faults.test.mjs
timed faults-go sh -c 'cd bindings-go && go test -count=1 -run TestFaults ./...'
timed load bench/load/run.sh
timed fuzz fuzz/run.sh "$seconds"
timed c-tests make --no-print-directory c-tests
timed miri tests/miri.sh

python3 - "$out" "$repo/docs/reliability.md" "$seconds" <<'PY'
import datetime, pathlib, re, sys
out, doc, seconds = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
times = {l.split()[0]: (int(l.split()[1]), int(l.split()[2])) for l in (out / "times").read_text().splitlines()}
def log(name): return (out / f"{name}.log").read_text(errors="replace")
def verdict(name): return "passed" if times[name][1] == 0 else f"FAILED (exit {times[name][1]})"
scenarios = len(__import__("json").loads(pathlib.Path("tests/faults/scenarios.json").read_text())["scenarios"])
lines = [f"Refreshed {datetime.date.today()} by `make reliability` on this machine "
         f"({__import__('os').cpu_count()} cores).", "",
         f"**Fault suite** ({scenarios} scenarios, `tests/faults/`):", "",
         "| binding | outcome | seconds |", "|---|---|---:|"]
for b in ("rust", "python", "node", "go"):
    lines.append(f"| {b} | {verdict('faults-' + b)} | {times['faults-' + b][0]} |")
lines += ["", "**Load** (`bench/load/run.sh`: 1,000 concurrent runs with tools, inline and durable "
          "suspensions, 10 rounds, every result checked):", "", "```"]
lines += [l for l in log("load").splitlines() if " all correct" in l] or ["(no summary: " + verdict("load") + ")"]
lines += ["```", "", f"**Fuzzing** (`fuzz/run.sh {seconds}`, one job, every target):", "", "```"]
lines += [l for l in log("fuzz").splitlines() if re.match(r"^(target|[a-z_]+ +[0-9?]+ +[0-9]+ )", l)]
lines += ["```", "", f"**C ABI under valgrind and ASan/LSan/UBSan** (`make c-tests`): {verdict('c-tests')}; "
          + ", ".join(re.findall(r"\d+ passed, \d+ failed", log("c-tests"))) + ".", "",
          f"**Miri** (`tests/miri.sh`, the core's pure modules): {verdict('miri')}; "
          + (re.findall(r"test result: .*?\d+ passed; \d+ failed", log("miri")) or ["no result line"])[-1] + "."]
text = doc.read_text()
begin, end = "<!-- figures:begin -->", "<!-- figures:end -->"
new = text[: text.index(begin) + len(begin)] + "\n" + "\n".join(lines) + "\n" + text[text.index(end):]
doc.write_text(new)
print("\n".join(lines))
PY
status=0
while read -r name _ code; do [ "$code" -eq 0 ] || { echo "report.sh: $name failed" >&2; status=1; }; done <"$out/times"
exit $status
