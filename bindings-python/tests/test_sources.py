"""The engine's tool sources through the package: built-ins (confined to a folder), an HTTP
tool against a local server, skills from the core's fixtures, MCP servers on the official
Python SDK (tests/mcp/py_server.py), MCP serve driven by the SDK's client, and one agent run
that uses all of them and ends on a durable ``question``."""
from __future__ import annotations

import asyncio
import http.server
import json
import os
import sys
import threading
import warnings
from pathlib import Path
from typing import Any, Iterator

import pytest

import toolnexus as tn
from toolnexus.builtin import builtin_shell
from toolnexus.skill import load_skills as skill_module_load_skills

from .mock import MockModel, client, openai_calls, openai_text

REPO = Path(__file__).resolve().parents[2]
SKILLS = REPO / "core" / "tests" / "fixtures" / "skills"
PY_SERVER = REPO / "tests" / "mcp" / "py_server.py"


def sdk() -> Any:
    """The official MCP SDK (test.sh installs it from tests/mcp/requirements.txt): a loud
    skip locally without it, a failure under CI."""
    try:
        import mcp  # noqa: F401
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client
    except ImportError as e:
        if os.environ.get("CI"):
            pytest.fail(f"the MCP SDK is not installed (bindings-python/test.sh installs it): {e}")
        print(f"\n*** SKIPPING: the MCP SDK is not installed: {e} ***", file=sys.stderr)
        pytest.skip(f"the MCP SDK is not installed: {e}")
    return ClientSession, streamable_http_client


def py_server_config() -> dict[str, Any]:
    sdk()
    return {"py": {"command": [sys.executable, str(PY_SERVER), "stdio"]}}


def builtin(cfg: Any, name: str) -> tn.Tool:
    return next(t for t in tn.create_builtin_tools(cfg) if t.name == name)


# --- built-ins --------------------------------------------------------------------------

def test_builtins_are_engine_tools_confined_to_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("outside")
    cfg = {"root": str(root)}

    async def main() -> None:
        write = builtin(cfg, "write")
        assert (write.source, write.name) == ("builtin", "write")
        ok = await write.execute({"path": "sub/a.txt", "content": "alpha\n"})
        assert ok.is_error is False, ok.output
        assert (root / "sub" / "a.txt").read_text() == "alpha\n"
        read = await builtin(cfg, "read").execute({"path": "sub/a.txt"})
        assert read.output == "alpha\n"
        for escape in ["../secret.txt", str(tmp_path / "secret.txt")]:
            refused = await builtin(cfg, "read").execute({"path": escape})
            assert refused.is_error is True and "outside root" in refused.output, refused.output
        os.symlink(tmp_path, root / "link")
        via_link = await builtin(cfg, "read").execute({"path": "link/secret.txt"})
        assert via_link.is_error is True
        pwd = await builtin(cfg, "bash").execute({"command": "pwd"})
        assert pwd.output.strip() == str(root.resolve())

    asyncio.run(main())


def test_builtin_options_are_read_by_the_engine() -> None:
    with pytest.raises(tn.InvalidArgumentError, match="builtins.rooot"):
        tn.create_builtin_tools({"rooot": "/tmp"})
    with pytest.warns(tn.ToolnexusWarning, match="nope"):
        names = [t.name for t in tn.select_builtins({"tools": {"bash": False, "nope": False}})]
    assert "bash" not in names and len(names) == 9
    assert tn.builtins_enabled(None) is True and tn.builtins_enabled({"disabled": True}) is False
    assert builtin_shell({"shell": ["/bin/sh", "-c"]}) == ["/bin/sh", "-c"]


def test_cancelling_a_builtin_call_stops_it(tmp_path: Path) -> None:
    marker = tmp_path / "late"

    async def main() -> None:
        bash = builtin(None, "bash")
        task = asyncio.ensure_future(bash.execute({"command": f"sleep 0.5; touch {marker}", "timeout": 60_000}))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.8)

    asyncio.run(main())
    assert not marker.exists()


# --- HTTP tools -------------------------------------------------------------------------

