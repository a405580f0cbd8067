"""Shared harness for the Python runners — standard library only, so a runner can run
under any venv (our binding, upstream toolnexus, pydantic-ai, ...). Adapted from the shared
bench (../shared/bench/runners/py/harness.py) with the scenarios of `make bench-peers`.

A runner module defines:

    def load() -> str                       # import the framework; return its version
    async def build(ctx: Ctx) -> RunOnce    # construct agent/client/tools
    RunOnce = async () -> str               # one full agent run; returns the final text

Scenarios beyond the shared ones: `stream` (weather, streamed: ctx.stream is set);
`concurrent-N` (the harness times N runs of weather at once with asyncio.gather, so a runner
only builds weather); `suspend` (one unit is an inline suspension and a durable halt plus its
resume: the runner's RunOnce does both and counts each execution of its `approve` tool). A
runner that cannot do a scenario raises NotApplicable(why) from build: the harness reports
{"event": "na", "reason": why} and the table says n/a and why.

and calls ``harness.main(__name__-module, default_label)``.

Modes
  standalone  warmup W, time N runs, print ONE JSON line (the result) on stdout.
  --control   line protocol on stdin/stdout, used by the orchestrator to interleave
              runners:   -> {"event":"ready",...}
                         <- "warmup K"  -> {"event":"ok"}
                         <- "run K"     -> {"event":"ok","n":total}
                         <- "done"      -> result line, exit 0
              any failure -> {"event":"error","error":...}, exit 1

Everything a framework prints on stdout is redirected to stderr, so stdout carries
only the protocol/result JSON.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import resource
import sys
import time
import traceback

T_HARNESS = time.perf_counter()

# stdout := protocol only; fd 1 (and sys.stdout) now point at stderr.
_PROTO = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)
sys.stdout = sys.stderr

SYSTEM_PROMPT = "You are a helpful assistant."
FILLER = ("The quick brown fox jumps over the lazy dog. " * 4).strip()
MODEL = "gpt-4o-mini"
API_KEY = "sk-mock"
MAX_TURNS = 20


class NotApplicable(Exception):
    """The library has no way to do this scenario; the message says why."""


# Why a peer's suspend row is n/a: what none of them has (each may add what it has instead).
NO_INLINE_SUSPENSION = "no inline suspension: a tool cannot hand the loop a request to resolve and be re-run with the answer"


APPROVE_DESC = "Carry out an action once a human approves it."
APPROVE_SCHEMA = {"type": "object", "properties": {"action": {"type": "string"}}, "required": ["action"]}


class Spec:
    """Python mirror of mock/src/scenario.rs."""

    def __init__(self, name: str):
        self.name = name
        self.history = 0
        self.concurrency = 1
        self.stream = name == "stream"
        if name in ("weather", "stream") or name.startswith("concurrent-"):
            self.kind, self.k = "weather", 0
            if name.startswith("concurrent-"):
                self.concurrency = int(name[len("concurrent-"):])
        elif name == "suspend":
            self.kind, self.k = "suspend", 0
        elif name.startswith("chain-"):
            self.kind, self.k = "chain", int(name[6:])
        elif name.startswith("history-"):
            self.kind, self.k, self.history = "weather", 0, int(name[8:])
        else:
            raise SystemExit(f"unknown scenario {name!r}")
        if self.kind == "weather":
            self.expected_turns, self.expected_tools = 2 * self.concurrency, 2 * self.concurrency
            self.prompt = "What is the weather in Paris, and what is 2+2?"
            self.expected_text = ["FINAL", "Sunny, 22C in Paris", "4"]
        elif self.kind == "suspend":
            # Two runs of two model calls each; `approve` runs twice per run (it suspends,
            # then re-runs with the answer).
            self.expected_turns, self.expected_tools = 4, 4
            self.prompt = "Deploy the release once it is approved."
            self.expected_text = ["FINAL", "approved: deploy"]
        else:
            self.expected_turns, self.expected_tools = self.k + 1, self.k
            self.prompt = "Add the numbers step by step using the add tool."
            self.expected_text = ["FINAL"] + [str(i + 2) for i in range(self.k)]

    def history_pairs(self) -> list[tuple[str, str]]:
        """[(role, text)] — identical in every runner and in the Rust floor client."""
        return [("user" if i % 2 == 0 else "assistant", f"Earlier message {i}: {FILLER}") for i in range(self.history)]


class Tools:
    """The trivial native tools. ``calls`` counts executions (validation)."""

    WEATHER_DESC = "Get the current weather for a city."
    ADD_DESC = "Add two integers."

    def __init__(self) -> None:
        self.calls = 0

    def make(self, sync: bool = False):
        """(get_weather, add) as plain functions with type hints + docstrings."""
        tools = self
        if sync:
            def get_weather(city: str) -> str:
                """Get the current weather for a city."""
                tools.calls += 1
                return f"Sunny, 22C in {city}"

            def add(a: int, b: int) -> int:
                """Add two integers."""
                tools.calls += 1
                return a + b
        else:
            async def get_weather(city: str) -> str:
                """Get the current weather for a city."""
                tools.calls += 1
                return f"Sunny, 22C in {city}"

            async def add(a: int, b: int) -> int:
                """Add two integers."""
                tools.calls += 1
                return a + b
        return get_weather, add


class Ctx:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.spec = Spec(args.scenario)
        self.base_url = args.base_url.rstrip("/")
        # OpenAI-style base URL; the mock routes by the /s/<scenario> prefix.
        self.v1_url = f"{self.base_url}/s/{self.spec.name}/v1"
        self.style = args.style
        self.stream = self.spec.stream
        self.tools = Tools()
        self.sync_tools = args.sync_tools
        self.system_prompt = SYSTEM_PROMPT
        self.model = MODEL
        self.api_key = API_KEY
        self.max_turns = MAX_TURNS


def _pct(sorted_xs: list[float], q: float) -> float:
    """Nearest-rank percentile (same definition in every harness)."""
    n = len(sorted_xs)
    k = min(max(math.ceil(q * n), 1), n)
    return sorted_xs[k - 1]


def _stats(xs: list[float]) -> dict:
    if not xs:
        return {}
    s = sorted(xs)
    mean = sum(xs) / len(xs)
    var = sum((x - mean) ** 2 for x in xs) / len(xs)
    return {"mean": mean, "p50": _pct(s, 0.5), "p95": _pct(s, 0.95), "min": s[0], "max": s[-1], "stdev": math.sqrt(var)}


def _emit(obj: dict) -> None:
    _PROTO.write(json.dumps(obj) + "\n")
    _PROTO.flush()


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--base-url", required=True, help="mock root, e.g. http://127.0.0.1:PORT")
    p.add_argument("--scenario", default="weather")
    p.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", 200)))
    p.add_argument("--warmup", type=int, default=int(os.environ.get("BENCH_WARMUP", 20)))
    p.add_argument("--control", action="store_true")
    p.add_argument("--label", default=None)
    p.add_argument("--style", default="openai", choices=["openai", "anthropic"])
    p.add_argument("--sync-tools", action="store_true", help="plain def tools instead of async def")
    return p.parse_args(argv)


def main(runner, default_label: str, kind: str = "framework") -> None:
    args = parse_args()
    label = args.label or default_label
    try:
        ctx = Ctx(args)
        t0 = time.perf_counter()
        version = runner.load()
        t1 = time.perf_counter()
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            run_once = loop.run_until_complete(runner.build(ctx))
        except NotApplicable as e:
            _emit({"event": "na", "framework": label, "scenario": args.scenario, "reason": str(e)})
            os._exit(0)
        t2 = time.perf_counter()
        import_ms, init_ms = (t1 - t0) * 1e3, (t2 - t0) * 1e3
        spec = ctx.spec
        samples: list[float] = []
        cpu = [0.0]
        first_run_ms = [None]

        async def unit() -> list:
            if spec.concurrency == 1:
                return [await run_once()]
            return await asyncio.gather(*(run_once() for _ in range(spec.concurrency)))

        async def one() -> float:
            before = ctx.tools.calls
            ts = time.perf_counter()
            texts = await unit()
            dt = (time.perf_counter() - ts) * 1e3
            got = ctx.tools.calls - before
            bad = [t for t in texts if not isinstance(t, str) or any(s not in t for s in spec.expected_text)]
            if got != spec.expected_tools or bad:
                raise RuntimeError(f"bad run: tool calls {got} (want {spec.expected_tools}), text {bad[:1]!r}")
            if first_run_ms[0] is None:
                first_run_ms[0] = dt
            return dt

        async def warm(k: int) -> None:
            for _ in range(k):
                await one()

        async def timed(k: int) -> None:
            c0 = time.process_time()
            for _ in range(k):
                samples.append(await one())
            cpu[0] += time.process_time() - c0

        if args.control:
            _emit({"event": "ready", "init_ms": init_ms, "import_ms": import_ms, "version": version})
            for line in sys.stdin:
                parts = line.split()
                if not parts:
                    continue
                if parts[0] == "warmup":
                    loop.run_until_complete(warm(int(parts[1])))
                    _emit({"event": "ok"})
                elif parts[0] == "run":
                    loop.run_until_complete(timed(int(parts[1])))
                    _emit({"event": "ok", "n": len(samples)})
                elif parts[0] == "done":
                    break
                else:
                    _emit({"event": "error", "error": f"bad command {line!r}"})
        else:
            loop.run_until_complete(warm(args.warmup))
            loop.run_until_complete(timed(args.runs))
        n = max(len(samples), 1)
        _emit({
            "event": "result",
            "framework": label,
            "version": version,
            "lang": "python",
            "kind": kind,
            "style": ctx.style,
            "scenario": spec.name,
            "runs": len(samples),
            "init_ms": init_ms,
            "import_ms": import_ms,
            "first_run_ms": first_run_ms[0],
            "per_run_ms": _stats(samples),
            "cpu_ms_per_run": cpu[0] * 1e3 / n,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
            "turns_per_run": spec.expected_turns,
            "tool_calls_per_run": spec.expected_tools,
            "python": sys.version.split()[0],
            "executable": sys.executable,
        })
        _PROTO.flush()
        # Skip interpreter teardown (some frameworks hang on background threads).
        os._exit(0)
    except BaseException as e:  # noqa: BLE001 — report and exit non-zero
        traceback.print_exc(file=sys.stderr)
        _emit({"event": "error", "framework": label, "scenario": args.scenario,
               "error": f"{type(e).__name__}: {e}"[:2000]})
        os._exit(1)
