"""The fault suite through the public Python API: every scenario of tests/faults/scenarios.json
against tests/faults/fault_server.py (spawned here; it exits when its stdin closes).

Each must end in its typed exception (or the host's own exception object) or its error tool
result within its bound, and leave nothing running: no task of the run, nor any a host
callback started, is left on the loop, every host coroutine has finished, and the server saw
every connection closed. A child interpreter runs the scenarios again alongside; it must exit
by itself, cleanly.

``python -m tests.test_faults`` (from bindings-python/) runs them without pytest.
"""
from __future__ import annotations

import asyncio
import gc
import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Iterator, Optional

import pytest

import toolnexus as tn

FAULTS = Path(__file__).resolve().parents[2] / "tests" / "faults"
SCENARIOS: list[dict[str, Any]] = json.loads((FAULTS / "scenarios.json").read_text())["scenarios"]


class FaultError(Exception):
    """The host's own failure: the run must end with this very object."""


class FaultServer:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(FAULTS / "fault_server.py")], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline())

    def stats(self, prefix: str) -> dict[str, int]:
        """``requests``: the POSTs the server saw for ``prefix``; ``open``: its connections not
        closed yet."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_stats/{prefix}", timeout=5) as r:
            return dict(json.loads(r.read()))

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()  # the server exits on its own...
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()  # ...or now
            self.proc.wait()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Host:
    """The scenario's host callables, recording what they raised and which are still running."""

    def __init__(self) -> None:
        self.raised: list[BaseException] = []
        self.alive = 0

    async def misbehave(self, spec: dict[str, Any]) -> Any:
        self.alive += 1
        try:
            if spec["behavior"] == "raise":
                e = FaultError(spec["message"])
                self.raised.append(e)
                raise e
            assert spec["behavior"] == "hang", spec
            await asyncio.Event().wait()
        finally:
            self.alive -= 1

    def tool(self, spec: dict[str, Any]) -> tn.Tool:
        behavior = spec["behavior"]
        common = dict(name=spec["name"], description=spec["description"], input_schema=spec["input_schema"])

        if behavior == "wrong_type":

            async def execute(args: Any = None, ctx: Any = None) -> Any:
                return 42  # not a ToolResult

            return tn.Tool(source="native", execute=execute, **common)

        async def probe(x: float = 0, ctx: Optional[tn.ToolContext] = None) -> Any:
            if behavior == "text":
                return spec["output"]
            if behavior == "suspend":
                if ctx is not None and ctx.answer is not None:
                    return "approved"
                return tn.pending(kind="approval", prompt=spec["prompt"])
            if behavior == "garbage":
                return object()  # nothing JSON can encode
            return await self.misbehave(spec)

        tool = tn.define_tool(probe, **common)
        assert isinstance(tool, tn.Tool)
        return tool

    def callback(self, spec: dict[str, Any]) -> Any:
        async def call(*_args: Any) -> Any:
            return await self.misbehave(spec)

        return call


def error_texts(e: BaseException) -> list[str]:
    texts = [str(e), repr(e), *map(str, e.args)]
    for attr in ("body", "text", "retry_after", "reason"):
        v = getattr(e, attr, None)
        if v is not None:
            texts.append(str(v))
    for linked in (e.__cause__, e.__context__):
        if linked is not None:
            texts += [str(linked), repr(linked)]
    return texts


def secrets_of(sc: dict[str, Any]) -> list[str]:
    c = sc["client"]
    return [*sc["expect"].get("must_not_contain", []), c["api_key"], *(c.get("headers") or {}).values()]