@pytest.fixture()
def http_server() -> Iterator[tuple[int, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            seen.append({"path": self.path, "auth": self.headers.get("authorization"), "body": body.decode()})
            status = 200 if self.path.startswith("/items") else 404
            data = json.dumps({"ok": status == 200}).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1], seen
    server.shutdown()
    server.server_close()


def test_http_tool_runs_in_the_engine(http_server: tuple[int, list[dict[str, Any]]], monkeypatch: Any) -> None:
    port, seen = http_server
    monkeypatch.setenv("TN_SOURCES_TOKEN", "t0ken")
    tool = tn.http_tool(name="create item", description="Creates an item.", method="post",
                        url=f"http://127.0.0.1:{port}/items/{{kind}}", headers={"Authorization": "Bearer ${TN_SOURCES_TOKEN}"},
                        query=["dry"], timeout=5)
    assert (tool.name, tool.source) == ("create_item", "http")

    async def main() -> None:
        r = await tool.execute({"kind": "book", "dry": "1", "title": "Dune"})
        assert r.is_error is False, r.output
        assert json.loads(r.output) == {"ok": True}
        bad = tn.http_tool(name="b", description="", method="POST", url=f"http://127.0.0.1:{port}/nope")
        miss = await bad.execute({})
        assert miss.is_error is True and miss.output.startswith("HTTP 404:")

    asyncio.run(main())
    assert seen[0]["path"] == "/items/book?dry=1"
    assert seen[0]["auth"] == "Bearer t0ken"
    assert json.loads(seen[0]["body"]) == {"title": "Dune"}
    with pytest.raises(tn.InvalidArgumentError, match="result_mode"):
        tn.http_tool(name="x", description="", method="GET", url="http://127.0.0.1:1/", result_mode="xml")
    assert tn.expand_env_headers({"A": "x${TN_SOURCES_TOKEN}y"}) == {"A": "xt0keny"}


# --- skills -----------------------------------------------------------------------------

def test_skills_from_the_core_fixtures() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        src = skill_module_load_skills(str(SKILLS))
    assert any("duplicate skill name" in str(w.message) for w in caught)
    assert "hello-world" in src.skills and src.skills["hello-world"].origin == "fs"
    assert src.prompt().startswith(tn.SKILLS_PROMPT_PREAMBLE)
    assert "malformed-frontmatter" in {s.reason for s in src.skipped}
    assert src.tool.source == "skill"

    async def main() -> None:
        r = await src.tool.execute({"name": "hello-world"})
        assert r.is_error is False and r.output.startswith('<skill_content name="hello-world">')
        tk = await tn.create_toolkit(skills_dir=SKILLS, builtins=False, disable_skills=["literal"],
                                     skills=[tn.SkillDef(name="data", description="from data", content="body")],
                                     skill_provider=lambda: [tn.SkillDef(name="late", description="l", content="x")])
        names = {s.name for s in tk.skills()}
        assert {"hello-world", "data", "late"} <= names and "literal" not in names
        assert "**late**: l" in tk.skills_prompt()
        assert [t.name for t in tk.tools()] == ["skill"]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tn.ToolnexusWarning)
        asyncio.run(main())
    inv = tn.list_skills(skills=[tn.SkillDef(name="", content="x")])
    assert [s.reason for s in inv.skipped] == ["missing-name"]


# --- MCP --------------------------------------------------------------------------------

def test_mcp_tools_from_the_sdk_fixture_server() -> None:
    cfg = py_server_config()

    async def main() -> None:
        asked: list[tn.Request] = []

        async def wait_for(request: tn.Request) -> tn.Answer:
            asked.append(request)
            return tn.Answer(id=request.id, ok=True, data={"name": "Ada"})

        tk = await tn.create_toolkit(mcp_config=cfg, builtins=False, wait_for=wait_for, disable_tools=["py_crash"])
        try:
            assert tk.mcp_status() == {"py": "connected"}
            echo = tk.get("py_echo")
            assert echo is not None and echo.source == "mcp"
            assert tk.get("py_crash") is None
            r = await tk.execute("py_echo", {"text": "hi"})
            assert (r.output, r.is_error) == ("hi", False)
            failed = await echo.execute({"text": None})
            assert failed.is_error is True
            named = await tk.execute("py_ask_name", {})
            assert named.output == "Hello Ada"
            assert asked[0].kind == "input" and asked[0].prompt == "Your name?"
        finally:
            await tk.close()
            await tk.close()  # idempotent
        after = await tk.execute("py_echo", {"text": "hi"})
        assert after.is_error is True

        src = await tn.load_mcp({"mcpServers": {**cfg, "off": {"url": "http://127.0.0.1:1/mcp", "disabled": True}}})
        assert src.status == {"off": "disabled", "py": "connected"}
        await src.close()
        inv = await tn.list_mcp_tools(cfg)
        assert "echo" in {t.name for t in inv.tools["py"]} and inv.status["py"] == "connected"

    asyncio.run(main())


def status_of(url: str, headers: dict[str, str]) -> int:
    """The HTTP status of a bare `initialize` POST."""
    import urllib.error
    import urllib.request

    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}).encode()
    req = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as e:
        return int(e.code)


