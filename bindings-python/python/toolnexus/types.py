"""The shared data types and the suspension vocabulary.

``Request`` and ``Answer`` keys are wire keys, fixed across every language (``expiresAt``
stays camelCase here too). The vocabulary's behaviour (ids, output shapes, what makes an
Answer valid) is the engine's; these functions build the Python objects (``answer_declined``
checks its reason itself, to raise with the published package's exact message).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Literal, Optional

from . import _native

#: A JSON-Schema object: ``{"type": "object", "properties": {...}, ...}``.
JSONSchema = dict[str, Any]

#: Where a tool comes from. ``relay`` marks a declaration-only tool the host executes.
ToolSource = Literal["mcp", "skill", "native", "http", "builtin", "a2a", "custom", "relay"]

#: The state of an MCP server connection.
McpStatus = Literal["connected", "disabled", "failed"]


@dataclass
class ToolResult:
    """What a tool hands back: ``output`` is what the model sees, ``is_error`` whether the tool
    failed. ``metadata["pending"]`` holding a :class:`Request` makes the result a suspension.
    ``parts`` (images, files, audio: :mod:`toolnexus.content` parts or their dicts) go to the
    model beside ``output`` where its provider can take them, else as text placeholders."""

    output: str
    is_error: bool
    metadata: Optional[dict[str, Any]] = None
    parts: Optional[list[dict[str, Any]]] = None


@dataclass
class Request:
    """A suspension: what a tool is waiting for (a login, an approval, a typed reply, ...)."""

    id: str
    kind: str
    prompt: str
    url: Optional[str] = None
    data: Optional[dict[str, Any]] = None
    expiresAt: Optional[str] = None  # noqa: N815 (wire key)


@dataclass
class Answer:
    """The resolution of a :class:`Request`. The loop branches on ``ok`` alone; ``reason`` says
    why it is ``False`` (``declined`` | ``cancelled`` | ``expired``)."""

    id: str
    ok: bool
    data: Optional[dict[str, Any]] = None
    reason: Optional[Literal["declined", "cancelled", "expired"]] = None


@dataclass
class ToolContext:
    """What a tool learns about its call. ``answer`` is set only when the tool re-runs to consume
    the resolution of its own suspension; ``timeout`` is the run's time left, in seconds;
    ``signal`` is reserved for a cancellation token; ``call_id`` is the provider's id of this
    tool call, the same on the first run, the re-run with the answer and a durable resume: use
    it as the idempotency key of a side effect (``""`` when the tool is run directly)."""

    signal: Optional[Any] = None
    timeout: Optional[float] = None
    answer: Optional[Answer] = None
    call_id: str = ""


#: A tool's execute: ``async (args, ctx) -> ToolResult``.
ExecuteFn = Callable[..., Awaitable[ToolResult]]


@dataclass
class Tool:
    """A tool: its declaration and its async ``execute(args, ctx) -> ToolResult``."""

    name: str
    description: str
    input_schema: JSONSchema
    source: ToolSource
    execute: ExecuteFn = field(repr=False)


def sanitize(value: str) -> str:
    """Replaces every character outside ``[a-zA-Z0-9_-]`` with ``_``."""
    return _native.sanitize(value)


# --- wire forms -------------------------------------------------------------------------

def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def request_to_wire(r: Request) -> dict[str, Any]:
    return _drop_none({"id": r.id, "kind": r.kind, "prompt": r.prompt, "url": r.url, "data": r.data,
                       "expiresAt": r.expiresAt})


def request_from_wire(d: dict[str, Any]) -> Request:
    return Request(id=d["id"], kind=d["kind"], prompt=d["prompt"], url=d.get("url"), data=d.get("data"),
                   expiresAt=d.get("expiresAt"))


def answer_to_wire(a: Any) -> Optional[dict[str, Any]]:
    """An :class:`Answer` (or an answer-shaped dict) in its normal wire form; malformed is a ValueError."""
    if a is None:
        return None
    if isinstance(a, Answer):
        a = _drop_none({"id": a.id, "ok": a.ok, "data": a.data, "reason": a.reason})
    if not isinstance(a, dict):
        raise TypeError(f"toolnexus: an answer must be an Answer, a dict or None, got {type(a).__name__}")
    return _native.normalize_answer(a)


def answer_from_wire(d: dict[str, Any]) -> Answer:
    return Answer(id=d["id"], ok=d["ok"], data=d.get("data"), reason=d.get("reason"))


def _metadata_to_wire(m: Optional[dict[str, Any]]) -> Optional[dict[str, Any]]:
    if not m:
        return m
    out = dict(m)
    p = out.get("pending")
    if isinstance(p, Request):
        out["pending"] = request_to_wire(p)
    return out


def result_to_wire(r: ToolResult) -> dict[str, Any]:
    if not isinstance(r, ToolResult):
        raise TypeError(f"toolnexus: a tool must return a ToolResult, got {type(r).__name__}")
    wire: dict[str, Any] = {"output": r.output, "is_error": r.is_error, "metadata": _metadata_to_wire(r.metadata)}
    if r.parts:
        from .content import to_dict

        wire["parts"] = [to_dict(p) for p in r.parts]
    return wire


def result_from_wire(d: dict[str, Any]) -> ToolResult:
    meta = d.get("metadata")
    if meta and isinstance(meta.get("pending"), dict):
        meta = {**meta, "pending": request_from_wire(meta["pending"])}
    return ToolResult(output=d["output"], is_error=d["is_error"], metadata=meta, parts=d.get("parts"))


# --- the vocabulary ---------------------------------------------------------------------

def pending(
    *,
    kind: str,
    prompt: str,
    id: Optional[str] = None,  # noqa: A002 (wire key)
    url: Optional[str] = None,
    data: Optional[dict[str, Any]] = None,
    expiresAt: Optional[str] = None,  # noqa: N803 (wire key)
) -> ToolResult:
    """A suspension to return from a tool: an error result whose ``metadata["pending"]`` is the
    :class:`Request` (an id is generated when none is given; the output is the prompt, plus
    ``"\\n" + url`` when a url is given)."""
    return result_from_wire(_native.pending(kind, prompt, id, url, data, expiresAt))


def auth_required(url: str, prompt: Optional[str] = None) -> ToolResult:
    """An ``authorization`` suspension at a login ``url`` (prompt: "Authorization required to
    continue" when none is given)."""
    return result_from_wire(_native.auth_required(url, prompt))


def pending_of(result: ToolResult) -> Optional[Request]:
    """The :class:`Request` a result suspends on, if any."""
    if result.metadata is None:
        return None
    return result.metadata.get("pending")


def answer_output(id: str, output: str) -> Answer:  # noqa: A002 (wire key)
    """The Answer that supplies a reply: ``ok=True``, ``data={"output": output}``. A non-str
    ``output`` is a TypeError (never silently turned into text)."""
    if not isinstance(output, str):
        raise TypeError(f"toolnexus: Answer output must be a str, got {type(output).__name__}")
    return answer_from_wire(_native.answer_output(id, output))


def answer_declined(id: str, reason: str = "declined") -> Answer:  # noqa: A002 (wire key)
    """The Answer that refuses a request. ``reason`` is ``"declined"``, ``"cancelled"`` or
    ``"expired"``; anything else is a ValueError."""
    return answer_from_wire(_native.answer_declined(id, reason))