def check_error(sc: dict[str, Any], e: BaseException, host: Host) -> list[str]:
    want = sc["expect"]["error"]
    problems: list[str] = []
    if want["kind"] == "host":
        if not any(e is r for r in host.raised):
            return [f"{e!r} is not the host's own exception (raised: {host.raised!r})"]
    elif not isinstance(e, tn.ToolnexusError) or e.kind != want["kind"]:
        return [f"{type(e).__name__} {e!r} (kind {getattr(e, 'kind', None)}), want kind {want['kind']}"]
    if "message" in want and str(e) != want["message"]:
        problems.append(f"message {str(e)!r}, want {want['message']!r}")
    if "message_contains" in want and want["message_contains"] not in str(e):
        problems.append(f"message {str(e)!r} lacks {want['message_contains']!r}")
    if "status" in want:
        if not isinstance(e, tn.ProviderError) or e.status != want["status"]:
            problems.append(f"{e!r}, want status {want['status']}")
        else:
            if "retry_after" in want and e.retry_after != want["retry_after"]:
                problems.append(f"retry_after {e.retry_after!r}, want {want['retry_after']!r}")
            if "body" in want and e.body != want["body"]:
                problems.append(f"body {e.body!r}, want {want['body']!r}")
            if "body_contains" in want and want["body_contains"] not in e.body:
                problems.append(f"body {e.body!r} lacks {want['body_contains']!r}")
    if sc["expect"].get("max_message_chars") is not None and len(str(e)) > sc["expect"]["max_message_chars"]:
        problems.append(f"the message is {len(str(e))} chars long")
    for secret in secrets_of(sc):
        if any(secret in t for t in error_texts(e)):
            problems.append(f"the error shows the secret {secret!r}: {e!r}")
    return problems


def check_result(sc: dict[str, Any], r: tn.RunResult) -> list[str]:
    want = sc["expect"]
    problems: list[str] = []
    if r.status != "done":
        problems.append(f"status {r.status!r}, want done")
    if "text" in want and r.text != want["text"]:
        problems.append(f"text {r.text!r}, want {want['text']!r}")
    if "text_prefix" in want and not r.text.startswith(want["text_prefix"]):
        problems.append(f"text {r.text!r}, want it to start with {want['text_prefix']!r}")
    if "tool_calls" in want:
        if len(r.tool_calls) != len(want["tool_calls"]):
            problems.append(f"tool calls {r.tool_calls!r}, want {want['tool_calls']!r}")
        for got, w in zip(r.tool_calls, want["tool_calls"]):
            output_ok = w["output"] is None or got["output"] == w["output"]
            if got["name"] != w["name"] or got["is_error"] != w["is_error"] or not output_ok:
                problems.append(f"tool call {got!r}, want {w!r}")
    return problems


def _others() -> set["asyncio.Task[Any]"]:
    return {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}


async def replay(sc: dict[str, Any], server: FaultServer, tag: str = "py") -> tuple[list[str], float]:
    """Runs one scenario on the running loop; returns what went wrong and the seconds it took."""
    prefix = f"{sc['server']}~{tag}-{sc['name']}"
    port = closed_port() if sc["server"] == "refused" else server.port
    host = Host()
    kwargs: dict[str, Any] = dict(sc["client"])
    if "wait_for" in sc:
        kwargs["wait_for"] = host.callback(sc["wait_for"])
    if "hooks" in sc:
        kwargs["hooks"] = {name: host.callback(spec) for name, spec in sc["hooks"].items()}
    if "on_error" in sc:
        kwargs["on_error"] = host.callback(sc["on_error"])
    client = tn.create_client(base_url=f"http://127.0.0.1:{port}/{prefix}/v1", style=sc["style"], **kwargs)
    toolkit = None
    if "tool" in sc:
        toolkit = await tn.create_toolkit(builtins=False, extra_tools=[host.tool(sc["tool"])])
    runs, pause = sc.get("runs", 1), sc.get("pause_ms", 0) / 1000
    bound = sc["bound_ms"] / 1000
    expect = sc["expect"]
    problems: list[str] = []
    before = _others()
    # What the loop reports (a task destroyed while still pending, an exception nobody
    # retrieved) is a problem too: a leaked task can vanish that way instead of lingering.
    reported: list[str] = []
    asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: reported.append(str(ctx.get("message"))))

    started = time.monotonic()
    for run in range(runs):
        if run:
            await asyncio.sleep(pause)
        fails = "error" in expect and run == runs - 1
        try:
            # A hang past the bound (and a grace) is reported, never waited out.
            r = await asyncio.wait_for(client.run(sc["prompt"], toolkit), bound + 5)
        except asyncio.TimeoutError as e:
            if isinstance(e, tn.ToolnexusError):
                problems += check_error(sc, e, host) if fails else [f"run {run} failed: {e!r}"]
            else:
                problems.append(f"run {run} hung past {bound + 5:.1f} s")
                break
        except BaseException as e:  # noqa: BLE001 (any exception is the scenario's outcome)
            problems += check_error(sc, e, host) if fails else [f"run {run} failed: {e!r}"]
        else:
            problems += [f"run {run} succeeded ({r.text!r}), want an error"] if fails else check_result(sc, r)
    took = time.monotonic() - started

    if took > bound:
        problems.append(f"took {took * 1000:.0f} ms, bound {sc['bound_ms']} ms")
    if "min_ms" in expect and took * 1000 < expect["min_ms"]:
        problems.append(f"took {took * 1000:.0f} ms, less than {expect['min_ms']} ms")
    stats = await asyncio.to_thread(server.stats, prefix)
    if expect.get("requests") is not None and stats["requests"] != expect["requests"]:
        problems.append(f"the server saw {stats['requests']} requests, want {expect['requests']}")
    # The engine let go of every connection it opened (a timed-out run's included).
    deadline = time.monotonic() + 1
    while stats["open"] and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
        stats = await asyncio.to_thread(server.stats, prefix)
    if stats["open"]:
        problems.append(f"{stats['open']} connections still open a second after the run")
    # Nothing left running: no task the run (or a host callback) started is still on the loop,
    # and every host coroutine finished. A task being cancelled may need a few loop turns.
    deadline = time.monotonic() + 0.5
    while (_others() - before or host.alive) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    left, alive = _others() - before, host.alive
    if left:
        problems.append(f"tasks left running after the run: {sorted(map(repr, left))}")
    if alive:
        problems.append(f"{alive} host coroutines still running after the run")
    del left
    gc.collect()  # an unreachable pending task is destroyed now, and reported, not some day
    await asyncio.sleep(0)
    if reported:
        problems.append(f"the loop reported: {reported}")
    return problems, took


