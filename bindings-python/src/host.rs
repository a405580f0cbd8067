//! The core's host traits over Python callables. Each one hands its input to a function of
//! `toolnexus._bridge` (which adapts sync/async callables and converts the package's
//! dataclasses) on the run's event loop, and converts the answer back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use engine::{
    Answer, BodyTransform, Error, ErrorInfo, ErrorKind, HookFuture, HookName, HookSet, HookTable, HttpErrorDetail,
    HttpRequest, HttpResponse, JsonHooks, OnError, Request, Tier, ToolContext, ToolHandler, ToolResult, Transport,
    WaitFor,
};
use futures_util::future::BoxFuture;
use pyo3::exceptions::PyOSError;
use pyo3::intern;
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

/// A class of `toolnexus.errors`.
fn error_class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let m = MODULE.get_or_try_init(py, || py.import("toolnexus.errors").map(Bound::unbind))?;
    m.bind(py).getattr(name)
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
            kwargs.set_item(intern!(py, "timeout"), timeout)?;
            kwargs.set_item(intern!(py, "call_id"), &ctx.call_id)?;
            tool_context_class(py)?.call((), Some(&kwargs))
        }
        Some(a) => bridge_fn(py, "tool_context")?.bind(py).call1((to_py(py, &a.to_json())?, timeout, &ctx.call_id)),
    }
}

/// A ToolResult the host returned, as the engine's type.
fn tool_result(py: Python<'_>, r: &Bound<'_, PyAny>) -> Result<ToolResult, Error> {
    let bad = |e: &dyn std::fmt::Display| invalid("a tool returned an invalid result", e);
    let metadata = r.getattr(intern!(py, "metadata")).map_err(|e| bad(&e))?;
    let parts = r.getattr(intern!(py, "parts")).is_ok_and(|p| p.is_truthy().unwrap_or(true));
    if !metadata.is_none() || parts {
        // Metadata may hold the package's dataclasses (a pending Request): let Python flatten
        // it. Python also refuses content parts, and its NotImplementedError's message becomes
        // the tool's error result.
        let wire =
            bridge_fn(py, "result_wire").and_then(|f| f.call1(py, (r,))).map_err(|e| PyHostError::wrap(py, e))?;
        let wire = from_py(wire.bind(py)).map_err(|e| bad(&e))?;
        return serde_json::from_value(wire).map_err(|e| bad(&e));
    }
    let output = r.getattr(intern!(py, "output")).and_then(|o| o.extract::<String>()).map_err(|e| bad(&e))?;
    let is_error = r.getattr(intern!(py, "is_error")).and_then(|o| o.extract::<bool>()).map_err(|e| bad(&e))?;
    Ok(ToolResult { output, is_error, metadata: None, parts: None })
}

/// A tool that raised a `BaseException` that is not an `Exception` (`KeyboardInterrupt`,
/// `SystemExit`, `CancelledError`, ...) ends the run with it, as asyncio lets those through;
/// any other exception becomes the tool's error result.
fn aborting_if_not_exception(e: Error) -> Error {
    let fatal = Python::attach(|py| {
        e.host_source()
            .and_then(|s| s.downcast_ref::<PyHostError>())
            .is_some_and(|h| !h.err.is_instance_of::<pyo3::exceptions::PyException>(py))
    });
    if !fatal {
        return e;
    }
    match e.into_host_source() {
        Some(source) => Error::aborting(source),
        None => Error::new(engine::ErrorKind::Internal, "a host error lost its exception"),
    }
}

