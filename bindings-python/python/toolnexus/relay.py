"""Relay tools: declared to the model, executed by the host.

A relay call suspends the run with a ``tool_call`` :class:`Request` carrying it under
``data["calls"]`` (each ``{id, name, input, arguments}``): with ``wait_for`` each call is its own
Request, all of a turn's at once; a durable halt carries every relay call of the turn in one.
The host runs the calls itself and answers with :func:`relay_answer` (one result per call id)
or, for a single call, ``answer_output``-style ``data={"output": ..., "isError": ...}``.
A declined relay is the error result ``relay declined for <name>: <reason>`` and the run goes on.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from . import _native
from .types import (
    Answer,
    JSONSchema,
    Request,
    Tool,
    ToolContext,
    ToolResult,
    answer_from_wire,
    answer_to_wire,
    request_to_wire,
    result_from_wire,
)

#: The Request kind of a relayed call.
RELAY_KIND: str = _native.RELAY_KIND


@dataclass
class RelayCall:
    """One relayed call, as in ``Request.data["calls"]``."""

    id: str
    name: str
    input: dict[str, Any]
    arguments: str


@dataclass
class RelayResult:
    """One host-executed result, keyed by the relayed call's id."""

    id: str
    output: str
    isError: bool = False  # noqa: N815 (wire key)


def relay_tool(name: str, description: str, schema: Optional[JSONSchema] = None) -> Tool:
    """A declaration-only tool: calling it suspends the run and the host supplies the result.
    Its name may not be a built-in tool's name (``bash``, ``read``, ...). Run directly, it does
    what a run does: without ``ctx.answer`` it suspends with the ``tool_call`` Request for this
    call; with one it returns the result the model would read."""

    async def execute(args: Optional[dict[str, Any]] = None, ctx: Optional[ToolContext] = None) -> ToolResult:
        answer = answer_to_wire(ctx.answer) if ctx is not None and ctx.answer is not None else None
        call_id = ctx.call_id if ctx is not None else ""
        return result_from_wire(_native.relay_execute(name, args or {}, call_id, answer))

    return Tool(
        name=name,
        description=description,
        input_schema=schema if schema is not None else _native.empty_schema(),
        source="relay",
        execute=execute,
    )


def is_relay_request(request: Optional[Request]) -> bool:
    """Whether ``request`` carries relayed tool calls."""
    return request is not None and request.kind == RELAY_KIND


def relay_calls_of(request: Optional[Request]) -> list[RelayCall]:
    """The relayed calls of ``request``, in call order (empty for any other request)."""
    if request is None:
        return []
    return [RelayCall(**c) for c in _native.relay_calls_of(request_to_wire(request))]


def relay_answer(request_id: str, results: list[RelayResult]) -> Answer:
    """The Answer for a relay Request: one :class:`RelayResult` per relayed call."""
    wire = [{"id": r.id, "output": r.output, "isError": r.isError} for r in results]
    return answer_from_wire(_native.relay_answer_dict(request_id, wire))
