//! The core's host traits over Python callables. Each one hands its input to a function of
//! `toolnexus._bridge` (which adapts sync/async callables and converts the package's
//! dataclasses) on the run's event loop, and converts the answer back.

use bytes::Bytes;
use engine::{
    Answer, BodyTransform, Error, ErrorInfo, ErrorKind, HookFuture, HookName, HookSet, HttpRequest, HttpResponse,
    JsonHooks, OnError, Request, Tier, ToolContext, ToolHandler, ToolResult, Transport, WaitFor,
};
use futures_util::future::BoxFuture;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple};
use serde_json::Value;

use crate::bridge::call_py;
use crate::convert::{from_py, to_py};
use crate::error::PyHostError;

/// A function of `toolnexus._bridge`, imported on first use (it imports this module itself).
pub fn bridge_fn(py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let m = MODULE.get_or_try_init(py, || py.import("toolnexus._bridge").map(Bound::unbind))?;
    m.bind(py).getattr(name).map(Bound::unbind)
}

/// Calls `_bridge.<name>(*args)` on the run's loop and returns its value as JSON.
async fn bridge_call<F>(name: &'static str, make_args: F) -> Result<Value, Error>
where
    F: for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>>,
{
    let (func, args) = Python::attach(|py| -> PyResult<_> { Ok((bridge_fn(py, name)?, make_args(py)?.unbind())) })
        .map_err(|e| Python::attach(|py| PyHostError::wrap(py, e)))?;
    let out = call_py(func, args).await?;
    Python::attach(|py| from_py(out.bind(py)).map_err(|e| PyHostError::wrap(py, e)))
}

fn invalid(what: &str, e: impl std::fmt::Display) -> Error {
    Error::host(format!("toolnexus: {what}: {e}").into())
}

/// A Python `Tool`: its `execute(args, ctx)` is called directly (the bound method is looked up
/// once), and the ToolResult it returns is read attribute by attribute.
pub struct PyTool {
    pub execute: Py<PyAny>,
}

impl PyTool {
    pub fn new(py: Python<'_>, tool: &Py<PyAny>) -> PyResult<PyTool> {
        Ok(PyTool { execute: tool.getattr(py, "execute")? })
    }
}

/// `toolnexus.types.ToolContext`.
fn tool_context_class(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static CLASS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    CLASS
        .get_or_try_init(py, || py.import("toolnexus.types").and_then(|m| m.getattr("ToolContext")).map(Bound::unbind))
        .map(|c| c.bind(py))
}

fn tool_context<'py>(py: Python<'py>, ctx: &ToolContext) -> PyResult<Bound<'py, PyAny>> {
    let timeout = ctx.timeout.map(|t| t.as_secs_f64());
    match &ctx.answer {
        None => {
            let kwargs = PyDict::new(py);
            kwargs.set_item("timeout", timeout)?;
            tool_context_class(py)?.call((), Some(&kwargs))
        }
        Some(a) => bridge_fn(py, "tool_context")?.bind(py).call1((to_py(py, &a.to_json())?, timeout)),
    }
}

/// A ToolResult the host returned, as the engine's type.
fn tool_result(py: Python<'_>, r: &Bound<'_, PyAny>) -> PyResult<ToolResult> {
    let metadata = r.getattr("metadata")?;
    if !metadata.is_none() {
        // Metadata may hold the package's dataclasses (a pending Request): let Python flatten it.
        let wire = bridge_fn(py, "result_wire")?.call1(py, (r,))?;
        return serde_json::from_value(from_py(wire.bind(py))?)
            .map_err(|e| pyo3::exceptions::PyTypeError::new_err(format!("toolnexus: invalid ToolResult: {e}")));
    }
    Ok(ToolResult {
        output: r.getattr("output")?.extract()?,
        is_error: r.getattr("is_error")?.extract()?,
        metadata: None,
    })
}

