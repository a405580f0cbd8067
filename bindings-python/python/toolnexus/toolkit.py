"""The toolkit: the tools a run may call, their provider declarations, and ``execute``.

Names are sanitised to ``[a-zA-Z0-9_-]`` and the first tool of a name wins (each dropped one
is a :class:`~toolnexus.ToolnexusWarning`). A relay tool named like a built-in tool is a
ValueError. :func:`create_toolkit` assembles one from its sources (MCP servers, skills, the
built-ins, the host's own tools), as the engine does it.
"""
from __future__ import annotations

import asyncio
import json
import os
from typing import TYPE_CHECKING, Any, Optional

from . import _bridge, _native
from ._engine import engine_of, engine_tool
from .errors import RunCancelled, _warn
from .skill import SkillInfo, skills_options
from .types import McpStatus, Tool, ToolContext, ToolResult, answer_to_wire, result_from_wire, sanitize

if TYPE_CHECKING:
    from .mcp_serve import ServeHandle


class Toolkit:
    """An ordered set of tools. Build it with :func:`create_toolkit`; it is also an async
    context manager (``async with await create_toolkit(...) as tk``)."""

    def __init__(self, tools: list[Tool]) -> None:
        self._use(_native.Toolkit(_specs(tools)))

    @classmethod
    def _adopt(cls, native: _native.Toolkit) -> "Toolkit":
        tk = cls.__new__(cls)
        tk._use(native, stacklevel=4)
        return tk

    def _use(self, native: _native.Toolkit, stacklevel: int = 3) -> None:
        _warn(native.warnings, stacklevel=stacklevel)
        # A source's tool keeps its Tool object across `register` (the engine kept it as is).
        before: dict[str, Tool] = getattr(self, "_by_name", {})

        def adopt(name: str, t: Any) -> Tool:
            if not isinstance(t, _native.EngineTool):
                return t
            kept = before.get(name)
            return kept if kept is not None and engine_of(kept) is not None else engine_tool(t)

        self._native = native
        self._tools: list[Tool] = [adopt(n, t) for n, t in zip(native.names(), native.tool_objects())]
        self._by_name = dict(zip(native.names(), self._tools))

    def register(self, *tools: Tool) -> "Toolkit":
        """Adds tools (first name wins); returns the toolkit for chaining."""
        self._use(self._native.registered(_specs(tools)))
        return self

    def tools(self) -> list[Tool]:
        """The tools, in order."""
        return list(self._tools)

    def get(self, name: str) -> Optional[Tool]:
        """The tool called ``name`` (as declared, or sanitised)."""
        return self._by_name.get(name) or self._by_name.get(sanitize(name))

    async def execute(
        self,
        name: str,
        args: Optional[dict[str, Any]] = None,
        ctx: Optional[ToolContext] = None,
    ) -> ToolResult:
        """Runs the tool ``name``. An unknown tool is an error result naming it."""
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        answer = answer_to_wire(ctx.answer) if ctx is not None else None
        handle = self._native.execute(_bridge.loop_waker(loop), fut, sanitize(name), args or {}, answer)
        text = await fut
        del handle  # the execution lives as long as its handle: held until here
        return result_from_wire(json.loads(text))

    def skills_prompt(self) -> str:
        """The skill catalog for the system prompt (empty without a skill source). A run
        appends it to the client's system prompt itself."""
        return self._native.skills_prompt()

    def skills(self) -> list[SkillInfo]:
        """The skills the toolkit exposes."""
        return [SkillInfo(**s) for s in self._native.skills()]

    def mcp_status(self) -> dict[str, McpStatus]:
        """Each configured MCP server's status (``connected``, ``disabled``, ``failed``)."""
        return self._native.mcp_status()

    async def serve(
        self,
        addr: str,
        *,
        client: Optional[Any] = None,
        a2a: Optional[dict[str, Any]] = None,
        on_task: Optional[Any] = None,
        mcp: Optional[dict[str, Any]] = None,
        on_call: Optional[Any] = None,
    ) -> "ServeHandle":
        """Serves the toolkit's tools over MCP (streamable HTTP, ``POST /mcp``) at ``addr``
        (``host:port``; port 0 picks one) with the ``mcp`` profile (``name``, ``version``,
        ``tools``, ``token``, ``allowed_origins``); returns a
        :class:`~toolnexus.mcp_serve.ServeHandle`. Its tools run on this event loop.

        Without ``mcp``, the ``mcpServer`` block of the ``mcp_config`` dict the toolkit was
        built from (without either, the engine's ``ValueError``: upstream then mounts
        nothing). The A2A profile (``a2a``, ``client``, ``on_task``) and ``on_call`` are not in
        this build: asking for them is a NotImplementedError."""
        from .mcp_serve import serve_mcp

        for what, value in (("a2a", a2a), ("client", client), ("on_task", on_task), ("on_call", on_call)):
            if value is not None:
                raise NotImplementedError(f"toolnexus: serve({what}=...) is not available in this build")
        return await serve_mcp(self, addr, mcp)

    def to_openai(self) -> list[dict[str, Any]]:
        """The OpenAI declarations: ``{type: "function", function: {name, description, parameters}}``."""
        return self._native.declarations("openai")

    def to_anthropic(self) -> list[dict[str, Any]]:
        """The Anthropic declarations: ``{name, description, input_schema}``."""
        return self._native.declarations("anthropic")

    def to_gemini(self) -> list[dict[str, Any]]:
        """The Gemini declarations: ``[{functionDeclarations: [...]}]``."""
        return self._native.declarations("gemini")

    async def close(self) -> None:
        """Stops the MCP servers the toolkit started (idempotent; every copy of the toolkit
        shares them)."""
        await _bridge.drive(self._native.close)

    async def __aenter__(self) -> "Toolkit":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