@pytest.fixture(scope="module")
def fault_server() -> Iterator[FaultServer]:
    s = FaultServer()
    yield s
    s.close()


@pytest.fixture(scope="module", autouse=True)
def child_run() -> Iterator["subprocess.Popen[str]"]:
    """Every scenario again in a child interpreter, started now to run alongside this module's
    tests (its own tag keeps the counts apart); the last test waits for it."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.test_faults"],
        cwd=Path(__file__).resolve().parents[1],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    yield proc
    if proc.poll() is None:
        proc.kill()
        proc.wait()


_failed_here: set[str] = set()


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
def test_fault(sc: dict[str, Any], fault_server: FaultServer) -> None:
    if "python" in sc.get("skip", {}):
        pytest.skip(sc["skip"]["python"])
    problems, _ = asyncio.run(replay(sc, fault_server))
    if problems:
        _failed_here.add(sc["name"])
    assert not problems, "; ".join(problems)


def test_a_process_that_ran_every_fault_exits_by_itself(child_run: "subprocess.Popen[str]") -> None:
    """The child must exit on its own, with status 0 and nothing on stderr (no task destroyed
    while pending, no exception ignored at shutdown). A scenario may fail there only if it
    failed here too (where it is reported)."""
    try:
        out, err = child_run.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        child_run.kill()
        out, err = child_run.communicate()
        pytest.fail(f"the child did not exit by itself within 90 s:\n{out}{err}")
    assert child_run.returncode == 0, out + err
    assert err == "", err
    assert f"ran {len(SCENARIOS)} scenarios" in out, out
    failed_there = {line.split()[1] for line in out.splitlines() if line.startswith("FAIL ")}
    assert failed_there <= _failed_here, out


def _main() -> int:
    server = FaultServer()
    failed = 0
    try:
        for sc in SCENARIOS:
            if "python" in sc.get("skip", {}):
                print(f"skip {sc['name']}")
                continue
            problems, took = asyncio.run(replay(sc, server, tag="py-child"))
            print(f"{'ok  ' if not problems else 'FAIL'} {sc['name']} ({took * 1000:.0f} ms) {'; '.join(problems)}")
            failed += bool(problems)
    finally:
        server.close()
    print(f"ran {len(SCENARIOS)} scenarios, {failed} failed")
    return 0


if __name__ == "__main__":
    sys.exit(_main())
