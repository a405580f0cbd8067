"""MCP servers as a tool source: their tools (named ``<server>_<tool>``), each server's
status, and the elicitation mapping. Connecting (stdio children, streamable HTTP), the
per-server timeouts and tool filters, and the result mapping are the engine's."""
from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from . import _bridge, _native
from ._engine import engine_tool
from .errors import RunCancelled, _warn
from .types import Answer, JSONSchema, McpStatus, Request, Tool, answer_to_wire, request_from_wire

#: How long each phase of a server's connection may take when its config gives no
#: ``timeout``, in seconds.
DEFAULT_TIMEOUT = _native.MCP_DEFAULT_TIMEOUT_MS / 1000

#: A server's config entry (``command`` / ``url``, ``timeout`` in ms, ``tools``, ...).
ServerConfig = dict[str, Any]
#: A config: server name → entry (or wrapped under ``mcpServers`` / ``servers`` / ``mcp``).
McpConfig = dict[str, ServerConfig]


@dataclass
class McpSource:
    """Loaded MCP servers: their tools and status; ``close()`` stops them."""

    tools: list[Tool]
    status: dict[str, McpStatus]
    _native: Any = field(default=None, repr=False)

    async def close(self) -> None:
        """Stops every server (idempotent)."""
        if self._native is not None:
            await _bridge.drive(self._native.close)


@dataclass
class ToolInfo:
    """One listed tool, under the server's own (unprefixed) name."""

    name: str
    description: str
    input_schema: JSONSchema


@dataclass
class McpInventory:
    """A list-only pass: each connected server's tools (unfiltered) and every status."""

    tools: dict[str, list[ToolInfo]]
    status: dict[str, McpStatus]


def expand_env_headers(headers: Optional[dict[str, str]]) -> Optional[dict[str, str]]:
    """``${ENV_VAR}`` in each header value expanded from the environment (unset: empty);
    ``None`` stays ``None``."""
    if headers is None:
        return None
    return dict(_native.expand_env_headers(list(headers.items())))


async def _cancellable(start: Any, cancel: Optional[asyncio.Event]) -> Any:
    try:
        return await _bridge.drive(start, cancel)
    except RunCancelled as e:
        # Upstream's load is an asyncio operation: a parent's cancellation is CancelledError.
        raise asyncio.CancelledError(str(e)) from e


async def load_mcp(input: Union[str, dict[str, Any]], wait_for: Any = None) -> McpSource:  # noqa: A002
    """Connects to every enabled server of ``input`` (a config dict or a JSON file's path)
    and lists their tools. A failing server is status ``failed`` (with a warning), never an
    error; ``wait_for`` answers servers' elicitations."""
    return await load_mcp_with_context(input, wait_for)


async def load_mcp_with_context(
    input: Union[str, dict[str, Any]],  # noqa: A002
    wait_for: Any = None,
    *,
    cancel: Optional[asyncio.Event] = None,
) -> McpSource:
    """:func:`load_mcp`, aborted as a whole (every started server stopped, then
    ``asyncio.CancelledError``) when ``cancel`` is set."""
    native = await _cancellable(
        lambda waker, fut: _native.load_mcp(waker, fut, input, wait_for, cancel), cancel)
    _warn(native.warnings)
    return McpSource(tools=[engine_tool(t) for t in native.tools()], status=native.status(), _native=native)


async def list_mcp_tools(input: Union[str, dict[str, Any]], *, cancel: Optional[asyncio.Event] = None) -> McpInventory:  # noqa: A002
    """Connects to every enabled server, lists its tools (unfiltered, original names) and
    disconnects."""
    text = await _cancellable(lambda waker, fut: _native.list_mcp_tools(waker, fut, input, cancel), cancel)
    inv = json.loads(text)
    _warn([tuple(w) for w in inv["warnings"]])
    tools = {server: [ToolInfo(**t) for t in infos] for server, infos in inv["tools"].items()}
    return McpInventory(tools=tools, status=inv["status"])


@dataclass
class ElicitResult:
    """What an MCP server is told for an elicitation: ``action`` (``accept`` | ``decline``
    | ``cancel``) and, on accept, the answer's ``content``. Upstream returns the ``mcp`` SDK's
    class of this name; the fields are the same."""

    action: str
    content: Optional[dict[str, Any]] = None


def answer_to_elicit_result(answer: Optional[Answer]) -> ElicitResult:
    """The ElicitResult for a resolved Answer: ``ok`` is accept (with its data, ``{}``
    without), ``reason="declined"`` decline, anything else cancel."""
    action, content = _native.elicit_result(answer_to_wire(answer))
    return ElicitResult(action=action, content=content)


def _plain(params: Any) -> Any:
    """An elicitation's params as a dict: a dict as is, an SDK object by its fields."""
    if isinstance(params, dict) or params is None:
        return params
    dump = getattr(params, "model_dump", None)
    if callable(dump):
        return dump(by_alias=True, exclude_none=True)
    return {k: v for k, v in vars(params).items() if v is not None}


def elicitation_to_request(params: Any) -> Request:
    """The suspension Request for an MCP ``elicitation/create``: URL mode is
    ``kind="authorization"`` with the ``url``, form mode ``kind="input"`` with the requested
    schema in ``data["schema"]``."""
    return request_from_wire(_native.elicitation_request(_plain(params)))


def parse_mcp_config(input: Union[str, dict[str, Any]]) -> McpConfig:
    """The server entries of an MCP config, as written: ``input`` is a file path or a dict,
    the servers under ``mcpServers``, ``servers`` or ``mcp``, or the bare server map (less the
    sibling blocks ``builtins``, ``agents``, ``a2a`` and ``mcpServer``)."""
    result: McpConfig = _native.parse_mcp_config(input)
    return result


__all__ = [
    "DEFAULT_TIMEOUT", "ElicitResult", "McpConfig", "answer_to_elicit_result", "McpInventory", "McpSource", "ServerConfig", "ToolInfo", "elicitation_to_request",
    "expand_env_headers", "list_mcp_tools", "load_mcp", "load_mcp_with_context", "parse_mcp_config",
]
