#!/usr/bin/env python3
"""`make bench-peers`: the engine, every binding, their languages' raw loops and the peers,
in one invocation, against the bench's mock model, interleaved (standard library only).

    python3 run.py [--quick] [--repeats 3] [--scenarios a,b] [--only id,id] [--out FILE]
    python3 run.py --list

Per repeat and scenario every row runs in its own process in --control mode: they start and
initialise one at a time (init is measured uncontended), warm up, then time batches in a
shuffled order each round, so drift on the machine hits every row alike. The results go to
--out (JSON); report.py turns them into docs/benchmarks.md and docs/benchmarks.svg.

The protocol, the batching and the checks come from the shared bench (../shared/bench/run.py);
what is ours: the rows (the engine and each binding beside its language's raw loop), the
scenarios stream, concurrent-N and suspend, repeats, the "n/a" a row reports for a scenario
it cannot do, and a time budget per row and scenario so the slowest peers cannot stretch a
full run past ~20 minutes.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import selectors
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
OUT = TARGET / "bench-peers"
MOCK = OUT / "mock-target" / "release" / "mockllm"
PY, NODE = HERE / "runners" / "py", HERE / "runners" / "node"
SCENARIOS = "weather,chain-5,history-200,stream,concurrent-100,suspend"

# Timed units and warmup per scenario: (full, quick). A unit of concurrent-100 is 100 runs.
RUNS = {"concurrent": (20, 3), "history": (100, 6), "default": (250, 8)}
WARMUP = {"concurrent": (2, 1), "default": (15, 2)}
# A row that has spent this long on one scenario's timed batches stops there (its samples so
# far count): pydantic-ai takes ~1.5 s per concurrent-100 unit, the engine ~10 ms.
BUDGET_S = {False: 25.0, True: 5.0}


def per_scenario(table: dict, scenario: str, quick: bool) -> int:
    key = next((k for k in table if k != "default" and scenario.startswith(k)), "default")
    return table[key][1 if quick else 0]


class Row:
    """One line of the table: a library (or the floor, or a raw loop) in one language."""

    def __init__(self, rid, label, lang, kind, argv, needs: Path):
        self.id, self.label, self.lang, self.kind, self.argv = rid, label, lang, kind, argv
        self.missing = None if needs.exists() else f"{needs} not found (run bench/peers/setup.sh)"


def rows() -> list[Row]:
    node = shutil.which("node") or "node"
    venv = lambda name: OUT / "venvs" / name / "bin" / "python"  # noqa: E731
    ours_py = venv("ours")
    return [
        Row("floor", "floor: rust raw client", "rust", "floor", [str(MOCK), "floor"], MOCK),
        Row("rust", "toolnexus (rust engine, current-thread)", "rust", "binding", [str(TARGET / "release" / "runner")],
            TARGET / "release" / "runner"),
        Row("python", "toolnexus (python binding)", "python", "binding", [str(ours_py), str(PY / "toolnexus_runner.py")],
            ours_py),
        # The raw loop runs under the binding's interpreter: the same Python for both.
        Row("python-raw", "python raw loop (http.client)", "python", "baseline",
            [str(ours_py), str(PY / "raw_loop_runner.py")], ours_py),
        Row("node", "toolnexus (node binding)", "node", "binding",
            [node, str(NODE / "toolnexus_runner.mjs"), "--pkg-dir", str(OUT / "node-toolnexus")],
            OUT / "node-toolnexus" / "toolnexus.node"),
        Row("node-raw", "node raw loop (node:http)", "node", "baseline", [node, str(NODE / "raw_loop_runner.mjs")],
            NODE / "raw_loop_runner.mjs"),
        Row("go", "toolnexus (go binding)", "go", "binding", [str(OUT / "go" / "toolnexus")], OUT / "go" / "toolnexus"),
        Row("go-raw", "go raw loop (net/http)", "go", "baseline", [str(OUT / "go" / "rawloop")], OUT / "go" / "rawloop"),
        Row("upstream", "toolnexus 0.21 upstream (python)", "python", "peer",
            [str(venv("upstream")), str(PY / "toolnexus_runner.py")], venv("upstream")),
        Row("pydantic-ai", "pydantic-ai", "python", "peer", [str(venv("pydantic-ai")), str(PY / "pydantic_ai_runner.py")],
            venv("pydantic-ai")),
        Row("langgraph", "langgraph", "python", "peer", [str(venv("langgraph")), str(PY / "langgraph_runner.py")],
            venv("langgraph")),
        Row("openai-agents", "openai-agents (python)", "python", "peer",
            [str(venv("openai-agents")), str(PY / "openai_agents_runner.py")], venv("openai-agents")),
        Row("vercel-ai", "vercel ai (node)", "node", "peer",
            [node, str(NODE / "ai_sdk_runner.mjs"), "--node-dir", str(OUT / "node-peers")],
            OUT / "node-peers" / "node_modules" / "ai"),
        Row("openai-agents-js", "@openai/agents (node)", "node", "peer",
            [node, str(NODE / "openai_agents_runner.mjs"), "--node-dir", str(OUT / "node-peers")],
            OUT / "node-peers" / "node_modules" / "@openai" / "agents"),
    ]


def bench_env() -> dict:
    env = {k: v for k, v in os.environ.items()
           if k.lower() not in ("http_proxy", "https_proxy", "all_proxy") and not k.startswith(("OPENAI_", "ANTHROPIC_", "NODE_OPTIONS"))}
    env.update({"OPENAI_API_KEY": "sk-mock", "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
                "LANGSMITH_TRACING": "false", "LANGCHAIN_TRACING_V2": "false", "OTEL_SDK_DISABLED": "true",
                "DO_NOT_TRACK": "1", "PYTHONUNBUFFERED": "1", "PYTHONHASHSEED": "0"})
    return env


def log(msg: str):
    print(msg, file=sys.stderr, flush=True)


class Proc:
    """A row's process in --control mode: one JSON line answers each command."""

    def __init__(self, row: Row, scenario: str, base_url: str, logdir: Path, env: dict):
        self.row = row
        argv = row.argv + ["--base-url", base_url, "--scenario", scenario, "--control"]
        if row.kind != "floor":
            argv += ["--label", row.label]
        self.errlog = logdir / f"{row.id}-{scenario}.stderr"
        self.t_spawn = time.perf_counter()
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(self.errlog, "wb"),
                                  env=env, cwd=str(HERE), text=True, bufsize=1)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.p.stdout, selectors.EVENT_READ)
        self.spent_s = 0.0

    def expect(self, timeout: float = 600) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.sel.select(timeout=deadline - time.monotonic()):
                continue
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError(f"exited rc={self.p.wait(timeout=10)}: {self.stderr_tail()}")
            if line.startswith("{"):
                msg = json.loads(line)
                if msg.get("event") == "error":
                    raise RuntimeError(msg.get("error", "error"))
                if "event" in msg:
                    return msg
        raise TimeoutError(f"no answer within {timeout:.0f} s")

    def command(self, cmd: str) -> dict:
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        return self.expect()

    def stderr_tail(self) -> str:
        return self.errlog.read_text(errors="replace")[-800:].strip()

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait(timeout=10)


