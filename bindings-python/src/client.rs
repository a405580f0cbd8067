//! `_native.Client`: an engine client built from the package's options, and its runs.

use std::sync::Arc;

use engine::{Answer, CancellationToken, Client, ClientOptions, HookTable, Request, RunInput};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;

use crate::bridge::{LoopWaker, RunTask};
use crate::convert::from_py;
use crate::error;
use crate::host::{LastTransportError, PyBodyTransform, PyGenerate, PyHooks, PyOnError, PyTransport, PyWaitFor};
use crate::memory::{PyHostStore, PyStore};
use crate::metrics::PySink;
use crate::toolkit::PyToolkit;

/// The host's hook callables: each hook by its name, as a key of a mapping or an attribute of
/// an object; what is missing or not callable is no hook.
fn hook_table(hooks: &Bound<'_, PyAny>) -> PyResult<HookTable<Py<PyAny>>> {
    let mapping = hooks.is_instance_of::<pyo3::types::PyDict>()
        || hooks.is_instance(&hooks.py().import("collections.abc")?.getattr("Mapping")?)?;
    HookTable::build(|hook| {
        let name = hook.as_str();
        let found = if mapping { hooks.call_method1("get", (name,)).ok() } else { hooks.getattr(name).ok() };
        Ok::<_, PyErr>(found.filter(|f| f.is_callable()).map(Bound::unbind))
    })
}

/// An engine client. `options` holds the plain options (JSON-able); host callables come as
/// their own arguments, each `None` when absent.
#[pyclass(frozen, module = "toolnexus._native", name = "Client")]
pub struct PyClient {
    inner: Arc<Client>,
    /// What reading the options warned about, in order.
    #[pyo3(get)]
    warnings: Vec<(String, String)>,
    /// Shared by `on_error` and the transport (see [`LastTransportError`]).
    last_error: Option<LastTransportError>,
}

/// The engine's reading of the plain options, and the warnings it raised (as
/// `(code, message)` pairs, for the package to hand to `warnings`).
fn options(
    py: Python<'_>,
    o: &Bound<'_, PyDict>,
    in_process: bool,
) -> PyResult<(ClientOptions, Vec<(String, String)>)> {
    let json = from_py(o.as_any())?;
    let parsed = match in_process {
        true => error::map(py, ClientOptions::in_process_from_json(&json, "create_in_process_client"))?,
        false => error::map(py, ClientOptions::from_json(&json))?,
    };
    let warnings = parsed.warnings.into_iter().map(|w| (w.code.to_string(), w.message)).collect();
    Ok((parsed.value, warnings))
}

