"""toolnexus: drive any LLM through the tool-calling loop, with suspension (Request/Answer).

The same API as the published pure-Python ``toolnexus`` package, over one engine written in
Rust (``toolnexus._native``). See the README for what this build covers.
"""
from __future__ import annotations

import os as _os

from . import _native
from .adapters import to_anthropic, to_gemini, to_openai
from .client import (
    Client,
    ClientStyle,
    ConversationStore,
    ErrorClassifier,
    ErrorInfo,
    ErrorTier,
    Hooks,
    HttpTransport,
    MetricEvent,
    OnMetric,
    RunResult,
    UrllibTransport,
    WaitFor,
    create_client,
    create_in_process_client,
)
from .content import (
    MEDIA_TYPES, ContentPart, audio, encode_part, estimate_tokens, file, get_max_part_bytes, image, part,
    set_max_part_bytes, summarize, text,
)
from .memory import (
    Conversation, InMemoryConversationStore, PendingRun, PostgresConversationStore, SqliteConversationStore,
)
from .errors import (
    AnswerMismatchError,
    ConfigError,
    ConflictError,
    ContentPartError,
    HostError,
    InternalError,
    InvalidArgumentError,
    NetworkError,
    ProtocolError,
    ProviderError,
    RunCancelled,
    RunTimeout,
    StoreError,
    ToolnexusError,
    UnsupportedPartError,
    ToolnexusWarning,
)
from .builtin import BuiltinsConfig, builtin_shell, builtins_enabled, create_builtin_tools, select_builtins
from .http import DEFAULT_TIMEOUT as HTTP_DEFAULT_TIMEOUT
from .http import http_tool
from .mcp_serve import MCPServeConfig, OnCall, ServeHandle, exposed_mcp_tools
from .mcp_source import (
    DEFAULT_TIMEOUT,
    ElicitResult,
    McpConfig,
    McpInventory,
    McpSource,
    ServerConfig,
    ToolInfo,
    answer_to_elicit_result,
    elicitation_to_request,
    expand_env_headers,
    list_mcp_tools,
    load_mcp,
    load_mcp_with_context,
    parse_mcp_config,
)
from .native import define_tool, tool
from .relay import RelayCall, RelayResult, is_relay_request, relay_answer, relay_calls_of, relay_tool
from .skill import (
    SKILL_TOOL_DESCRIPTION,
    SKILLS_PROMPT_PREAMBLE,
    SkillDef,
    SkillInfo,
    SkillInventory,
    SkillProvider,
    SkillSkip,
    SkillSource,
    list_skills,
    load_skills,
)
from .toolkit import Toolkit, create_toolkit
from .translate import TranslatedToolCall, TranslateResult
from .types import (
    Answer,
    JSONSchema,
    McpStatus,
    Request,
    Tool,
    ToolContext,
    ToolResult,
    ToolSource,
    answer_declined,
    answer_output,
    auth_required,
    pending,
    pending_of,
    sanitize,
)

__version__ = "0.21.0"
#: The version of the Rust engine underneath.
ENGINE_VERSION: str = _native.ENGINE_VERSION

# A forked child cannot use the parent's engine threads: it starts its own on first use.
_os.register_at_fork(after_in_child=_native._after_fork_child)

__all__ = [
    "BuiltinsConfig", "DEFAULT_TIMEOUT", "ElicitResult", "HTTP_DEFAULT_TIMEOUT", "MCPServeConfig", "McpConfig",
    "McpInventory", "McpSource", "OnCall", "SKILLS_PROMPT_PREAMBLE", "SKILL_TOOL_DESCRIPTION", "ServeHandle",
    "ServerConfig", "SkillDef", "SkillInfo", "SkillInventory", "SkillProvider", "SkillSkip", "SkillSource",
    "ToolInfo", "answer_to_elicit_result", "builtin_shell", "builtins_enabled", "create_builtin_tools",
    "elicitation_to_request", "expand_env_headers", "exposed_mcp_tools", "http_tool", "list_mcp_tools",
    "list_skills", "load_mcp", "load_mcp_with_context", "parse_mcp_config", "load_skills", "select_builtins",
    "Answer", "AnswerMismatchError", "Client", "ClientStyle", "ConfigError", "ConflictError", "ContentPart", "ContentPartError", "Conversation", "ConversationStore",
    "ENGINE_VERSION", "ErrorClassifier", "ErrorInfo", "ErrorTier", "HostError", "Hooks", "HttpTransport",
    "InMemoryConversationStore", "MEDIA_TYPES", "InternalError", "InvalidArgumentError", "JSONSchema", "McpStatus", "MetricEvent", "NetworkError", "OnMetric",
    "PendingRun", "PostgresConversationStore", "ProtocolError", "ProviderError", "RelayCall", "RelayResult", "Request", "RunCancelled", "RunResult",
    "RunTimeout", "SqliteConversationStore", "StoreError", "Tool", "ToolContext", "ToolResult", "ToolSource", "Toolkit", "ToolnexusError",
    "ToolnexusWarning", "TranslateResult", "UnsupportedPartError", "audio", "encode_part", "estimate_tokens", "file",
    "get_max_part_bytes", "image", "part", "set_max_part_bytes", "summarize", "text", "TranslatedToolCall", "UrllibTransport", "WaitFor", "answer_declined", "answer_output", "auth_required", "create_client",
    "create_in_process_client", "create_toolkit", "define_tool", "is_relay_request", "pending", "pending_of", "relay_answer",
    "relay_calls_of", "relay_tool", "sanitize", "to_anthropic", "to_gemini", "to_openai", "tool",
]
