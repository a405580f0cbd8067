#!/usr/bin/env python3
"""The fault suite's loopback model: a misbehaving provider every binding's tests can start.

Why raw sockets and not http.server: most faults live below HTTP (a reset mid-body, a body
cut short, a head that never ends, bytes nobody asked for), and only a socket can send them.
Standard library only, so any test that has python3 can spawn it.

    python3 tests/faults/fault_server.py

binds 127.0.0.1 on an ephemeral port, prints that port as stdout's first line, serves each
connection on its own thread, and exits when its stdin closes (the test that spawned it ended,
however it ended: no orphan server).

A request is served by the first segment of its path, `/<behaviour>[~<tag>]/...`: a client's
base_url is `http://127.0.0.1:PORT/<behaviour>~<tag>/v1`. The tag lets one runner keep its
scenarios apart; `GET /_stats/<behaviour>~<tag>` answers `{"requests": N, "open": M}`: the
POSTs that prefix received, and how many of its connections are still open (0 once the client
let go of every one: a run that timed out must not keep its socket). The behaviours are the functions named in BEHAVIOURS below; the scenarios
that use them, and what each binding must make of them, are tests/faults/scenarios.json.

Every response says `connection: close` (the connection is then closed), except the first
response of `idle-408` and `stale-bytes`, which must stay pooled to misbehave later. So a
scenario never inherits a pooled connection from the one before it, and each attempt of a run
is exactly one request here.
"""
from __future__ import annotations

import json
import os
import socket
import struct
import sys
import select
import threading
import time
from typing import Any, Callable, Optional

MAX_HEAD = 64 * 1024
#: How long a server that "holds" a connection keeps it before giving up on its own.
HOLD_S = 60.0

#: POSTs received, and connections still open, per prefix (a connection belongs to the prefix
#: of its first request).
_counts: dict[str, int] = {}
_open: dict[str, int] = {}
_counts_lock = threading.Lock()


class Request:
    def __init__(self, method: str, path: str, headers: dict[str, str], body: bytes) -> None:
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
        prefix, _, rest = path.lstrip("/").partition("/")
        self.prefix = prefix
        self.behaviour = prefix.split("~", 1)[0]
        self.rest = "/" + rest
        try:
            self.json: Any = json.loads(body) if body else None
        except ValueError:
            self.json = None

    @property
    def anthropic(self) -> bool:
        return self.rest.split("?", 1)[0].endswith("/messages")


