"""Baseline: the agent loop written by hand in plain Python (stdlib http.client keep-alive and
json, tools awaited with asyncio.gather). Not a framework: the least any Python loop can cost,
which is what a binding's overhead is held against (at most half of this loop's).

Per scenario it does what a careful hand-written loop would: one keep-alive connection;
`stream` reads the server-sent events and joins the deltas; `concurrent-N` needs N requests in
flight, which blocking http.client cannot do on one event loop, so there it speaks HTTP/1.1
over asyncio streams with a pool of keep-alive connections; `suspend` has a tool that returns
a "pending" marker, which the loop answers inline (asks a callback, re-runs the tool) or
durably (returns the transcript and the pending call, and a resume re-runs it).
"""
import asyncio
import http.client
import json
import os
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

WEATHER_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": harness.Tools.WEATHER_DESC,
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "add", "description": harness.Tools.ADD_DESC,
     "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                    "required": ["a", "b"]}}},
]
APPROVE_TOOLS = [{"type": "function", "function": {"name": "approve", "description": harness.APPROVE_DESC,
                                                   "parameters": harness.APPROVE_SCHEMA}}]
PENDING = object()  # what `approve` returns until it is re-run with an answer


def load() -> str:
    return "stdlib " + sys.version.split()[0]


class SyncConn:
    """One keep-alive http.client connection, reopened once if the server closed it."""

    def __init__(self, url: urllib.parse.SplitResult, headers: dict):
        self.url, self.headers = url, headers
        self.conn = http.client.HTTPConnection(url.hostname, url.port)

    async def post(self, path: str, body: dict) -> bytes:
        data = json.dumps(body).encode()
        for attempt in (0, 1):
            try:
                self.conn.request("POST", self.url.path + path, data, self.headers)
                resp = self.conn.getresponse()
                raw = resp.read()
                break
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()
                if attempt:
                    raise
        if resp.status != 200:
            raise RuntimeError(f"HTTP {resp.status}: {raw[:300]!r}")
        return raw


class AsyncPool:
    """HTTP/1.1 over asyncio streams, a keep-alive connection per request in flight."""

    def __init__(self, url: urllib.parse.SplitResult, headers: dict):
        self.url = url
        self.head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        self.idle: list = []

    async def post(self, path: str, body: dict) -> bytes:
        data = json.dumps(body).encode()
        if self.idle:
            reader, writer = self.idle.pop()
        else:
            reader, writer = await asyncio.open_connection(self.url.hostname, self.url.port)
        writer.write(f"POST {self.url.path}{path} HTTP/1.1\r\nHost: {self.url.netloc}\r\n{self.head}"
                     f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
        status = int((await reader.readline()).split()[1])
        length = 0
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        raw = await reader.readexactly(length)
        self.idle.append((reader, writer))
        if status != 200:
            raise RuntimeError(f"HTTP {status}: {raw[:300]!r}")
        return raw


def fold_sse(raw: bytes) -> dict:
    """The assistant message an OpenAI event stream spells out."""
    text, calls = [], {}
    for line in raw.decode().splitlines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        delta = json.loads(line[6:])["choices"][0]["delta"]
        if delta.get("content"):
            text.append(delta["content"])
        for tc in delta.get("tool_calls") or []:
            c = calls.setdefault(tc["index"], {"id": None, "type": "function", "function": {"name": "", "arguments": ""}})
            c["id"] = tc.get("id") or c["id"]
            fn = tc.get("function") or {}
            c["function"]["name"] += fn.get("name") or ""
            c["function"]["arguments"] += fn.get("arguments") or ""
    msg = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        msg["tool_calls"] = [calls[i] for i in sorted(calls)]
    return msg


async def build(ctx: harness.Ctx):
    if ctx.style != "openai":
        raise harness.NotApplicable("the raw loop speaks the OpenAI wire only")
    spec = ctx.spec
    url = urllib.parse.urlsplit(ctx.v1_url)
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {ctx.api_key}"}
    conn = AsyncPool(url, headers) if spec.concurrency > 1 else SyncConn(url, headers)
    get_weather, add = ctx.tools.make(sync=False)
    counter = ctx.tools

    async def approve(action: str, answer=None):
        counter.calls += 1
        return PENDING if answer is None else f"approved: {action}"

    fns = {"get_weather": get_weather, "add": add, "approve": approve}
    tools = APPROVE_TOOLS if spec.kind == "suspend" else WEATHER_TOOLS
    history = [{"role": r, "content": t} for r, t in spec.history_pairs()]

    async def model(messages: list) -> dict:
        body = {"model": ctx.model, "messages": messages, "tools": tools, "tool_choice": "auto"}
        if ctx.stream:
            body["stream"] = True
            return fold_sse(await conn.post("/chat/completions", body))
        return json.loads(await conn.post("/chat/completions", body))["choices"][0]["message"]

    async def call(c: dict, answer=None):
        out = await fns[c["function"]["name"]](**json.loads(c["function"]["arguments"]),
                                                **({"answer": answer} if answer is not None else {}))
        return out

    def result(c: dict, out) -> dict:
        return {"role": "tool", "tool_call_id": c["id"], "content": out if isinstance(out, str) else json.dumps(out)}

    async def loop(messages: list, wait_for=None):
        """Runs turns until the final text (returns it) or, without wait_for, a pending call
        (returns (messages, call) to resume from)."""
        for _ in range(ctx.max_turns):
            msg = await model(messages)
            messages.append(msg)
            calls = msg.get("tool_calls") or []
            if not calls:
                return msg.get("content") or ""
            outs = await asyncio.gather(*(call(c) for c in calls))
            for i, (c, out) in enumerate(zip(calls, outs)):
                if out is PENDING:
                    if wait_for is None:
                        messages.extend(result(c2, o) for c2, o in zip(calls[:i], outs[:i]))
                        return messages, c, calls[i + 1:], outs[i + 1:]
                    out = await call(c, wait_for(c))
                messages.append(result(c, out))
        raise RuntimeError("max turns")

    async def resume(messages: list, c: dict, rest: list, rest_outs: list, answer) -> str:
        messages.append(result(c, await call(c, answer)))
        messages.extend(result(c2, o) for c2, o in zip(rest, rest_outs))
        return await loop(messages)

    def opening() -> list:
        return [{"role": "system", "content": ctx.system_prompt}, *history, {"role": "user", "content": spec.prompt}]

    if spec.kind == "suspend":
        async def run_once() -> str:
            a = await loop(opening(), wait_for=lambda c: "yes")
            halted = await loop(opening())
            if isinstance(halted, str):
                raise RuntimeError("the durable run did not halt")
            b = await resume(*halted, "yes")
            return f"{a} | {b}"

        return run_once

    async def run_once() -> str:
        return await loop(opening())

    return run_once


if __name__ == "__main__":
    harness.main(sys.modules[__name__], "python raw loop", kind="baseline")
