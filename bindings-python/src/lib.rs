//! `toolnexus._native`: the private native module under the public `toolnexus` package.
//!
//! It only converts: Python values to the engine's types and back, Python callables to the
//! engine's host traits (`host.rs`), engine errors to the package's exceptions (`error.rs`).
//! The loop, the suspension rules and the wire formats are the engine's.

mod bridge;
mod client;
mod content;
mod convert;
mod error;
mod host;
mod http;
mod mcp;
mod memory;
mod metrics;
mod sources;
mod toolkit;
mod translate;
mod vocab;
mod wakeup;

use pyo3::prelude::*;

// The engine's mimalloc (DECISIONS.md, "The bindings allocate with mimalloc").
#[global_allocator]
static ALLOCATOR: engine::Allocator = engine::Allocator;

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ENGINE_VERSION", engine::VERSION)?;
    m.add("IN_PROCESS_BASE_URL", engine::IN_PROCESS_BASE_URL)?;
    m.add_class::<client::PyClient>()?;
    m.add_class::<metrics::PyMetricsRegistry>()?;
    m.add_class::<memory::PyStore>()?;
    for f in [
        wrap_pyfunction!(content::build_part, m)?,
        wrap_pyfunction!(content::validate_part, m)?,
        wrap_pyfunction!(content::normalize_parts, m)?,
        wrap_pyfunction!(content::encode_part, m)?,
        wrap_pyfunction!(content::summarize, m)?,
        wrap_pyfunction!(content::estimate_tokens, m)?,
        wrap_pyfunction!(content::describe_part, m)?,
        wrap_pyfunction!(content::placeholder_text, m)?,
        wrap_pyfunction!(content::is_part_dict, m)?,
        wrap_pyfunction!(content::decoded_len, m)?,
        wrap_pyfunction!(content::set_max_part_bytes, m)?,
        wrap_pyfunction!(content::get_max_part_bytes, m)?,
    ] {
        m.add_function(f)?;
    }
    let media: Vec<(&str, &str, &str)> = engine::content::MEDIA_TYPES.to_vec();
    m.add("MEDIA_TYPES", media)?;
    m.add_class::<bridge::RunTask>()?;
    m.add_class::<bridge::LoopWaker>()?;
    m.add_class::<toolkit::PyToolkit>()?;
    m.add_function(wrap_pyfunction!(bridge::_complete, m)?)?;
    m.add_function(wrap_pyfunction!(bridge::_fail, m)?)?;
    m.add_function(wrap_pyfunction!(bridge::_after_fork_child, m)?)?;
    m.add_function(wrap_pyfunction!(vocab::sanitize, m)?)?;
    m.add_function(wrap_pyfunction!(vocab::parse_retry_after, m)?)?;
    m.add_function(wrap_pyfunction!(vocab::auth_required, m)?)?;
    m.add_function(wrap_pyfunction!(vocab::relay_execute, m)?)?;
    m.add_function(wrap_pyfunction!(vocab::relay_calls_of, m)?)?;
    m.add_function(wrap_pyfunction!(vocab::empty_schema, m)?)?;
    m.add("RELAY_KIND", engine::relay::RELAY_KIND)?;
    m.add_function(wrap_pyfunction!(vocab::safe_error_body, m)?)?;
    m.add_function(wrap_pyfunction!(vocab::capped_error_body, m)?)?;
    m.add_function(wrap_pyfunction!(vocab::http_error_message, m)?)?;
    m.add("MAX_ERROR_BODY", engine::MAX_ERROR_BODY)?;
    m.add("REDACTED", engine::REDACTED)?;
    m.add("DEFAULT_RETRYABLE_STATUSES", engine::DEFAULT_RETRYABLE_STATUSES.to_vec())?;
    m.add("LIMIT_MAX_TURNS", engine::LIMIT_MAX_TURNS)?;
    m.add("RUN_STATUSES", engine::RunStatus::ALL.map(engine::RunStatus::as_str).to_vec())?;
    m.add_function(wrap_pyfunction!(vocab::pending, m)?)?;
    m.add_function(wrap_pyfunction!(vocab::answer_output, m)?)?;
    m.add_function(wrap_pyfunction!(vocab::answer_declined, m)?)?;
    m.add_function(wrap_pyfunction!(vocab::normalize_answer, m)?)?;
    m.add_function(wrap_pyfunction!(vocab::relay_answer_dict, m)?)?;
    m.add_function(wrap_pyfunction!(http::http_post, m)?)?;
    m.add_function(wrap_pyfunction!(translate::openai_messages_to_anthropic, m)?)?;
    m.add_function(wrap_pyfunction!(translate::openai_tools_to_anthropic, m)?)?;
    m.add_function(wrap_pyfunction!(translate::openai_tool_choice_to_anthropic, m)?)?;
    m.add_function(wrap_pyfunction!(translate::finish_reason_for, m)?)?;
    m.add_class::<sources::EngineTool>()?;
    m.add_class::<sources::HopStart>()?;
    m.add_function(wrap_pyfunction!(sources::create_builtin_tools, m)?)?;
    m.add_function(wrap_pyfunction!(sources::select_builtins, m)?)?;
    m.add_function(wrap_pyfunction!(sources::builtins_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(sources::builtin_shell, m)?)?;
    m.add("BUILTIN_TOOL_NAMES", engine::BUILTIN_TOOL_NAMES.to_vec())?;
    m.add_function(wrap_pyfunction!(sources::http_tool, m)?)?;
    m.add("DEFAULT_HTTP_TIMEOUT_MS", engine::DEFAULT_HTTP_TIMEOUT_MS)?;
    m.add("MCP_DEFAULT_TIMEOUT_MS", engine::mcp::DEFAULT_TIMEOUT_MS)?;
    m.add_function(wrap_pyfunction!(sources::expand_env_headers, m)?)?;
    m.add_function(wrap_pyfunction!(sources::load_skills, m)?)?;
    m.add_function(wrap_pyfunction!(sources::list_skills, m)?)?;
    m.add("SKILL_TOOL_DESCRIPTION", engine::skill::SKILL_TOOL_DESCRIPTION)?;
    m.add("SKILLS_PROMPT_PREAMBLE", engine::skill::SKILLS_PROMPT_PREAMBLE)?;
    m.add_function(wrap_pyfunction!(toolkit::create_toolkit, m)?)?;
    m.add_class::<mcp::PyMcpSource>()?;
    m.add_class::<mcp::PyMcpServer>()?;
    m.add_function(wrap_pyfunction!(mcp::load_mcp, m)?)?;
    m.add_function(wrap_pyfunction!(mcp::list_mcp_tools, m)?)?;
    m.add_function(wrap_pyfunction!(mcp::elicitation_request, m)?)?;
    m.add_function(wrap_pyfunction!(mcp::elicit_result, m)?)?;
    m.add_function(wrap_pyfunction!(mcp::serve, m)?)?;
    m.add_function(wrap_pyfunction!(mcp::parse_mcp_config, m)?)?;
    m.add_function(wrap_pyfunction!(mcp::exposed_tools, m)?)?;
    m.add("MCP_PATH", engine::mcp::MCP_PATH)?;
    Ok(())
}
