"""Conversation memory: where ``Client.ask(id=...)`` keeps each conversation between runs, and
where a halted run (``status == "pending"``) waits until ``Client.ask_with_answer`` resumes it,
in this process or another.

Any object with ``get(id)`` and ``save(id, messages)`` (sync or async) is a store. The engine's
own, :class:`InMemoryConversationStore` (the default) and :class:`SqliteConversationStore`
(one file, shared by the processes of a machine) and :class:`PostgresConversationStore` (for
fleets), also record what a run waits on and hold a
conversation while a run uses it: a second run of it, or a second answer to a request already
answered, raises :class:`~toolnexus.errors.ConflictError`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Optional, Protocol, TypedDict, Union

from . import _native
from ._native import ConversationStore as _NativeStore
from .types import Request, request_from_wire

if TYPE_CHECKING:
    import asyncio

    from .client import Client, RunResult
    from .toolkit import Toolkit


class ConversationStore(Protocol):
    """Where ``ask()`` conversations are remembered: two methods, sync or async."""

    async def get(self, id: str) -> Optional[list[dict[str, Any]]]: ...  # noqa: A002

    async def save(self, id: str, messages: list[dict[str, Any]]) -> None: ...  # noqa: A002


class PendingRun(TypedDict):
    """A conversation waiting on a request (:meth:`InMemoryConversationStore.pending_runs`)."""

    id: str
    request: Request
    since_ms: int


class _EngineStore:
    """A store the engine keeps; ``get`` and ``save`` hand out and take copies."""

    _native: _NativeStore

    async def get(self, id: str) -> Optional[list[dict[str, Any]]]:  # noqa: A002
        """The transcript stored for ``id``, or ``None``."""
        return self._native.get(id)

    async def save(self, id: str, messages: list[dict[str, Any]]) -> None:  # noqa: A002
        """Stores ``messages`` as the transcript of ``id`` (a pending request it had is dropped)."""
        self._native.save(id, list(messages))

    @classmethod
    def _of(cls, native: _NativeStore, **attrs: Any) -> Any:
        store = cls.__new__(cls)
        store._native = native
        store.__dict__.update(attrs)
        return store

    async def pending_runs(self) -> list[PendingRun]:
        """Every conversation waiting on a request, oldest first: ``{"id", "request",
        "since_ms"}`` (milliseconds since the epoch), enough to build an approvals queue on."""
        runs = self._native.pending_runs()
        for r in runs:
            r["request"] = request_from_wire(r["request"])
        return runs


class InMemoryConversationStore(_EngineStore):
    """The default store: conversations in memory, for the life of the store."""

    def __init__(self) -> None:
        self._native = _native.ConversationStore.memory()


class SqliteConversationStore(_EngineStore):
    """Conversations in one SQLite file (created when missing; ``":memory:"`` is private).
    Processes of one machine may share it: a run holds its conversation with a lock the
    system drops if the process dies. ``Client(store=path)`` makes one too."""

    def __init__(self, path: Union[str, "os.PathLike[str]"]) -> None:
        self.path = os.fspath(path)
        self._native = _native.ConversationStore.sqlite(self.path)


class PostgresConversationStore(_EngineStore):
    """Conversations in a PostgreSQL database (``postgres://user:pass@host:port/db``), for runs
    shared by many machines; the table is made on first use. A run holds its conversation with
    a lock the database drops if the process dies. ``Client(store=url)`` makes one too."""

    def __init__(self, url: str) -> None:
        self._native = _native.ConversationStore.postgres(url)


def _engine_store(native: _NativeStore, spec: str) -> _EngineStore:
    """The package's class for the engine store the client opened from ``spec``."""
    if native.kind == "postgres":
        return PostgresConversationStore._of(native)
    return SqliteConversationStore._of(native, path=spec)


def _native_of(store: Any) -> Any:
    """What the engine is given for ``store``: its own store, or the host's object (a path is
    given to the engine as an option, which opens it)."""
    return store._native if isinstance(store, _EngineStore) else store


class Conversation:
    """A multi-turn conversation the object itself remembers: each :meth:`send` continues
    ``messages`` (which you may read, replace or clear)."""

    def __init__(
        self, client: "Client", toolkit: Optional["Toolkit"] = None, cancel: Optional["asyncio.Event"] = None
    ) -> None:
        self._client = client
        self._toolkit = toolkit
        self._cancel = cancel
        #: The whole transcript so far (system, user, assistant and tool messages).
        self.messages: list[dict[str, Any]] = []

    async def send(self, prompt: Union[str, list[Any]]) -> "RunResult":
        """Runs ``prompt`` as the next user turn; the result's messages become ``messages``
        (a failed run leaves them as they were)."""
        result = await self._client.run(prompt, self._toolkit, history=self.messages, cancel=self._cancel)
        self.messages = result.messages
        return result

    def reset(self) -> None:
        """Forgets the conversation."""
        self.messages = []
