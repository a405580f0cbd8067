//! MCP for Python: loading servers' tools (`load_mcp`), listing them (`list_mcp_tools`),
//! the elicitation mapping, and serving a toolkit (`serve`). Configs and options go to the
//! engine's readers as JSON; the engine connects, lists, filters and serves.

use std::collections::BTreeMap;
use std::sync::Arc;

use engine::mcp::{McpConfig, McpServeOptions, McpServer, McpSource, McpStatus};
use engine::{CancellationToken, Parsed, Tool, Toolkit, Warning};
use pyo3::prelude::*;
use pyo3::types::PyString;
use serde_json::{json, Value};
use tokio::sync::Mutex;

use crate::bridge::{LoopWaker, RunTask};
use crate::convert::{from_py, to_py};
use crate::error;
use crate::host::PyWaitFor;
use crate::sources::{engine_tool_objects, warning_pairs, EngineTool, OnLoop, WaitForOnLoop};
use crate::toolkit::PyToolkit;

/// An MCP config: a path (`str`) is read as a JSON file, anything else as the config itself.
pub fn config(py: Python<'_>, input: &Bound<'_, PyAny>) -> PyResult<Parsed<McpConfig>> {
    if input.is_instance_of::<PyString>() {
        let path: String = input.extract()?;
        return error::map(py, McpConfig::from_file(path));
    }
    error::map(py, McpConfig::from_json(&from_py(input)?))
}

fn status_map(status: &BTreeMap<String, McpStatus>) -> Value {
    Value::Object(status.iter().map(|(k, v)| (k.clone(), json!(v.as_str()))).collect())
}

/// `wait_for` for the MCP client's elicitations, run on the loop of `waker`.
pub fn elicitation_wait_for(
    py: Python<'_>,
    wait_for: Option<Py<PyAny>>,
    waker: &Bound<'_, LoopWaker>,
) -> Option<Arc<dyn engine::WaitFor>> {
    let func = wait_for.filter(|f| !f.is_none(py))?;
    Some(Arc::new(WaitForOnLoop { inner: Arc::new(PyWaitFor { func }), waker: waker.clone().unbind() }))
}

/// The tools and status of loaded MCP servers, holding their connections until closed.
#[pyclass(frozen, module = "toolnexus._native", name = "McpSource")]
pub struct PyMcpSource {
    tools: Vec<Tool>,
    status: BTreeMap<String, McpStatus>,
    /// What loading warned about, as `(code, message)`.
    #[pyo3(get)]
    warnings: Vec<(String, String)>,
    source: Arc<Mutex<McpSource>>,
}

#[pymethods]
impl PyMcpSource {
    /// The servers' tools, named `<server>_<tool>`.
    fn tools(&self, py: Python<'_>) -> PyResult<Vec<Py<EngineTool>>> {
        engine_tool_objects(py, self.tools.clone())
    }

    /// Each configured server's status: `connected`, `disabled` or `failed`.
    fn status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &status_map(&self.status))
    }

    /// Stops every server (idempotent).
    fn close(&self, py: Python<'_>, waker: PyRef<'_, LoopWaker>, future: Py<PyAny>) -> PyResult<RunTask> {
        let source = self.source.clone();
        let fut = async move {
            source.lock().await.close().await;
            Ok(String::new())
        };
        RunTask::start(py, &waker, future, CancellationToken::new(), None, fut)
    }
}

/// Connects to every enabled server of `config` and lists their tools; `future` gets a
/// `McpSource`. A set `cancel_event` aborts the load.
#[pyfunction]
#[pyo3(signature = (waker, future, config, wait_for=None, cancel_event=None))]
pub fn load_mcp(
    py: Python<'_>,
    waker: Bound<'_, LoopWaker>,
    future: Py<PyAny>,
    config: Bound<'_, PyAny>,
    wait_for: Option<Py<PyAny>>,
    cancel_event: Option<Py<PyAny>>,
) -> PyResult<RunTask> {
    let parsed = self::config(py, &config)?;
    let wait_for = elicitation_wait_for(py, wait_for, &waker);
    let cancel = CancellationToken::new();
    let token = cancel.clone();
    let fut = async move {
        let mut warnings = parsed.warnings;
        let source = engine::mcp::load_mcp(&parsed.value, wait_for, token).await?;
        warnings.extend(source.warnings.iter().cloned());
        let make: crate::bridge::MakePy = Box::new(move |py| {
            let obj = PyMcpSource {
                tools: source.tools.clone(),
                status: source.status.clone(),
                warnings: warning_pairs(warnings),
                source: Arc::new(Mutex::new(source)),
            };
            Ok(Py::new(py, obj)?.into_any())
        });
        Ok(make)
    };
    RunTask::start_object(py, waker.get(), future, cancel, cancel_event, fut)
}

/// Lists every enabled server's tools, unfiltered, and disconnects; `future` gets the
/// inventory as JSON text: `{tools: {server: [{name, description, input_schema}]}, status,
/// warnings: [[code, message]]}`.
#[pyfunction]
#[pyo3(signature = (waker, future, config, cancel_event=None))]
pub fn list_mcp_tools(
    py: Python<'_>,
    waker: PyRef<'_, LoopWaker>,
    future: Py<PyAny>,
    config: Bound<'_, PyAny>,
    cancel_event: Option<Py<PyAny>>,
) -> PyResult<RunTask> {
    let parsed = self::config(py, &config)?;
    let cancel = CancellationToken::new();
    let token = cancel.clone();
    let fut = async move {
        let inv = engine::mcp::list_mcp_tools(&parsed.value, token).await?;
        let mut out = inv.to_json();
        let mut warnings = parsed.warnings;
        warnings.extend(inv.warnings);
        out["warnings"] = json!(warning_pairs(warnings));
        Ok(out.to_string())
    };
    RunTask::start(py, &waker, future, cancel, cancel_event, fut)
}

