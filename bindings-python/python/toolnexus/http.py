"""HTTP tools: an HTTP endpoint declared as a :class:`~toolnexus.Tool` (``source="http"``),
run by the engine (``{placeholder}`` path arguments, query and body arguments, ``${ENV}``
header values, the result modes)."""
from __future__ import annotations

from typing import Any, Optional

from . import _native
from ._engine import engine_tool
from .types import JSONSchema, Tool

#: How long one call may take when ``timeout`` is not given, in seconds.
DEFAULT_TIMEOUT: float = _native.DEFAULT_HTTP_TIMEOUT_MS / 1000


def http_tool(
    *,
    name: str,
    description: str,
    method: str,
    url: str,
    headers: Optional[dict[str, str]] = None,
    query: Optional[list[str]] = None,
    body: Optional[str] = None,
    input_schema: Optional[JSONSchema] = None,
    timeout: Optional[float] = None,
    result_mode: Optional[str] = None,
) -> Tool:
    """Wraps an HTTP endpoint as a Tool. ``body`` is ``"json"`` (the engine's default),
    ``"form"`` or ``"raw"``; ``result_mode`` ``"text"`` (default), ``"json"`` or
    ``"status+text"``; ``timeout`` in seconds. The engine checks every value."""
    spec: dict[str, Any] = {"name": name, "description": description, "method": method, "url": url}
    extra = {"headers": headers, "query": query, "body": body, "input_schema": input_schema,
             "result_mode": result_mode, "timeout_ms": _millis(timeout)}
    spec.update({k: v for k, v in extra.items() if v is not None})
    return engine_tool(_native.http_tool(spec))


def _millis(seconds: Optional[float]) -> Any:
    """Seconds as the engine's milliseconds (a whole number when it is one)."""
    if seconds is None or isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        return seconds
    ms = seconds * 1000
    return int(ms) if float(ms).is_integer() else ms


__all__ = ["DEFAULT_TIMEOUT", "http_tool"]
