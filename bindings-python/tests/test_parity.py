"""Behaviour that must match the published package exactly, found in review: what a custom
transport's exceptions become, what ``on_error`` is given, the exceptions' constructors and
bases, ``ToolResult.parts``, a cancel set from inside a callback, a ``before_llm`` hook that
edits the transcript in place, and the header names a transport sees."""
from __future__ import annotations

import asyncio
import inspect
import pickle
import socket
import urllib.error
from typing import Any

import pytest

import toolnexus as tn

from .mock import MockModel, anthropic_calls, anthropic_text, client, openai_calls, openai_text


def via(transport: Any, style: str = "openai", **kw: Any) -> tn.Client:
    kw.setdefault("retry_base_ms", 1)
    return tn.create_client(base_url="http://host.invalid/v1", style=style, model="m", api_key="k",
                            http_transport=transport, **kw)


class Transport:
    """Answers from a list: an exception in it is raised, anything else returned."""

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.headers: list[dict[str, str]] = []

    def post(self, url: str, headers: dict, payload: dict, timeout: float) -> dict:
        self.headers.append(headers)
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return reply


def closed_port_url() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}/v1"


# --- a transport's own exceptions ---------------------------------------------------------

def test_a_transports_network_error_is_reraised_as_the_same_object() -> None:
    async def main() -> None:
        reset = ConnectionResetError("peer reset")
        with pytest.raises(ConnectionResetError) as e:
            await via(Transport(reset), retries=0).run("hi")
        assert e.value is reset

        # Retried like any network error first, then the last one comes back as it was raised.
        last = urllib.error.URLError("no route")
        t = Transport(OSError("first"), last)
        with pytest.raises(urllib.error.URLError) as e2:
            await via(t, retries=1).run("hi")
        assert e2.value is last and len(t.headers) == 2

    asyncio.run(main())


def test_a_transports_provider_error_is_retried_by_status_or_reraised_unchanged() -> None:
    async def main() -> None:
        t = Transport(tn.ProviderError(503, "busy", "0"), openai_text("fine")["body"])
        assert (await via(t).run("hi")).text == "fine" and len(t.headers) == 2

        bad = tn.ProviderError(400, "bad request", None)
        t = Transport(bad, openai_text("never")["body"])
        with pytest.raises(tn.ProviderError) as e:
            await via(t).run("hi")
        assert e.value is bad and len(t.headers) == 1

        # A retryable status the run gives up on is that same object too.
        busy = tn.ProviderError(529, "overloaded", "0")
        with pytest.raises(tn.ProviderError) as e:
            await via(Transport(tn.ProviderError(529, "first", "0"), busy), retries=1).run("hi")
        assert e.value is busy

    asyncio.run(main())


def test_a_transports_provider_error_comes_back_without_the_api_key() -> None:
    async def main() -> None:
        key = "sk-live-0123456789"
        echoed = tn.ProviderError(400, f'{{"error": "bad key {key}"}}', None)
        client = tn.create_client(base_url="http://host.invalid/v1", style="openai", model="m", api_key=key,
                                  http_transport=Transport(echoed), retry_base_ms=1)
        with pytest.raises(tn.ProviderError) as e:
            await client.run("hi")
        assert e.value is echoed
        for text in (str(e.value), e.value.body, e.value.text, repr(e.value.args)):
            assert key not in text, text
        assert "«redacted»" in e.value.body

    asyncio.run(main())


def test_any_other_transport_exception_ends_the_run_unretried() -> None:
    async def main() -> None:
        boom = KeyError("mine")
        t = Transport(boom, openai_text("never")["body"])
        with pytest.raises(KeyError) as e:
            await via(t).run("hi")
        assert e.value is boom and len(t.headers) == 1

    asyncio.run(main())


# --- on_error -----------------------------------------------------------------------------

def test_on_error_gets_the_exception_and_anything_but_fail_retries() -> None:
    async def main() -> None:
        infos: list[dict] = []
        reset = ConnectionResetError("reset")
        t = Transport(reset, tn.ProviderError(503, "busy", "0"), openai_text("ok")["body"])
        r = await via(t, on_error=lambda info: infos.append(info)).run("hi")  # returns None: retry
        assert r.text == "ok"
        assert infos == [{"error": reset, "attempt": 0, "retryable": True},
                         {"status": 503, "attempt": 1, "retryable": True}]
        assert infos[0]["error"] is reset

        t = Transport(tn.ProviderError(400, "no", None), openai_text("ok")["body"])
        assert (await via(t, on_error=lambda info: "again").run("hi")).text == "ok"
        t = Transport(ConnectionResetError("x"), openai_text("never")["body"])
        with pytest.raises(ConnectionResetError):
            await via(t, on_error=lambda info: "fail").run("hi")

    asyncio.run(main())


