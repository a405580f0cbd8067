"""Many concurrent runs with tools and suspensions in one Python process, in rounds, against
`load-mock` (bench/src/bin/load-mock.rs): half resolve their approval inline (`wait_for`), half
halt and are resumed (`run_with_answer`). Every result is checked; each round prints one JSON
line with its time and the process's resident memory.

    python load.py --mock PATH [--runs 1000] [--rounds 10]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time

import toolnexus as tn


def rss_kb() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def add(a: float, b: float) -> str:
    return str(a + b)


async def approve(ctx: tn.ToolContext) -> object:
    if ctx.answer is None:
        return tn.pending(kind="approval", prompt="Approve?", id=f"ap-{ctx.call_id}")
    return "approved"


async def one(inline: tn.Client, durable: tn.Client, tk: tn.Toolkit, i: int) -> None:
    prompt = f"run-{i}"
    if i % 2 == 0:
        r = await inline.run(prompt, tk)
        records = r.tool_calls
    else:
        halted = await durable.run(prompt, tk)
        assert halted.pending is not None, f"run {i} did not halt"
        r = await durable.run_with_answer(tk, halted.messages, halted.pending, tn.answer_output(halted.pending.id, "yes"))
        records = halted.tool_calls + r.tool_calls
    outputs = [c["output"] for c in records]
    if r.text != f"done: {prompt}" or outputs[0] not in ("3", "3.0") or outputs[-1] != "approved":
        raise AssertionError(f"run {i}: text {r.text!r}, outputs {outputs}")


async def main(port: int, runs: int, rounds: int) -> int:
    base = f"http://127.0.0.1:{port}/v1"
    durable = tn.create_client(base_url=base, style="openai", model="m", api_key="k")
    inline = tn.create_client(base_url=base, style="openai", model="m", api_key="k",
                              wait_for=lambda req: tn.answer_output(req.id, "yes"))
    tk = await tn.create_toolkit(extra_tools=[tn.define_tool(add), tn.define_tool(approve)], builtins=False)
    for round_no in range(rounds):
        started = time.perf_counter()
        outcomes = await asyncio.gather(*(one(inline, durable, tk, i) for i in range(runs)), return_exceptions=True)
        failed = [o for o in outcomes if o is not None]
        print(json.dumps({"lang": "python", "round": round_no, "runs": runs, "failed": len(failed),
                          "ms": (time.perf_counter() - started) * 1e3, "rss_kb": rss_kb()}), flush=True)
        if failed:
            print(f"first failure: {failed[0]!r}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--mock", required=True)
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args()
    mock = subprocess.Popen([args.mock], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        sys.exit(asyncio.run(main(int(mock.stdout.readline()), args.runs, args.rounds)))
    finally:
        mock.kill()