def test_mcp_serve_is_driven_by_the_sdk_client() -> None:
    ClientSession, streamable_http_client = sdk()
    import httpx2

    async def call(url: str, headers: dict[str, str], name: str, args: dict[str, Any]) -> tuple[list[str], str]:
        async with httpx2.AsyncClient(headers=headers) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    init = await session.initialize()
                    assert init.server_info.name == "gw"
                    listed = await session.list_tools()
                    r = await session.call_tool(name, args)
                    return [t.name for t in listed.tools], r.content[0].text

    async def shout(text: str) -> str:
        await asyncio.sleep(0)
        return text.upper()

    async def main() -> None:
        tk = await tn.create_toolkit(extra_tools=[tn.define_tool(shout, name="shout", description="Shouts.")])
        srv = await tk.serve("127.0.0.1:0", mcp={"name": "gw", "token": "s3cret-token"})
        try:
            url = srv.url + "/mcp"
            names, text = await call(url, {"Authorization": "Bearer s3cret-token"}, "shout", {"text": "hi"})
            assert text == "HI"
            assert "bash" not in names and "read" not in names and "question" in names
            no_token = await asyncio.to_thread(status_of, url, {})
            foreign = await asyncio.to_thread(
                status_of, url, {"Authorization": "Bearer s3cret-token", "Origin": "https://evil.example"})
            assert (no_token, foreign) == (401, 403)
            with pytest.raises(BaseException):  # noqa: B017 - the SDK raises an exception group
                await call(url, {}, "shout", {"text": "x"})
        finally:
            await srv.stop()
        named = await tk.serve("127.0.0.1:0", mcp={"name": "gw", "tools": ["bash", "shout"]})
        try:
            names, text = await call(named.url + "/mcp", {}, "bash", {"command": "printf served"})
            assert sorted(names) == ["bash", "shout"] and text == "served"
        finally:
            await named.stop()
            await tk.close()
        assert [t.name for t in tn.exposed_mcp_tools(tk.tools(), {"tools": ["shout"]})] == ["shout"]

    asyncio.run(main())


# --- one agent run over every source ----------------------------------------------------

def test_an_agent_run_uses_every_source_and_resumes_a_durable_question(mock: MockModel, tmp_path: Path) -> None:
    cfg = py_server_config()
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    mock.script([
        openai_calls(("c1", "py_echo", '{"text": "from mcp"}')),
        openai_calls(("c2", "skill", '{"name": "hello-world"}')),
        openai_calls(("c3", "read", '{"path": "notes.txt"}')),
        openai_calls(("c4", "question", '{"questions": [{"question": "Proceed?", "options": ["yes", "no"]}]}')),
        openai_text("all done"),
    ])

    async def main() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", tn.ToolnexusWarning)
            tk = await tn.create_toolkit(mcp_config=cfg, skills_dir=str(SKILLS), builtins={"root": str(tmp_path)})
        try:
            c = client(mock)
            halted = await c.run("go", tk)
            assert halted.status == "pending", halted
            assert halted.pending is not None and halted.pending.kind == "question"
            assert halted.pending.prompt == "Proceed? (options: yes, no)"
            outputs = {t["name"]: t["output"] for t in halted.tool_calls}
            assert outputs["py_echo"] == "from mcp"
            assert outputs["skill"].startswith('<skill_content name="hello-world">')
            assert outputs["read"] == "remember the milk\n"
            # The skills catalog rode in the system prompt of the first request.
            first = mock.seen[0]["body"]["messages"][0]
            assert first["role"] == "system" and "## Available Skills" in first["content"]
            # Durable: the halt is stored as JSON and resumed by a fresh client.
            stored = json.loads(json.dumps({"messages": halted.messages, "pending": halted.pending.__dict__}))
            answer = tn.Answer(id=stored["pending"]["id"], ok=True, data={"answers": ["yes"]})
            done = await client(mock).run_with_answer(tk, stored["messages"], tn.Request(**stored["pending"]), answer)
            assert done.status == "done" and done.text == "all done"
            last_tool = [m for m in mock.seen[-1]["body"]["messages"] if m.get("role") == "tool"][-1]
            assert json.loads(last_tool["content"]) == {"answers": ["yes"]}
        finally:
            await tk.close()

    asyncio.run(main())


def test_the_question_builtin_is_answered_inline_by_wait_for(mock: MockModel) -> None:
    mock.script([
        openai_calls(("q1", "question", '{"questions": [{"question": "Pick?", "options": ["a", "b"]}]}')),
        openai_text("picked"),
    ])
    asked: list[tn.Request] = []

    async def wait_for(request: tn.Request) -> tn.Answer:
        asked.append(request)
        return tn.Answer(id=request.id, ok=True, data={"answers": ["a"]})

    async def main() -> None:
        tk = await tn.create_toolkit(builtins={"tools": {"bash": False}})
        result = await client(mock, wait_for=wait_for).run("ask", tk)
        assert result.status == "done" and result.text == "picked"
        assert [r.kind for r in asked] == ["question"]
        assert json.loads(result.tool_calls[0]["output"]) == {"answers": ["a"]}

    asyncio.run(main())
