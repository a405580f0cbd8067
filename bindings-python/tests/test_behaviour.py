"""The package's behaviour through its public API, beyond the conformance files: hooks,
transports, errors, timeouts, cancellation, resume, relay, tools and toolkits, fork."""
from __future__ import annotations

import asyncio
import json
import gc
import os
import sys
import warnings
import weakref
from pathlib import Path
from typing import Any, Optional

import pytest

import toolnexus as tn

from .mock import MockModel, anthropic_calls, anthropic_text, client, openai_calls, openai_text


async def toolkit(*tools: tn.Tool) -> tn.Toolkit:
    return await tn.create_toolkit(builtins=False, extra_tools=list(tools))


def add_tool() -> tn.Tool:
    async def add(a: int, b: int) -> str:
        """Add two numbers."""
        return str(a + b)

    return tn.define_tool(add)


# --- types and vocabulary -----------------------------------------------------------------

def test_dataclasses_construct_compare_and_repr_like_upstream() -> None:
    r = tn.Request(id="p", kind="approval", prompt="ok?", expiresAt="2030-01-01T00:00:00Z")
    assert r == tn.Request(id="p", kind="approval", prompt="ok?", url=None, data=None, expiresAt="2030-01-01T00:00:00Z")
    assert "expiresAt='2030-01-01T00:00:00Z'" in repr(r)
    assert tn.ToolResult(output="x", is_error=False).metadata is None
    assert tn.ToolContext().answer is None


def test_vocabulary() -> None:
    with pytest.raises(TypeError):
        tn.answer_output("p", 42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match='"declined", "cancelled" or "expired"'):
        tn.answer_declined("p", "nope")
    assert tn.answer_output("p", "yes") == tn.Answer(id="p", ok=True, data={"output": "yes"})
    auth = tn.auth_required("https://login")
    req = tn.pending_of(auth)
    assert req is not None and req.kind == "authorization" and req.url == "https://login"
    assert auth.output == "Authorization required to continue\nhttps://login"
    assert tn.sanitize("a b/c") == "a_b_c"
    assert tn.pending(kind="k", prompt="p").metadata["pending"].id != tn.pending(kind="k", prompt="p").metadata["pending"].id


def test_define_tool_infers_schema_and_description() -> None:
    def lookup(city: str, days: Optional[int] = None, tags: list = None, ctx: Any = None) -> str:  # type: ignore[assignment]
        """Look up the weather.

        More text."""
        return city

    t = tn.define_tool(lookup)
    assert t.name == "lookup" and t.description == "Look up the weather." and t.source == "native"
    assert t.input_schema == {"type": "object", "additionalProperties": False, "required": ["city"],
                              "properties": {"city": {"type": "string"}, "days": {"type": "number"}, "tags": {"type": "array"}}}

    @tn.tool(name="renamed")
    def f(x: bool) -> str:
        return "y"

    assert isinstance(f, tn.Tool) and f.name == "renamed"


def test_toolkit_api() -> None:
    async def main() -> None:
        tk = await toolkit(add_tool(), tn.relay_tool("refund", "Refund."))
        assert [t.name for t in tk.tools()] == ["add", "refund"]
        assert tk.get("add") is tk.tools()[0]
        assert tk.to_openai()[0]["function"]["name"] == "add"
        assert tk.to_anthropic()[1] == {"name": "refund", "description": "Refund.",
                                        "input_schema": {"type": "object", "properties": {}}}
        assert tk.to_gemini()[0]["functionDeclarations"][0]["name"] == "add"
        assert (await tk.execute("add", {"a": 2, "b": 3})).output == "5"
        assert (await tk.execute("nope")).output == "Unknown tool: nope"
        with pytest.warns(tn.ToolnexusWarning, match='duplicate tool name "add" — keeping first') as seen:
            tk.register(tn.define_tool(lambda: "x", name="later", description="d"), add_tool())
        assert [t.name for t in tk.tools()] == ["add", "refund", "later"] and len(seen) == 1
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # an earlier duplicate is not warned about again
            tk.register(tn.define_tool(lambda: "y", name="last", description="d"))
        async with tk:
            pass
        with pytest.raises(ValueError, match="collides with a built-in tool"):
            await toolkit(tn.relay_tool("bash", "no"))
        # The sources are the engine's: an empty MCP config connects nothing, the built-ins
        # are on by default, an unknown option is refused naming it, A2A is not in this build.
        empty = await tn.create_toolkit(mcp_config={"mcpServers": {}}, builtins=False)
        assert (empty.tools(), empty.mcp_status(), empty.skills_prompt()) == ([], {}, "")
        full = await tn.create_toolkit()
        assert [t.name for t in full.tools()] == tn.builtin.BUILTIN_TOOL_NAMES
        read = full.get("read")
        assert read is not None and read.source == "builtin"
        full.register(tn.define_tool(lambda: "z", name="zz", description="d"))
        assert full.get("read") is read and full.get("zz") is not None
        with pytest.raises(tn.InvalidArgumentError, match="builtins.nope"):
            await tn.create_toolkit(builtins={"nope": True})
        with pytest.raises(tn.InvalidArgumentError, match="agents"):
            await tn.create_toolkit(agents=[{"name": "peer"}])

    asyncio.run(main())


