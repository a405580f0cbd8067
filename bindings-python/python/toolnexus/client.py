"""The client: drives a model through the tool-calling loop (the engine's), with the published
package's options, results and exceptions.

``await client.run(prompt, toolkit)`` runs the loop in the engine's own threads; your tools,
``wait_for``, hooks and transport are called back on your event loop, and the GIL is released
while the engine waits on the network. A tool that suspends (see :func:`~toolnexus.pending`)
is resolved inline by ``wait_for``, or halts the run with ``status == "pending"``;
:meth:`Client.run_with_answer` resumes it, possibly in another process.
"""
from __future__ import annotations

import asyncio
import collections
import inspect
import json
import os
from dataclasses import dataclass, field
from typing import Any, AsyncGenerator, Callable, Iterable, Literal, Optional, Protocol, TypedDict, Union

from . import _bridge, _native, content
from .memory import (
    Conversation, ConversationStore, InMemoryConversationStore, _engine_store, _native_of,
)
from .errors import InvalidArgumentError, ProviderError, RunCancelled, RunTimeout, _HttpError, _warn  # noqa: F401 (re-exported)
from .toolkit import Toolkit
from .translate import TranslateResult, result_from_json
from .types import Answer, Request, answer_to_wire, request_from_wire, request_to_wire

ClientStyle = Literal["openai", "anthropic"]

#: What to do with a failed model call.
ErrorTier = Literal["retry", "fail"]

#: Resolves a suspension inline: ``(request) -> Answer | None``, sync or async.
WaitFor = Callable[[Request], Any]

#: An object or a mapping with any of ``before_llm``, ``after_llm``, ``before_tool``,
#: ``after_tool`` (each sync or async):
#: ``before_llm({"messages", "tools", "model", "turn"})`` may return ``{"messages"?, "tools"?, "model"?}``;
#: ``after_llm({"response", "model", "turn"})`` observes;
#: ``before_tool({"name", "args", "id", "turn"})`` may return ``{"result": ToolResult}`` to skip
#: the tool (a suspension included) or ``{"args": {...}}`` to rewrite them;
#: ``after_tool({"name", "args", "result", "id", "turn"})`` may return ``{"result": ToolResult}``.
Hooks = Any

#: A metric event (SPEC §8), one of:
#: ``{"event": "llm", "model", "status": "ok" | "error", "ms", "prompt_tokens", "completion_tokens"}``
#: (one per model call, its retries included);
#: ``{"event": "tool", "tool", "source", "is_error", "ms", "pending"?}`` (one per tool execution;
#: ``pending`` is ``True`` when the tool suspended, which is never an error);
#: ``{"event": "run", "model", "turns", "tool_calls", "total_tokens", "ms", "error"?}`` (one per
#: run, last). ``ms`` is a float.
MetricEvent = dict[str, Any]
#: ``on_metric(event)``: called synchronously, in order, on the run's event loop. It cannot
#: fail the run: what it raises goes to ``sys.unraisablehook``.
OnMetric = Callable[[MetricEvent], None]

#: The cumulative Prometheus registry behind :meth:`Client.metrics`: ``record(event)`` folds in
#: a :data:`MetricEvent` (a bad one raises :class:`~toolnexus.errors.InvalidArgumentError`),
#: ``render()`` returns the text exposition.
MetricsRegistry = _native.MetricsRegistry


class ErrorInfo(TypedDict, total=False):
    """One failed model call, as ``on_error`` sees it: ``status`` on an HTTP error, ``error``
    (the exception: a :class:`~toolnexus.errors.NetworkError`, or the one your transport
    raised) on a network error, the zero-based ``attempt``, and ``retryable``."""

    error: Any
    status: int
    attempt: int
    retryable: bool


#: ``on_error(info) -> "retry" | "fail"``: anything but ``"fail"`` retries, always bounded by
#: ``retries``.
ErrorClassifier = Callable[[ErrorInfo], ErrorTier]


class HttpTransport(Protocol):
    """A host transport for the model requests: ``post`` returns the parsed JSON body and
    raises :class:`ProviderError` for a non-2xx answer (retried by its status and
    ``retry_after``); an ``OSError`` (``URLError``, ``ConnectionError``, ``TimeoutError``) is a
    network error (retried); anything else ends the run. When the run gives up, it raises
    that exception object itself (a ``ProviderError`` with the API key and header secrets
    scrubbed from its body and message). ``headers`` are ``Authorization`` (or ``x-api-key`` and
    ``anthropic-version``), ``Content-Type`` and your own, named as you gave them. It may be
    sync (run in a worker thread) or async."""

    def post(self, url: str, headers: dict[str, str], payload: dict[str, Any], timeout: float) -> dict[str, Any]: ...

    def open(self, url: str, headers: dict[str, str], payload: dict[str, Any], timeout: float) -> Any: ...  # noqa: A003


