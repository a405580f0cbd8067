"""Every scenario in tests/conformance/ replayed with Python tools, once with async tools and
callbacks and once with sync ones, against a loopback mock model. See the format in
tests/conformance/README.md."""
from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

import toolnexus as tn
from toolnexus.types import request_from_wire, request_to_wire

from .mock import MockModel

SCENARIOS = sorted((Path(__file__).resolve().parents[2] / "tests" / "conformance").glob("*.json"))
PINNED = {"openai": ("authorization", "content-type"), "anthropic": ("x-api-key", "anthropic-version", "content-type")}


def make_tool(spec: dict[str, Any], counts: dict[str, int], sync: bool) -> tn.Tool:
    b = spec["behavior"]
    name = spec["name"]
    if b["type"] == "relay":
        return tn.relay_tool(name, spec.get("description", ""), spec.get("input_schema"))

    def outcome(ctx: Any) -> Any:
        counts[name] = counts.get(name, 0) + 1
        kind = b["type"]
        if kind == "text":
            return b["output"]
        if kind == "error_result":
            return tn.ToolResult(output=b["output"], is_error=True)
        if kind == "fail":
            raise RuntimeError(b["message"])
        if kind == "suspend":
            answer = ctx.answer if ctx is not None else None
            if answer is None or b.get("always"):
                r = b["request"]
                return tn.pending(kind=r["kind"], prompt=r["prompt"], id=r["id"], url=r.get("url"), data=r.get("data"))
            out = (answer.data or {}).get("output") or ""
            return b["on_answer"].replace("{output}", out)
        raise AssertionError(f"unknown behaviour {kind}")

    delay = b.get("delay_ms", 0) / 1000
    if sync:
        def run(ctx: Any = None, **_: Any) -> Any:
            time.sleep(delay)
            return outcome(ctx)
    else:
        async def run(ctx: Any = None, **_: Any) -> Any:  # type: ignore[misc]
            await asyncio.sleep(delay)
            return outcome(ctx)
    return tn.define_tool(run, name=name, description=spec.get("description", ""), input_schema=spec["input_schema"])


def _compact(v: Any) -> str:
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def make_wait_for(answers: list[Any], seen: list[dict[str, Any]], sync: bool) -> Any:
    queue = list(answers)

    def answer(req: tn.Request) -> Any:
        seen.append(request_to_wire(req))
        # An answer may name the Request it is for; the others go in order.
        at = next((i for i, a in enumerate(queue) if a is not None and a.get("for") == req.id), None)
        if at is None:
            at = next(i for i, a in enumerate(queue) if a is None or "for" not in a)
        nxt = queue.pop(at)
        if nxt is None:
            return None
        return tn.Answer(id=req.id, ok=nxt["ok"], data=nxt.get("data"), reason=nxt.get("reason"))

    if sync:
        return answer

    async def answer_async(req: tn.Request) -> Any:
        return answer(req)

    return answer_async


class HookFailure(Exception):
    """What the scenario's failing ``before_llm`` hook raises: the run must end with this very
    exception (the binding's form of the engine's ``host`` error kind)."""


def make_hooks(sc: dict[str, Any], sync: bool) -> Any:
    """The scenario's hooks, or None: ``before_tool`` short-circuits a call of a gated tool with
    its suspension; ``before_llm`` fails with its message."""
    gates, llm = sc.get("before_tool"), sc.get("before_llm")
    hooks: dict[str, Any] = {}
    if gates is not None:
        def before_tool(ev: dict[str, Any]) -> Any:
            r = gates.get(ev["name"])
            if r is None:
                return None
            return {"result": tn.pending(kind=r["kind"], prompt=r["prompt"], id=r["id"], url=r.get("url"),
                                         data=r.get("data"))}

        hooks["before_tool"] = before_tool
    if llm is not None:
        def before_llm(_ev: Any) -> Any:
            raise HookFailure(llm["fail"])

        hooks["before_llm"] = before_llm
    if sync or not hooks:
        return hooks or None

    def run_async(f: Any) -> Any:
        async def hook(ev: Any) -> Any:
            return f(ev)

        return hook

    return {name: run_async(f) for name, f in hooks.items()}


def make_on_error(tier: str, seen: list[dict[str, Any]]) -> Any:
    """The scenario's ``on_error``: records what it is told and answers ``tier``."""

    def on_error(info: Any) -> str:
        seen.append({k: info[k] for k in ("status", "attempt", "retryable") if k in info})
        return tier

    return on_error


async def make_toolkit(sc: dict[str, Any], counts: dict[str, int], sync: bool) -> Any:
    """With ``sources``, a toolkit built from them by ``create_toolkit`` (the file's tools as
    ``extra_tools``); else the file's tools with the built-ins off; else none."""
    tools = [make_tool(t, counts, sync) for t in sc.get("tools") or []]
    sources = sc.get("sources")
    if sources is None:
        return await tn.create_toolkit(builtins=False, extra_tools=tools) if sc.get("tools") is not None else None
    options = dict(sources)
    if "skills" in options:
        options["skills"] = [tn.SkillDef(**d) for d in options["skills"]]
    return await tn.create_toolkit(extra_tools=tools, **options)


