"""In-process models through the package: a full run with a tool and a durable suspension,
sync and async models, a failure ending the run at once, wire options refused."""
from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import toolnexus as tn


def ask_tool() -> tn.Tool:
    def ask(ctx: tn.ToolContext) -> Any:
        """Ask the user."""
        if ctx.answer is None:
            return tn.pending(kind="question", prompt="Which colour?", id="q-1")
        return f"told {ctx.answer.data['output']}"

    return tn.define_tool(ask)


def test_a_run_with_a_tool_and_a_durable_halt_resumed_from_json() -> None:
    seen: list[dict] = []

    async def generate(req: dict) -> dict:
        seen.append(req)
        if len(seen) == 1:
            return {"tool_calls": [{"name": "ask", "arguments": {}}], "usage": {"prompt_tokens": 2, "completion_tokens": 1}}
        return {"content": f"done: {req['messages'][-1]['content']}"}

    async def main() -> tuple[tn.RunResult, tn.RunResult]:
        tk = await tn.create_toolkit(builtins=False, extra_tools=[ask_tool()])
        c = tn.create_in_process_client(model="local", generate=generate, system_prompt="Terse.")
        halted = await c.run("pick", tk)
        saved = json.loads(json.dumps({"messages": halted.messages, "pending": tn.types.request_to_wire(halted.pending)}))
        done = await c.run_with_answer(tk, saved["messages"], saved["pending"], tn.answer_output("q-1", "red"))
        return halted, done

    halted, done = asyncio.run(main())
    assert halted.status == "pending" and halted.pending.kind == "question" and halted.usage["total_tokens"] == 3
    assert done.status == "done" and done.text == "done: told red"
    assert seen[0]["model"] == "local" and seen[0]["messages"][0] == {"role": "system", "content": "Terse."}
    assert seen[0]["tools"][0]["function"]["name"] == "ask" and seen[0]["body"]["model"] == "local"


def test_a_sync_model_runs_off_the_loop_and_its_failure_is_final() -> None:
    calls = {"n": 0}

    def boom(_req: dict) -> dict:
        calls["n"] += 1
        raise RuntimeError("my in-process model blew up")  # "in-process" is no secret: shown as written

    with pytest.raises(RuntimeError, match="my in-process model blew up"):
        asyncio.run(tn.create_in_process_client(model="m", generate=boom).run("hi"))
    assert calls["n"] == 1
    sync = tn.create_in_process_client(model="m", generate=lambda _r: {"content": "x"})
    assert asyncio.run(sync.run("hi")).text == "x"


def test_a_replaced_post_never_reaches_an_in_process_model(monkeypatch: pytest.MonkeyPatch) -> None:
    import toolnexus.client as client_mod

    monkeypatch.setattr(client_mod, "_post", lambda *a: {"choices": [{"message": {"content": "from _post"}}]})
    c = tn.create_in_process_client(model="m", generate=lambda _r: {"content": "from generate"})
    assert asyncio.run(c.run("hi")).text == "from generate"


def test_wire_options_and_bad_answers_are_refused() -> None:
    with pytest.raises(TypeError, match="callable `generate`"):
        tn.create_in_process_client(model="m", generate=None)  # type: ignore[arg-type]
    for k, v in [("base_url", "http://x"), ("api_key", "k"), ("style", "openai"), ("http_transport", object())]:
        with pytest.raises(TypeError, match=f"does not take `{k}`.*no wire to configure"):
            tn.create_in_process_client(model="m", generate=lambda _r: {}, **{k: v})
    for k, v in [("retries", 3), ("on_error", lambda _i: "retry")]:
        with pytest.raises(TypeError, match=f"does not take `{k}`.*nothing is retried"):
            tn.create_in_process_client(model="m", generate=lambda _r: {}, **{k: v})
    bad = tn.create_in_process_client(model="m", generate=lambda _r: ["not", "a", "message"])
    with pytest.raises(tn.InvalidArgumentError, match="must answer an object"):
        asyncio.run(bad.run("hi"))