def _specs(tools: Any) -> list[tuple[str, str, Any, str, Tool, Any]]:
    return [(t.name, t.description, t.input_schema, t.source, t, engine_of(t)) for t in tools]


def _fspath(value: Any) -> Any:
    return os.fspath(value) if isinstance(value, os.PathLike) else value


async def create_toolkit(
    mcp_config: Optional[Any] = None,
    skills_dir: Optional[Any] = None,
    skills: Optional[list[Any]] = None,
    skill_provider: Optional[Any] = None,
    skills_filter: Optional[dict[str, bool]] = None,
    skill_sample_limit: Optional[int] = None,
    extra_tools: Optional[list[Tool]] = None,
    builtins: Optional[Any] = None,
    agents: Optional[list[Any]] = None,
    wait_for: Optional[Any] = None,
    disable_tools: Optional[list[str]] = None,
    disable_skills: Optional[list[str]] = None,
    cancel: Optional[asyncio.Event] = None,
) -> Toolkit:
    """Builds a toolkit from its sources, in this order: the MCP servers of ``mcp_config``
    (a config dict or a JSON file's path; a failing server is status ``failed``, never an
    error), the ``skill`` tool (``skills_dir``, ``skills`` as :class:`~toolnexus.SkillDef`,
    ``skill_provider``; ``skills_filter``, ``skill_sample_limit``, ``disable_skills``), the
    built-in tools (``builtins``: all ten unless turned off; a ``builtins`` key of
    ``mcp_config`` counts too), then ``extra_tools`` (one named like a built-in replaces it).
    ``disable_tools`` drops tools by their final name. ``wait_for`` answers MCP servers'
    elicitations; setting ``cancel`` aborts the MCP load (``asyncio.CancelledError``).

    The engine reads the options: an unknown key or a wrong type is an
    :class:`~toolnexus.InvalidArgumentError` naming it. Remote A2A ``agents`` are not in this
    build (a non-empty list is that error too).
    """
    options: dict[str, Any] = skills_options(_fspath(skills_dir), skills, skills_filter, skill_sample_limit,
                                             disable_skills)
    extra = {"mcp_config": _fspath(mcp_config), "builtins": builtins, "agents": agents,
             "disable_tools": disable_tools}
    options.update({k: v for k, v in extra.items() if v is not None})
    specs = _specs(extra_tools or [])
    try:
        native = await _bridge.drive(
            lambda waker, fut: _native.create_toolkit(waker, fut, options, specs, skill_provider, wait_for, cancel),
            cancel,
        )
    except RunCancelled as e:
        raise asyncio.CancelledError(str(e)) from e
    return Toolkit._adopt(native)
