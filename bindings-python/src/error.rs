//! The one place core errors become Python exceptions, and host exceptions travel through the
//! core unchanged. The exception classes are the package's own, defined in Python
//! (`toolnexus/errors.py`), so they can be caught, subclassed and pickled like any other.

use engine::{Error, ErrorKind};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// A host exception carried through the core as `Error::Host`, re-raised unchanged.
pub struct PyHostError {
    pub err: PyErr,
    message: String,
}

impl PyHostError {
    /// Wraps `err`, keeping `str(err)` for messages the core builds from it (tool error results).
    pub fn wrap(py: Python<'_>, err: PyErr) -> Error {
        let message = err.value(py).str().map(|s| s.to_string()).unwrap_or_else(|_| "host error".into());
        Error::host(Box::new(PyHostError { err, message }))
    }
}

impl std::fmt::Display for PyHostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::fmt::Debug for PyHostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PyHostError({})", self.message)
    }
}

impl std::error::Error for PyHostError {}

/// The name of the `toolnexus.errors` class for a kind.
fn class_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidArgument => "InvalidArgumentError",
        ErrorKind::Config => "ConfigError",
        ErrorKind::Http => "ProviderError",
        ErrorKind::Network => "NetworkError",
        ErrorKind::Timeout => "RunTimeout",
        ErrorKind::Cancelled => "RunCancelled",
        ErrorKind::Protocol => "ProtocolError",
        ErrorKind::AnswerMismatch => "AnswerMismatchError",
        ErrorKind::Host => "HostError",
        ErrorKind::Internal | ErrorKind::Reentrant => "InternalError",
        ErrorKind::Conflict => "ConflictError",
        ErrorKind::Store => "StoreError",
        ErrorKind::ContentPart => "ContentPartError",
        ErrorKind::UnsupportedPart => "UnsupportedPartError",
    }
}

/// The Python exception for a core error: the host's own exception when it came from one.
pub fn to_py_err(py: Python<'_>, e: Error) -> PyErr {
    // Whatever its kind, an error that carries a host exception re-raises that exception.
    if e.host_source().is_some_and(|s| s.is::<PyHostError>()) {
        // A ProviderError the host's transport raised: the same object, but with the texts
        // the engine scrubbed of the API key and header secrets (a gateway may echo them).
        let scrubbed = e.http_detail().map(|d| (d.body.clone(), e.message().to_string()));
        if let Some(src) = e.into_host_source() {
            if let Ok(host) = src.downcast::<PyHostError>() {
                if let Some((body, message)) = scrubbed {
                    // An exception type without these attributes keeps what it has.
                    let _ = set_http_texts(host.err.value(py).as_any(), &body, &message);
                }
                return host.err;
            }
        }
        return PyErr::new::<pyo3::exceptions::PyRuntimeError, _>("host error");
    }
    match build(py, &e) {
        Ok(err) => err,
        Err(fallback) => fallback,
    }
}

fn build(py: Python<'_>, e: &Error) -> PyResult<PyErr> {
    let module = py.import("toolnexus.errors")?;
    let kind = e.kind();
    let class = module.getattr(class_name(kind))?;
    let exc = match (kind, e.http_detail()) {
        (ErrorKind::Http, Some(d)) => {
            let exc = class.call1((d.status, d.body.clone(), d.retry_after.clone()))?;
            // The body is redacted already (the engine also knows the key and header secrets):
            // the engine's body and message stand, not the constructor's second redaction.
            set_http_texts(&exc, &d.body, e.message())?;
            exc
        }
        _ => class.call1(PyTuple::new(py, [e.message()])?)?,
    };
    exc.setattr("kind", kind.name())?;
    exc.setattr("code", kind.code())?;
    Ok(PyErr::from_value(exc))
}

/// Puts the engine's (redacted) body and message on a ProviderError.
fn set_http_texts(exc: &Bound<'_, PyAny>, body: &str, message: &str) -> PyResult<()> {
    exc.setattr("body", body)?;
    exc.setattr("text", body)?;
    exc.setattr("args", (message,))
}

/// Maps a result's error with the GIL held.
pub fn map<T>(py: Python<'_>, r: engine::Result<T>) -> PyResult<T> {
    r.map_err(|e| to_py_err(py, e))
}