def start_mock(logdir: Path, env: dict) -> tuple[subprocess.Popen, str]:
    p = subprocess.Popen([str(MOCK), "serve", "--port", "0"], stdout=subprocess.PIPE,
                         stderr=open(logdir / "mock.stderr", "wb"), env=env, text=True)
    line = p.stdout.readline()
    if not line.startswith("LISTENING"):
        p.kill()
        sys.exit(f"the mock did not start: {line!r}")
    return p, f"http://127.0.0.1:{int(line.split()[1])}"


def busy_pct(seconds: float) -> float:
    """The machine's CPU use over `seconds` (all cores), from /proc/stat."""
    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
        return sum(v), v[3] + v[4]
    t0, i0 = sample()
    time.sleep(seconds)
    t1, i1 = sample()
    return 100.0 * (1 - (i1 - i0) / max(t1 - t0, 1))


def settle(max_s: float) -> float:
    """Waits (at most max_s) for a quiet machine: 3 s under 10 % busy. Returns the last reading."""
    t0 = time.monotonic()
    while True:
        b = busy_pct(3.0)
        if b < 10.0 or time.monotonic() - t0 >= max_s:
            return b


def one_scenario(rws: list[Row], scenario: str, args, base_url: str, logdir: Path, env: dict, out: dict, rep: int):
    runs, warmup = per_scenario(RUNS, scenario, args.quick), per_scenario(WARMUP, scenario, args.quick)
    batch = max(1, min(args.batch, runs))
    procs: list[Proc] = []
    for row in rws:
        pr = Proc(row, scenario, base_url, logdir, env)
        try:
            ready = pr.expect(timeout=120)
            if ready["event"] == "na":
                out["na"].append({"id": row.id, "scenario": scenario, "reason": ready["reason"]})
                log(f"  n/a    {row.label}: {ready['reason']}")
                pr.kill()
                continue
            ready["spawn_to_ready_ms"] = (time.perf_counter() - pr.t_spawn) * 1e3
            pr.ready = ready
            pr.command(f"warmup {warmup}")
            procs.append(pr)
        except Exception as e:  # noqa: BLE001: a failing row is reported, the others go on
            out["failures"].append({"id": row.id, "scenario": scenario, "repeat": rep, "error": str(e)[:600]})
            log(f"  FAILED {row.label}: {e}")
            pr.kill()
    rng = random.Random(args.seed + rep)
    budget = BUDGET_S[args.quick]
    done = {pr.row.id: 0 for pr in procs}
    active = list(procs)
    while active:
        rng.shuffle(active)
        for pr in list(active):
            k = min(batch, runs - done[pr.row.id])
            try:
                t0 = time.perf_counter()
                pr.command("warmup 1")  # re-warm caches after the other rows ran
                pr.command(f"run {k}")
                pr.spent_s += time.perf_counter() - t0
            except Exception as e:  # noqa: BLE001
                out["failures"].append({"id": pr.row.id, "scenario": scenario, "repeat": rep, "error": str(e)[:600]})
                log(f"  FAILED {pr.row.label}: {e}")
                pr.kill()
                active.remove(pr)
                procs.remove(pr)
                continue
            done[pr.row.id] += k
            if done[pr.row.id] >= runs or pr.spent_s > budget:
                active.remove(pr)
    for pr in procs:
        try:
            res = pr.command("done")
        except Exception as e:  # noqa: BLE001
            out["failures"].append({"id": pr.row.id, "scenario": scenario, "repeat": rep, "error": str(e)[:600]})
            continue
        finally:
            pr.kill()
        res.pop("event", None)
        res.update({"id": pr.row.id, "label": pr.row.label, "lang": pr.row.lang, "kind": pr.row.kind,
                    "repeat": rep, "spawn_to_ready_ms": pr.ready["spawn_to_ready_ms"]})
        out["results"].append(res)
        log(f"  {pr.row.label:36s} {res['runs']:4d} units  p50 {res['per_run_ms'].get('p50', 0):9.3f} ms")


