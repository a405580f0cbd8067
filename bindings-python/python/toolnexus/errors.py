"""The package's exceptions: one common base, one class per engine error kind.

The engine raises these from Rust (``src/error.rs`` maps each kind once). Where the published
API raises a builtin, the class also derives from it: a bad argument is a ``ValueError``, a
missing API key a ``RuntimeError``, a run deadline a ``TimeoutError``, a network failure a
``ConnectionError`` and a ``urllib.error.URLError``. An exception raised by your own callback
(a hook, ``wait_for``, a transport) reaches you unchanged, never wrapped.
"""
from __future__ import annotations

import urllib.error
import warnings
from typing import Any, Iterable, Optional

from . import _native


class ToolnexusError(Exception):
    """Base of every error the engine raises. ``kind`` is the engine's stable kind name and
    ``code`` its stable number (the same in every language binding)."""

    kind: str = "internal"
    code: int = 10


class InvalidArgumentError(ToolnexusError, ValueError, TypeError):
    """A value the engine cannot use: a bad option, a malformed Answer, a bad transcript. It is
    both a ``ValueError`` and a ``TypeError``: the engine's one kind covers what Python splits
    in two (a wrong value, a wrong type or argument), so either ``except`` catches it."""

    kind, code = "invalid_argument", 1


class ConfigError(ToolnexusError, RuntimeError):
    """The client cannot run as configured (for example: no API key anywhere)."""

    kind, code = "config", 2


class ProviderError(ToolnexusError):
    """The provider answered with an HTTP error status.

    ``ProviderError(status, text, retry_after)``, as in the published package: ``status`` is
    the HTTP status, ``body`` the provider's whole body with account identifiers redacted
    (empty for 401/403; the engine also redacts the API key and header secrets),
    ``retry_after`` the raw ``Retry-After`` header or None, and the message is
    ``"LLM <status>: <body capped at 200 characters>"``. ``text`` is an alias of ``body``. A
    custom ``HttpTransport`` raises it with the raw body to report a non-2xx answer: the engine
    retries it by its status and ``retry_after``, and re-raises that same object if it gives up,
    its ``body``, ``text`` and message scrubbed of the API key and header secrets.
    """

    kind, code = "http", 3

    def __init__(self, status: int, text: str, retry_after: Optional[str]) -> None:
        body = _native.safe_error_body(status, text or "")
        super().__init__(_native.http_error_message(status, text or ""))
        self.status = status
        self.body = body
        self.text = body
        self.retry_after = retry_after

    def __reduce__(self) -> Any:
        # The constructor takes the status and body, not the message that ``args`` holds.
        return (type(self), (self.status, self.body, self.retry_after), self.__dict__)


#: The name the published package used before ``ProviderError`` was public.
_HttpError = ProviderError

class NetworkError(ToolnexusError, ConnectionError, urllib.error.URLError):
    """The request never got an HTTP answer (connect, reset, per-request timeout), after
    retries. It is a ``urllib.error.URLError`` (what the published package raises there) and a
    ``ConnectionError``; ``reason`` is the message, and ``str()`` is the message itself."""

    kind, code = "network", 4

    def __init__(self, message: str = "") -> None:
        # ConnectionError's __init__ comes first in the MRO, so URLError's never sets `reason`.
        super().__init__(message)
        self.reason = message

    def __str__(self) -> str:
        # URLError would show "<urlopen error ...>"; the engine's message is already readable.
        return str(self.args[0]) if self.args else ""


class RunTimeout(ToolnexusError, TimeoutError):
    """The run exceeded ``timeout_ms``."""

    kind, code = "timeout", 5


class RunCancelled(ToolnexusError):
    """The run was cancelled (the ``cancel`` event was set, or the awaiting task was cancelled)."""

    kind, code = "cancelled", 6


class ProtocolError(ToolnexusError, ValueError):
    """The provider answered 2xx with a body the engine cannot read."""

    kind, code = "protocol", 7


class AnswerMismatchError(ToolnexusError, ValueError):
    """An Answer's id does not echo the pending Request's id."""

    kind, code = "answer_mismatch", 8


class HostError(ToolnexusError):
    """A host callback failed in a way that carried no exception of its own."""

    kind, code = "host", 9


class InternalError(ToolnexusError):
    """A bug in the engine. Please report it."""

    kind, code = "internal", 10


class ConflictError(ToolnexusError):
    """A conversation is in use by another run, or its pending request was already answered
    (a resume runs exactly once)."""

    kind, code = "conflict", 12


class StoreError(ToolnexusError, OSError):
    """The conversation store failed (I/O, a database that cannot be read)."""

    kind, code = "store", 13


class ContentPartError(ToolnexusError, ValueError):
    """A content part is malformed, or over the ``max_part_bytes`` limit."""

    kind, code = "content_part", 14


class UnsupportedPartError(ToolnexusError, ValueError):
    """The provider's style has no block for a content part (Anthropic has no audio, OpenAI no
    file by URL)."""

    kind, code = "unsupported_part", 15


class ToolnexusWarning(UserWarning):
    """Something the engine noticed that does not stop the call: an option this build does
    not implement yet, a ``request_params`` key it owns (dropped, as upstream does). Filter it
    like any warning (``warnings.simplefilter("ignore", ToolnexusWarning)``)."""


def _warn(found: Iterable[tuple[str, str]], stacklevel: int = 3) -> None:
    """Hands the engine's ``(code, message)`` warnings to :mod:`warnings`, attributed to the
    caller's line (so each shows once per place, as warnings do)."""
    for _code, message in found:
        warnings.warn(message, ToolnexusWarning, stacklevel=stacklevel + 1)