class Conn:
    """One accepted connection with its read buffer."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = b""
        #: Responses already sent on this connection.
        self.served = 0

    def read_request(self) -> Optional[Request]:
        while b"\r\n\r\n" not in self.buf:
            if len(self.buf) > MAX_HEAD:
                return None
            chunk = self.recv()
            if not chunk:
                return None
            self.buf += chunk
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) < 2:
            return None
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length") or 0)
        while len(self.buf) < length:
            chunk = self.recv()
            if not chunk:
                return None
            self.buf += chunk
        body, self.buf = self.buf[:length], self.buf[length:]
        return Request(parts[0], parts[1], headers, body)

    def recv(self) -> bytes:
        try:
            return self.sock.recv(65536)
        except OSError:
            return b""

    def send(self, data: bytes) -> bool:
        try:
            self.sock.sendall(data)
            return True
        except OSError:
            return False

    def respond(
        self,
        status: int,
        body: bytes,
        headers: Optional[dict[str, str]] = None,
        keep: bool = False,
        reason: str = "Fault",
    ) -> bool:
        h = {"content-type": "application/json", "content-length": str(len(body))}
        h.update(headers or {})
        if not keep:
            h["connection"] = "close"
        head = f"HTTP/1.1 {status} {reason}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h.items()) + "\r\n"
        self.served += 1
        return self.send(head.encode("latin-1") + body)

    def hold(self) -> None:
        """Keeps the connection open, sending nothing, until the client goes (or HOLD_S)."""
        self.sock.settimeout(HOLD_S)
        try:
            while self.sock.recv(65536):
                pass
        except OSError:
            pass

    def reset(self) -> None:
        """Closes with a TCP RST instead of a FIN."""
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        self.sock.close()


# ---- model replies ----------------------------------------------------------------------


def _user_text(req: Request) -> str:
    msgs = (req.json or {}).get("messages") or []
    for m in reversed(msgs):
        if m.get("role") != "user":
            continue
        c = m.get("content")
        if isinstance(c, str):
            return c
        if isinstance(c, list):
            texts = [b.get("text", "") for b in c if isinstance(b, dict) and b.get("type") == "text"]
            if texts:
                return "".join(texts)
    return ""


def _tool_result(req: Request) -> Optional[str]:
    """The content of the last tool result the request carries, if any (either style)."""
    msgs = (req.json or {}).get("messages") or []
    for m in reversed(msgs):
        if m.get("role") == "tool":
            return str(m.get("content"))
        c = m.get("content")
        if m.get("role") == "user" and isinstance(c, list):
            for b in c:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    content = b.get("content")
                    if isinstance(content, list):
                        content = "".join(x.get("text", "") for x in content if isinstance(x, dict))
                    return str(content)
    return None


def text_reply(req: Request, text: str) -> bytes:
    if req.anthropic:
        body: dict[str, Any] = {
            "id": "msg_fault",
            "type": "message",
            "role": "assistant",
            "model": "fault-model",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    else:
        body = {
            "id": "chatcmpl-fault",
            "object": "chat.completion",
            "model": "fault-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    return json.dumps(body).encode()


def tool_call_reply(req: Request, name: str, args: dict[str, Any]) -> bytes:
    if req.anthropic:
        body: dict[str, Any] = {
            "id": "msg_fault",
            "type": "message",
            "role": "assistant",
            "model": "fault-model",
            "content": [{"type": "tool_use", "id": "toolu_fault_1", "name": name, "input": args}],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    else:
        call = {"id": "call_fault_1", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        body = {
            "id": "chatcmpl-fault",
            "object": "chat.completion",
            "model": "fault-model",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                 "finish_reason": "tool_calls"}
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    return json.dumps(body).encode()


def _echoed_credentials(req: Request) -> str:
    """What a careless gateway reflects: every header it was sent."""
    return "; ".join(f"{k}={v}" for k, v in sorted(req.headers.items()))


def _error_body(message: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": "fault"}}).encode()


# ---- behaviours -------------------------------------------------------------------------
# Each takes the connection and the request; it answers (or misbehaves) and returns whether
# the connection may serve another request.


def echo(c: Conn, req: Request) -> bool:
    c.respond(200, text_reply(req, f"echo: {_user_text(req)}"))
    return False


def call_tool(c: Conn, req: Request) -> bool:
    """A tool call to `probe` first; once a tool result comes back, `tool said: <result>`."""
    result = _tool_result(req)
    if result is None:
        c.respond(200, tool_call_reply(req, "probe", {"x": 1}))
    else:
        c.respond(200, text_reply(req, f"tool said: {result}"))
    return False


def reset_mid_body(c: Conn, req: Request) -> bool:
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 4096\r\n\r\n"
    c.send(head + b'{"choices": [{"message": {"role": "assistant", "content": "partial')
    time.sleep(0.05)
    c.reset()
    return False


def truncated_body(c: Conn, req: Request) -> bool:
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 4096\r\n\r\n"
    c.send(head + b'{"choices": [{"message": {"role": "assistant", "content": "cut')
    try:
        c.sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    return False


def close_no_response(c: Conn, req: Request) -> bool:
    return False


def not_json(c: Conn, req: Request) -> bool:
    body = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
    c.respond(200, body, {"content-type": "text/html"})
    return False


def empty_choices(c: Conn, req: Request) -> bool:
    c.respond(200, b'{"choices": []}')
    return False


_MB = 1024 * 1024


def huge_body(c: Conn, req: Request) -> bool:
    """50 MB that starts like a reply and never closes its string: not JSON."""
    start = b'{"choices": [{"message": {"role": "assistant", "content": "'
    total = 50 * _MB
    head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {total}\r\nconnection: close\r\n\r\n"
    if not c.send(head.encode() + start):
        return False
    left = total - len(start)
    block = b"a" * _MB
    while left > 0:
        n = min(left, len(block))
        if not c.send(block[:n]):
            return False
        left -= n
    return False


def over_cap_length(c: Conn, req: Request) -> bool:
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 104857600\r\n\r\n"
    c.send(head + b'{"choices": [')
    c.hold()
    return False


def over_cap_chunked(c: Conn, req: Request) -> bool:
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
    c.send(head + b"ffffffffffffffff\r\n{")
    c.hold()
    return False


def garbage_head(c: Conn, req: Request) -> bool:
    c.send(b"HELLO THERE\r\nthis is not http\r\n\r\n")
    c.hold()
    return False


def endless_head(c: Conn, req: Request) -> bool:
    """A head that never ends: headers for far longer than any client should read."""
    if not c.send(b"HTTP/1.1 200 OK\r\n"):
        return False
    line = b"x-filler: " + b"f" * 1000 + b"\r\n"
    for _ in range(4096):
        if not c.send(line):
            return False
    c.hold()
    return False


def slowloris(c: Conn, req: Request) -> bool:
    """One byte of a head every 200 ms, for as long as the client listens."""
    data = b"HTTP/1.1 200 OK\r\nx-slow: " + b"s" * 100000
    deadline = time.monotonic() + HOLD_S
    for i in range(len(data)):
        if time.monotonic() > deadline or not c.send(data[i : i + 1]):
            return False
        # Waits 200 ms, noticing at once when the client closes.
        ready, _, _ = select.select([c.sock], [], [], 0.2)
        if ready and not c.recv():
            return False
    return False


def never_answer(c: Conn, req: Request) -> bool:
    c.hold()
    return False


def _first_of_prefix(req: Request) -> bool:
    with _counts_lock:
        return _counts.get(req.prefix, 0) == 1


def idle_408(c: Conn, req: Request) -> bool:
    """The prefix's first request is answered on a kept-alive connection which, ~50 ms later,
    gets a `408` and is closed (what Node's own server does to idle connections). The next
    request must go out on a fresh connection and succeed."""
    if not _first_of_prefix(req):
        return echo(c, req)
    c.respond(200, text_reply(req, f"echo: {_user_text(req)}"), keep=True)
    time.sleep(0.05)
    c.send(b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n")
    try:
        c.sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    return False


def stale_bytes(c: Conn, req: Request) -> bool:
    """The prefix's first request is answered on a kept-alive connection which, ~50 ms later,
    carries a second, unrequested response. Read as the next request's answer it would say
    `STALE`."""
    if not _first_of_prefix(req):
        return echo(c, req)
    c.respond(200, text_reply(req, f"echo: {_user_text(req)}"), keep=True)
    time.sleep(0.05)
    c.respond(200, text_reply(req, "STALE"), keep=True)
    # Anything sent on this connection from now on is answered STALE too.
    while True:
        nxt = c.read_request()
        if nxt is None:
            return False
        count(nxt)
        c.respond(200, text_reply(nxt, "STALE"), keep=True)


def flaky_503(c: Conn, req: Request) -> bool:
    """503 to the prefix's first request, then healthy: a retry recovers."""
    if _first_of_prefix(req):
        c.respond(503, _error_body("overloaded, try again"))
        return False
    return echo(c, req)


def storm_429(c: Conn, req: Request) -> bool:
    c.respond(429, _error_body("rate limited"))
    return False


def retry_after_zero(c: Conn, req: Request) -> bool:
    c.respond(429, _error_body("rate limited, retry now"), {"retry-after": "0"})
    return False


def retry_after_huge(c: Conn, req: Request) -> bool:
    c.respond(429, _error_body("rate limited for a very long time"), {"retry-after": "2147483647"})
    return False


def echo_key_401(c: Conn, req: Request) -> bool:
    c.respond(401, _error_body(f"invalid credentials: {_echoed_credentials(req)}"))
    return False


def echo_key_400(c: Conn, req: Request) -> bool:
    c.respond(400, _error_body(f"bad request from {_echoed_credentials(req)}"))
    return False


def echo_key_200(c: Conn, req: Request) -> bool:
    c.respond(200, _error_body(f"gateway refused {_echoed_credentials(req)}"))
    return False


def redirect(c: Conn, req: Request) -> bool:
    if "followed=1" in req.path:
        c.respond(200, text_reply(req, "FOLLOWED"))
        return False
    host = req.headers.get("host", "127.0.0.1")
    location = f"http://{host}{req.path}{'&' if '?' in req.path else '?'}followed=1"
    c.respond(302, b"", {"location": location}, reason="Found")
    return False


BEHAVIOURS: dict[str, Callable[[Conn, Request], bool]] = {
    "echo": echo,
    "call-tool": call_tool,
    "reset-mid-body": reset_mid_body,
    "truncated-body": truncated_body,
    "close-no-response": close_no_response,
    "not-json": not_json,
    "empty-choices": empty_choices,
    "huge-body": huge_body,
    "over-cap-length": over_cap_length,
    "over-cap-chunked": over_cap_chunked,
    "garbage-head": garbage_head,
    "endless-head": endless_head,
    "slowloris": slowloris,
    "never-answer": never_answer,
    "idle-408": idle_408,
    "stale-bytes": stale_bytes,
    "flaky-503": flaky_503,
    "429-storm": storm_429,
    "429-retry-after-zero": retry_after_zero,
    "429-retry-after-huge": retry_after_huge,
    "401-echo-key": echo_key_401,
    "400-echo-key": echo_key_400,
    "200-error-echo-key": echo_key_200,
    "redirect": redirect,
}


def count(req: Request) -> None:
    with _counts_lock:
        _counts[req.prefix] = _counts.get(req.prefix, 0) + 1


def serve(sock: socket.socket) -> None:
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    c = Conn(sock)
    owner: Optional[str] = None
    try:
        while True:
            req = c.read_request()
            if req is None:
                return
            if req.method == "GET" and req.path.startswith("/_stats/"):
                prefix = req.path[len("/_stats/") :]
                with _counts_lock:
                    stats = {"requests": _counts.get(prefix, 0), "open": _open.get(prefix, 0)}
                c.respond(200, json.dumps(stats).encode())
                return
            if owner is None:
                owner = req.prefix
                with _counts_lock:
                    _open[owner] = _open.get(owner, 0) + 1
            count(req)
            behaviour = BEHAVIOURS.get(req.behaviour)
            if behaviour is None:
                c.respond(404, _error_body(f"fault server: no behaviour {req.behaviour!r}"))
                return
            if not behaviour(c, req):
                return
    finally:
        try:
            c.sock.close()
        except OSError:
            pass
        if owner is not None:
            with _counts_lock:
                _open[owner] -= 1


def _exit_when_stdin_closes() -> None:
    try:
        while os.read(0, 65536):
            pass
    except OSError:
        pass
    os._exit(0)


def main() -> None:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(256)
    threading.Thread(target=_exit_when_stdin_closes, daemon=True).start()
    sys.stdout.write(f"{srv.getsockname()[1]}\n")
    sys.stdout.flush()
    while True:
        try:
            sock, _ = srv.accept()
        except OSError:
            continue
        threading.Thread(target=serve, args=(sock,), daemon=True).start()


if __name__ == "__main__":
    main()