impl ToolHandler for PyTool {
    fn execute(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, engine::Result<ToolResult>> {
        let call = Python::attach(|py| -> PyResult<_> {
            let args = PyTuple::new(py, [to_py(py, &args)?, tool_context(py, &ctx)?])?;
            Ok((self.execute.clone_ref(py), args.unbind()))
        });
        Box::pin(async move {
            let (func, args) = call.map_err(|e| Python::attach(|py| PyHostError::wrap(py, e)))?;
            let out = call_py(func, args).await.map_err(aborting_if_not_exception)?;
            Python::attach(|py| tool_result(py, out.bind(py)))
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

/// The exception a client's host transport last raised for a network failure, kept for
/// `on_error` (whose info carries only the message) so it can hand the host that very object,
/// as the published package does. A failure and its classification happen in one poll of the
/// run, under the GIL, so no other run's failure can come between them; the message is checked
/// anyway. Only set when the client has an `on_error`, which always takes it.
pub type LastTransportError = Arc<Mutex<Option<(String, Py<PyAny>)>>>;

/// `on_error`: `"fail"` gives up, anything else retries (bounded by `retries`).
pub struct PyOnError {
    pub func: Py<PyAny>,
    pub last_transport_error: LastTransportError,
}

impl OnError for PyOnError {
    fn classify(&self, info: ErrorInfo) -> HookFuture<Tier> {
        let func = Python::attach(|py| self.func.clone_ref(py));
        let last = self.last_transport_error.clone();
        Box::pin(async move {
            let fail = bridge_call("on_error", move |py| {
                let kept = last.lock().unwrap_or_else(|p| p.into_inner()).take();
                // Upstream's info is {status, attempt, retryable} for an HTTP answer and
                // {error, attempt, retryable} for a network error, `error` being the exception.
                let d = PyDict::new(py);
                match info.status {
                    Some(status) => d.set_item("status", status)?,
                    None => {
                        let message = info.error.unwrap_or_default();
                        let exc = match kept {
                            Some((m, exc)) if m == message => exc.into_bound(py),
                            _ => error_class(py, "NetworkError")?.call1((message,))?,
                        };
                        d.set_item("error", exc)?;
                    }
                }
                d.set_item("attempt", info.attempt)?;
                d.set_item("retryable", info.retryable)?;
                PyTuple::new(py, [func.into_bound(py), d.into_any()])
            })
            .await?;
            Ok(if fail == Value::Bool(true) { Tier::Fail } else { Tier::Retry })
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

/// `create_in_process_client`'s `generate(request) -> answer`.
pub struct PyGenerate {
    pub func: Py<PyAny>,
}

impl engine::InProcessModel for PyGenerate {
    fn generate(&self, request: Value) -> HookFuture<Value> {
        let func = Python::attach(|py| self.func.clone_ref(py));
        Box::pin(bridge_call("generate", move |py| PyTuple::new(py, [func.into_bound(py), to_py(py, &request)?])))
    }
}

/// An `HttpTransport` host object (`post(url, headers, payload, timeout) -> dict`).
pub struct PyTransport {
    pub transport: Py<PyAny>,
    /// The engine sends lower-case header names; the published package hands its transport
    /// `Authorization`, `Content-Type` and the user's own names as given. Lower-case name to
    /// that name, built once per client.
    pub header_names: HashMap<String, String>,
    /// Set when the client has an `on_error` (see [`LastTransportError`]).
    pub last_error: Option<LastTransportError>,
}

impl PyTransport {
    /// The header names a transport sees for a client sending the `user` headers.
    pub fn header_names<'a>(user: impl Iterator<Item = &'a str>) -> HashMap<String, String> {
        let mut names: HashMap<String, String> = [("authorization", "Authorization"), ("content-type", "Content-Type")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        for name in user {
            names.insert(name.to_ascii_lowercase(), name.to_string());
        }
        names
    }
}

/// What a host transport's exception means to the loop, as in the published package: a
/// ProviderError is a provider answer (retried by its status and Retry-After), an OSError
/// (URLError, ConnectionError, socket timeouts) a network error (retried), anything else the
/// host's own failure (not retried). Each keeps the exception, which the run re-raises as is
/// when it gives up.
fn transport_error(e: Error, last: Option<&LastTransportError>) -> Error {
    if !e.host_source().is_some_and(|s| s.is::<PyHostError>()) {
        return e;
    }
    let host = match e.into_host_source().map(|s| s.downcast::<PyHostError>()) {
        Some(Ok(host)) => host,
        Some(Err(other)) => return Error::host(other),
        None => return Error::new(ErrorKind::Internal, "host error without its source"),
    };
    Python::attach(|py| {
        let exc = host.err.value(py);
        let is = |name: &str| error_class(py, name).and_then(|c| exc.is_instance(&c)).unwrap_or(false);
        if is("ProviderError") {
            let status = exc.getattr(intern!(py, "status")).and_then(|s| s.extract::<u16>());
            let Ok(status) = status else { return Error::host(host) };
            let body = exc.getattr(intern!(py, "body")).and_then(|b| b.extract::<String>()).unwrap_or_default();
            let retry_after =
                exc.getattr(intern!(py, "retry_after")).and_then(|r| r.extract::<Option<String>>()).unwrap_or(None);
            return Error::http_from_host(HttpErrorDetail { status, body, retry_after }, host);
        }
        // A RunTimeout is a TimeoutError, hence an OSError, but an abort is never retried.
        if exc.is_instance_of::<PyOSError>() && !is("RunTimeout") {
            if let Some(last) = last {
                let kept = (host.to_string(), exc.clone().into_any().unbind());
                *last.lock().unwrap_or_else(|p| p.into_inner()) = Some(kept);
            }
            return Error::with_host_source(ErrorKind::Network, host);
        }
        Error::host(host)
    })
}

impl PyTransport {
    /// `transport.<method>(url, headers, payload, timeout)` through `_bridge.<bridge>`.
    fn call(&self, bridge: &'static str, request: HttpRequest) -> BoxFuture<'static, engine::Result<Value>> {
        let (transport, headers) = Python::attach(|py| -> (Py<PyAny>, PyResult<Py<PyDict>>) {
            let headers = PyDict::new(py);
            let filled = request.headers.iter().try_for_each(|(k, v)| {
                let name = self.header_names.get(k).unwrap_or(k);
                headers.set_item(name, v)
            });
            (self.transport.clone_ref(py), filled.map(|()| headers.unbind()))
        });
        let last = self.last_error.clone();
        Box::pin(async move {
            let payload: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
            let headers = headers.map_err(|e| Python::attach(|py| PyHostError::wrap(py, e)))?;
            let timeout = request.timeout.as_secs_f64();
            let url = request.url;
            bridge_call(bridge, move |py| {
                PyTuple::new(
                    py,
                    [
                        transport.into_bound(py),
                        url.into_pyobject(py)?.into_any(),
                        headers.into_bound(py).into_any(),
                        to_py(py, &payload)?,
                        timeout.into_pyobject(py)?.into_any(),
                    ],
                )
            })
            .await
            .map_err(|e| transport_error(e, last.as_ref()))
        })
    }
}

impl Transport for PyTransport {
    fn post(&self, request: HttpRequest) -> BoxFuture<'static, engine::Result<HttpResponse>> {
        let call = self.call("transport_post", request);
        Box::pin(async move {
            let body = serde_json::to_vec(&call.await?).map_err(|e| invalid("transport body", e))?;
            Ok(HttpResponse { status: 200, headers: Vec::new(), body: Bytes::from(body) })
        })
    }

    /// The published package's streaming seam: `open(...)` answers the event stream, read
    /// whole (`_bridge.transport_open`) and handed on in one piece.
    fn post_streaming<'a>(
        &'a self,
        request: HttpRequest,
        sink: &'a mut dyn engine::BodySink,
    ) -> BoxFuture<'a, engine::Result<HttpResponse>> {
        let call = self.call("transport_open", request);
        Box::pin(async move {
            match call.await? {
                Value::String(text) => sink.write(text.as_bytes())?,
                other => return Err(invalid("transport open()", format!("read as {other}, not text"))),
            }
            Ok(HttpResponse { status: 200, headers: Vec::new(), body: Bytes::new() })
        })
    }
}

/// Hooks: the four callables `Hooks` found on the host's object or dict (each may be None).
pub struct PyHooks(pub HookTable<Py<PyAny>>);

impl JsonHooks for PyHooks {
    fn enabled(&self) -> HookSet {
        self.0.enabled()
    }

    fn call(&self, hook: HookName, event: Value) -> HookFuture<Value> {
        let func = self.0.get(hook).map(|f| Python::attach(|py| f.clone_ref(py)));
        Box::pin(async move {
            let Some(func) = func else { return Ok(Value::Null) };
            let ev = &event;
            let mut out =
                bridge_call(hook.as_str(), move |py| PyTuple::new(py, [func.into_bound(py), to_py(py, ev)?])).await?;
            if hook == HookName::BeforeLlm {
                // `_bridge.before_llm` also hands back the lists the hook saw, which it may have
                // edited in place; an unchanged one is no override.
                if let Value::Object(ov) = &mut out {
                    for key in ["messages", "tools"] {
                        if ov.get(key).is_some_and(|v| Some(v) == event.get(key)) {
                            ov.remove(key);
                        }
                    }
                }
            }
            Ok(out)
        })
    }
}
