//! The translator's pure mappings (SPEC §11), as `toolnexus.translate` offers them.

use pyo3::prelude::*;
use serde_json::Value;

use crate::convert::{from_py, to_py};
use crate::error;

/// OpenAI messages as `(anthropic_messages, system)`.
#[pyfunction]
pub fn openai_messages_to_anthropic<'py>(
    py: Python<'py>,
    messages: Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyAny>, String)> {
    let msgs = match from_py(&messages)? {
        Value::Array(a) => a,
        Value::Null => Vec::new(),
        _ => return Err(pyo3::exceptions::PyTypeError::new_err("toolnexus: messages must be a list")),
    };
    let (out, system) = error::map(py, engine::openai_messages_to_anthropic(&msgs))?;
    Ok((to_py(py, &Value::Array(out))?, system))
}

/// OpenAI tools as Anthropic declarations.
#[pyfunction]
pub fn openai_tools_to_anthropic<'py>(py: Python<'py>, tools: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let tools = match from_py(&tools)? {
        Value::Array(a) => a,
        _ => Vec::new(),
    };
    to_py(py, &Value::Array(engine::openai_tools_to_anthropic(&tools)))
}

/// OpenAI `tool_choice` in Anthropic's shape, or `None`.
#[pyfunction]
pub fn openai_tool_choice_to_anthropic<'py>(py: Python<'py>, choice: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    match engine::openai_tool_choice_to_anthropic(&from_py(&choice)?) {
        Some(v) => to_py(py, &v),
        None => Ok(py.None().into_bound(py)),
    }
}

/// The OpenAI finish reason for a provider stop reason (tool calls win).
#[pyfunction]
#[pyo3(signature = (has_tool_calls, provider_stop=None))]
pub fn finish_reason_for(has_tool_calls: bool, provider_stop: Option<&str>) -> &'static str {
    engine::finish_reason_for(has_tool_calls, provider_stop)
}
