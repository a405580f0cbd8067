"""Content parts: images, files and audio beside text, in prompts (``client.run([text("look"),
image("shot.png")])``) and in tool results (``ToolResult(..., parts=[...])``).

A part is a flat record, :class:`ContentPart`, whose dict form (``to_dict``) is what
transcripts, stores and the engine hold: ``{"type", "text"?, "mimeType"?, "data"?, "url"?,
"name"?}``. A non-text part carries a ``mimeType`` and exactly one of ``data`` (base64) or
``url``, never a path: the constructors read files at once. Every rule (the MIME table,
validation, the size limit, each provider's block shapes) is the engine's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal, Optional, Protocol, Union

from . import _native
from .errors import ContentPartError, UnsupportedPartError  # noqa: F401 (re-exported)

PartType = Literal["text", "image", "file", "audio"]
ContentStyle = Literal["openai", "anthropic"]

#: Extension → (MIME type, part type): the only MIME types a part gets without being told.
MEDIA_TYPES: dict[str, tuple[str, str]] = {ext: (mime, kind) for ext, mime, kind in _native.MEDIA_TYPES}


@dataclass
class ContentPart:
    """One part. ``mimeType`` keeps the wire's spelling."""

    type: str
    text: Optional[str] = None
    mimeType: Optional[str] = None  # noqa: N815 (the wire key)
    data: Optional[str] = None
    url: Optional[str] = None
    name: Optional[str] = None


class BinaryReadable(Protocol):
    def read(self) -> bytes: ...


PartSource = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, BinaryReadable]


def to_dict(p: Any) -> dict[str, Any]:
    """The part's dict form, only the keys it carries."""
    if isinstance(p, dict):
        return dict(p)
    if isinstance(p, str):
        return {"type": "text", "text": p}
    if not isinstance(p, ContentPart):
        raise ContentPartError(f"not a content part: {type(p).__name__}")
    if p.type == "text":
        return {"type": "text", "text": p.text or ""}
    d: dict[str, Any] = {"type": p.type, "mimeType": p.mimeType}
    if p.data is not None:
        d["data"] = p.data
    if p.url is not None:
        d["url"] = p.url
    if p.name:
        d["name"] = p.name
    return d


def from_dict(d: dict[str, Any]) -> ContentPart:
    """A part from its dict form (unchecked: see :func:`validate`)."""
    return ContentPart(
        type=str(d.get("type") or ""), text=d.get("text"), mimeType=d.get("mimeType"),
        data=d.get("data"), url=d.get("url"), name=d.get("name"),
    )


def text(value: str) -> ContentPart:
    """A text part."""
    return ContentPart(type="text", text=value)


def _source(source: Any) -> Any:
    """What the engine reads: bytes, a string, or what a file-like object read and its name."""
    if isinstance(source, os.PathLike):
        return os.fspath(source)
    if isinstance(source, (bytearray, memoryview)):
        return bytes(source)
    if isinstance(source, (str, bytes)):
        return source
    read = getattr(source, "read", None)
    if not callable(read):
        raise ContentPartError("a content part needs a path, bytes, or a URL")
    raw = read()
    if isinstance(raw, (bytearray, memoryview)):
        raw = bytes(raw)
    if not isinstance(raw, bytes):
        raise ContentPartError(
            "a file-like content part source must be opened in binary mode — its read() returned "
            f"{type(raw).__name__}, not bytes"
        )
    name = getattr(source, "name", None)
    name = os.fspath(name) if isinstance(name, os.PathLike) else name
    return (raw, name if isinstance(name, str) else None)


def _build(kind: str, source: PartSource, mime_type: Optional[str], name: Optional[str],
           max_part_bytes: Optional[int]) -> ContentPart:
    return from_dict(_native.build_part(kind, _source(source), mime_type, name, max_part_bytes))


def image(source: PartSource, *, mime_type: Optional[str] = None, name: Optional[str] = None,
          max_part_bytes: Optional[int] = None) -> ContentPart:
    """An image part from a path, bytes (with ``mime_type``), a binary file-like object, a
    base64 ``data:`` URL or an ``http(s)://`` URL (kept as a URL)."""
    return _build("image", source, mime_type, name, max_part_bytes)


def file(source: PartSource, *, mime_type: Optional[str] = None, name: Optional[str] = None,  # noqa: A001
         max_part_bytes: Optional[int] = None) -> ContentPart:
    """A file part (a PDF, say), from what :func:`image` takes."""
    return _build("file", source, mime_type, name, max_part_bytes)


def audio(source: PartSource, *, mime_type: Optional[str] = None, name: Optional[str] = None,
          max_part_bytes: Optional[int] = None) -> ContentPart:
    """An audio part, from what :func:`image` takes."""
    return _build("audio", source, mime_type, name, max_part_bytes)


def part(*, type: str, mimeType: Optional[str] = None, data: Optional[str] = None,  # noqa: A002,N803
         url: Optional[str] = None, name: Optional[str] = None, text: Optional[str] = None) -> ContentPart:
    """A part from its fields, checked."""
    p = ContentPart(type=type, text=text, mimeType=mimeType, data=data, url=url, name=name)
    return validate(p)


def validate(p: ContentPart) -> ContentPart:
    """``p``, or :class:`ContentPartError` saying what is wrong with it."""
    _native.validate_part(to_dict(p))
    return p


def is_part_dict(d: Any) -> bool:
    """Whether ``d`` is a part's dict form (a provider's own block is not)."""
    return isinstance(d, dict) and _native.is_part_dict(d)


def normalize_parts(parts: Any) -> list[dict[str, Any]]:
    """Prompt items (parts, their dicts or strings) checked, as dicts, in order."""
    return _native.normalize_parts([to_dict(p) for p in parts])


def encode_part(p: Any, style: ContentStyle) -> dict[str, Any]:
    """``p`` as the ``style`` provider's content block, or :class:`UnsupportedPartError`."""
    return _native.encode_part(to_dict(p), style)


def summarize(p: Any) -> dict[str, Any]:
    """``{"type", "mimeType", "bytes"}``: what may be said of a part, never its data."""
    return _native.summarize(to_dict(p))


def estimate_tokens(p: Any) -> int:
    """The tokens a part counts as: text ``max(1, len / 4)``, media ``max(85, bytes / 750)``."""
    return _native.estimate_tokens(to_dict(p))


def describe_part(p: Any) -> str:
    """``<type> (<mimeType>, <bytes> bytes)``."""
    return _native.describe_part(to_dict(p))


def placeholder_text(p: Any, style: Optional[ContentStyle] = None) -> str:
    """What a model is sent for a part it cannot take."""
    return _native.placeholder_text(to_dict(p))


def decoded_len(b64: Optional[str]) -> int:
    """The decoded length of standard base64, without decoding it."""
    return _native.decoded_len(b64)


def set_max_part_bytes(limit: Optional[int]) -> None:
    """The process-wide part size limit in decoded bytes (``None``: none); a client's own
    ``max_part_bytes`` wins over it."""
    _native.set_max_part_bytes(limit)


def get_max_part_bytes() -> Optional[int]:
    """The process-wide part size limit."""
    return _native.get_max_part_bytes()
