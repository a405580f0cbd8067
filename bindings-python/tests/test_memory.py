"""Conversation memory through the package: ask(id=) remembers, a host store (sync or async) is
used, a durable halt resumes by id alone, exactly once, and in another OS process through
SQLite, where two processes racing to resume one run end with one winner and a ConflictError."""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Optional

import pytest

import toolnexus as tn


def echo_model(seen: list[dict]) -> Any:
    async def generate(req: dict) -> dict:
        seen.append(req)
        return {"content": f"heard {len([m for m in req['messages'] if m['role'] == 'user'])}"}

    return generate


def gated_model() -> Any:
    """Asks for the gated tool once, then answers with the tool's output."""

    async def generate(req: dict) -> dict:
        last = req["messages"][-1]
        if last["role"] == "tool":
            return {"content": f"finished: {last['content']}"}
        return {"tool_calls": [{"id": "c1", "name": "gated", "arguments": {}}]}

    return generate


def gated_tool() -> tn.Tool:
    def gated(ctx: tn.ToolContext) -> Any:
        """A step that needs an approval."""
        if ctx.answer is None:
            return tn.pending(kind="approval", prompt="Go ahead?", id="gate-1")
        return f"approved {ctx.answer.data['output']}"

    return tn.define_tool(gated)


def test_ask_with_an_id_remembers_and_without_one_does_not() -> None:
    seen: list[dict] = []
    c = tn.create_in_process_client(model="m", generate=echo_model(seen))

    async def main() -> None:
        assert (await c.ask("one", id="t")).text == "heard 1"
        assert (await c.ask("two", id="t")).text == "heard 2"
        assert (await c.ask("alone")).text == "heard 1"
        stored = await c.conversation_store.get("t")
        assert [m["content"] for m in stored if m["role"] == "user"] == ["one", "two"]
        assert isinstance(c.conversation_store, tn.InMemoryConversationStore)

    asyncio.run(main())


@pytest.mark.parametrize("is_async", [False, True])
def test_a_host_store_is_used(is_async: bool) -> None:
    calls: list[str] = []
    data: dict[str, list] = {}

    class Sync:
        def get(self, id: str) -> Optional[list]:  # noqa: A002
            calls.append(f"get {id}")
            return data.get(id)

        def save(self, id: str, messages: list) -> None:  # noqa: A002
            calls.append(f"save {id}")
            data[id] = messages

    class Async:
        async def get(self, id: str) -> Optional[list]:  # noqa: A002
            return Sync().get(id)

        async def save(self, id: str, messages: list) -> None:  # noqa: A002
            Sync().save(id, messages)

    store = Async() if is_async else Sync()
    c = tn.create_in_process_client(model="m", generate=echo_model([]), store=store)
    asyncio.run(c.ask("one", id="h"))
    r = asyncio.run(c.ask("two", id="h"))
    assert r.text == "heard 2" and calls == ["get h", "save h", "get h", "save h"]
    assert data["h"] == r.messages and c.conversation_store is store


def test_a_halted_conversation_resumes_by_id_exactly_once() -> None:
    c = tn.create_in_process_client(model="m", generate=gated_model())

    async def main() -> None:
        tk = await tn.create_toolkit(builtins=False, extra_tools=[gated_tool()])
        halted = await c.ask("deploy", tk, id="run-1")
        assert halted.status == "pending" and halted.pending.id == "gate-1"
        queue = await c.conversation_store.pending_runs()
        assert [(q["id"], q["request"].id) for q in queue] == [("run-1", "gate-1")]
        with pytest.raises(tn.ConflictError, match="waiting on request"):
            await c.ask("hello?", tk, id="run-1")
        done = await c.ask_with_answer(tk, "run-1", None, tn.answer_output("gate-1", "yes"))
        assert done.status == "done" and done.text == "finished: approved yes"
        with pytest.raises(tn.ConflictError):
            await c.ask_with_answer(tk, "run-1", None, tn.answer_output("gate-1", "no"))
        assert await c.conversation_store.pending_runs() == []

    asyncio.run(main())