def test_on_error_gets_a_network_error_object_from_the_default_transport() -> None:
    async def main() -> None:
        infos: list[dict] = []
        c = tn.create_client(base_url=closed_port_url(), style="openai", model="m", api_key="k", retries=1,
                             retry_base_ms=1, on_error=lambda info: infos.append(info))
        with pytest.raises(tn.NetworkError):
            await c.run("hi")
        assert [sorted(i) for i in infos] == [["attempt", "error", "retryable"]] * 2
        assert all(isinstance(i["error"], tn.NetworkError) and str(i["error"]) for i in infos)

    asyncio.run(main())


# --- the exceptions -----------------------------------------------------------------------

def test_provider_error_constructor_and_message_match_upstream() -> None:
    assert list(inspect.signature(tn.ProviderError).parameters) == ["status", "text", "retry_after"]
    assert all(p.default is inspect.Parameter.empty for p in inspect.signature(tn.ProviderError).parameters.values())
    with pytest.raises(TypeError):
        tn.ProviderError(400)  # type: ignore[call-arg]

    e = tn.ProviderError(400, ' {"user_id": "u-\\"1\\"", "org_id": 42, "x": 1} ', "3")
    assert str(e) == 'LLM 400: {"user_id": "«redacted»", "org_id": "«redacted»", "x": 1}'
    assert e.body == e.text == '{"user_id": "«redacted»", "org_id": "«redacted»", "x": 1}'
    assert (e.status, e.retry_after) == (400, "3") and e.args == (str(e),)
    assert isinstance(e, tn.ToolnexusError) and e.kind == "http"

    for status in (401, 403):
        denied = tn.ProviderError(status, "token sk-leak", None)
        assert (str(denied), denied.body) == (f"LLM {status}", "")
    assert str(tn.ProviderError(502, "", None)) == "LLM 502"
    long = tn.ProviderError(500, "y" * 250, None)
    assert str(long) == "LLM 500: " + "y" * 200 + "…" and long.body == "y" * 250

    again = pickle.loads(pickle.dumps(e))
    assert (type(again), str(again), again.status, again.body, again.retry_after) == (
        tn.ProviderError, str(e), 400, e.body, "3")


def test_engine_provider_errors_keep_the_engines_redaction(mock: MockModel) -> None:
    async def main() -> None:
        mock.script([{"status": 429, "body": {"error": "key sk-test-123456", "account_id": "a1"},
                      "headers": {"retry-after": "x"}}] * 3)
        with pytest.raises(tn.ProviderError) as e:
            await client(mock).run("hi")
        assert e.value.status == 429 and e.value.retry_after == "x"
        assert "sk-test-123456" not in e.value.body and "a1" not in e.value.body
        assert str(e.value) == f"LLM 429: {e.value.body}"

    asyncio.run(main())


def test_network_error_is_a_urlerror_with_a_readable_message() -> None:
    async def main() -> None:
        c = tn.create_client(base_url=closed_port_url(), style="openai", model="m", api_key="k", retries=0)
        with pytest.raises(urllib.error.URLError) as e:
            await c.run("hi")
        err = e.value
        assert isinstance(err, tn.NetworkError) and isinstance(err, ConnectionError)
        assert isinstance(err, tn.ToolnexusError) and err.kind == "network"
        assert str(err) and not str(err).startswith("<urlopen") and err.args == (str(err),)
        assert err.reason == str(err)
        again = pickle.loads(pickle.dumps(err))
        assert type(again) is tn.NetworkError and str(again) == str(err) and again.reason == err.reason

    asyncio.run(main())


# --- ToolResult.parts ---------------------------------------------------------------------

def test_tool_result_has_parts_like_upstream() -> None:
    r = tn.ToolResult("x", False)
    assert r.parts is None and repr(r) == "ToolResult(output='x', is_error=False, metadata=None, parts=None)"
    part = {"type": "image", "mimeType": "image/png", "data": "iVBO"}
    assert tn.ToolResult("x", False, None, [part]) == tn.ToolResult(output="x", is_error=False, parts=[part])
    assert tn.ToolResult("x", False, parts=[part]) != r


def test_a_result_with_parts_is_sent_with_them(mock: MockModel) -> None:
    part = {"type": "image", "mimeType": "image/png", "data": "iVBO"}

    async def shot() -> tn.ToolResult:
        """Takes a screenshot."""
        return tn.ToolResult("a screenshot", False, parts=[part])

    async def main() -> None:
        tk = await tn.create_toolkit(builtins=False, extra_tools=[tn.define_tool(shot)])
        mock.script([openai_calls(("c1", "shot", "{}")), openai_text("done")])
        r = await client(mock).run("go", tk)
        assert r.tool_calls[0]["is_error"] is False
        sent = mock.seen[1]["body"]["messages"]
        assert sent[-2] == {"role": "tool", "tool_call_id": "c1", "content": "a screenshot"}
        assert sent[-1]["content"][1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}}
        assert (await tk.execute("shot")).parts == [part]

        # A hook's result carries its parts too.
        hooks = {"after_tool": lambda ev: {"result": tn.ToolResult("x", False, parts=[part])}}
        mock.script([openai_calls(("c1", "shot", "{}")), openai_text("done")])
        r = await client(mock, hooks=hooks).run("go", tk)
        assert next(m for m in r.messages if m["role"] == "tool")["parts"] == [part]

    asyncio.run(main())