#: What replaces a redacted value in an error body.
REDACTED: str = _native.REDACTED
#: The longest body excerpt an error message shows (the whole redacted body stays on the error).
MAX_ERROR_BODY: int = _native.MAX_ERROR_BODY
#: The statuses retried by default (``retryable_statuses`` adds to them, never removes).
_RETRYABLE: frozenset[int] = frozenset(_native.DEFAULT_RETRYABLE_STATUSES)
#: How a run ends: ``RunResult.status``.
RUN_STATUS_DONE, RUN_STATUS_PENDING, RUN_STATUS_INCOMPLETE = _native.RUN_STATUSES
RUN_STATUSES: tuple[str, ...] = tuple(_native.RUN_STATUSES)
#: ``RunResult.limit`` when ``max_turns`` stopped a run.
LIMIT_MAX_TURNS: str = _native.LIMIT_MAX_TURNS


def safe_error_body(status: int, text: str) -> str:
    """A provider's error body as it may be read: empty for 401/403 (gateways reflect the
    credential there), otherwise the whole body with account-identifier values replaced by
    :data:`REDACTED`; never capped."""
    return _native.safe_error_body(status, text)


def capped_error_body(status: int, text: str) -> str:
    """:func:`safe_error_body` capped at :data:`MAX_ERROR_BODY` characters (plus an ellipsis):
    the form an error message shows."""
    return _native.capped_error_body(status, text)


def _parse_retry_after(value: Optional[str]) -> Optional[int]:
    """The delay-seconds a ``Retry-After`` value asks for (``0`` is "now"), or None for any
    other form (dates, fractions, signs): the engine's rule, for code written against the
    published package's private helper."""
    return _native.parse_retry_after(value)


def _post(url: str, headers: dict[str, str], payload: dict[str, Any], timeout: float) -> dict[str, Any]:
    """One blocking JSON POST through the engine's own HTTP client: the parsed body, or a
    :class:`ProviderError` for a non-2xx answer. The published package's tests replace this
    module attribute to fake the model; a client whose transport is the default then sends
    its requests through the replacement (looked up at each run, so patching it costs the
    default path nothing)."""
    status, text, retry_after = _native.http_post(url, list(headers.items()), json.dumps(payload), timeout)
    if not 200 <= status < 300:
        raise ProviderError(status, text, retry_after)
    return json.loads(text)


_DEFAULT_POST = _post


class _ReplacedPost:
    """The transport of a default client while ``toolnexus.client._post`` is replaced."""

    def post(self, url: str, headers: dict[str, str], payload: dict[str, Any], timeout: float) -> dict[str, Any]:
        return _post(url, headers, payload, timeout)


class UrllibTransport:
    """The default transport: the engine's own pooled keep-alive HTTP client (the GIL is
    released while it waits). Passing one as ``http_transport`` is the same as passing none."""

    def post(self, url: str, headers: dict[str, str], payload: dict[str, Any], timeout: float) -> dict[str, Any]:
        return _post(url, headers, payload, timeout)

    def open(self, url: str, headers: dict[str, str], payload: dict[str, Any], timeout: float) -> Any:  # noqa: A003
        # A client on this transport streams through the engine's own client, never here.
        raise NotImplementedError("toolnexus: UrllibTransport streams inside the engine; open() is not called")


def _empty_usage() -> dict[str, int]:
    return {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}


@dataclass
class RunResult:
    """The outcome of a run. ``status`` is ``done``, ``pending`` (a tool suspended and no
    ``wait_for`` was set: see ``pending``) or ``incomplete`` (``limit`` names what stopped it)."""

    text: str
    messages: list[dict[str, Any]]
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    tool_call_count: int = 0
    turns: int = 0
    usage: dict[str, int] = field(default_factory=_empty_usage)
    model: str = ""
    status: Literal["done", "pending", "incomplete"] = "done"
    limit: Optional[str] = None
    pending: Optional[Request] = None