def test_a_path_is_a_sqlite_store(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    c = tn.create_in_process_client(model="m", generate=echo_model([]), store=str(db))
    asyncio.run(c.ask("one", id="p"))
    again = tn.SqliteConversationStore(db)
    stored = asyncio.run(again.get("p"))
    assert stored is not None and stored[-1]["content"] == "heard 1"
    assert isinstance(c.conversation_store, tn.SqliteConversationStore) and c.conversation_store.path == str(db)
    with pytest.raises(tn.StoreError):
        tn.SqliteConversationStore(tmp_path / "missing-dir" / "x.db")


CHILD = textwrap.dedent(
    """
    import asyncio, sys, time, pathlib
    import toolnexus as tn

    db, flags, run_id = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]

    def gated(ctx: tn.ToolContext):
        \"\"\"A step that needs an approval.\"\"\"
        if ctx.answer is None:
            return tn.pending(kind="approval", prompt="Go ahead?", id="gate-1")
        (flags / "started").write_text("1")
        for _ in range(500):  # bounded: 10 s at most
            if (flags / "go").exists():
                break
            time.sleep(0.02)
        return f"approved {ctx.answer.data['output']}"

    async def generate(req):
        last = req["messages"][-1]
        if last["role"] == "tool":
            return {"content": f"finished: {last['content']}"}
        return {"tool_calls": [{"id": "c1", "name": "gated", "arguments": {}}]}

    async def main():
        tk = await tn.create_toolkit(builtins=False, extra_tools=[tn.define_tool(gated)])
        c = tn.create_in_process_client(model="m", generate=generate, store=db)
        try:
            r = await c.ask_with_answer(tk, run_id, None, tn.answer_output("gate-1", "yes"))
            print("won", r.text)
        except tn.ConflictError as e:
            print("conflict", e)

    asyncio.run(main())
    """
)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_two_processes_racing_to_resume_one_run_have_one_winner(tmp_path: Path, backend: str) -> None:
    db = str(tmp_path / "runs.db") if backend == "sqlite" else postgres_url()
    run_id = f"run-x-{os.getpid()}-{time.time_ns()}"
    c = tn.create_in_process_client(model="m", generate=gated_model(), store=db)

    async def halt() -> tn.RunResult:
        tk = await tn.create_toolkit(builtins=False, extra_tools=[gated_tool()])
        return await c.ask("deploy", tk, id=run_id)

    assert asyncio.run(halt()).status == "pending"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    run = [sys.executable, str(script), db, str(tmp_path), run_id]
    first = subprocess.Popen(run, stdout=subprocess.PIPE, text=True)
    for _ in range(500):  # the first holds the run inside its tool
        if (tmp_path / "started").exists():
            break
        time.sleep(0.02)
    second = subprocess.run(run, capture_output=True, text=True, timeout=60)
    (tmp_path / "go").write_text("1")
    out, _ = first.communicate(timeout=60)
    assert out.startswith("won finished: approved yes"), out
    assert second.stdout.startswith("conflict"), second.stdout + second.stderr
    # The winner's result is what the store keeps; the run is no longer waiting.
    waiting = asyncio.run(c.conversation_store.pending_runs())  # type: ignore[attr-defined]
    assert all(w["id"] != run_id for w in waiting)


def test_a_conversation_keeps_its_own_messages() -> None:
    seen: list[dict] = []
    c = tn.create_in_process_client(model="m", generate=echo_model(seen))
    conv = c.conversation()
    asyncio.run(conv.send("one"))
    r = asyncio.run(conv.send("two"))
    assert r.text == "heard 2" and conv.messages == r.messages
    conv.reset()
    assert asyncio.run(conv.send("three")).text == "heard 1"


def postgres_url() -> str:
    """The server `tests/postgres/with-postgres.sh` started; under CI it must be there."""
    url = os.environ.get("TN_POSTGRES_URL")
    if not url:
        if os.environ.get("CI"):
            pytest.fail("TN_POSTGRES_URL is not set (run under tests/postgres/with-postgres.sh)")
        pytest.skip("no TN_POSTGRES_URL (tests/postgres/with-postgres.sh starts a server)")
    return url


def test_a_postgres_url_is_a_store_shared_by_clients() -> None:
    url = postgres_url()
    run_id = f"py-{os.getpid()}-{time.time_ns()}"
    first = tn.create_in_process_client(model="m", generate=gated_model(), store=url)
    second = tn.create_in_process_client(model="m", generate=gated_model(), store=tn.PostgresConversationStore(url))

    async def main() -> None:
        tk = await tn.create_toolkit(builtins=False, extra_tools=[gated_tool()])
        assert (await first.ask("deploy", tk, id=run_id)).status == "pending"
        assert isinstance(first.conversation_store, tn.PostgresConversationStore)
        queue = await second.conversation_store.pending_runs()
        assert any(q["id"] == run_id and q["request"].id == "gate-1" for q in queue)
        done = await second.ask_with_answer(tk, run_id, None, tn.answer_output("gate-1", "yes"))
        assert done.text == "finished: approved yes"
        with pytest.raises(tn.ConflictError):
            await first.ask_with_answer(tk, run_id, None, tn.answer_output("gate-1", "yes"))

    asyncio.run(main())
