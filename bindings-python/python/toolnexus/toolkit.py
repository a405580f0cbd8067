"""The toolkit: the tools a run may call, their provider declarations, and ``execute``.

Names are sanitised to ``[a-zA-Z0-9_-]`` and the first tool of a name wins (each dropped one
is a :class:`~toolnexus.ToolnexusWarning`). A relay tool named like a built-in tool is a
ValueError.
"""
from __future__ import annotations

import asyncio
import json
from typing import Any, Optional

from . import _bridge, _native
from .errors import _warn
from .types import McpStatus, Tool, ToolContext, ToolResult, answer_to_wire, result_from_wire, sanitize

_NOT_YET = (
    "toolnexus: {what} is not available in this build yet (the engine has no {kind} source); "
    "pass tools with extra_tools="
)


class Toolkit:
    """An ordered set of tools. Build it with :func:`create_toolkit`; it is also an async
    context manager (``async with await create_toolkit(...) as tk``)."""

    def __init__(self, tools: list[Tool]) -> None:
        self._use(_native.Toolkit(_specs(tools)))

    def _use(self, native: _native.Toolkit) -> None:
        _warn(native.warnings)
        self._native = native
        self._tools: list[Tool] = native.tool_objects()
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
        """The skill catalog for the system prompt (empty: no skill source in this build)."""
        return ""

    def mcp_status(self) -> dict[str, McpStatus]:
        """The MCP servers' status (empty: no MCP source in this build)."""
        return {}

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
        """Releases the toolkit's resources (nothing to release without MCP servers)."""

    async def __aenter__(self) -> "Toolkit":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


def _specs(tools: Any) -> list[tuple[str, str, Any, str, Tool]]:
    return [(t.name, t.description, t.input_schema, t.source, t) for t in tools]


async def create_toolkit(
    mcp_config: Optional[Any] = None,
    skills_dir: Optional[Any] = None,
    skills: Optional[list[Any]] = None,
    skill_provider: Optional[Any] = None,
    skills_filter: Optional[dict[str, bool]] = None,
    skill_sample_limit: int = 0,
    extra_tools: Optional[list[Tool]] = None,
    builtins: Optional[Any] = None,
    agents: Optional[list[Any]] = None,
    wait_for: Optional[Any] = None,
    disable_tools: Optional[list[str]] = None,
    disable_skills: Optional[list[str]] = None,
    cancel: Optional[Any] = None,
) -> Toolkit:
    """Builds a toolkit from ``extra_tools``; ``disable_tools`` drops tools by name.

    MCP servers (``mcp_config``), skills (``skills_dir``, ``skills``, ``skill_provider``) and
    A2A ``agents`` are not available in this build yet: passing them is a NotImplementedError
    rather than a toolkit silently missing tools. Built-in tools are not either: unless
    ``builtins=False`` (or ``{"enabled": False}``) is passed, a warning says the toolkit has none.
    ``wait_for`` and ``cancel`` only concern MCP loading and are accepted for compatibility.
    """
    for what, value in (("mcp_config", mcp_config), ("agents", agents)):
        if value is not None:
            raise NotImplementedError(_NOT_YET.format(what=what, kind="MCP/A2A"))
    for what, value in (("skills_dir", skills_dir), ("skills", skills), ("skill_provider", skill_provider)):
        if value is not None:
            raise NotImplementedError(_NOT_YET.format(what=what, kind="skill"))
    _warn(_native.builtins_warning(builtins), stacklevel=2)
    dropped = set(disable_tools or ())
    return Toolkit([t for t in (extra_tools or []) if t.name not in dropped and sanitize(t.name) not in dropped])
