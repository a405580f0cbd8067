"""The loop-side half of the engine's host calls (private).

Runs are polled on their caller's event loop (woken through one ``_native.LoopWaker`` per
loop); host callables are called from there. The engine steps a coroutine once itself; one
that really waits is driven on by a Task here (``finish`` / ``continue_task``), whose value or
exception (unchanged) goes back through ``_native._complete`` / ``_native._fail``. The
adapters below call the host's own callable (sync or async) and convert the package's
dataclasses to plain data.
"""
from __future__ import annotations

import asyncio
import inspect
import weakref
from typing import Any, Callable, Optional

from . import _native
from .types import (
    ToolContext,
    ToolResult,
    answer_from_wire,
    answer_to_wire,
    request_from_wire,
    result_from_wire,
    result_to_wire,
)


_wakers: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _native.LoopWaker]" = weakref.WeakKeyDictionary()


def loop_waker(loop: asyncio.AbstractEventLoop) -> "_native.LoopWaker":
    """The engine's way to wake ``loop`` from its own threads (one per loop)."""
    waker = _wakers.get(loop)
    if waker is None:
        waker = _wakers[loop] = _native.LoopWaker(loop)
    return waker


#: The Tasks of host calls the engine still waits on, by token (see ``abandon``). Weakly: what
#: keeps a Task alive is its loop and what it awaits, never this table.
_tasks: "weakref.WeakValueDictionary[int, asyncio.Future[Any]]" = weakref.WeakValueDictionary()


def continue_task(awaitable: Any, token: int) -> None:
    """Runs what a host call returned and did not finish at once, completing ``token`` after."""
    task = asyncio.ensure_future(awaitable)
    _tasks[token] = task
    task.add_done_callback(lambda t: _settle(token, t))


def abandon(token: int) -> None:
    """The engine no longer waits for ``token`` (its run ended): the host's coroutine is
    cancelled, as asyncio cancels a task whose awaiter was cancelled, rather than left running
    on the loop with nobody to read its outcome."""
    task = _tasks.pop(token, None)
    # On a closed loop nothing runs any more: there is nothing to stop.
    if task is not None and not task.get_loop().is_closed():
        task.cancel()


def finish(coro: Any, yielded: Any) -> Any:
    """The rest of a coroutine the engine stepped once and found waiting on ``yielded``."""
    return _finish(coro, yielded)


async def _finish(coro: Any, yielded: Any) -> Any:
    """Drives a coroutine that suspended on its first step to its end, as a Task would: wait
    for what it yielded, resume it, repeat. A cancellation of this task is thrown into it."""
    while True:
        try:
            if yielded is None:
                await asyncio.sleep(0)
            else:
                # The coroutine's own `await` marked the future as blocking, which a Task clears
                # when it takes the future over; we are that Task now.
                yielded._asyncio_future_blocking = False
                await yielded
        except GeneratorExit:
            # This coroutine is being closed (its loop is gone): close the host's with it.
            coro.close()
            raise
        except BaseException as e:  # noqa: BLE001
            if yielded is None or not yielded.done():
                # This task was cancelled while waiting: the coroutine decides what that means.
                try:
                    yielded = coro.throw(e)
                except StopIteration as done:
                    return done.value
                continue
            # Otherwise the future failed: the coroutine reads that outcome itself on resume.
        try:
            yielded = coro.send(None)
        except StopIteration as done:
            return done.value


def _settle(token: int, task: "asyncio.Future[Any]") -> None:
    _tasks.pop(token, None)
    if task.cancelled():
        _native._fail(token, asyncio.CancelledError())
        return
    exc = task.exception()
    if exc is not None:
        _native._fail(token, exc)
    else:
        _native._complete(token, task.result())


def resolve(fut: "asyncio.Future[Any]", ok: bool, value: Any) -> None:
    """Settles a run's future, unless its awaiting task already gave up on it."""
    if fut.done():
        return
    if ok:
        fut.set_result(value)
    else:
        fut.set_exception(value)


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def tool_context(answer: Optional[dict], timeout: Optional[float], call_id: str) -> ToolContext:
    return ToolContext(timeout=timeout, answer=answer_from_wire(answer) if answer else None, call_id=call_id)


def result_wire(result: Any) -> dict:
    return result_to_wire(result)


async def wait_for(func: Callable[..., Any], request: dict) -> Optional[dict]:
    return answer_to_wire(await _maybe_await(func(request_from_wire(request))))