impl ToolHandler for PyTool {
    fn execute(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, engine::Result<ToolResult>> {
        let call = Python::attach(|py| -> PyResult<_> {
            let args = PyTuple::new(py, [to_py(py, &args)?, tool_context(py, &ctx)?])?;
            Ok((self.execute.clone_ref(py), args.unbind()))
        });
        Box::pin(async move {
            let (func, args) = call.map_err(|e| Python::attach(|py| PyHostError::wrap(py, e)))?;
            let out = call_py(func, args).await?;
            Python::attach(|py| {
                tool_result(py, out.bind(py)).map_err(|e| invalid("a tool returned an invalid result", e))
            })
        })
    }
}

/// `wait_for`, sync or async.
pub struct PyWaitFor {
    pub func: Py<PyAny>,
}

impl WaitFor for PyWaitFor {
    fn wait_for(&self, request: Request) -> HookFuture<Option<Answer>> {
        let func = Python::attach(|py| self.func.clone_ref(py));
        Box::pin(async move {
            let v = bridge_call("wait_for", move |py| {
                PyTuple::new(py, [func.into_bound(py), to_py(py, &request.to_json())?])
            })
            .await?;
            if v.is_null() {
                return Ok(None);
            }
            Answer::from_json(&v).map(Some)
        })
    }
}

/// `on_error`, returning `"retry"` or `"fail"`.
pub struct PyOnError {
    pub func: Py<PyAny>,
}

impl OnError for PyOnError {
    fn classify(&self, info: ErrorInfo) -> HookFuture<Tier> {
        let func = Python::attach(|py| self.func.clone_ref(py));
        Box::pin(async move {
            let mut d = serde_json::json!({"attempt": info.attempt, "retryable": info.retryable});
            if let Some(s) = info.status {
                d["status"] = s.into();
            }
            if let Some(e) = &info.error {
                d["error"] = e.clone().into();
            }
            let v = bridge_call("on_error", move |py| PyTuple::new(py, [func.into_bound(py), to_py(py, &d)?])).await?;
            match v.as_str() {
                Some("retry") => Ok(Tier::Retry),
                Some("fail") => Ok(Tier::Fail),
                _ => Err(invalid("on_error must return \"retry\" or \"fail\"", v)),
            }
        })
    }
}

/// `body_transform(body) -> dict | None`.
pub struct PyBodyTransform {
    pub func: Py<PyAny>,
}

impl BodyTransform for PyBodyTransform {
    fn transform(&self, body: Value) -> HookFuture<Option<Value>> {
        let func = Python::attach(|py| self.func.clone_ref(py));
        Box::pin(async move {
            let v = bridge_call("body_transform", move |py| PyTuple::new(py, [func.into_bound(py), to_py(py, &body)?]))
                .await?;
            Ok(if v.is_null() { None } else { Some(v) })
        })
    }
}

/// An `HttpTransport` host object (`post(url, headers, payload, timeout) -> dict`).
pub struct PyTransport {
    pub transport: Py<PyAny>,
}

impl Transport for PyTransport {
    fn post(&self, request: HttpRequest) -> BoxFuture<'static, engine::Result<HttpResponse>> {
        let transport = Python::attach(|py| self.transport.clone_ref(py));
        Box::pin(async move {
            let payload: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
            let headers: serde_json::Map<String, Value> =
                request.headers.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
            let timeout = request.timeout.as_secs_f64();
            let url = request.url.clone();
            let v = bridge_call("transport_post", move |py| {
                PyTuple::new(
                    py,
                    [
                        transport.into_bound(py),
                        url.into_pyobject(py)?.into_any(),
                        to_py(py, &Value::Object(headers))?,
                        to_py(py, &payload)?,
                        timeout.into_pyobject(py)?.into_any(),
                    ],
                )
            })
            .await?;
            // `_bridge.transport_post` answers ["ok", body] | ["status", code, text, retry_after] | ["network", message].
            match v.get(0).and_then(Value::as_str) {
                Some("ok") => {
                    let body = serde_json::to_vec(&v[1]).map_err(|e| invalid("transport body", e))?;
                    Ok(HttpResponse { status: 200, headers: Vec::new(), body: Bytes::from(body) })
                }
                Some("status") => {
                    let status = v[1].as_u64().and_then(|s| u16::try_from(s).ok()).unwrap_or(500);
                    let text = v[2].as_str().unwrap_or("").to_string();
                    let headers = match v[3].as_str() {
                        Some(ra) => vec![("retry-after".to_string(), ra.to_string())],
                        None => Vec::new(),
                    };
                    Ok(HttpResponse { status, headers, body: Bytes::from(text.into_bytes()) })
                }
                Some("network") => Err(Error::new(ErrorKind::Network, v[1].as_str().unwrap_or("network error"))),
                _ => Err(invalid("transport_post gave an unexpected answer", v)),
            }
        })
    }
}

/// Hooks: the four callables `Hooks` found on the host's object or dict (each may be None).
pub struct PyHooks {
    pub before_llm: Option<Py<PyAny>>,
    pub after_llm: Option<Py<PyAny>>,
    pub before_tool: Option<Py<PyAny>>,
    pub after_tool: Option<Py<PyAny>>,
}

impl JsonHooks for PyHooks {
    fn enabled(&self) -> HookSet {
        HookSet {
            before_llm: self.before_llm.is_some(),
            after_llm: self.after_llm.is_some(),
            before_tool: self.before_tool.is_some(),
            after_tool: self.after_tool.is_some(),
        }
    }

    fn call(&self, hook: HookName, event: Value) -> HookFuture<Value> {
        let slot = match hook {
            HookName::BeforeLlm => &self.before_llm,
            HookName::AfterLlm => &self.after_llm,
            HookName::BeforeTool => &self.before_tool,
            HookName::AfterTool => &self.after_tool,
        };
        let func = slot.as_ref().map(|f| Python::attach(|py| f.clone_ref(py)));
        Box::pin(async move {
            let Some(func) = func else { return Ok(Value::Null) };
            bridge_call(hook.as_str(), move |py| PyTuple::new(py, [func.into_bound(py), to_py(py, &event)?])).await
        })
    }
}