# --- the loop -----------------------------------------------------------------------------

class RecordingHooks:
    def __init__(self) -> None:
        self.events: list[str] = []

    async def before_llm(self, ev: dict) -> Any:
        self.events.append(f"before_llm:{ev['turn']}")
        return {"model": "override"} if ev["turn"] == 0 else None

    def after_llm(self, ev: dict) -> None:
        self.events.append(f"after_llm:{ev['model']}")

    def before_tool(self, ev: dict) -> Any:
        self.events.append(f"before_tool:{ev['name']}")
        if ev["name"] == "add":
            return {"args": {"a": 40, "b": 2}}
        return None

    async def after_tool(self, ev: dict) -> Any:
        self.events.append(f"after_tool:{ev['result'].output}")
        return {"result": tn.ToolResult(output=ev["result"].output + "!", is_error=False)}


@pytest.mark.parametrize("exc", [KeyboardInterrupt, SystemExit])
def test_a_tool_raising_a_base_exception_ends_the_run_with_it(mock: MockModel, exc: type) -> None:
    def stop() -> str:
        raise exc("stop now")

    async def stop_async() -> str:
        raise exc("stop now")

    for fn in (stop, stop_async):
        tk = tn.Toolkit([tn.define_tool(fn, name="stop")])
        mock.script([openai_calls(("c1", "stop", "{}")), openai_text("never")])
        # As asyncio does with these: the same exception ends the run (and the loop's run).
        with pytest.raises(exc, match="stop now"):
            asyncio.run(client(mock).run("hi", tk))
        assert len(mock.seen) == 1, "no request after the tool stopped the run"
        with pytest.raises(exc, match="stop now"):
            asyncio.run(tk.execute("stop", {}))


def test_hooks_as_object_and_dict(mock: MockModel) -> None:
    async def main() -> None:
        h = RecordingHooks()
        mock.script([openai_calls(("c1", "add", '{"a":1,"b":1}')), openai_text("done")])
        r = await client(mock, hooks=h).run("go", await toolkit(add_tool()))
        assert r.tool_calls[0]["output"] == "42!" and r.tool_calls[0]["args"] == {"a": 40, "b": 2}
        assert mock.seen[0]["body"]["model"] == "override" and mock.seen[1]["body"]["model"] == "m"
        assert h.events == ["before_llm:0", "after_llm:override", "before_tool:add", "after_tool:42", "before_llm:1",
                            "after_llm:m"]
        denied: list[str] = []
        hooks = {"before_tool": lambda ev: denied.append(ev["name"]) or {"result": tn.ToolResult("denied", True)}}
        mock.script([openai_calls(("c1", "add", "{}")), openai_text("ok")])
        r = await client(mock, hooks=hooks).run("go", await toolkit(add_tool()))
        assert denied == ["add"] and r.tool_calls[0]["output"] == "denied"

    asyncio.run(main())


def test_history_dicts_come_back_as_the_callers_own(mock: MockModel) -> None:
    async def main() -> None:
        history = [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"},
                   {"role": "assistant", "content": "hello"}]
        mock.script([openai_text("again")])
        r = await client(mock).run("more", history=tuple(history))  # type: ignore[arg-type]
        assert all(a is b for a, b in zip(r.messages, history)) and len(history) == 3
        assert r.messages[3:] == [{"role": "user", "content": "more"}, {"role": "assistant", "content": "again"}]
        assert mock.seen[0]["body"]["messages"] == history + r.messages[3:4]
        with pytest.raises(tn.InvalidArgumentError, match=r"history\[0\] is not a message: it is a string"):
            await client(mock).run("x", history={"role": "user"})  # type: ignore[arg-type]

    asyncio.run(main())


