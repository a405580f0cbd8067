"""Streaming through the package: events in upstream's shapes and order, text arriving while
the answer still streams, a host transport's open(), and failures raised from the iteration."""
from __future__ import annotations

import asyncio
import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

import pytest

import toolnexus as tn


def sse(*events: dict) -> list[bytes]:
    return [f"data: {json.dumps(e)}\n\n".encode() for e in events] + [b"data: [DONE]\n\n"]


def text_answer(*parts: str) -> list[bytes]:
    return sse(*({"choices": [{"delta": {"content": p}}]} for p in parts),
               {"choices": [{"delta": {}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 2, "completion_tokens": 1, "total_tokens": 3}})


def call_answer(id_: str, name: str) -> list[bytes]:
    return sse({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": id_, "function": {"name": name, "arguments": "{}"}}]}}]},
               {"choices": [{"delta": {}, "finish_reason": "tool_calls"}]})


class SseServer:
    """Serves one scripted event stream per request; an event ``b"<wait>"`` holds the rest
    until ``gate`` is set (5 s at most; ``held_too_long`` then says so)."""

    def __init__(self, answers: list[list[bytes]]) -> None:
        self.answers = answers
        self.gate = threading.Event()
        self.held_too_long = False
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("content-length") or 0))
                events = outer.answers.pop(0)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for ev in events:
                    if ev == b"<wait>":
                        outer.held_too_long = not outer.gate.wait(5)
                        continue
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(ev), ev))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")

            def log_message(self, *a: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@pytest.fixture
def server() -> Iterator[Any]:
    made: list[SseServer] = []

    def make(answers: list[list[bytes]]) -> SseServer:
        made.append(SseServer(answers))
        return made[-1]

    yield make
    for s in made:
        s.server.shutdown()


async def collect(agen: Any, on_text: Any = None) -> list[dict]:
    out = []
    async for ev in agen:
        if on_text and ev["type"] == "text":
            on_text()
        out.append(ev)
    return out


def test_text_arrives_while_the_answer_still_streams(server: Any) -> None:
    answer = text_answer("Hel")[:1] + [b"<wait>"] + text_answer("lo")
    s = server([answer])
    c = tn.create_client(base_url=s.url(), style="openai", model="m", api_key="k")
    events = asyncio.run(collect(c.stream("hi"), on_text=s.gate.set))
    assert not s.held_too_long, "the first delta came only with the whole answer"
    assert [e["type"] for e in events] == ["text", "text", "usage", "done"]
    assert "".join(e["delta"] for e in events if e["type"] == "text") == "Hello"
    assert events[-1]["result"].text == "Hello" and events[-2]["usage"]["total_tokens"] == 3


def ask_tool() -> tn.Tool:
    def ask(ctx: tn.ToolContext) -> Any:
        """Ask."""
        return tn.pending(kind="question", prompt="Which?", id="q-1") if ctx.answer is None else "told"

    return tn.define_tool(ask)


def test_tool_calls_a_suspension_and_a_durable_halt(server: Any) -> None:
    s = server([call_answer("c1", "ask"), text_answer("ok"), call_answer("c2", "ask")])

    async def main() -> tuple[list[dict], list[dict]]:
        tk = await tn.create_toolkit(builtins=False, extra_tools=[ask_tool()])
        inline = tn.create_client(base_url=s.url(), style="openai", model="m", api_key="k",
                                  wait_for=lambda r: tn.answer_output(r.id, "x"))
        durable = tn.create_client(base_url=s.url(), style="openai", model="m", api_key="k")
        return await collect(inline.stream("go", tk)), await collect(durable.stream("go", tk))

    inline, durable = asyncio.run(main())
    assert [e["type"] for e in inline] == ["tool_call", "pending", "tool_result", "text", "usage", "done"]
    assert isinstance(inline[1]["request"], tn.Request) and inline[1]["request"].id == "q-1"
    assert inline[2] == {"type": "tool_result", "id": "c1", "name": "ask", "output": "told", "is_error": False}
    assert [e["type"] for e in durable] == ["tool_call", "pending", "done"]
    assert durable[-1]["result"].status == "pending"


class OpenTransport:
    """A host transport with the published package's streaming seam."""

    def post(self, url: str, headers: dict, payload: dict, timeout: float) -> dict:
        raise AssertionError("a stream must use open()")

    def open(self, url: str, headers: dict, payload: dict, timeout: float) -> io.BytesIO:
        assert payload["stream"] is True and payload["stream_options"] == {"include_usage": True}
        return io.BytesIO(b"".join(text_answer("via ", "open")))


def test_a_host_transport_streams_through_open_and_failures_raise() -> None:
    c = tn.create_client(base_url="http://x/v1", style="openai", model="m", api_key="k", http_transport=OpenTransport())
    events = asyncio.run(collect(c.stream("hi")))
    assert events[-1]["result"].text == "via open"

    class Garbled(OpenTransport):
        def open(self, *a: Any) -> io.BytesIO:
            return io.BytesIO(b"data: {nope\n\n")

    bad = tn.create_client(base_url="http://x/v1", style="openai", model="m", api_key="k", http_transport=Garbled())
    with pytest.raises(tn.ProtocolError):
        asyncio.run(collect(bad.stream("hi")))
    # With an id the stream (and ask's on_text, which streams) is a turn of a stored conversation.
    deltas: list[str] = []
    assert asyncio.run(c.ask("again", id="s", on_text=deltas.append)).text == "via open" and deltas == ["via ", "open"]
    asyncio.run(collect(c.stream("more", id="s")))
    stored = asyncio.run(c.conversation_store.get("s"))
    assert stored is not None and [m["content"] for m in stored if m["role"] == "user"] == ["again", "more"]
