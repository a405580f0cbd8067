#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (fuzz/corpus/<target>/) from the conformance
scenarios (tests/conformance/*.json) plus a few hand-written inputs for what the scenarios do
not show (HTTP framing, the C ABI's argument lists). Run it when the scenarios change and
commit the result: `python3 fuzz/seeds.py`. It rewrites each corpus folder, keeping the inputs
fuzz runs found (named `crash-*` or `finding-*`)."""

import json
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
SCENARIOS = HERE.parent / "tests" / "conformance"
CORPUS = HERE / "corpus"


def compact(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def scenarios():
    for path in sorted(SCENARIOS.glob("*.json")):
        yield path.stem, json.loads(path.read_text())


# Inputs a fuzz run found (a crash, or a finding) are added by hand under these prefixes and
# kept when the seeds are rewritten.
KEPT = ("crash-", "finding-")


def write(target, seeds):
    """seeds: {name: bytes}; identical inputs are kept once."""
    out = CORPUS / target
    out.mkdir(parents=True, exist_ok=True)
    for f in out.iterdir():
        if not f.name.startswith(KEPT):
            f.unlink()
    seen = set()
    for name, data in seeds.items():
        if isinstance(data, str):
            data = data.encode()
        if data in seen:
            continue
        seen.add(data)
        (out / name).write_bytes(data)


def replies(style):
    out = {}
    for name, sc in scenarios():
        if sc["style"] != style:
            continue
        for i, step in enumerate(sc["steps"]):
            for j, r in enumerate(step.get("replies", [])):
                if r.get("status", 200) == 200:
                    out[f"{name}-s{i}r{j}.json"] = compact(r["body"])
    return out


def sse(*events):
    return "".join(f"data: {e if isinstance(e, str) else compact(e)}\n\n" for e in events)


def streams(style):
    """Streamed bodies, each behind the byte saying where to cut it."""
    if style == "openai":
        chunk = lambda delta, finish=None: {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        bodies = {
            "text": sse(chunk({"role": "assistant", "content": "Hel"}), chunk({"content": "lo"}),
                        chunk({}, "stop"), "[DONE]"),
            "tools": sse(chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                                                "function": {"name": "get_weather", "arguments": ""}}]}),
                         chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\":"}}]}),
                         chunk({"tool_calls": [{"index": 1, "id": "c2", "function": {"name": "add",
                                                                                    "arguments": "{}"}}]}),
                         chunk({"tool_calls": [{"index": 0, "function": {"arguments": "\"Paris\"}"}}]}),
                         chunk({}, "tool_calls"),
                         {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}},
                         "[DONE]"),
            "error": sse({"error": {"message": "overloaded", "type": "server_error"}}),
            "crlf": sse(chunk({"content": "a"}), chunk({}, "stop")).replace("\n", "\r\n"),
        }
    else:
        bodies = {
            "text": sse({"type": "message_start", "message": {"id": "m", "role": "assistant", "model": "c",
                                                              "usage": {"input_tokens": 9}}},
                        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                        {"type": "ping"},
                        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
                        {"type": "content_block_stop", "index": 0},
                        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}},
                        {"type": "message_stop"}),
            "tools": sse({"type": "message_start", "message": {"id": "m", "role": "assistant", "usage": {}}},
                         {"type": "content_block_start", "index": 0,
                          "content_block": {"type": "thinking", "thinking": ""}},
                         {"type": "content_block_delta", "index": 0,
                          "delta": {"type": "thinking_delta", "thinking": "hmm"}},
                         {"type": "content_block_delta", "index": 0,
                          "delta": {"type": "signature_delta", "signature": "sig"}},
                         {"type": "content_block_start", "index": 1,
                          "content_block": {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {}}},
                         {"type": "content_block_delta", "index": 1,
                          "delta": {"type": "input_json_delta", "partial_json": "{\"city\":"}},
                         {"type": "content_block_delta", "index": 1,
                          "delta": {"type": "input_json_delta", "partial_json": "\"Paris\"}"}},
                         {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}},
                         {"type": "message_stop"}),
            "error": sse({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}),
        }
    return {f"{name}-cut{cut}.sse": bytes([cut]) + body.encode() for name, body in bodies.items() for cut in (0, 97)}


def http_responses():
    body = compact(
        {"choices": [{"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}
    )
    n = len(body.encode())
    half = n // 2
    chunked = f"{half:x}\r\n{body[:half]}\r\n{n - half:x}\r\n{body[half:]}\r\n0\r\n\r\n"
    return {
        "content-length": f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {n}\r\n\r\n{body}",
        "chunked": f"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{chunked}",
        "chunked-extensions-trailers": (
            "HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n"
            f'{half:X};name=value;quoted="a b"\r\n{body[:half]}\r\n'
            f"{n - half:x} ; ext\r\n{body[half:]}\r\n"
            "0;last\r\nx-trailer: 1\r\nx-other: two\r\n\r\n"
        ),
        "interim-100": f"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n"
        f"HTTP/1.1 200 OK\r\ncontent-length: {n}\r\n\r\n{body}",
        "no-length-close": f"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n{body}",
        "http10-keep-alive": f"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: {n}\r\n\r\n{body}",
        "204": "HTTP/1.1 204 No Content\r\ncontent-length: 5\r\n\r\n",
        "304": "HTTP/1.1 304 Not Modified\r\n\r\n",
        "429-retry-after": 'HTTP/1.1 429 Too Many Requests\r\nretry-after: 0\r\ncontent-length: 26\r\n\r\n{"error":{"message":"x"}}\n',
        "529-overloaded": 'HTTP/1.1 529 Overloaded\r\ncontent-type: application/json\r\ncontent-length: 43\r\n\r\n{"type":"error","error":{"type":"overload"}}',
        "extra-bytes-after": f"HTTP/1.1 200 OK\r\ncontent-length: {n}\r\n\r\n{body}HTTP/1.1 408 Request Timeout\r\n\r\n",
        "cut-mid-body": f"HTTP/1.1 200 OK\r\ncontent-length: {n + 10}\r\n\r\n{body}",
        "bad-chunk-size": "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
        "huge-content-length": "HTTP/1.1 200 OK\r\ncontent-length: 99999999999\r\n\r\n{}",
        "lf-only": "HTTP/1.1 200 OK\ncontent-length: 2\n\n{}",
        "empty": "",
    }


def answers():
    out = {}
    for name, sc in scenarios():
        for i, a in enumerate(sc.get("wait_for") or []):
            if a is not None:
                out[f"{name}-wait_for{i}.json"] = compact({"id": "pnd-1", **a})
        for i, step in enumerate(sc["steps"]):
            if "resume" in step:
                out[f"{name}-s{i}-answer.json"] = compact(step["resume"]["answer"])
            pending = (step.get("expect", {}).get("result") or {}).get("pending")
            if pending:
                out[f"{name}-s{i}-pending.json"] = compact(pending)
        for t in sc.get("tools") or []:
            req = (t.get("behavior") or {}).get("request")
            if req:
                out[f"{name}-{t['name']}-request.json"] = compact(req)
    out["relay-results.json"] = compact([{"id": "call_1", "output": "42"}, {"id": "call_2", "output": "no", "isError": True}])
    out["nulls.json"] = compact({"id": "x", "ok": False, "data": None, "reason": None, "url": None, "kind": "k", "prompt": "p"})
    out["floats.json"] = compact({"id": "x", "ok": True, "data": {"output": "y", "score": 0.1, "big": 1e300, "n": -0}})
    return out


def scenario_files():
    out = {}
    for name, sc in scenarios():
        sc.pop("about", None)
        for step in sc["steps"]:
            step.pop("expect", None)
        out[f"{name}.json"] = compact(sc)
    return out


def nul(*parts):
    return "\0".join(parts)


def ffi_vocab():
    out = {f"answer-{k}": v for k, v in list(answers().items())[:8]}
    out.update({
        "pending-spec": compact({"kind": "approval", "prompt": "Deploy?", "data": {"env": "prod"}}),
        "pending-spec-id-url": compact({"id": "p1", "kind": "authorization", "prompt": "Log in", "url": "https://x/login", "expiresAt": "2030-01-01T00:00:00Z"}),
        "relay-results": compact([{"id": "call_1", "output": "42"}, {"id": "c2", "output": "", "isError": True}]),
        "id-and-output": nul("pnd-1", "the reply"),
        "url-and-prompt": nul("https://example.com/login?next=%2F", "Please sign in"),
        "tool-name": "get weather/now!",
    })
    return out


def ffi_toolkit():
    tools = [
        {"name": "get_weather", "description": "Weather.", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}},
        {"name": "lookup", "description": "Relay.", "relay": True},
        {"name": "web fetch", "description": "MCP tool.", "source": "mcp"},
    ]
    call = {"name": "get_weather", "args": {"city": "Paris"}, "call_id": "call_1", "timeout_ms": 1000,
            "answer": {"id": "p1", "ok": True, "data": {"output": "yes"}}}
    return {
        "three-tools": nul(compact(tools), compact(call)),
        "tool-reply": nul(compact(tools[:1]), compact({"name": "get_weather"}), compact({"output": "sunny", "is_error": False, "metadata": {"k": 1}}), "gemini"),
        "bad-reply": nul(compact(tools[:1]), compact({"name": "get_weather", "args": {}}), '{"output": 5}'),
        "relay-only": nul(compact([tools[1]]), compact({"name": "lookup"})),
        "builtin-relay": nul(compact([{"name": "bash", "relay": True}]), "{}"),
        "duplicates": nul(compact([tools[0], tools[0]]), compact({"name": "unknown"})),
    }


def ffi_client():
    out = {}
    for name, sc in scenarios():
        style = sc["style"]
        opts = {"base_url": "http://127.0.0.1:9/v1", "style": style, **sc.get("client", {})}
        tools = []
        for t in sc.get("tools") or []:
            b = t.get("behavior") or {}
            tool = {"name": ("ask_" + t["name"]) if b.get("type") == "suspend" else t["name"],
                    "description": t.get("description", ""), "input_schema": t.get("input_schema")}
            if b.get("type") == "relay":
                tool["relay"] = True
            tools.append(tool)
        step = sc["steps"][0]
        if "run" not in step:
            continue  # a resume from a stored transcript: the hand-written "resume" seed below covers it
        run = {"prompt": step["run"]["prompt"]}
        if step["run"].get("history"):
            run["history"] = step["run"]["history"]
        replies = [compact({"status": r.get("status", 200), "headers": r.get("headers", {}), "body": compact(r["body"])})
                   for r in step.get("replies", [])]
        flags = "w" if sc.get("wait_for") else ""
        if sc.get("before_tool"):
            flags += "h"
        out[name] = nul(flags, compact(opts), compact(tools), compact(run), *replies)
    resume = {"history": [{"role": "user", "content": "go"},
                          {"role": "assistant", "content": None, "tool_calls": [
                              {"id": "call_1", "type": "function", "function": {"name": "ask_deploy", "arguments": "{}"}}]},
                          {"role": "tool", "tool_call_id": "call_1", "content": "go?"}],
              "pending": {"id": "p1", "kind": "approval", "prompt": "go?"},
              "answer": {"id": "p1", "ok": True, "data": {"output": "yes"}}}
    done = compact({"status": 200, "headers": {}, "body": compact({"choices": [{"message": {"role": "assistant", "content": "done"}}]})})
    out["resume"] = nul("e", compact({"base_url": "http://h/v1", "style": "openai", "model": "m", "api_key": "k"}),
                        compact([{"name": "ask_deploy"}]), compact(resume), done)
    out["retry-then-fail"] = nul("eh", compact({"base_url": "http://h", "style": "anthropic", "model": "m", "api_key": "k", "retries": 1}),
                                 "[]", compact({"prompt": "x"}), compact({"status": 503, "headers": {"retry-after": "0"}, "body": ""}))
    return out


def main():
    write("reply_openai", replies("openai"))
    write("reply_anthropic", replies("anthropic"))
    write("stream_openai", streams("openai"))
    write("stream_anthropic", streams("anthropic"))
    write("http_response", http_responses())
    write("answer", answers())
    write("scenario", scenario_files())
    write("ffi_vocab", ffi_vocab())
    write("ffi_toolkit", ffi_toolkit())
    write("ffi_client", ffi_client())
    for d in sorted(CORPUS.iterdir()):
        files = list(d.iterdir())
        print(f"{d.name}: {len(files)} seeds, {sum(f.stat().st_size for f in files)} bytes")


if __name__ == "__main__":
    main()
