"""Single-turn translation (SPEC §11): ``Client.translate`` sends one OpenAI-shaped turn to the
client's provider and returns the answer in the OpenAI shape, running no tool and keeping no
state. The mappings themselves are the engine's; this module holds the result types and the
mapping functions upstream's package offers."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

from . import _native


@dataclass
class TranslatedToolCall:
    """One tool call the model asked for, in the OpenAI shape."""

    #: The id the caller echoes on its ``tool`` result message.
    id: str
    #: The function name.
    name: str
    #: The arguments as a JSON string (the OpenAI wire form).
    arguments: str


@dataclass
class TranslateResult:
    """One translated turn."""

    #: The assistant text (``""`` when the model only called tools).
    text: str = ""
    #: The tool calls, in the provider's order.
    tool_calls: list[TranslatedToolCall] = field(default_factory=list)
    #: ``stop``, ``tool_calls``, ``length`` or ``content_filter``.
    finish_reason: str = "stop"
    #: This call's ``prompt_tokens``, ``completion_tokens`` and ``total_tokens``.
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0})
    #: The model the call sent.
    model: str = ""
    #: The provider's decoded response.
    raw: Optional[dict[str, Any]] = None

    def tool_calls_json(self) -> list[dict[str, Any]]:
        """The tool calls as an OpenAI ``tool_calls`` array, for an assistant message."""
        return [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in self.tool_calls
        ]


def result_from_json(text: str) -> TranslateResult:
    """The engine's result JSON as a :class:`TranslateResult`."""
    d = json.loads(text)
    return TranslateResult(
        text=d["text"],
        tool_calls=[TranslatedToolCall(c["id"], c["name"], c["arguments"]) for c in d["tool_calls"]],
        finish_reason=d["finish_reason"],
        usage=d["usage"],
        model=d["model"],
        raw=d["raw"] if isinstance(d["raw"], dict) else None,
    )


def openai_messages_to_anthropic(messages: list[Any]) -> tuple[list[dict[str, Any]], str]:
    """OpenAI ``messages`` as ``(anthropic_messages, system)``: tool calls become ``tool_use``
    blocks, consecutive ``tool`` results one user turn, system and developer messages the
    system text."""
    return _native.openai_messages_to_anthropic(messages)


def openai_tools_to_anthropic(tools: Optional[list[Any]]) -> list[dict[str, Any]]:
    """OpenAI ``tools`` as Anthropic declarations (native entries pass, unknown ones are skipped)."""
    return _native.openai_tools_to_anthropic(tools or [])


def openai_tool_choice_to_anthropic(choice: Any) -> Optional[dict[str, Any]]:
    """OpenAI ``tool_choice`` in Anthropic's shape; ``None`` for ``auto``, absent or unknown."""
    return _native.openai_tool_choice_to_anthropic(choice)


def finish_reason_for(has_tool_calls: bool, provider_stop: Optional[str] = None) -> str:
    """The OpenAI finish reason for a provider stop reason: any tool call makes it ``tool_calls``."""
    return _native.finish_reason_for(has_tool_calls, provider_stop)