def _run_result(d: dict[str, Any]) -> RunResult:
    p = d.get("pending")
    return RunResult(
        text=d["text"],
        messages=d["messages"],
        tool_calls=d["tool_calls"],
        tool_call_count=d["tool_call_count"],
        turns=d["turns"],
        usage=d["usage"],
        model=d["model"],
        status=d["status"],
        limit=d.get("limit"),
        pending=request_from_wire(p) if p else None,
    )


def _prompt(prompt: Union[str, list[Any]]) -> Union[str, list[dict[str, Any]]]:
    """A prompt for the engine: a string, or its parts as dicts (the engine checks them)."""
    if isinstance(prompt, str):
        return prompt
    return [content.to_dict(p) for p in prompt]


class Client:
    """A model client. Every option of the published package is accepted, and read by the
    engine: a bad value is an :class:`~toolnexus.errors.InvalidArgumentError` naming it.
    Options left out take the engine's defaults: ``max_turns`` 10, ``retries`` 2,
    ``retry_base_ms`` 500, ``max_retry_after_ms`` 60000 (a longer ``Retry-After`` ends the run
    with its :class:`ProviderError`, whose ``retry_after`` you can schedule by), no
    ``timeout_ms``. ``on_metric`` receives each :data:`MetricEvent`; :meth:`metrics` renders
    them all as Prometheus text. ``store`` is where :meth:`ask` remembers conversations: any
    :class:`ConversationStore`, a path (a :class:`SqliteConversationStore`) or a ``postgres://``
    URL (a :class:`PostgresConversationStore`); an
    :class:`InMemoryConversationStore` of the client's own when left out.
    ``max_part_bytes`` caps each content part sent (decoded bytes; else the process-wide
    :func:`~toolnexus.content.set_max_part_bytes`); ``on_unsupported_part`` (``"error"`` or
    ``"text"``) says what a part the provider cannot take becomes: by default a prompt's own
    part fails the run and a tool's is sent as a text placeholder, said once on stderr."""

    def __init__(
        self,
        *,
        base_url: Optional[str] = None,
        style: Optional[ClientStyle] = None,
        model: str,
        api_key: Optional[str] = None,
        headers: Optional[dict[str, str]] = None,
        system_prompt: Optional[str] = None,
        max_turns: Optional[int] = None,
        hooks: Hooks = None,
        retries: Optional[int] = None,
        retry_base_ms: Optional[float] = None,
        retryable_statuses: Optional[Iterable[int]] = None,
        timeout_ms: Optional[float] = None,
        store: Union[ConversationStore, str, "os.PathLike[str]", None] = None,
        on_metric: Optional[OnMetric] = None,
        wait_for: Optional[WaitFor] = None,
        request_params: Optional[dict[str, Any]] = None,
        body_transform: Optional[Callable[[dict[str, Any]], Optional[dict[str, Any]]]] = None,
        http_transport: Optional[HttpTransport] = None,
        on_error: Optional[ErrorClassifier] = None,
        on_unsupported_part: Optional[Literal["error", "text"]] = None,
        max_part_bytes: Optional[int] = None,
        max_retry_after_ms: Optional[float] = None,
        _generate: Optional[Callable[[dict[str, Any]], Any]] = None,
    ) -> None:
        # ``_generate``: the model of a client made by :func:`create_in_process_client`.
        self.base_url = base_url if _generate is None else _native.IN_PROCESS_BASE_URL
        self.style = style if _generate is None else "openai"
        self.model = model
        self.api_key = api_key
        self.headers = headers or {}
        self.system_prompt = system_prompt
        self.max_turns = max_turns
        self.hooks = hooks
        self.retries = retries
        self.retry_base_ms = retry_base_ms
        self.retryable_statuses = frozenset(retryable_statuses) if retryable_statuses is not None else None
        self.timeout_ms = timeout_ms
        self.store = store
        self.on_metric = on_metric
        self.wait_for = wait_for
        self.request_params = request_params
        self.body_transform = body_transform
        self.on_error = on_error
        self.on_unsupported_part = on_unsupported_part
        self.max_part_bytes = max_part_bytes
        self.max_retry_after_ms = max_retry_after_ms
        self._transport = http_transport if http_transport is not None else UrllibTransport()
        given = {
            "base_url": base_url, "style": style, "model": model, "api_key": api_key, "headers": headers,
            "system_prompt": system_prompt, "max_turns": max_turns, "retries": retries,
            "retry_base_ms": retry_base_ms, "max_retry_after_ms": max_retry_after_ms,
            "retryable_statuses": list(retryable_statuses) if retryable_statuses is not None else None,
            "timeout_ms": timeout_ms, "request_params": request_params,
            # A path is the engine's to open; a store object is handed over below.
            "store": os.fspath(store) if isinstance(store, (str, os.PathLike)) else None,
            "on_unsupported_part": on_unsupported_part, "max_part_bytes": max_part_bytes,
        }
        options = {k: v for k, v in given.items() if v is not None}
        transport = None if type(self._transport) is UrllibTransport else self._transport
        if _generate is not None:
            # Host objects the engine refuses for an in-process client: it is told they were given.
            refused = {"http_transport": http_transport, "on_error": on_error}
            options.update({k: True for k, v in refused.items() if v is not None})
            transport = None
        self._native = _native.Client(
            options, wait_for, hooks, on_error, body_transform, transport, on_metric, _generate,
            None if store is None or "store" in options else _native_of(store),
        )
        _warn(self._native.warnings)
        # The engine's transport is used as long as ``_post`` is the package's own; a client
        # made for a replaced ``_post`` is built on first need (it counts into the same metrics).
        # An in-process client has its own transport: ``_post`` never reaches it.
        self._default_transport = transport is None and _generate is None
        self._native_replaced: Optional[_native.Client] = None

    def _engine_client(self) -> _native.Client:
        if not self._default_transport or _post is _DEFAULT_POST:
            return self._native
        if self._native_replaced is None:
            self._native_replaced = self._native.with_transport(_ReplacedPost())
        return self._native_replaced

    def metrics(self) -> str:
        """Every run's metrics so far as Prometheus text (SPEC §8), the same bytes upstream's
        ports render; HELP and TYPE lines only before the first run."""
        return self._native.metrics()

    @property
    def conversation_store(self) -> ConversationStore:
        """The client's store: the one given as ``store``, else its own
        :class:`InMemoryConversationStore`. Reading and writing it is what :meth:`ask` sees."""
        store = self.store
        if store is None:
            store = InMemoryConversationStore._of(self._native.conversation_store())
        elif isinstance(store, (str, os.PathLike)):
            store = _engine_store(self._native.conversation_store(), os.fspath(store))
        self.store = store
        return store

    async def ask(
        self,
        prompt: Union[str, list[Any]],
        toolkit: Optional[Toolkit] = None,
        *,
        id: Optional[str] = None,  # noqa: A002 (upstream's name)
        on_text: Optional[Callable[[str], Any]] = None,
        cancel: Optional[asyncio.Event] = None,
    ) -> RunResult:
        """Runs ``prompt`` as the next turn of conversation ``id``: the store supplies the
        history and keeps the result (a run that halts waits there for
        :meth:`ask_with_answer`). Without ``id`` it is :meth:`run`. ``on_text(delta)`` (sync
        or async) streams the model's text as it arrives; the result is returned either way.
        A conversation another run is using raises :class:`~toolnexus.errors.ConflictError`."""
        if on_text is None:
            return await self._start(toolkit, cancel, _prompt(prompt), None, id=id or None)
        result: Optional[RunResult] = None
        async for ev in self.stream(prompt, toolkit, id=id, cancel=cancel):
            if ev["type"] == "text":
                r = on_text(ev["delta"])
                if inspect.isawaitable(r):
                    await r
            elif ev["type"] == "done":
                result = ev["result"]
        assert result is not None  # the stream ends with done or raises
        return result

    async def ask_with_answer(
        self,
        toolkit: Optional[Toolkit],
        id: str,  # noqa: A002 (upstream's name)
        pending: Optional[Request],
        answer: Answer,
        cancel: Optional[asyncio.Event] = None,
    ) -> RunResult:
        """Resumes conversation ``id``, halted on ``pending``, with ``answer``, loading and
        saving through the store, so a run halted in one process resumes in another by id.
        ``pending`` may be ``None`` with the engine's stores (they record it). A resume runs
        once: a second one, or another answer to the same request, raises
        :class:`~toolnexus.errors.ConflictError`; a resume that died midway is picked up by
        the next one with the same answer."""
        req = request_to_wire(pending) if isinstance(pending, Request) else pending
        return await self._start(toolkit, cancel, None, None, req, answer_to_wire(answer), id=id)

    def conversation(self, toolkit: Optional[Toolkit] = None, cancel: Optional[asyncio.Event] = None) -> Conversation:
        """A conversation that remembers its own transcript across :meth:`Conversation.send`."""
        return Conversation(self, toolkit, cancel)

    async def _start(
        self,
        toolkit: Optional[Toolkit],
        cancel: Optional[asyncio.Event],
        prompt: Union[str, list[dict[str, Any]], None],
        history: Optional[list[dict[str, Any]]],
        pending: Optional[dict[str, Any]] = None,
        answer: Optional[dict[str, Any]] = None,
        on_event: Optional[Callable[[dict[str, Any]], None]] = None,
        id: Optional[str] = None,  # noqa: A002
    ) -> RunResult:
        native_tk = toolkit._native if toolkit is not None else None
        if history is not None and not isinstance(history, list):
            history = list(history)
        raw = await _bridge.drive(
            lambda waker, fut: self._engine_client().start(
                waker, fut, native_tk, prompt, history or None, pending, answer, cancel, on_event, id,
            ),
            cancel,
        )
        kept, result = json.loads(raw)
        if kept:
            result["messages"][:0] = (history or [])[:kept]
        return _run_result(result)

    async def run(
        self,
        prompt: Union[str, list[Any]],
        toolkit: Optional[Toolkit] = None,
        history: Optional[list[dict[str, Any]]] = None,
        cancel: Optional[asyncio.Event] = None,
    ) -> RunResult:
        """Runs the loop on ``prompt``. ``history`` continues a prior transcript (the system
        prompt is not added again); setting ``cancel`` (an ``asyncio.Event``) aborts the run with
        :class:`RunCancelled`, its in-flight request included; ``timeout_ms`` raises
        :class:`RunTimeout`. Without a toolkit the run is a plain completion."""
        return await self._start(toolkit, cancel, _prompt(prompt), history)

    async def stream(
        self,
        prompt: Union[str, list[Any]],
        toolkit: Optional[Toolkit] = None,
        *,
        id: Optional[str] = None,  # noqa: A002 (upstream's name)
        cancel: Optional[asyncio.Event] = None,
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Runs the loop on ``prompt`` as :meth:`run` does, streaming: yields each step as it
        happens: ``{"type": "text", "delta"}`` as the model's text arrives, ``{"type":
        "tool_call", "id", "name", "args"}``, ``{"type": "pending", "request"}`` (a
        :class:`Request`, before ``wait_for`` is asked, or the one the run halts on),
        ``{"type": "tool_result", "id", "name", "output", "is_error"}``, ``{"type": "usage",
        "usage"}``, and last ``{"type": "done", "result"}`` (the :class:`RunResult`). A failed
        run raises from the iteration. With ``id`` the stream is the next turn of that stored
        conversation, as :meth:`ask` is."""
        # Events arrive on this loop's thread, in bursts (a turn's tool calls, results and
        # usage at once): the reader drains them all per wake instead of one wait per event.
        events: collections.deque[dict[str, Any]] = collections.deque()
        wake: Optional[asyncio.Future[None]] = None

        def rouse(*_: Any) -> None:
            if wake is not None and not wake.done():
                wake.set_result(None)

        def on_event(ev: dict[str, Any]) -> None:
            if ev["type"] == "pending":
                ev["request"] = request_from_wire(ev["request"])
            events.append(ev)
            rouse()

        run = asyncio.ensure_future(self._start(toolkit, cancel, _prompt(prompt), None, on_event=on_event, id=id or None))
        run.add_done_callback(rouse)
        loop = asyncio.get_running_loop()
        try:
            while True:
                while events:
                    yield events.popleft()
                if run.done():
                    break
                wake = loop.create_future()
                await wake
            yield {"type": "done", "result": run.result()}
        finally:
            if not run.done():
                run.cancel()

    async def translate(
        self,
        messages: list[Any],
        *,
        tools: Optional[list[Any]] = None,
        toolkit: Optional[Toolkit] = None,
        tool_choice: Any = None,
        system: Optional[str] = None,
        max_tokens: int = 0,
        cancel: Optional[asyncio.Event] = None,
    ) -> TranslateResult:
        """One turn as a translator (SPEC §11): exactly one provider call, no loop, no tool
        runs, no state. ``messages``, ``tools`` and ``tool_choice`` are OpenAI-shaped and taken
        verbatim (converted for an Anthropic provider); ``toolkit``'s tools are declared first
        and never run. ``system`` replaces the system prompt; ``max_tokens`` 0 keeps the
        default. Retries, ``request_params``, ``body_transform``, ``before_llm``/``after_llm``
        (once) and the ``llm`` metric apply as in a run; ``timeout_ms`` and ``cancel`` bound it."""
        # As given: the engine checks every value.
        request: dict[str, Any] = {"messages": messages if messages is not None else []}
        if tools is not None:
            request["tools"] = tools
        if tool_choice is not None:
            request["tool_choice"] = tool_choice
        if system is not None:
            request["system"] = system
        if max_tokens:
            request["max_tokens"] = max_tokens
        native_tk = toolkit._native if toolkit is not None else None
        raw = await _bridge.drive(
            lambda waker, fut: self._engine_client().translate(waker, fut, native_tk, request, cancel), cancel
        )
        return result_from_json(raw)

    async def run_with_answer(
        self,
        toolkit: Optional[Toolkit],
        history: list[dict[str, Any]],
        pending: Request,
        answer: Answer,
        cancel: Optional[asyncio.Event] = None,
    ) -> RunResult:
        """Resumes a run that halted with ``status == "pending"``: ``history`` is its
        ``messages``, ``pending`` its Request, ``answer`` the resolution (its id must echo the
        Request's, else :class:`~toolnexus.errors.AnswerMismatchError`). The suspended tool re-runs
        with ``ctx.answer``; relay calls take their results from the answer; no new user turn."""
        req = request_to_wire(pending) if isinstance(pending, Request) else pending
        return await self._start(toolkit, cancel, None, history, req, answer_to_wire(answer))


def create_in_process_client(*, model: str, generate: Callable[[dict[str, Any]], Any], **options: Any) -> Client:
    """A client whose model runs in this process: no URL, no key, no socket. ``generate(request)``
    sees ``{"messages", "tools", "model", "body"}`` (the assembled OpenAI request) and returns one
    assistant message: ``{"content": ...}`` ends the turn, ``{"tool_calls": [{"name",
    "arguments"}]}`` asks for tools (``arguments`` a dict or a JSON string; ``id`` optional),
    ``usage`` is optional. It may be sync (run on a worker thread) or async. The loop, hooks,
    metrics and suspensions work as with any client; what ``generate`` raises ends the run at
    once (``retries`` defaults to 0). ``options`` are :func:`create_client`'s without
    ``base_url``, ``api_key``, ``style`` and ``http_transport`` (each refused: there is no wire)."""
    if not callable(generate):
        raise TypeError("toolnexus: create_in_process_client requires a callable `generate`")
    return Client(model=model, _generate=generate, **options)


def create_client(
    *,
    base_url: str,
    style: ClientStyle,
    model: str,
    api_key: Optional[str] = None,
    headers: Optional[dict[str, str]] = None,
    system_prompt: Optional[str] = None,
    max_turns: Optional[int] = None,
    hooks: Hooks = None,
    retries: Optional[int] = None,
    retry_base_ms: Optional[float] = None,
    retryable_statuses: Optional[Iterable[int]] = None,
    timeout_ms: Optional[float] = None,
    store: Optional[ConversationStore] = None,
    on_metric: Optional[OnMetric] = None,
    wait_for: Optional[WaitFor] = None,
    request_params: Optional[dict[str, Any]] = None,
    body_transform: Optional[Callable[[dict[str, Any]], Optional[dict[str, Any]]]] = None,
    http_transport: Optional[HttpTransport] = None,
    on_error: Optional[ErrorClassifier] = None,
    on_unsupported_part: Optional[Literal["error", "text"]] = None,
    max_part_bytes: Optional[int] = None,
    max_retry_after_ms: Optional[float] = None,
) -> Client:
    """Makes a :class:`Client` (the same options)."""
    return Client(
        base_url=base_url, style=style, model=model, api_key=api_key, headers=headers,
        system_prompt=system_prompt, max_turns=max_turns, hooks=hooks, retries=retries,
        retry_base_ms=retry_base_ms, retryable_statuses=retryable_statuses, timeout_ms=timeout_ms,
        store=store, on_metric=on_metric, wait_for=wait_for, request_params=request_params,
        body_transform=body_transform, http_transport=http_transport, on_error=on_error,
        on_unsupported_part=on_unsupported_part, max_part_bytes=max_part_bytes,
        max_retry_after_ms=max_retry_after_ms,
    )
