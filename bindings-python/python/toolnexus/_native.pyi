"""Type stubs of the private native module (checked against it with mypy.stubtest)."""
from typing import Any, Optional, Sequence, final


__all__ = [
    "Client", "ENGINE_VERSION", "LoopWaker", "RunHandle", "Toolkit", "_after_fork_child", "_complete", "_fail", "answer_declined",
    "answer_output", "capped_error_body", "http_error_message", "http_post", "normalize_answer",
    "parse_retry_after", "pending", "relay_answer_dict", "safe_error_body", "sanitize",
    "DEFAULT_RETRYABLE_STATUSES", "LIMIT_MAX_TURNS", "MAX_ERROR_BODY", "REDACTED", "RUN_STATUSES",
]

ENGINE_VERSION: str

@final
class LoopWaker:
    def __new__(cls, event_loop: Any) -> LoopWaker: ...
    def _ready(self) -> None: ...

@final
class RunHandle:
    def cancel(self) -> None: ...

@final
class Toolkit:
    def __new__(cls, specs: Sequence[tuple[str, str, Any, str, Any]]) -> Toolkit: ...
    def names(self) -> list[str]: ...
    def declarations(self, style: str) -> Any: ...
    def execute(self, waker: LoopWaker, future: Any, name: str, args: Any, answer: Any) -> RunHandle: ...

@final
class Client:
    @property
    def warnings(self) -> list[tuple[str, str]]: ...
    def __new__(
        cls,
        options: dict[str, Any],
        wait_for: Optional[Any],
        hooks: Optional[tuple[Optional[Any], Optional[Any], Optional[Any], Optional[Any]]],
        on_error: Optional[Any],
        body_transform: Optional[Any],
        transport: Optional[Any],
    ) -> Client: ...
    def start(
        self,
        waker: LoopWaker,
        future: Any,
        toolkit: Optional[Toolkit],
        prompt: Optional[str],
        history: Optional[list[dict[str, Any]]],
        pending: Optional[Any],
        answer: Optional[Any],
        cancel: Optional[Any],
    ) -> RunHandle: ...

def _complete(token: int, value: Any) -> None: ...
def _fail(token: int, exc: BaseException) -> None: ...
def _after_fork_child() -> None: ...
def sanitize(value: str) -> str: ...
def parse_retry_after(value: Optional[str]) -> Optional[int]: ...
def safe_error_body(status: int, text: str) -> str: ...
def capped_error_body(status: int, text: str) -> str: ...
def http_error_message(status: int, text: str) -> str: ...

MAX_ERROR_BODY: int
REDACTED: str
DEFAULT_RETRYABLE_STATUSES: list[int]
LIMIT_MAX_TURNS: str
RUN_STATUSES: list[str]
def pending(
    kind: str,
    prompt: str,
    id: Optional[str] = None,
    url: Optional[str] = None,
    data: Optional[Any] = None,
    expires_at: Optional[str] = None,
) -> Any: ...
def answer_output(id: str, output: str) -> Any: ...
def answer_declined(id: str, reason: str) -> Any: ...
def normalize_answer(answer: Any) -> Any: ...
def relay_answer_dict(request_id: str, results: Any) -> Any: ...
def http_post(url: str, headers: list[tuple[str, str]], body: str, timeout: float) -> tuple[int, str, Optional[str]]: ...