/// The suspension Request an MCP `elicitation/create` request's params map to.
#[pyfunction]
pub fn elicitation_request<'py>(py: Python<'py>, params: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    to_py(py, &engine::mcp::elicitation_request(&from_py(&params)?).to_json())
}

/// The server entries of an MCP config (a path or a dict) as written: upstream's
/// `parse_mcp_config`.
#[pyfunction]
pub fn parse_mcp_config<'py>(py: Python<'py>, config: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let value = match config.extract::<String>() {
        Ok(path) => error::map(py, engine::mcp::McpConfig::read_file(path))?,
        Err(_) => from_py(&config)?,
    };
    let entries = error::map(py, engine::mcp::McpConfig::server_entries(&value))?;
    to_py(py, &Value::Object(entries))
}

/// A toolkit served over MCP (streamable HTTP).
#[pyclass(frozen, module = "toolnexus._native", name = "McpServer")]
pub struct PyMcpServer {
    /// The MCP endpoint, `http://<addr>/mcp`.
    #[pyo3(get)]
    url: String,
    /// The server's base URL, `http://<addr>`.
    #[pyo3(get)]
    base_url: String,
    /// The names of the tools it exposes.
    #[pyo3(get)]
    tool_names: Vec<String>,
    /// What starting it warned about, as `(code, message)`.
    #[pyo3(get)]
    warnings: Vec<(String, String)>,
    server: Arc<Mutex<McpServer>>,
}

#[pymethods]
impl PyMcpServer {
    /// Stops listening and ends every connection (idempotent).
    fn close(&self, py: Python<'_>, waker: PyRef<'_, LoopWaker>, future: Py<PyAny>) -> PyResult<RunTask> {
        let server = self.server.clone();
        let fut = async move {
            server.lock().await.close().await;
            Ok(String::new())
        };
        RunTask::start(py, &waker, future, CancellationToken::new(), None, fut)
    }
}

/// Serves `toolkit` with `options` (`McpServeOptions` as JSON; `None`: the toolkit's
/// `mcpServer` profile, else the defaults) at `addr` when given; `future` gets a `McpServer`.
/// Its tools run on the loop `waker` serves, as a run's do.
#[pyfunction]
pub fn serve(
    py: Python<'_>,
    waker: Bound<'_, LoopWaker>,
    future: Py<PyAny>,
    toolkit: PyRef<'_, PyToolkit>,
    options: Option<Bound<'_, PyAny>>,
    addr: Option<String>,
) -> PyResult<RunTask> {
    let given = options.map(|o| from_py(&o)).transpose()?;
    let opts = error::map(py, McpServeOptions::for_toolkit(&toolkit.inner, given.as_ref(), addr.as_deref()))?;
    let unbound = waker.clone().unbind();
    let tools: Vec<Tool> = toolkit.inner.tools().iter().map(|t| OnLoop::wrap(py, t.clone(), &unbound)).collect();
    // The same tools, in the same order, under the same names: only where they run differs.
    let served = error::map(py, Toolkit::new(tools))?;
    let fut = async move {
        let server = engine::mcp::serve_mcp(Arc::new(served), opts).await?;
        let make: crate::bridge::MakePy = Box::new(move |py| {
            let obj = PyMcpServer {
                url: server.url().to_string(),
                base_url: server.base_url().to_string(),
                tool_names: server.tool_names().to_vec(),
                warnings: warning_pairs(server.warnings().to_vec()),
                server: Arc::new(Mutex::new(server)),
            };
            Ok(Py::new(py, obj)?.into_any())
        });
        Ok(make)
    };
    RunTask::start_object(py, waker.get(), future, CancellationToken::new(), None, fut)
}

/// The positions, in `toolkit`'s tool order, of the tools MCP serve would expose with
/// `tools` (names), and a warning for each name it lacks.
#[pyfunction]
#[pyo3(signature = (toolkit, tools=None))]
pub fn exposed_tools(toolkit: PyRef<'_, PyToolkit>, tools: Option<Vec<String>>) -> (Vec<usize>, Vec<(String, String)>) {
    let (exposed, warnings): (Vec<Tool>, Vec<Warning>) = engine::mcp::exposed_tools(&toolkit.inner, tools.as_deref());
    let all = toolkit.inner.tools();
    let at = exposed.iter().filter_map(|t| all.iter().position(|a| a.name() == t.name())).collect();
    (at, warning_pairs(warnings))
}

/// The MCP `ElicitResult` an Answer (or `None`) maps to, as `(action, content)`.
#[pyfunction]
#[pyo3(signature = (answer=None))]
pub fn elicit_result<'py>(
    py: Python<'py>,
    answer: Option<Bound<'py, PyAny>>,
) -> PyResult<(&'static str, Option<Bound<'py, PyAny>>)> {
    let answer = match answer.map(|a| from_py(&a)).transpose()? {
        None | Some(Value::Null) => None,
        Some(v) => Some(error::map(py, engine::Answer::from_json(&v))?),
    };
    let action = engine::mcp::elicit_action(answer.as_ref());
    let content = match &action {
        engine::mcp::ElicitAction::Accept(content) => Some(to_py(py, content)?),
        _ => None,
    };
    Ok((action.as_str(), content))
}