def tool_version(cmd: list[str]) -> str | None:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip().splitlines()[0]
    except Exception:  # noqa: BLE001: a missing tool is shown as such
        return None


def machine() -> dict:
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor())
    mem_kb = next(int(ln.split()[1]) for ln in Path("/proc/meminfo").read_text().splitlines() if ln.startswith("MemTotal"))
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gb": round(mem_kb / 1024 / 1024, 1),
            "kernel": platform.release(), "python": tool_version([str(OUT / "venvs" / "ours" / "bin" / "python"), "--version"]),
            "node": tool_version(["node", "--version"]), "go": tool_version(["go", "version"]),
            "rustc": tool_version(["rustc", "--version"])}


def main():
    env = os.environ.get
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", default=bool(env("BENCH_QUICK")),
                    help="a few units per row, one repeat: proves the pipeline, measures nothing (BENCH_QUICK)")
    ap.add_argument("--repeats", type=int, default=int(env("BENCH_REPEATS", 0)) or None,
                    help="full passes over the scenarios (BENCH_REPEATS; 3, quick 1)")
    ap.add_argument("--scenarios", default=env("BENCH_SCENARIOS", SCENARIOS))
    ap.add_argument("--only", default=env("BENCH_ONLY"), help="comma list of row ids (the floor always runs)")
    ap.add_argument("--batch", type=int, default=10, help="units per interleaved batch")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--settle", type=float, default=float(env("BENCH_SETTLE", 60)),
                    help="wait up to this many s for a quiet machine first (BENCH_SETTLE; 0: no wait)")
    ap.add_argument("--out", default=env("BENCH_OUT", str(OUT / "results.json")), help="results JSON (BENCH_OUT)")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    repeats = args.repeats or (1 if args.quick else 3)
    rws = rows()
    if args.list:
        for r in rws:
            print(f"{r.id:12s} {r.lang:7s} {r.kind:9s} {r.label}" + (f"   [missing: {r.missing}]" if r.missing else ""))
        return
    if args.only:
        keep = set(args.only.split(",")) | {"floor"}
        rws = [r for r in rws if r.id in keep]
    if not MOCK.exists():
        sys.exit(f"{MOCK} is missing: run bench/peers/setup.sh")
    scenarios = [s for s in args.scenarios.split(",") if s]
    logdir = OUT / "logs" / dt.datetime.now().strftime("run-%Y%m%d-%H%M%S")
    logdir.mkdir(parents=True, exist_ok=True)
    quiet = settle(args.settle) if args.settle > 0 else None
    started = time.time()
    out = {"meta": {"date": dt.datetime.now().astimezone().isoformat(timespec="seconds"), "machine": machine(),
                    "quick": args.quick, "repeats": repeats, "scenarios": scenarios,
                    "busy_pct_before": quiet, "logs": str(logdir)},
           "rows": [{"id": r.id, "label": r.label, "lang": r.lang, "kind": r.kind} for r in rws],
           "missing": [{"id": r.id, "reason": r.missing} for r in rws if r.missing],
           "results": [], "na": [], "failures": []}
    rws = [r for r in rws if not r.missing]
    envd = bench_env()
    mock, base_url = start_mock(logdir, envd)
    try:
        for rep in range(repeats):
            for scenario in scenarios:
                log(f"== repeat {rep + 1}/{repeats}, {scenario}")
                before = busy_pct(0.5)
                one_scenario(rws, scenario, args, base_url, logdir, envd, out, rep)
                out["meta"].setdefault("busy_pct_between", []).append(round(before, 1))
    finally:
        mock.terminate()
        mock.wait(timeout=10)
    out["meta"]["duration_s"] = round(time.time() - started, 1)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1))
    log(f"results: {args.out} ({out['meta']['duration_s']} s; {len(out['failures'])} failures)")


if __name__ == "__main__":
    main()
