"""MCP serve (SPEC §7C): a toolkit's tools served over streamable HTTP at ``POST /mcp``, by
the engine (:meth:`toolnexus.Toolkit.serve`).

The engine's server listens on loopback unless given a ``token`` (required off loopback),
refuses a request without the token, and one from a foreign browser ``Origin``; the built-in
tools that run commands or touch files (``bash``, ``read``, ``write``, ``edit``, ``grep``,
``glob``, ``apply_patch``) are exposed only when ``tools`` names them.
"""
from __future__ import annotations

from typing import Any, Awaitable, Callable, Optional, Union

from . import _bridge, _native
from .errors import _warn
from .types import Tool

#: The ``mcp`` profile: ``{"name"?, "version"?, "tools"?: [names], "token"?,
#: "allowed_origins"?: [origins]}``, read by the engine.
MCPServeConfig = dict[str, Any]

#: ``on_call(ev)`` per inbound ``tools/call`` (upstream's; not supported by this build).
OnCall = Callable[[dict[str, Any]], Union[None, Awaitable[None]]]


class ServeHandle:
    """A running server: ``url`` is its base (``http://127.0.0.1:PORT``; MCP at
    ``url + "/mcp"``), ``stop()`` (or ``close()``) ends it."""

    def __init__(self, native: "_native.McpServer") -> None:
        self._native = native
        #: The base URL of the server.
        self.url: str = native.base_url
        #: The MCP endpoint.
        self.mcp_url: str = native.url
        #: The names of the tools it exposes.
        self.tool_names: list[str] = list(native.tool_names)

    async def stop(self) -> None:
        """Stops listening and ends every connection (idempotent)."""
        await _bridge.drive(self._native.close)

    async def close(self) -> None:
        """Alias for :meth:`stop`."""
        await self.stop()


async def serve_mcp(toolkit: Any, addr: Optional[str], cfg: Optional[MCPServeConfig]) -> ServeHandle:
    """Serves ``toolkit`` at ``addr`` (``host:port``) with the ``cfg`` profile (``None``: the
    ``mcpServer`` block of the config the toolkit was built from)."""
    native = await _bridge.drive(lambda waker, fut: _native.serve(waker, fut, toolkit._native, cfg, addr))
    _warn(native.warnings)
    return ServeHandle(native)


def exposed_mcp_tools(tools: list[Tool], cfg: Optional[MCPServeConfig] = None) -> list[Tool]:
    """The tools the ``cfg`` profile exposes, in order: those ``cfg["tools"]`` names
    (unknown names are a warning), else all but relay tools and the gated built-ins."""
    from .toolkit import Toolkit

    tk = Toolkit(list(tools))
    at, warnings = _native.exposed_tools(tk._native, (cfg or {}).get("tools"))
    _warn(warnings)
    kept = tk.tools()
    return [kept[i] for i in at]


__all__ = ["MCPServeConfig", "OnCall", "ServeHandle", "exposed_mcp_tools"]