#[pymethods]
impl PyClient {
    #[new]
    #[pyo3(signature = (options, wait_for, hooks, on_error, body_transform, transport, on_metric, generate=None, store=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        options: Bound<'_, PyDict>,
        wait_for: Option<Py<PyAny>>,
        hooks: Option<Bound<'_, PyAny>>,
        on_error: Option<Py<PyAny>>,
        body_transform: Option<Py<PyAny>>,
        transport: Option<Py<PyAny>>,
        on_metric: Option<Py<PyAny>>,
        generate: Option<Py<PyAny>>,
        store: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let (mut opts, warnings) = self::options(py, &options, generate.is_some())?;
        let last_transport_error = LastTransportError::default();
        let last_error = on_error.is_some().then(|| last_transport_error.clone());
        opts.wait_for = wait_for.map(|func| Arc::new(PyWaitFor { func }) as _);
        opts.on_error = on_error.map(|func| Arc::new(PyOnError { func, last_transport_error }) as _);
        opts.body_transform = body_transform.map(|func| Arc::new(PyBodyTransform { func }) as _);
        opts.on_metric = on_metric.map(|func| Arc::new(PySink { func }) as _);
        // Upstream's package prints its warnings (a part sent as a placeholder) to stderr.
        opts.on_warning = Some(Arc::new(|w: &engine::Warning| {
            Python::attach(|py| {
                let stderr = py.import("sys").and_then(|sys| sys.getattr("stderr"));
                let _ = stderr.and_then(|e| e.call_method1("write", (format!("{}\n", w.message),)));
            })
        }));
        let header_names = PyTransport::header_names(opts.headers.iter().map(|(k, _)| k.as_str()));
        let kept = last_error.clone();
        opts.transport = transport.map(|transport| Arc::new(PyTransport { transport, header_names, last_error }) as _);
        if let Some(func) = generate {
            opts.transport = Some(Arc::new(engine::InProcessTransport(Arc::new(PyGenerate { func }))));
        }
        if let Some(table) = hooks.map(|h| hook_table(&h)).transpose()?.filter(|t| !t.is_empty()) {
            opts.hooks = Some(Arc::new(engine::JsonHooksAdapter(PyHooks(table))));
        }
        if let Some(store) = store {
            opts.store = Some(match store.cast::<PyStore>() {
                Ok(native) => native.get().inner.clone(),
                Err(_) => Arc::new(PyHostStore { store: store.unbind() }),
            });
        }
        let client = error::map(py, Client::new(opts))?;
        Ok(PyClient { inner: Arc::new(client), warnings, last_error: kept })
    }

    /// This client on the package's replaced `_post` (`transport`), counting into the same
    /// metrics.
    fn with_transport(&self, transport: Py<PyAny>) -> Self {
        let header_names = PyTransport::header_names(self.inner.options().headers.iter().map(|(k, _)| k.as_str()));
        let t = Arc::new(PyTransport { transport, header_names, last_error: self.last_error.clone() });
        PyClient {
            inner: Arc::new(self.inner.with_transport(t)),
            warnings: Vec::new(),
            last_error: self.last_error.clone(),
        }
    }

    /// The engine store the client remembers conversations in (its own in-memory one unless
    /// given another).
    fn conversation_store(&self) -> PyStore {
        PyStore { inner: self.inner.conversation_store().clone() }
    }

    /// Every run's metrics so far, as Prometheus text.
    fn metrics(&self) -> String {
        self.inner.metrics()
    }

    /// Starts a translation (`request`: the engine's translate request dict); `future` is
    /// resolved with the TranslateResult as JSON text.
    #[pyo3(signature = (waker, future, toolkit, request, cancel))]
    fn translate(
        &self,
        py: Python<'_>,
        waker: PyRef<'_, LoopWaker>,
        future: Py<PyAny>,
        toolkit: Option<PyRef<'_, PyToolkit>>,
        request: Bound<'_, PyAny>,
        cancel: Option<Py<PyAny>>,
    ) -> PyResult<RunTask> {
        let req = error::map(py, engine::TranslateRequest::from_json(&from_py(&request)?))?;
        let token = CancellationToken::new();
        let client = self.inner.clone();
        let toolkit = toolkit.map(|t| t.inner.clone());
        let run_token = token.clone();
        let fut = async move {
            let r = client.translate(req, toolkit.as_deref(), Some(run_token)).await?;
            Ok(r.to_json().to_string())
        };
        RunTask::start(py, &waker, future, token, cancel, fut)
    }

    /// Starts a run on `event_loop`; `future` is resolved with `[n, result_json]`: the
    /// RunResult as JSON text whose `messages` leave out their first `n` entries, which are
    /// the caller's `history` unchanged (the Python side puts the caller's own dicts back, as
    /// the published package does, instead of decoding copies). `cancel` is the caller's
    /// `asyncio.Event`, looked at after every host callback (see `bridge::RunCancel`).
    /// With `on_event`, the run streams: each step goes to it as a dict, in order, on the loop.
    /// With `id`, the run is the next turn of that stored conversation; then `answer` alone
    /// (no `pending`) resumes it on the request the store recorded.
    #[pyo3(signature = (waker, future, toolkit, prompt, history, pending, answer, cancel, on_event=None, id=None))]
    #[allow(clippy::too_many_arguments)]
    fn start(
        &self,
        py: Python<'_>,
        waker: PyRef<'_, LoopWaker>,
        future: Py<PyAny>,
        toolkit: Option<PyRef<'_, PyToolkit>>,
        prompt: Option<Bound<'_, PyAny>>,
        history: Option<Bound<'_, PyAny>>,
        pending: Option<Bound<'_, PyAny>>,
        answer: Option<Bound<'_, PyAny>>,
        cancel: Option<Py<PyAny>>,
        on_event: Option<Py<PyAny>>,
        id: Option<String>,
    ) -> PyResult<RunTask> {
        let stream = on_event.map(|func| engine::StreamTo(Arc::new(PySink { func })));
        // A string, or a list of canonical part dicts (the package normalised them).
        let (prompt, prompt_parts) = match prompt.map(|p| from_py(&p)).transpose()? {
            Some(Value::String(p)) => (Some(p), None),
            Some(Value::Array(parts)) => (None, Some(parts)),
            Some(_) => {
                return Err(pyo3::exceptions::PyTypeError::new_err(
                    "toolnexus: a prompt is a string or a list of content parts",
                ))
            }
            None => (None, None),
        };
        let history: Vec<Value> = match history {
            Some(h) => match from_py(&h)? {
                Value::Array(items) => items,
                _ => {
                    return Err(pyo3::exceptions::PyTypeError::new_err(
                        "toolnexus: history must be a list of message dicts",
                    ))
                }
            },
            None => Vec::new(),
        };
        let answer = answer.map(|a| error::map(py, Answer::from_json(&from_py(&a)?))).transpose()?;
        let (resume, answer) = match (pending, answer) {
            (Some(p), Some(a)) => (Some((error::map(py, Request::from_json(&from_py(&p)?))?, a)), None),
            (_, a) => (None, a),
        };
        let token = CancellationToken::new();
        let client = self.inner.clone();
        let toolkit = toolkit.map(|t| t.inner.clone());
        let run_token = token.clone();
        let fut = async move {
            let toolkit = toolkit.as_deref();
            let input = RunInput {
                prompt,
                prompt_parts,
                history,
                toolkit,
                cancel: Some(run_token),
                resume,
                stream,
                id,
                answer,
            };
            let (r, kept) = client.run_eliding(input).await?;
            let json = serde_json::to_string(&r)
                .map_err(|e| engine::Error::new(engine::ErrorKind::Internal, e.to_string()))?;
            Ok(format!("[{kept},{json}]"))
        };
        RunTask::start(py, &waker, future, token, cancel, fut)
    }
}
