"""The engine's own tools as the package's :class:`~toolnexus.Tool` objects (private).

A built-in, the ``skill`` tool, an MCP server's tool or an HTTP tool is run by the engine:
its ``Tool.execute`` hands the call to the engine, and a toolkit given such a Tool runs the
engine tool directly (no Python in between).
"""
from __future__ import annotations

import json
from typing import Any, Optional

from . import _bridge, _native
from .types import Tool, ToolContext, ToolResult, answer_to_wire, result_from_wire


class EngineExecute:
    """The ``execute`` of an engine tool: ``await execute(args, ctx) -> ToolResult``.
    Cancelling the awaiting task stops the tool (a ``bash`` job's whole process group)."""

    __slots__ = ("_engine",)

    def __init__(self, engine: "_native.EngineTool") -> None:
        self._engine = engine

    async def __call__(self, args: Optional[dict[str, Any]] = None, ctx: Optional[ToolContext] = None) -> ToolResult:
        answer = answer_to_wire(ctx.answer) if ctx is not None else None
        timeout = ctx.timeout if ctx is not None else None
        call_id = ctx.call_id if ctx is not None else ""
        text = await _bridge.drive(lambda waker, fut: self._engine.execute(waker, fut, args, answer, timeout, call_id))
        return result_from_wire(json.loads(text))

    def __repr__(self) -> str:
        return f"<engine tool {self._engine.name}>"


def engine_tool(native: "_native.EngineTool") -> Tool:
    """The package's Tool for an engine tool."""
    return Tool(
        name=native.name,
        description=native.description,
        input_schema=native.input_schema,
        source=native.source,  # type: ignore[arg-type]
        execute=EngineExecute(native),
    )


def engine_of(tool: Tool) -> Optional["_native.EngineTool"]:
    """The engine tool a Tool stands for, if it is one."""
    execute = tool.execute
    return execute._engine if isinstance(execute, EngineExecute) else None
