"""A loopback mock model for the tests: serves scripted replies in order, records requests."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import toolnexus as tn


class MockModel:
    def __init__(self) -> None:
        self.replies: list[dict[str, Any]] = []
        self.seen: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        #: With no scripted reply left, answer "echo: <last user message>" instead of 599
        #: (replies must not depend on the mock's memory when forked children call it).
        self.echo = False
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(n)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"unparsed": raw.decode("utf-8", "replace")}
                headers = {k.lower(): v for k, v in self.headers.items()}
                with mock.lock:
                    mock.seen.append({"path": self.path, "headers": headers, "body": body})
                    reply = mock.replies.pop(0) if mock.replies else None
                if reply is None and mock.echo:
                    last = [m for m in body.get("messages", []) if m.get("role") == "user"][-1:]
                    reply = openai_text(f"echo: {last[0]['content'] if last else ''}")
                if reply is None:
                    reply = {"status": 599, "body": {"error": {"message": "mock: no reply left"}}}
                if reply.get("delay"):
                    threading.Event().wait(reply["delay"])
                data = json.dumps(reply.get("body")).encode()
                self.send_response(reply.get("status", 200))
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in (reply.get("headers") or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def script(self, replies: list[dict[str, Any]]) -> None:
        with self.lock:
            self.replies = list(replies)
            self.seen = []

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def client(mock: MockModel, style: str = "openai", **kw: Any) -> tn.Client:
    """A client of `mock` in `style`, retrying at once."""
    base = mock.url("/v1") if style == "openai" else mock.url()
    kw.setdefault("retry_base_ms", 1)
    return tn.create_client(base_url=base, style=style, model="m", api_key="sk-test-123456", **kw)


def openai_text(text: str) -> dict[str, Any]:
    return {"body": {"choices": [{"message": {"role": "assistant", "content": text}}],
                     "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}}


def openai_calls(*calls: tuple[str, str, str]) -> dict[str, Any]:
    tcs = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in calls]
    return {"body": {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": tcs}}],
                     "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}}


def anthropic_text(text: str) -> dict[str, Any]:
    return {"body": {"content": [{"type": "text", "text": text}], "usage": {"input_tokens": 3, "output_tokens": 2}}}


def anthropic_calls(*calls: tuple[str, str, dict]) -> dict[str, Any]:
    blocks = [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls]
    return {"body": {"content": blocks, "usage": {"input_tokens": 3, "output_tokens": 2}}}
