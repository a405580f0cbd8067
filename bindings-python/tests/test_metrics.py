"""Metrics (SPEC §8): `on_metric` events from real runs, `Client.metrics()`, and the registry's
bytes against the fixture every binding shares."""
from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

import toolnexus as tn
from toolnexus.client import MetricsRegistry

from .mock import MockModel, client, openai_calls, openai_text

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "metrics"


def test_the_fixed_events_render_the_shared_fixture() -> None:
    reg = MetricsRegistry()
    assert reg.render().count("\n") == 12 and "\ntoolnexus_" not in reg.render()
    for ev in json.loads((FIXTURES / "fixed-events.json").read_text()):
        reg.record(ev)
    assert reg.render() == (FIXTURES / "fixed.prom").read_text()


@pytest.mark.parametrize("bad", [{}, {"event": "llm", "model": "m", "status": "meh", "ms": 1}, [1]])
def test_a_bad_event_is_refused(bad: Any) -> None:
    with pytest.raises(tn.InvalidArgumentError):
        MetricsRegistry().record(bad)


def ask_tool() -> tn.Tool:
    def ask(ctx: tn.ToolContext) -> Any:
        """Ask the user."""
        if ctx.answer is None:
            return tn.pending(kind="question", prompt="Which?")
        return f"told {ctx.answer.data['output']}"

    return tn.define_tool(ask)


def test_events_come_in_order_with_a_suspension_pending(mock: MockModel) -> None:
    events: list[dict[str, Any]] = []

    async def main() -> tn.Client:
        mock.script([openai_calls(("c1", "ask", "{}")), openai_text("done")])
        c = client(mock, on_metric=events.append, wait_for=lambda r: tn.answer_output(r.id, "blue"))
        tk = await tn.create_toolkit(builtins=False, extra_tools=[ask_tool()])
        r = await c.run("go", tk)
        assert r.status == "done" and r.tool_calls[0]["output"] == "told blue"
        return c

    c = asyncio.run(main())
    assert [e["event"] for e in events] == ["llm", "tool", "tool", "llm", "run"]
    assert events[1]["pending"] is True and events[1]["is_error"] is False and events[1]["source"] == "native"
    assert "pending" not in events[2]
    run = events[-1]
    assert (run["turns"], run["tool_calls"], run["total_tokens"], run["model"]) == (2, 1, 10, "m")
    assert isinstance(run["ms"], float) and "error" not in run
    text = c.metrics()
    assert 'toolnexus_llm_requests_total{model="m",status="ok"} 2\n' in text
    assert 'toolnexus_tool_calls_total{tool="ask",source="native",is_error="false",pending="true"} 1\n' in text
    assert text.endswith("# TYPE toolnexus_run_errors_total counter\n")


def test_a_failed_run_reports_its_error_without_the_key(mock: MockModel) -> None:
    events: list[dict[str, Any]] = []
    # A 400 body is shown (a 401's is dropped whole), so the key in it must be scrubbed.
    mock.script([{"status": 400, "body": {"error": {"message": "bad key sk-test-123456"}}}])
    c = client(mock, on_metric=events.append, retries=0)
    with pytest.raises(tn.ProviderError):
        asyncio.run(c.run("hi"))
    assert [(e["event"], e.get("status")) for e in events] == [("llm", "error"), ("run", None)]
    assert events[1]["error"] and "sk-test-123456" not in events[1]["error"]
    assert 'toolnexus_run_errors_total{model="m"} 1\n' in c.metrics()


def test_a_raising_sink_does_not_fail_the_run(mock: MockModel, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(u.exc_value))

    def sink(ev: dict[str, Any]) -> None:
        raise RuntimeError("sink down")

    mock.script([openai_text("fine")])
    assert asyncio.run(client(mock, on_metric=sink).run("hi")).text == "fine"
    assert [str(e) for e in seen] == ["sink down", "sink down"]