# --- cancel set inside a callback ---------------------------------------------------------

class CountingTransport:
    """Async, so the engine calls it within the poll that decides to send: counting its calls
    shows a request the run let through even when the socket would not have had time to."""

    def __init__(self, *replies: dict) -> None:
        self.replies = list(replies)
        self.posts = 0

    async def post(self, url: str, headers: dict, payload: dict, timeout: float) -> dict:
        self.posts += 1
        return self.replies.pop(0)["body"]


@pytest.mark.parametrize("to", ["mock", "transport"])
def test_cancel_set_inside_an_async_tool_sends_no_further_request(mock: MockModel, to: str) -> None:
    async def main() -> None:
        cancel = asyncio.Event()

        async def stop() -> str:
            """Stops the run."""
            cancel.set()
            return "stopping"

        tk = await tn.create_toolkit(builtins=False, extra_tools=[tn.define_tool(stop)])
        replies = [openai_calls(("c1", "stop", "{}")), openai_text("never")]
        mock.script(replies)
        counting = CountingTransport(*replies)
        c = client(mock) if to == "mock" else via(counting)
        with pytest.raises(tn.RunCancelled):
            await c.run("go", tk, cancel=cancel)
        assert (len(mock.seen) if to == "mock" else counting.posts) == 1

    asyncio.run(main())


@pytest.mark.parametrize("to", ["mock", "transport"])
@pytest.mark.parametrize("where", ["after_llm", "before_tool", "after_tool", "wait_for", "before_llm",
                                   "body_transform"])
def test_cancel_set_inside_a_hook_or_wait_for_sends_no_further_request(mock: MockModel, where: str, to: str) -> None:
    async def main() -> None:
        cancel = asyncio.Event()
        bodies = 0

        def stop(ev: Any) -> None:
            # before_llm and body_transform stop the second request (they let the first through).
            nonlocal bodies
            bodies += 1
            if where not in ("before_llm", "body_transform") or bodies == 2:
                cancel.set()

        async def ask(ctx: tn.ToolContext) -> Any:
            """Asks when wait_for is the one under test."""
            return tn.pending(kind="input", prompt="?") if where == "wait_for" and ctx.answer is None else "done"

        def wait_for(req: tn.Request) -> tn.Answer:
            cancel.set()
            return tn.answer_output(req.id, "yes")

        tk = await tn.create_toolkit(builtins=False, extra_tools=[tn.define_tool(ask)])
        replies = [openai_calls(("c1", "ask", "{}")), openai_text("never")]
        mock.script(replies)
        counting = CountingTransport(*replies)
        kw: dict[str, Any] = {"wait_for": wait_for}
        if where == "body_transform":
            kw["body_transform"] = stop
        elif where != "wait_for":
            kw["hooks"] = {where: stop}
        c = client(mock, **kw) if to == "mock" else via(counting, **kw)
        with pytest.raises(tn.RunCancelled):
            await c.run("go", tk, cancel=cancel)
        assert (len(mock.seen) if to == "mock" else counting.posts) == 1

    asyncio.run(main())


# --- before_llm editing the transcript in place -------------------------------------------

@pytest.mark.parametrize("style", ["openai", "anthropic"])
def test_before_llm_edits_in_place_are_sent(mock: MockModel, style: str) -> None:
    text, calls = (openai_text, openai_calls) if style == "openai" else (anthropic_text, anthropic_calls)
    added = {"role": "user", "content": "also: be brief"}

    def before_llm(ev: dict) -> Any:
        if ev["turn"] == 0:
            ev["messages"].append(added)
            ev["tools"].clear()
            return {"model": "m2"}  # an override without messages still keeps the edit
        ev["messages"] = []  # re-binding the key is not an edit of the list: ignored, as upstream
        return None

    async def add(a: int, b: int) -> str:
        """Adds."""
        return str(a + b)

    async def main() -> None:
        tk = await tn.create_toolkit(builtins=False, extra_tools=[tn.define_tool(add)])
        args: Any = '{"a":1,"b":2}' if style == "openai" else {"a": 1, "b": 2}
        mock.script([calls(("c1", "add", args)), text("3")])
        r = await client(mock, style, hooks={"before_llm": before_llm}).run("go", tk)
        first, second = (s["body"] for s in mock.seen)
        assert first["messages"][-1] == added and first["model"] == "m2" and "tools" not in first
        assert added in second["messages"] and second["messages"][:len(first["messages"])] == first["messages"]
        assert "tools" not in second and added in r.messages and r.text == "3"

        async def untouched(ev: dict) -> None:
            return None

        mock.script([text("plain")])
        await client(mock, style, hooks={"before_llm": untouched}).run("go", tk)
        assert mock.seen[0]["body"]["messages"][-1] == {"role": "user", "content": "go"}
        assert "tools" in mock.seen[0]["body"]

    asyncio.run(main())


