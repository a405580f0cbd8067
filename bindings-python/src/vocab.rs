//! The suspension vocabulary and small engine helpers, as plain functions over dicts.

use engine::relay::{relay_answer, RelayResult};
use engine::{Answer, PendingSpec};
use pyo3::prelude::*;
use serde_json::Value;

use crate::convert::{from_py, to_py};
use crate::error;

/// `sanitize`: every character outside `[a-zA-Z0-9_-]` becomes `_`.
#[pyfunction]
pub fn sanitize(value: &str) -> String {
    engine::sanitize(value)
}

/// A provider's error body as it may be read (empty for 401/403, identifiers redacted).
#[pyfunction]
pub fn safe_error_body(status: u16, text: &str) -> String {
    engine::safe_error_body(status, text)
}

/// `safe_error_body` capped for a message.
#[pyfunction]
pub fn capped_error_body(status: u16, text: &str) -> String {
    engine::capped_error_body(status, text)
}

/// `LLM <status>: <capped body>`.
#[pyfunction]
pub fn http_error_message(status: u16, text: &str) -> String {
    engine::http_error_message(status, text)
}

/// The delay-seconds a `Retry-After` value asks for, or `None` (the engine backs off instead).
#[pyfunction]
pub fn parse_retry_after(value: Option<&str>) -> Option<u64> {
    engine::retry_after_seconds(value?)
}

/// The suspension ToolResult as a dict (`metadata.pending` is the Request dict).
#[pyfunction]
#[pyo3(signature = (kind, prompt, id=None, url=None, data=None, expires_at=None))]
pub fn pending<'py>(
    py: Python<'py>,
    kind: String,
    prompt: String,
    id: Option<String>,
    url: Option<String>,
    data: Option<Bound<'py, PyAny>>,
    expires_at: Option<String>,
) -> PyResult<Bound<'py, PyAny>> {
    let data = match data.map(|d| from_py(&d)).transpose()? {
        Some(Value::Object(m)) => Some(m),
        Some(Value::Null) | None => None,
        Some(_) => return Err(pyo3::exceptions::PyTypeError::new_err("toolnexus: pending data must be a dict")),
    };
    let r = engine::pending(PendingSpec { id, kind, prompt, url, data, expires_at });
    to_py(py, &serde_json::to_value(r).unwrap_or(Value::Null))
}

/// The Answer dict that supplies a reply.
#[pyfunction]
pub fn answer_output<'py>(py: Python<'py>, id: &str, output: &str) -> PyResult<Bound<'py, PyAny>> {
    to_py(py, &engine::answer_output(id, output).to_json())
}

/// The Answer dict that refuses a request.
#[pyfunction]
pub fn answer_declined<'py>(py: Python<'py>, id: &str, reason: &str) -> PyResult<Bound<'py, PyAny>> {
    let reason = error::map(py, reason.parse::<engine::Reason>())?;
    to_py(py, &engine::answer_declined(id, reason.as_str()).to_json())
}

/// The `authorization` suspension at `url` (the engine's default prompt when `prompt` is None).
#[pyfunction]
#[pyo3(signature = (url, prompt=None))]
pub fn auth_required<'py>(py: Python<'py>, url: &str, prompt: Option<&str>) -> PyResult<Bound<'py, PyAny>> {
    to_py(py, &serde_json::to_value(engine::auth_required(url, prompt)).unwrap_or(Value::Null))
}

/// What a relay tool does when run directly: the suspension for this call, or with an answer
/// the result the model would read (as a ToolResult dict).
#[pyfunction]
#[pyo3(signature = (name, args, call_id, answer=None))]
pub fn relay_execute<'py>(
    py: Python<'py>,
    name: &str,
    args: Bound<'py, PyAny>,
    call_id: &str,
    answer: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let answer = match answer.map(|a| from_py(&a)).transpose()? {
        Some(Value::Null) | None => None,
        Some(v) => Some(error::map(py, Answer::from_json(&v))?),
    };
    let r = engine::relay::relay_execute(name, &from_py(&args)?, call_id, answer.as_ref());
    to_py(py, &serde_json::to_value(r).unwrap_or(Value::Null))
}

/// The relayed calls of a Request dict, in call order (empty for any other Request).
#[pyfunction]
pub fn relay_calls_of<'py>(py: Python<'py>, request: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let calls = match engine::Request::from_json(&from_py(&request)?) {
        Ok(r) => engine::relay::relay_calls_of(&r),
        Err(_) => Vec::new(),
    };
    to_py(py, &serde_json::to_value(calls).unwrap_or(Value::Null))
}

/// The schema of a tool that declares none.
#[pyfunction]
pub fn empty_schema<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
    to_py(py, &engine::empty_schema())
}

/// An Answer read from any dict a host holds, in its normal form (ValueError when malformed).
#[pyfunction]
pub fn normalize_answer<'py>(py: Python<'py>, answer: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let a = error::map(py, Answer::from_json(&from_py(&answer)?))?;
    to_py(py, &a.to_json())
}

/// The relay Answer dict: one `{id, output, isError}` per relayed call.
#[pyfunction]
pub fn relay_answer_dict<'py>(
    py: Python<'py>,
    request_id: &str,
    results: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let results: Vec<RelayResult> = serde_json::from_value(from_py(&results)?).map_err(|e| {
        pyo3::exceptions::PyValueError::new_err(format!(
            "toolnexus: relay results must be [{{id, output, isError}}]: {e}"
        ))
    })?;
    to_py(py, &relay_answer(request_id, &results).to_json())
}
