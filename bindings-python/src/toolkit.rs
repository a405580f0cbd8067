//! `_native.Toolkit`: the engine's toolkit built from the package's `Tool` objects.

use std::sync::Arc;

use engine::{CancellationToken, Tool, ToolContext, ToolSource, Toolkit};
use pyo3::prelude::*;
use serde_json::Value;

use crate::bridge::{LoopWaker, RunTask};
use crate::convert::{from_py, to_py};
use crate::error;
use crate::host::PyTool;

/// `(name, description, input_schema, source, tool)` as the package passes it.
type ToolSpec<'py> = (String, String, Bound<'py, PyAny>, String, Py<PyAny>);

/// An engine toolkit. Built from `(name, description, input_schema, source, tool)` tuples;
/// `source == "relay"` makes a declaration-only relay tool.
#[pyclass(frozen, module = "toolnexus._native", name = "Toolkit")]
pub struct PyToolkit {
    pub inner: Arc<Toolkit>,
    /// The package's `Tool` of every spec ever given, by position: each engine tool's host ref.
    objects: Vec<Py<PyAny>>,
    /// What building this toolkit warned about, as `(code, message)`.
    #[pyo3(get)]
    warnings: Vec<(String, String)>,
}

/// The engine's tools for `specs`, numbered from `first` (their host refs).
fn engine_tools(py: Python<'_>, specs: &[ToolSpec<'_>], first: usize) -> PyResult<Vec<Tool>> {
    let mut tools = Vec::with_capacity(specs.len());
    for (i, (name, description, schema, source, tool)) in specs.iter().enumerate() {
        // A null or non-object schema becomes the empty object schema in the engine.
        let schema = from_py(schema)?;
        let source = ToolSource::parse(source).unwrap_or(ToolSource::Custom);
        let t = if source == ToolSource::Relay {
            Tool::relay(name, description, Some(schema))
        } else {
            Tool::new(name, description, schema, source, Arc::new(PyTool::new(py, tool)?))
        };
        tools.push(t.with_host_ref((first + i) as u64));
    }
    Ok(tools)
}

fn warnings_of(tk: &mut Toolkit) -> Vec<(String, String)> {
    tk.take_warnings().into_iter().map(|w| (w.code.to_string(), w.message)).collect()
}

#[pymethods]
impl PyToolkit {
    #[new]
    fn new<'py>(py: Python<'py>, specs: Vec<ToolSpec<'py>>) -> PyResult<Self> {
        let mut tk = error::map(py, Toolkit::new(engine_tools(py, &specs, 0)?))?;
        let warnings = warnings_of(&mut tk);
        let objects = specs.into_iter().map(|s| s.4).collect();
        Ok(PyToolkit { inner: Arc::new(tk), objects, warnings })
    }

    /// A new toolkit: this one with `specs` added (the engine's rules for names); its
    /// warnings are those of the addition only.
    fn registered<'py>(&self, py: Python<'py>, specs: Vec<ToolSpec<'py>>) -> PyResult<Self> {
        let mut tk = (*self.inner).clone();
        error::map(py, tk.register(engine_tools(py, &specs, self.objects.len())?))?;
        let warnings = warnings_of(&mut tk);
        let mut objects: Vec<Py<PyAny>> = self.objects.iter().map(|o| o.clone_ref(py)).collect();
        objects.extend(specs.into_iter().map(|s| s.4));
        Ok(PyToolkit { inner: Arc::new(tk), objects, warnings })
    }

    /// The tool names the engine kept, in order (sanitised).
    fn names(&self) -> Vec<String> {
        self.inner.tools().iter().map(|t| t.name().to_string()).collect()
    }

    /// The package's `Tool` objects the engine kept, in order.
    fn tool_objects(&self, py: Python<'_>) -> Vec<Py<PyAny>> {
        let by_ref = |t: &Tool| t.host_ref().and_then(|r| self.objects.get(r as usize)).map(|o| o.clone_ref(py));
        self.inner.tools().iter().filter_map(by_ref).collect()
    }

    /// The declarations for `style`: `openai`, `anthropic` or `gemini`.
    fn declarations<'py>(&self, py: Python<'py>, style: &str) -> PyResult<Bound<'py, PyAny>> {
        let decls = match style {
            "openai" => self.inner.to_openai(),
            "anthropic" => self.inner.to_anthropic(),
            "gemini" => self.inner.to_gemini(),
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "toolnexus: style must be openai, anthropic or gemini, got {other:?}"
                )))
            }
        };
        to_py(py, &Value::Array(decls))
    }

    /// Runs one tool on the loop `waker` serves, resolving `future` with its ToolResult as JSON
    /// text. The returned handle owns the execution: keep it until `future` is done.
    fn execute(
        &self,
        py: Python<'_>,
        waker: PyRef<'_, LoopWaker>,
        future: Py<PyAny>,
        name: String,
        args: Bound<'_, PyAny>,
        answer: Bound<'_, PyAny>,
    ) -> PyResult<RunTask> {
        let args = from_py(&args)?;
        let answer = match from_py(&answer)? {
            Value::Null => None,
            v => Some(error::map(py, engine::Answer::from_json(&v))?),
        };
        let tk = self.inner.clone();
        let fut = async move {
            let ctx = ToolContext { answer, ..ToolContext::default() };
            let r = tk.execute(&name, args, ctx).await?;
            serde_json::to_string(&r).map_err(|e| engine::Error::new(engine::ErrorKind::Internal, e.to_string()))
        };
        RunTask::start(py, &waker, future, CancellationToken::new(), None, fut)
    }
}