def canonical(r: tn.RunResult) -> dict[str, Any]:
    out = {"text": r.text, "messages": r.messages, "tool_calls": r.tool_calls, "tool_call_count": r.tool_call_count,
           "turns": r.turns, "usage": r.usage, "model": r.model, "status": r.status}
    if r.limit is not None:
        out["limit"] = r.limit
    if r.pending is not None:
        out["pending"] = request_to_wire(r.pending)
    return out


def masked_metrics(text: str) -> list[str]:
    """The Prometheus text as lines, each duration sample's value (`_bucket`, `_sum`) made `*`:
    how long a call took is the one thing a replay cannot fix."""
    lines = []
    for line in text.splitlines():
        name = re.split(r"[{ ]", line, maxsplit=1)[0]
        if not line.startswith("#") and name.endswith(("_seconds_bucket", "_seconds_sum")):
            line = line.rsplit(" ", 1)[0] + " *"
        lines.append(line)
    return lines


async def replay(path: Path, mock: MockModel, sync: bool) -> list[str]:
    sc = json.loads(path.read_text())
    counts: dict[str, int] = {}
    seen_requests: list[dict[str, Any]] = []
    seen_errors: list[dict[str, Any]] = []
    tk = await make_toolkit(sc, counts, sync)
    c = sc["client"]
    client = tn.create_client(
        base_url=mock.url("/v1") if sc["style"] == "openai" else mock.url(),
        style=sc["style"], model=c["model"], api_key=c.get("api_key", "test-key"),
        system_prompt=c.get("system_prompt"), max_turns=c.get("max_turns", 10), retries=c.get("retries", 2),
        retry_base_ms=c.get("retry_base_ms", 1), timeout_ms=c.get("timeout_ms"),
        wait_for=make_wait_for(sc["wait_for"], seen_requests, sync) if sc.get("wait_for") is not None else None,
        hooks=make_hooks(sc, sync),
        request_params=c.get("request_params"),
        on_error=make_on_error(sc["on_error"], seen_errors) if sc.get("on_error") is not None else None,
    )
    failures: list[str] = []
    previous = None
    for i, step in enumerate(sc["steps"]):
        # The mock holds a reply back `delay` seconds.
        mock.script([{**r, "delay": r["delay_ms"] / 1000} if "delay_ms" in r else r for r in step.get("replies", [])])
        counts.clear()
        seen_requests.clear()
        seen_errors.clear()
        got: dict[str, Any] = {}
        try:
            if "run" in step:
                r = await client.run(step["run"]["prompt"], tk, history=step["run"].get("history"))
            else:
                resume = step["resume"]
                a = resume["answer"]
                answer = tn.Answer(id=a["id"], ok=a["ok"], data=a.get("data"), reason=a.get("reason"))
                # The previous step's transcript and Request, unless the step gives its own.
                pending = previous.pending if previous and previous.pending else tn.Request(id="", kind="", prompt="")
                if "pending" in resume:
                    pending = request_from_wire(resume["pending"])
                history = resume.get("history", previous.messages if previous else [])
                r = await client.run_with_answer(tk, history, pending, answer)
            got["result"] = canonical(r)
            previous = r
        except tn.ToolnexusError as e:
            err: dict[str, Any] = {"kind": e.kind}
            if isinstance(e, tn.ProviderError):
                err["status"] = e.status
            got["error"] = err
            previous = None
        except HookFailure:
            got["error"] = {"kind": "host"}
            previous = None
        style = sc["style"]
        got["requests"] = [
            {"path": s["path"], "headers": {h: s["headers"][h] for h in PINNED[style] if h in s["headers"]},
             "body": s["body"]}
            for s in mock.seen
        ]
        got["calls"] = dict(counts)
        if sc.get("on_error") is not None:
            got["on_error_calls"] = list(seen_errors)
        expect = dict(step["expect"])
        if "metrics" in expect:
            got["metrics"] = masked_metrics(client.metrics())
        if sc.get("wait_for") is not None:
            # One turn's suspensions are waited for concurrently: compared as a set.
            got["wait_for_requests"] = sorted(seen_requests, key=_compact)
            expect["wait_for_requests"] = sorted(expect.get("wait_for_requests") or [], key=_compact)
        for key, value in got.items():
            want = expect.get(key, {} if key == "calls" else None)
            if want != value:
                failures.append(f"{sc['name']} step {i}: {key} differs\n--- expected\n{json.dumps(want, indent=1)}"
                                f"\n--- got\n{json.dumps(value, indent=1)}")
        if mock.replies:
            failures.append(f"{sc['name']} step {i}: {len(mock.replies)} scripted replies were never requested")
    return failures


@pytest.fixture(scope="module")
def mock() -> Any:
    m = MockModel()
    yield m
    m.close()


def test_there_are_enough_scenarios() -> None:
    assert len(SCENARIOS) >= 15


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario(path: Path, sync: bool, mock: MockModel) -> None:
    failures = asyncio.run(replay(path, mock, sync))
    assert not failures, "\n\n".join(failures)