# --- hooks in the anthropic style ---------------------------------------------------------

def test_hooks_in_the_anthropic_style(mock: MockModel) -> None:
    events: list[str] = []

    async def before_llm(ev: dict) -> Any:
        events.append(f"before_llm:{ev['turn']}:{ev['messages'][-1]['role']}")
        return {"model": "override"} if ev["turn"] == 0 else None

    def after_llm(ev: dict) -> None:
        events.append(f"after_llm:{ev['model']}:{ev['response']['content'][0]['type']}")

    def before_tool(ev: dict) -> Any:
        events.append(f"before_tool:{ev['name']}:{ev['id']}")
        return {"args": {"a": 40, "b": 2}}

    async def after_tool(ev: dict) -> Any:
        events.append(f"after_tool:{ev['result'].output}")
        return {"result": tn.ToolResult(output=ev["result"].output + "!", is_error=False)}

    async def add(a: int, b: int) -> str:
        """Adds."""
        return str(a + b)

    async def main() -> None:
        tk = await tn.create_toolkit(builtins=False, extra_tools=[tn.define_tool(add)])
        mock.script([anthropic_calls(("t1", "add", {"a": 1, "b": 1})), anthropic_text("done")])
        hooks = {"before_llm": before_llm, "after_llm": after_llm, "before_tool": before_tool,
                 "after_tool": after_tool}
        r = await client(mock, "anthropic", hooks=hooks).run("go", tk)
        assert events == ["before_llm:0:user", "after_llm:override:tool_use", "before_tool:add:t1", "after_tool:42",
                          "before_llm:1:user", "after_llm:m:text"]
        assert mock.seen[0]["body"]["model"] == "override" and mock.seen[1]["body"]["model"] == "m"
        assert r.tool_calls[0]["output"] == "42!" and r.tool_calls[0]["args"] == {"a": 40, "b": 2}
        result_block = mock.seen[1]["body"]["messages"][-1]["content"][0]
        assert result_block["type"] == "tool_result" and result_block["content"] == "42!"

        mock.script([anthropic_calls(("t1", "add", {"a": 1, "b": 1})), anthropic_text("ok")])
        denied = {"before_tool": lambda ev: {"result": tn.ToolResult("denied", True)}}
        r = await client(mock, "anthropic", hooks=denied).run("go", tk)
        assert r.tool_calls[0]["output"] == "denied" and r.tool_calls[0]["is_error"] is True

    asyncio.run(main())


# --- the headers a transport sees ---------------------------------------------------------

def test_a_transport_sees_upstreams_header_names() -> None:
    async def main() -> None:
        t = Transport(openai_text("ok")["body"])
        await via(t, headers={"X-Extra": "1", "openai-organization": "org"}).run("hi")
        assert list(t.headers[0].items()) == [("Authorization", "Bearer k"), ("Content-Type", "application/json"),
                                              ("X-Extra", "1"), ("openai-organization", "org")]

        t = Transport(anthropic_text("ok")["body"])
        await via(t, "anthropic", headers={"X-Trace": "t"}).run("hi")
        assert list(t.headers[0].items()) == [("x-api-key", "k"), ("anthropic-version", "2023-06-01"),
                                              ("Content-Type", "application/json"), ("X-Trace", "t")]

    asyncio.run(main())


def test_answer_declined_refuses_reasons_outside_the_vocabulary() -> None:
    # The engine's rule and words (upstream's, but for the quotes of the bad value).
    with pytest.raises(ValueError) as e:
        tn.answer_declined("p", "nope")
    assert str(e.value) == 'Answer reason must be "declined", "cancelled" or "expired", got "nope"'
    assert tn.answer_declined("p", "expired") == tn.Answer(id="p", ok=False, reason="expired")


def test_max_turns_zero_sends_nothing_and_ends_incomplete(mock: MockModel) -> None:
    async def main() -> None:
        r = await client(mock, max_turns=0).run("hi")
        assert (r.status, r.limit, r.turns) == ("incomplete", "maxTurns", 0)
        assert mock.seen == []

    asyncio.run(main())
