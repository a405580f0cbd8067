//! # toolnexus
//!
//! The engine behind every toolnexus binding: it drives any LLM with an OpenAI-style
//! (`/chat/completions`) or Anthropic-style (`/messages`) API through the tool-calling loop:
//! call the model, run the tools it asks for, feed the results back, repeat.
//!
//! A tool may *suspend* instead of answering: it returns a pending [`Request`] (see
//! [`pending`]). With a [`WaitFor`] configured the host resolves it inline and the tool
//! re-runs once with [`ToolContext::answer`]; without one the run halts with status
//! `pending`, and [`Client::run_with_answer`] resumes it later, possibly in another process.
//!
//! ```no_run
//! # async fn demo() -> toolnexus::Result<()> {
//! use toolnexus::{Client, ClientOptions, Style, Tool, ToolResult, Toolkit};
//! use serde_json::json;
//!
//! let add = Tool::from_sync("add", "Add two numbers.", json!({"type": "object"}), |args, _ctx| {
//!     let sum = args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0);
//!     Ok(ToolResult::ok(sum.to_string()))
//! });
//! let toolkit = Toolkit::new(vec![add])?;
//! let client = Client::new(ClientOptions::new("https://api.openai.com/v1", Style::OpenAi, "gpt-4o-mini"))?;
//! let result = client.run("What is 2+2?", Some(&toolkit)).await?;
//! println!("{}", result.text);
//! # Ok(()) }
//! ```

#[cfg(feature = "mimalloc")]
mod allocator;
mod answer;
mod builtin;
mod client;
pub mod content;
mod error;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod hooks;
mod http_tool;
mod json_read;
mod json_same;
mod json_scan;
mod json_write;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod memory;
pub mod metrics;
mod pid;
mod pystr;
mod redact;
pub mod relay;
pub mod scripted;
pub mod skill;
mod spec_json;
mod tool;
mod toolkit;
mod transport;
mod types;
mod warning;

#[cfg(feature = "mimalloc")]
pub use allocator::Allocator;
pub use answer::{
    answer_approved, answer_declined, answer_output, answer_output_of, auth_required, new_request_id, pending,
    pending_of, suspend, PendingSpec, Reason, AUTH_REQUIRED_PROMPT,
};
pub use builtin::{builtin_shell, builtin_tools, builtins_enabled, create_builtin_tools, BuiltinsSpec};
pub use client::{
    finish_reason_for, in_process_envelope, in_process_refused, openai_messages_to_anthropic,
    openai_tool_choice_to_anthropic, openai_tools_to_anthropic, retry_after_seconds, Client, ClientOptions,
    Conversation, InProcessModel, InProcessTransport, OnStreamEvent, OnWarning, RunInput, StreamEvent, StreamTo, Style,
    TranslateRequest, TranslateResult, TranslatedToolCall, UnsupportedPart, CLIENT_OPTION_KEYS,
    DEFAULT_MAX_RETRY_AFTER_MS, DEFAULT_RETRYABLE_STATUSES, IN_PROCESS_BASE_URL, IN_PROCESS_REFUSED,
    TRANSLATE_REQUEST_KEYS,
};
pub use error::{Error, ErrorKind, HostError, HttpErrorDetail, Result};
pub use hooks::{
    AfterLlmEvent, AfterToolEvent, BeforeLlmEvent, BeforeToolEvent, BodyTransform, ErrorInfo, HookFuture, HookName,
    HookSet, HookTable, Hooks, JsonHooks, JsonHooksAdapter, LlmOverride, OnError, Tier, ToolOverride, WaitFor,
};
pub use http_tool::{
    expand_env_headers, expand_env_headers_json, http_tool, BodyMode, HttpToolSpec, ResultMode,
    DEFAULT_HTTP_TIMEOUT_MS, HTTP_TOOL_KEYS,
};
pub use json_read::{parse_json, parse_json_member};
pub use pid::process_id;
pub use redact::{capped_error_body, http_error_message, safe_error_body, MAX_ERROR_BODY, REDACTED};
pub use skill::{
    list_skills, list_skills_now, load_skills, load_skills_now, SkillCatalog, SkillDef, SkillInfo, SkillInventory,
    SkillOrigin, SkillProvider, SkillSkip, SkillsSpec, SkipReason, SKILLS_SPEC_KEYS,
};
pub use spec_json::camel_case;
pub use tokio_util::sync::CancellationToken;
pub use tool::{empty_schema, sanitize, Tool, ToolHandler, ToolSource};
pub use toolkit::{
    Declarations, DuplicateNames, Toolkit, ToolkitHost, ToolkitSpec, BUILTIN_TOOL_NAMES, TOOLKIT_SPEC_KEYS,
};
pub use transport::{BodySink, Http1Transport, HttpRequest, HttpResponse, Transport};
pub use types::{
    Answer, JsonObject, Request, RunResult, RunStatus, ToolCallRecord, ToolContext, ToolResult, Usage, LIMIT_MAX_TURNS,
};

pub use warning::{Parsed, Warning};

/// The version of this crate.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
