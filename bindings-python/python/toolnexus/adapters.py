"""Provider declarations for a list of tools (the engine's adapters)."""
from __future__ import annotations

from typing import Any

from .toolkit import Toolkit
from .types import Tool


def to_openai(tools: list[Tool]) -> list[dict[str, Any]]:
    """OpenAI declarations: ``{type: "function", function: {name, description, parameters}}``."""
    return Toolkit(tools).to_openai()


def to_anthropic(tools: list[Tool]) -> list[dict[str, Any]]:
    """Anthropic declarations: ``{name, description, input_schema}``."""
    return Toolkit(tools).to_anthropic()


def to_gemini(tools: list[Tool]) -> list[dict[str, Any]]:
    """Gemini declarations: ``[{functionDeclarations: [{name, description, parameters}]}]``."""
    return Toolkit(tools).to_gemini()