@pytest.mark.parametrize("with_cancel", [False, True])
def test_a_run_abandoned_with_its_loop_is_released(mock: MockModel, with_cancel: bool) -> None:
    # The run's task is never finished: its loop is closed under it. Dropping the task must
    # drop the engine's run too (nothing may keep it, and what it holds, alive), also when a
    # cancel event's watcher waits on it.
    started = asyncio.Event()

    async def hang() -> str:
        """Waits forever."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    loop = asyncio.new_event_loop()
    loop.set_exception_handler(lambda _loop, _ctx: None)
    futures: list[Any] = []
    create_future = loop.create_future
    loop.create_future = lambda: futures.append(create_future()) or futures[-1]  # type: ignore[method-assign]
    mock.script([openai_calls(("c1", "hang", "{}"))])
    tk = loop.run_until_complete(toolkit(tn.define_tool(hang)))
    cancel: Optional[asyncio.Event] = asyncio.Event() if with_cancel else None
    task = loop.create_task(client(mock).run("go", tk, cancel=cancel))
    loop.run_until_complete(asyncio.wait_for(started.wait(), 5))
    loop.close()
    run_future = weakref.ref(futures[0])
    tool_fn = weakref.ref(hang)  # held by the engine's run (through its toolkit) until it is dropped
    del task, futures, loop, create_future, cancel, tk, hang
    gc.collect()
    assert run_future() is None
    assert tool_fn() is None


def test_a_hook_exception_reaches_the_caller_unchanged(mock: MockModel) -> None:
    class Mine(Exception):
        pass

    def boom(ev: dict) -> None:
        raise Mine("from the hook")

    async def main() -> None:
        mock.script([openai_text("hi")])
        with pytest.raises(Mine, match="from the hook"):
            await client(mock, hooks={"after_llm": boom}).run("go")

    asyncio.run(main())


def test_errors_map_to_the_package_exceptions(mock: MockModel) -> None:
    async def main() -> None:
        mock.script([{"status": 400, "body": {"error": "bad key sk-test-123456", "user_id": "u1"},
                      "headers": {"retry-after": "7"}}])
        with pytest.raises(tn.ProviderError) as e:
            await client(mock).run("hi")
        assert e.value.status == 400 and e.value.retry_after == "7" and e.value.kind == "http"
        assert "sk-test-123456" not in str(e.value) and "«redacted»" in e.value.body
        assert isinstance(e.value, tn.ToolnexusError)

        for var in ("OPENROUTER_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
            os.environ.pop(var, None)
        keyless = tn.create_client(base_url=mock.url("/v1"), style="openai", model="m")
        with pytest.raises(RuntimeError, match="No API key"):
            await keyless.run("hi")
        with pytest.raises(ValueError):
            tn.create_client(base_url="ftp://x", style="openai", model="m")

    asyncio.run(main())


def test_retries_with_on_error_and_timeouts(mock: MockModel) -> None:
    async def main() -> None:
        infos: list[dict] = []

        async def on_error(info: dict) -> str:
            infos.append(info)
            return "retry"

        mock.script([{"status": 520, "body": {}}, openai_text("ok")])
        r = await client(mock, on_error=on_error).run("hi")
        assert r.text == "ok" and infos == [{"attempt": 0, "retryable": False, "status": 520}]

        mock.script([{"status": 200, "body": openai_text("late")["body"], "delay": 2}])
        with pytest.raises(tn.RunTimeout):
            await client(mock, timeout_ms=100).run("hi")
        with pytest.raises(TimeoutError):
            mock.script([{"status": 200, "body": openai_text("late")["body"], "delay": 2}])
            await client(mock, timeout_ms=100).run("hi")

    asyncio.run(main())


def test_cancel_event_and_task_cancellation(mock: MockModel) -> None:
    async def main() -> None:
        mock.script([{"status": 200, "body": openai_text("late")["body"], "delay": 2}])
        cancel = asyncio.Event()
        asyncio.get_running_loop().call_later(0.1, cancel.set)
        with pytest.raises(tn.RunCancelled):
            await client(mock).run("hi", cancel=cancel)

        mock.script([{"status": 200, "body": openai_text("late")["body"], "delay": 2}])
        task = asyncio.ensure_future(client(mock).run("hi"))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

        # Set before the run starts: nothing is sent at all.
        mock.script([openai_text("never")])
        cancel = asyncio.Event()
        cancel.set()
        with pytest.raises(tn.RunCancelled):
            await client(mock).run("hi", cancel=cancel)
        assert mock.seen == []

    asyncio.run(main())


def test_durable_halt_resume_and_relay_anthropic(mock: MockModel) -> None:
    calls: list[Optional[tn.Answer]] = []

    async def deploy(ctx: tn.ToolContext) -> Any:
        calls.append(ctx.answer)
        if ctx.answer is None:
            return tn.pending(kind="approval", prompt="Deploy?", id="pnd-1")
        return "deployed"

    async def main() -> None:
        tk = await toolkit(tn.define_tool(deploy, name="deploy"), tn.relay_tool("refund", "Refund."))
        c = client(mock, style="anthropic")
        mock.script([anthropic_calls(("t1", "deploy", {}), ("t2", "refund", {"amount": 5}))])
        halted = await c.run("deploy and refund", tk)
        assert halted.status == "pending" and halted.pending == tn.Request(id="pnd-1", kind="approval", prompt="Deploy?")
        with pytest.raises(tn.AnswerMismatchError):
            await c.run_with_answer(tk, halted.messages, halted.pending, tn.answer_output("other", "yes"))
        mock.script([])
        relay_halt = await c.run_with_answer(tk, halted.messages, halted.pending, tn.answer_output("pnd-1", "yes"))
        assert relay_halt.status == "pending" and tn.is_relay_request(relay_halt.pending)
        (call,) = tn.relay_calls_of(relay_halt.pending)
        assert call == tn.RelayCall(id="t2", name="refund", input={"amount": 5}, arguments='{"amount":5}')
        mock.script([anthropic_text("done")])
        answer = tn.relay_answer(relay_halt.pending.id, [tn.RelayResult(id="t2", output="refunded 5")])
        done = await c.run_with_answer(tk, relay_halt.messages, relay_halt.pending, answer)
        assert done.status == "done" and done.text == "done"
        assert [r["output"] for r in done.tool_calls] == ["refunded 5"]
        assert calls[0] is None and calls[1] is not None and calls[1].id == "pnd-1"

    asyncio.run(main())


class SyncTransport:
    def __init__(self, replies: list[dict]) -> None:
        self.replies = replies
        self.seen: list[tuple] = []

    def post(self, url: str, headers: dict, payload: dict, timeout: float) -> dict:
        self.seen.append((url, headers, payload))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


def test_http_transports_sync_async_and_urllib(mock: MockModel) -> None:
    async def main() -> None:
        t = SyncTransport([tn.ProviderError(503, "busy", "0"), OSError("reset"), openai_text("via host")["body"]])
        c = tn.create_client(base_url="http://host.invalid/v1", style="openai", model="m", api_key="k",
                             http_transport=t, retry_base_ms=1)
        assert (await c.run("hi")).text == "via host"
        assert len(t.seen) == 3 and t.seen[0][0] == "http://host.invalid/v1/chat/completions"
        assert t.seen[0][2]["messages"] == [{"role": "user", "content": "hi"}]

        class AsyncTransport:
            async def post(self, url: str, headers: dict, payload: dict, timeout: float) -> dict:
                return anthropic_text("async host")["body"]

        c = tn.create_client(base_url="http://h.invalid", style="anthropic", model="m", api_key="k",
                             http_transport=AsyncTransport())
        assert (await c.run("hi")).text == "async host"

        mock.script([openai_text("direct")])
        body = tn.UrllibTransport().post(mock.url("/v1/chat/completions"), {"content-type": "application/json"},
                                         {"model": "m", "messages": []}, 5.0)
        assert body["choices"][0]["message"]["content"] == "direct"

    asyncio.run(main())


def test_request_params_and_body_transform(mock: MockModel) -> None:
    async def main() -> None:
        mock.script([openai_text("ok")])
        with pytest.warns(tn.ToolnexusWarning, match='request_params key "tools" is not allowed'):
            c = client(mock, request_params={"temperature": 0.2, "tools": []},
                       body_transform=lambda body: {**body, "seed": 7})
        await c.run("hi")
        body = mock.seen[0]["body"]
        assert body["temperature"] == 0.2 and body["seed"] == 7 and "tools" not in body

    asyncio.run(main())


_BAD_OPTIONS = json.loads((Path(__file__).parents[2] / "tests/options/bad-client-options.json").read_text())


@pytest.mark.parametrize("case", _BAD_OPTIONS["cases"], ids=lambda c: f"{c['option']}={c['value']!r}")
def test_a_bad_option_is_a_value_error_naming_it(case: dict) -> None:
    # The cases every binding checks; an option Python does not accept is its own TypeError.
    kwargs = {**_BAD_OPTIONS["base"], case["option"]: case["value"]}
    if case["option"] == "no_such_option":
        with pytest.raises(TypeError, match="no_such_option"):
            tn.create_client(**kwargs)
        return
    with pytest.raises(tn.InvalidArgumentError, match=case["option"]) as e:
        tn.create_client(**kwargs)
    assert isinstance(e.value, ValueError) and e.value.kind == "invalid_argument"


def test_a_float_deadline_is_the_engines(mock: MockModel) -> None:
    # A float deadline is kept (rounded up to whole milliseconds), never dropped.
    mock.script([{**openai_text("late"), "delay": 0.5}])
    c = tn.create_client(base_url=mock.url("/v1"), style="openai", model="m", api_key="k", timeout_ms=50.5)
    with pytest.raises(tn.RunTimeout, match="51ms"):
        asyncio.run(c.run("hi"))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_the_engine_survives_fork(mock: MockModel) -> None:
    async def one() -> str:
        return (await client(mock).run("hi")).text

    mock.script([openai_text("parent")])
    assert asyncio.run(one()) == "parent"
    # The mock serves from the parent's threads and memory: script the child's reply here.
    mock.script([openai_text("child")])
    doomed = client(mock)  # the child lets go of it: that must not touch the parent's pool
    pid = os.fork()
    if pid == 0:  # the child: a fresh runtime, a fresh pool
        del doomed
        gc.collect()
        try:
            code = 0 if asyncio.run(asyncio.wait_for(one(), 20)) == "child" else 1
        except BaseException:  # noqa: BLE001
            code = 2
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    del doomed
    mock.script([openai_text("parent again")])
    assert asyncio.run(asyncio.wait_for(one(), 20)) == "parent again"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_client_used_before_fork_never_crosses_answers(mock: MockModel) -> None:
    # The gunicorn / celery pattern: one client built and used at import, workers forked.
    mock.echo = True
    shared = client(mock)
    assert asyncio.run(shared.run("parent-1")).text == "echo: parent-1"
    children = []
    for n in range(4):
        pid = os.fork()
        if pid == 0:
            try:
                async def work() -> bool:
                    for i in range(3):
                        r = await asyncio.wait_for(shared.run(f"child-{n}-{i}"), 20)
                        if r.text != f"echo: child-{n}-{i}":
                            return False
                    return True
                code = 0 if asyncio.run(work()) else 1
            except BaseException:  # noqa: BLE001
                code = 2
            os._exit(code)
        children.append(pid)
    for i in range(3):  # the parent goes on while the children run
        assert asyncio.run(asyncio.wait_for(shared.run(f"parent-2-{i}"), 20)).text == f"echo: parent-2-{i}"
    for pid in children:
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    assert asyncio.run(asyncio.wait_for(shared.run("parent-3"), 20)).text == "echo: parent-3"


def test_a_tool_sees_the_same_call_id_on_every_run_of_its_call(mock: MockModel) -> None:
    seen: list[tuple[str, bool]] = []

    async def charge(ctx: tn.ToolContext) -> Any:
        seen.append((ctx.call_id, ctx.answer is not None))
        if ctx.answer is None:
            return tn.pending(kind="approval", prompt="Charge?", id="p1")
        return "charged"

    async def main() -> None:
        tk = tn.Toolkit([tn.define_tool(charge, name="charge")])
        mock.script([openai_calls(("call-7", "charge", "{}")), openai_text("ok")])
        await client(mock, wait_for=lambda req: tn.answer_output(req.id, "yes")).run("hi", tk)
        mock.script([openai_calls(("call-8", "charge", "{}")), openai_text("ok")])
        halted = await client(mock).run("hi", tk)
        await client(mock).run_with_answer(tk, halted.messages, halted.pending, tn.answer_output("p1", "yes"))
        await tk.execute("charge", {})

    asyncio.run(main())
    assert seen == [("call-7", False), ("call-7", True), ("call-8", False), ("call-8", True), ("", False)]


def test_a_relay_tool_run_directly_does_what_a_run_does() -> None:
    refund = tn.relay_tool("refund", "Refund.")
    assert refund.input_schema == {"type": "object", "properties": {}}

    async def main() -> None:
        r = await refund.execute({"amount": 5}, tn.ToolContext(call_id="c9"))
        req = tn.pending_of(r)
        assert req is not None and req.id == "relay-c9" and tn.is_relay_request(req)
        assert tn.relay_calls_of(req) == [tn.RelayCall(id="c9", name="refund", input={"amount": 5}, arguments='{"amount":5}')]
        done = await refund.execute({}, tn.ToolContext(call_id="c9", answer=tn.answer_output(req.id, "refunded")))
        assert (done.output, done.is_error) == ("refunded", False)
        no = await refund.execute({}, tn.ToolContext(call_id="c9", answer=tn.answer_declined(req.id, "expired")))
        assert (no.output, no.is_error) == ("relay declined for refund: expired", True)

    asyncio.run(main())
    assert tn.auth_required("https://x/login").metadata["pending"].prompt == "Authorization required to continue"


def test_the_error_body_rules_are_the_engines() -> None:
    import toolnexus.client as client_mod

    body = '{"error":"quota","user_id":"u-9","org_id":42}'
    assert client_mod.safe_error_body(402, body) == '{"error":"quota","user_id":"«redacted»","org_id":"«redacted»"}'
    assert client_mod.safe_error_body(401, "key sk-1") == client_mod.safe_error_body(403, "x") == ""
    long = "x" * 300
    assert len(client_mod.capped_error_body(500, long)) == client_mod.MAX_ERROR_BODY + 1
    e = tn.ProviderError(402, body, "7")
    assert (str(e), e.body, e.retry_after) == (f"LLM 402: {e.body}", client_mod.safe_error_body(402, body), "7")
    assert str(tn.ProviderError(401, "key sk-1", None)) == "LLM 401"
    assert client_mod._RETRYABLE == frozenset({429, 500, 502, 503, 504, 529})
    assert client_mod.RUN_STATUSES == ("done", "pending", "incomplete") and client_mod.LIMIT_MAX_TURNS == "maxTurns"


def test_the_private_seams_upstream_tests_reach(monkeypatch: Any) -> None:
    import toolnexus.client as client_mod

    assert [client_mod._parse_retry_after(v) for v in ("0", " 7 ", "1.5", "-1", None)] == [0, 7, None, None, None]
    sent: list[dict] = []

    def fake_post(url: str, headers: dict, payload: dict, timeout: float) -> dict:
        sent.append(payload)
        return openai_text("faked")["body"]

    c = tn.create_client(base_url="http://127.0.0.1:9/v1", style="openai", model="m", api_key="k")
    monkeypatch.setattr(client_mod, "_post", fake_post)
    assert asyncio.run(c.run("hi")).text == "faked"
    assert sent[0]["messages"][-1] == {"role": "user", "content": "hi"}
    monkeypatch.undo()  # back to the engine's own transport: the dead port refuses
    with pytest.raises(tn.NetworkError):
        asyncio.run(tn.create_client(base_url="http://127.0.0.1:9/v1", style="openai", model="m", api_key="k",
                                     retries=0).run("hi"))


def test_wait_for_sync_and_async_and_dict_answers(mock: MockModel) -> None:
    async def ask(ctx: tn.ToolContext) -> Any:
        if ctx.answer is None:
            return tn.pending(kind="input", prompt="Name?", id="n1")
        return f"hello {ctx.answer.data['output']}"

    async def main() -> None:
        for wait_for in (lambda req: {"id": req.id, "ok": True, "data": {"output": "ann"}, "reason": None},
                         lambda req: asyncio.sleep(0, tn.answer_output(req.id, "ann"))):
            mock.script([openai_calls(("c1", "ask", "{}")), openai_text("done")])
            r = await client(mock, wait_for=wait_for).run("hi", await toolkit(tn.define_tool(ask, name="ask")))
            assert r.tool_calls[0]["output"] == "hello ann"
        mock.script([openai_calls(("c1", "ask", "{}"))])
        with pytest.raises(ValueError, match='missing "ok"'):
            await client(mock, wait_for=lambda req: {"id": req.id}).run("hi", await toolkit(tn.define_tool(ask, name="ask")))

    asyncio.run(main())


def test_version() -> None:
    assert tn.__version__ == "0.21.0" and tn.ENGINE_VERSION
    assert sys.modules["toolnexus._native"].ENGINE_VERSION == tn.ENGINE_VERSION
