"""The official Python SDK's MCP client, driving the engine's MCP serve for core/tests/mcp.rs.

    python sdk_client.py URL PROBES_JSON

PROBES_JSON is a list of probes, each `{"token"?, "origin"?, "call"?: {"name", "arguments"}}`.
For each probe the client connects (with `Authorization: Bearer <token>` and `Origin` when
given), initializes, lists the tools and makes the call; the output is one JSON list with,
per probe, `{"ok": true, "server", "version", "tools", "schemas", "call"?}` (the call as
`{"text", "isError"}`, or `{"error"}` for an error answer) or `{"ok": false, "error"}`.
"""
import json
import sys

import anyio
import httpx2

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


def describe(e: BaseException) -> str:
    if isinstance(e, BaseExceptionGroup):
        return "; ".join(describe(x) for x in e.exceptions)
    data = getattr(e, "error", None)  # an MCPError carries the JSON-RPC error
    if data is not None and getattr(data, "message", None):
        return f"{type(e).__name__}: {data.code}: {data.message}"
    return f"{type(e).__name__}: {e}"


async def probe(url: str, p: dict) -> dict:
    headers = {}
    if p.get("token"):
        headers["Authorization"] = f"Bearer {p['token']}"
    if p.get("origin"):
        headers["Origin"] = p["origin"]
    try:
        with anyio.fail_after(20):
            async with httpx2.AsyncClient(headers=headers) as http:
                async with streamable_http_client(url, http_client=http) as streams:
                    async with ClientSession(streams[0], streams[1]) as session:
                        init = await session.initialize()
                        listed = await session.list_tools()
                        out = {
                            "ok": True,
                            "server": init.server_info.name,
                            "version": init.server_info.version,
                            "tools": [t.name for t in listed.tools],
                            "schemas": {t.name: t.input_schema for t in listed.tools},
                        }
                        if p.get("call"):
                            try:
                                r = await session.call_tool(p["call"]["name"], p["call"].get("arguments") or {})
                                texts = [c.text for c in r.content if getattr(c, "type", None) == "text"]
                                out["call"] = {"text": "\n".join(texts), "isError": bool(r.is_error)}
                            except Exception as e:  # noqa: BLE001 - a JSON-RPC error answer
                                out["call"] = {"error": describe(e)}
                        return out
    except BaseException as e:  # noqa: BLE001 - every failure is the probe's answer
        return {"ok": False, "error": describe(e)}


async def main() -> None:
    url, probes = sys.argv[1], json.loads(sys.argv[2])
    results = [await probe(url, p) for p in probes]
    print(json.dumps(results))


if __name__ == "__main__":
    anyio.run(main)
