//! One blocking POST through the engine's own HTTP client, for `UrllibTransport.post`.

use std::time::Duration;

use bytes::Bytes;
use engine::{Http1Transport, HttpRequest};
use pyo3::prelude::*;

use crate::bridge::runtime;
use crate::error;

/// POSTs `body` and returns `(status, body_text, retry_after)`; the GIL is released meanwhile.
#[pyfunction]
pub fn http_post(
    py: Python<'_>,
    url: String,
    headers: Vec<(String, String)>,
    body: String,
    timeout: f64,
) -> PyResult<(u16, String, Option<String>)> {
    let rt = runtime()?;
    let timeout = Duration::from_secs_f64(timeout.clamp(0.001, 86_400.0));
    let request = HttpRequest { url, headers, body: Bytes::from(body.into_bytes()), timeout };
    let out = py.detach(move || rt.block_on(async move { Http1Transport::shared().post(request).await }));
    let resp = error::map(py, out)?;
    let retry_after = resp.header("retry-after").map(str::to_string);
    Ok((resp.status, String::from_utf8_lossy(&resp.body).into_owned(), retry_after))
}