async def on_error(func: Callable[..., Any], info: dict) -> bool:
    """Whether ``func`` says to give up: as in the published package, anything but ``"fail"``
    is a retry (still bounded by ``retries``)."""
    return bool(await _maybe_await(func(info)) == "fail")


async def body_transform(func: Callable[..., Any], body: dict) -> Optional[dict]:
    return await _maybe_await(func(body))


async def transport_open(transport: Any, url: str, headers: dict, payload: dict, timeout: float) -> str:
    """A streamed request through the host transport's ``open`` (the published package's
    streaming seam): its whole answer as text. A transport without ``open`` cannot stream."""
    open_ = getattr(transport, "open", None)
    if open_ is None:
        raise NotImplementedError("toolnexus: this http_transport cannot stream: it has no open()")

    def read() -> str:
        resp = open_(url, headers, payload, timeout)
        data = resp.read() if hasattr(resp, "read") else b"".join(resp)
        return data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else str(data)

    if inspect.iscoroutinefunction(open_):
        resp = await open_(url, headers, payload, timeout)
        data = resp.read() if hasattr(resp, "read") else resp
        return data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else str(data)
    return await asyncio.to_thread(read)


async def store_get(store: Any, id: str) -> Any:  # noqa: A002
    return await _maybe_await(store.get(id))


async def store_save(store: Any, id: str, messages: list) -> None:  # noqa: A002
    await _maybe_await(store.save(id, messages))


async def generate(func: Callable[..., Any], request: dict) -> Any:
    """An in-process model's answer. A synchronous ``generate`` runs on a worker thread (it may
    compute for a while), as the published package runs it; an async one on the loop."""
    if inspect.iscoroutinefunction(func):
        return await func(request)
    return await _maybe_await(await asyncio.to_thread(func, request))


async def transport_post(transport: Any, url: str, headers: dict, payload: dict, timeout: float) -> Any:
    """The host transport's answer; what it raises propagates unchanged (the engine decides from
    its type whether it is a provider status, a network error, or the host's own failure)."""
    post = transport.post
    if inspect.iscoroutinefunction(post):
        return await post(url, headers, payload, timeout)
    return await _maybe_await(await asyncio.to_thread(post, url, headers, payload, timeout))


def _result_out(ov: Any) -> Optional[dict]:
    if not ov:
        return None
    out = dict(ov)
    if isinstance(out.get("result"), ToolResult):
        out["result"] = result_to_wire(out["result"])
    return out


async def before_llm(func: Callable[..., Any], event: dict) -> dict:
    """The hook's override, plus the event's own lists where it gave none: the published
    package hands the hook its live lists, so an edit in place is what gets sent (the engine
    side keeps them only if they changed). A key the hook re-bound is not read, as there."""
    messages, tools = event["messages"], event["tools"]
    ov = await _maybe_await(func(event))
    out = dict(ov) if ov else {}
    if out.get("messages") is None:
        out["messages"] = messages
    if out.get("tools") is None:
        out["tools"] = tools
    return out


async def after_llm(func: Callable[..., Any], event: dict) -> None:
    await _maybe_await(func(event))


async def before_tool(func: Callable[..., Any], event: dict) -> Optional[dict]:
    return _result_out(await _maybe_await(func(event)))


async def after_tool(func: Callable[..., Any], event: dict) -> Optional[dict]:
    event = {**event, "result": result_from_wire(event["result"])}
    return _result_out(await _maybe_await(func(event)))


async def skill_provider(func: Callable[..., Any]) -> Any:
    """A ``skill_provider``'s skills (sync or async), as dicts for the engine to read."""
    from .skill import skill_def_to_wire

    defs = await _maybe_await(func())
    if isinstance(defs, (list, tuple)):
        return [skill_def_to_wire(d) for d in defs]
    return defs


async def drive(start: Callable[[Any, Any], Any], cancel: Optional[asyncio.Event] = None) -> Any:
    """Runs one engine call on the running loop: ``start(waker, future)`` starts it and
    returns its handle; setting ``cancel`` or cancelling the awaiting task cancels it."""
    loop = asyncio.get_running_loop()
    fut = loop.create_future()
    handle = start(loop_waker(loop), fut)
    watcher = None
    if cancel is not None:
        async def watch() -> None:
            await cancel.wait()
            handle.cancel()

        watcher = asyncio.ensure_future(watch())
    try:
        return await fut
    except asyncio.CancelledError:
        handle.cancel()
        raise
    finally:
        if watcher is not None and not loop.is_closed():
            watcher.cancel()
