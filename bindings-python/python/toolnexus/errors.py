"""The package's exceptions: one common base, one class per engine error kind.

The engine raises these from Rust (``src/error.rs`` maps each kind once). Where the published
API raises a builtin, the class also derives from it: a bad argument is a ``ValueError``, a
missing API key a ``RuntimeError``, a run deadline a ``TimeoutError``, a network failure a
``ConnectionError``. An exception raised by your own callback (a hook, ``wait_for``, a
transport) reaches you unchanged, never wrapped.
"""
from __future__ import annotations

from typing import Optional


class ToolnexusError(Exception):
    """Base of every error the engine raises. ``kind`` is the engine's stable kind name and
    ``code`` its stable number (the same in every language binding)."""

    kind: str = "internal"
    code: int = 10


class InvalidArgumentError(ToolnexusError, ValueError):
    """A value the engine cannot use: a bad option, a malformed Answer, a bad transcript."""

    kind, code = "invalid_argument", 1


class ConfigError(ToolnexusError, RuntimeError):
    """The client cannot run as configured (for example: no API key anywhere)."""

    kind, code = "config", 2


class ProviderError(ToolnexusError):
    """The provider answered with an HTTP error status.

    ``status`` is the HTTP status, ``body`` the provider's body with account identifiers and
    secrets redacted (empty for 401/403), ``retry_after`` the raw ``Retry-After`` header or
    None. ``text`` is an alias of ``body``. A custom ``HttpTransport`` raises it (with the raw
    body) to report a non-2xx answer; the engine then applies its retry rules.
    """

    kind, code = "http", 3

    def __init__(
        self,
        status: int,
        text: str = "",
        retry_after: Optional[str] = None,
        message: Optional[str] = None,
    ) -> None:
        super().__init__(message if message is not None else f"LLM {status}")
        self.status = status
        self.body = text
        self.text = text
        self.retry_after = retry_after


#: The name the published package used before ``ProviderError`` was public.
_HttpError = ProviderError


class NetworkError(ToolnexusError, ConnectionError):
    """The request never got an HTTP answer (connect, reset, per-request timeout), after retries."""

    kind, code = "network", 4


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
