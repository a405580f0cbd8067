"""Native tools: a plain Python function (sync or async) becomes a :class:`Tool`.

The input schema comes from the type hints (``str`` → string, ``int``/``float`` → number,
``bool`` → boolean, lists/tuples/sets → array, ``dict`` → object, ``Optional[T]`` → T,
anything else → any); parameters without a default are required; a ``ctx``/``context``
parameter receives the :class:`ToolContext` and is not part of the schema. The description is
the docstring's first line. Explicit ``name`` / ``description`` / ``input_schema`` win.

A returned ``str`` is the output, a returned :class:`ToolResult` passes through, anything else
is JSON-encoded; a raised exception becomes an error result with its message. A sync function
runs in a worker thread so it cannot stall the event loop or the engine.
"""
from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any, Callable, Optional, Union, get_args, get_origin, get_type_hints

from .types import JSONSchema, Tool, ToolContext, ToolResult

_CTX_NAMES = ("ctx", "context")
_SKIP_NAMES = (*_CTX_NAMES, "self", "cls")


def _json_type(annotation: Any) -> dict[str, Any]:
    if get_origin(annotation) is Union:
        rest = [a for a in get_args(annotation) if a is not type(None)]
        return _json_type(rest[0]) if len(rest) == 1 else {}
    if annotation is bool:
        return {"type": "boolean"}
    if annotation in (int, float):
        return {"type": "number"}
    if annotation is str:
        return {"type": "string"}
    if get_origin(annotation) in (list, tuple, set, frozenset) or annotation in (list, tuple, set, frozenset):
        return {"type": "array"}
    if get_origin(annotation) is dict or annotation is dict:
        return {"type": "object"}
    return {}


def _schema_of(fn: Callable[..., Any]) -> JSONSchema:
    try:
        hints = get_type_hints(fn)
    except Exception:  # noqa: BLE001 (unresolvable hints: fall back to none)
        hints = {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for pname, param in inspect.signature(fn).parameters.items():
        if pname in _SKIP_NAMES or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(pname, param.annotation)
        properties[pname] = {} if annotation is inspect.Parameter.empty else _json_type(annotation)
        if param.default is inspect.Parameter.empty:
            required.append(pname)
    schema: JSONSchema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def _description_of(fn: Callable[..., Any]) -> str:
    doc = inspect.getdoc(fn)
    return doc.strip().splitlines()[0].strip() if doc else ""


def _ctx_param(fn: Callable[..., Any]) -> Optional[str]:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None
    return next((p for p in _CTX_NAMES if p in params), None)


def _make_tool(
    fn: Callable[..., Any],
    name: Optional[str],
    description: Optional[str],
    input_schema: Optional[JSONSchema],
    source: str,
) -> Tool:
    ctx_name = _ctx_param(fn)
    is_async = inspect.iscoroutinefunction(fn)

    async def execute(args: Optional[dict[str, Any]] = None, ctx: Optional[ToolContext] = None) -> ToolResult:
        kwargs = dict(args or {})
        if ctx_name is not None:
            kwargs[ctx_name] = ctx
        try:
            out = await fn(**kwargs) if is_async else await asyncio.to_thread(lambda: fn(**kwargs))
        except Exception as e:  # noqa: BLE001 (a failing tool is an error result)
            return ToolResult(output=str(e), is_error=True)
        if isinstance(out, ToolResult):
            return out
        if isinstance(out, str):
            return ToolResult(output=out, is_error=False)
        return ToolResult(output=json.dumps(out), is_error=False)

    return Tool(
        name=name or fn.__name__,
        description=description if description is not None else _description_of(fn),
        input_schema=input_schema if input_schema is not None else _schema_of(fn),
        source=source,  # type: ignore[arg-type]
        execute=execute,
    )


def define_tool(
    fn: Optional[Callable[..., Any]] = None,
    *,
    name: Optional[str] = None,
    description: Optional[str] = None,
    input_schema: Optional[JSONSchema] = None,
    source: str = "native",
) -> Union[Tool, Callable[[Callable[..., Any]], Tool]]:
    """Wraps a function as a :class:`Tool`: ``define_tool(fn, name=..., description=...)``, or as
    a decorator ``@define_tool(name=...)`` (the decorated name is then the Tool)."""
    if fn is not None:
        return _make_tool(fn, name, description, input_schema, source)
    return lambda f: _make_tool(f, name, description, input_schema, source)


def tool(
    fn: Optional[Callable[..., Any]] = None,
    *,
    name: Optional[str] = None,
    description: Optional[str] = None,
    input_schema: Optional[JSONSchema] = None,
) -> Union[Tool, Callable[[Callable[..., Any]], Tool]]:
    """Decorator form of :func:`define_tool` (``@tool`` or ``@tool(name=...)``)."""
    return define_tool(fn, name=name, description=description, input_schema=input_schema, source="native")
