//! Content parts: the engine's rules (`toolnexus::content`) over part dicts, for
//! `toolnexus.content`.

use engine::content::{self, PartSource};
use engine::Style;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serde_json::Value;

use crate::convert::{from_py, to_py};
use crate::error;

fn part_of(part: &Bound<'_, PyAny>) -> PyResult<Value> {
    from_py(part)
}

/// Makes a `kind` part from `source`: bytes, a string (a path, a `data:` or `http(s)://`
/// URL), or `(bytes, name)` for what a file-like object read.
#[pyfunction]
#[pyo3(signature = (kind, source, mime_type=None, name=None, max_part_bytes=None))]
pub fn build_part<'py>(
    py: Python<'py>,
    kind: &str,
    source: &Bound<'py, PyAny>,
    mime_type: Option<&str>,
    name: Option<&str>,
    max_part_bytes: Option<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let source = if let Ok(b) = source.cast::<PyBytes>() {
        PartSource::Bytes(b.as_bytes().to_vec())
    } else if let Ok(s) = source.extract::<String>() {
        PartSource::Text(s)
    } else {
        let (bytes, handle): (Vec<u8>, Option<String>) = source.extract()?;
        PartSource::Read { bytes, name: handle }
    };
    let part = error::map(py, py.detach(|| content::build_part(kind, source, mime_type, name, max_part_bytes)))?;
    to_py(py, &part)
}

/// Checks a part dict.
#[pyfunction]
pub fn validate_part(py: Python<'_>, part: &Bound<'_, PyAny>) -> PyResult<()> {
    error::map(py, content::validate(&part_of(part)?))
}

/// A prompt's items (part dicts or strings) checked, in canonical form.
#[pyfunction]
pub fn normalize_parts<'py>(py: Python<'py>, items: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let Value::Array(items) = from_py(items)? else {
        return Err(pyo3::exceptions::PyTypeError::new_err("toolnexus: parts must be a list"));
    };
    to_py(py, &Value::Array(error::map(py, content::normalize_parts(&items))?))
}

/// A part dict as a `style` block.
#[pyfunction]
pub fn encode_part<'py>(py: Python<'py>, part: &Bound<'py, PyAny>, style: &str) -> PyResult<Bound<'py, PyAny>> {
    let style = error::map(py, Style::parse(style))?;
    to_py(py, &error::map(py, content::encode_part(&part_of(part)?, style))?)
}

/// `{type, mimeType, bytes}`.
#[pyfunction]
pub fn summarize<'py>(py: Python<'py>, part: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    to_py(py, &content::summarize(&part_of(part)?))
}

/// The tokens a part counts as.
#[pyfunction]
pub fn estimate_tokens(part: &Bound<'_, PyAny>) -> PyResult<u64> {
    Ok(content::estimate_tokens(&part_of(part)?))
}

/// `<type> (<mimeType>, <bytes> bytes)`.
#[pyfunction]
pub fn describe_part(part: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(content::describe_part(&part_of(part)?))
}

/// `[unsupported <type> part (<mimeType>, <bytes> bytes)]`.
#[pyfunction]
pub fn placeholder_text(part: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(content::placeholder_text(&part_of(part)?))
}

/// Whether a value is a part dict in the canonical form.
#[pyfunction]
pub fn is_part_dict(part: &Bound<'_, PyAny>) -> bool {
    part_of(part).is_ok_and(|v| content::is_part(&v))
}

/// The decoded length of standard base64.
#[pyfunction]
pub fn decoded_len(b64: Option<&str>) -> u64 {
    b64.map_or(0, content::decoded_len)
}

/// Sets the process-wide part size limit (`None`: none).
#[pyfunction]
#[pyo3(signature = (limit))]
pub fn set_max_part_bytes(limit: Option<u64>) {
    content::set_max_part_bytes(limit);
}

/// The process-wide part size limit.
#[pyfunction]
pub fn get_max_part_bytes() -> Option<u64> {
    content::max_part_bytes()
}
