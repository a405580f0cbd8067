//! `_native.Toolkit`: the engine's toolkit, built from the package's `Tool` objects
//! (`Toolkit(specs)`) or from its sources (`create_toolkit`).

use std::sync::Arc;

use engine::{
    CancellationToken, Tool, ToolContext, ToolHandler, ToolResult, ToolSource, Toolkit, ToolkitHost, ToolkitSpec,
};
use futures_util::future::BoxFuture;
use pyo3::prelude::*;
use serde_json::Value;

use crate::bridge::{LoopWaker, MakePy, RunTask};
use crate::convert::{from_py, to_py};
use crate::error;
use crate::host::PyTool;
use crate::sources::{skill_infos, warning_pairs, EngineTool, PySkillProvider};

/// `(name, description, input_schema, source, tool, engine)` as the package passes it:
/// `engine` is the engine tool a package `Tool` stands for (built-ins, skill, MCP, HTTP).
type ToolSpec<'py> = (String, String, Bound<'py, PyAny>, String, Py<PyAny>, Option<Py<EngineTool>>);

/// An engine tool under the declaration its package `Tool` gives (which the host may edit).
struct Engine(Tool);

impl ToolHandler for Engine {
    fn execute(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, engine::Result<ToolResult>> {
        let tool = self.0.clone();
        Box::pin(async move { tool.execute(args, ctx).await })
    }
}

/// An engine toolkit. Built from `(name, description, input_schema, source, tool, engine)`
/// tuples; `source == "relay"` makes a declaration-only relay tool.
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
    for (i, (name, description, schema, source, tool, engine)) in specs.iter().enumerate() {
        // A null or non-object schema becomes the empty object schema in the engine.
        let schema = from_py(schema)?;
        let source = ToolSource::parse(source).unwrap_or(ToolSource::Custom);
        let t = if source == ToolSource::Relay {
            Tool::relay(name, description, Some(schema))
        } else if let Some(engine) = engine {
            Tool::new(name, description, schema, source, Arc::new(Engine(engine.get().inner.clone())))
        } else {
            Tool::new(name, description, schema, source, Arc::new(PyTool::new(py, tool)?))
        };
        tools.push(t.with_host_ref((first + i) as u64));
    }
    Ok(tools)
}

fn warnings_of(tk: &mut Toolkit) -> Vec<(String, String)> {
    warning_pairs(tk.take_warnings())
}

/// Builds a toolkit from its sources (`ToolkitSpec` as JSON, the host's own tools and
/// callables); `future` gets the `Toolkit`. A set `cancel_event` aborts the MCP load.
#[pyfunction]
#[pyo3(signature = (waker, future, options, specs, skill_provider=None, wait_for=None, cancel_event=None))]
#[allow(clippy::too_many_arguments)]
pub fn create_toolkit<'py>(
    py: Python<'py>,
    waker: Bound<'py, LoopWaker>,
    future: Py<PyAny>,
    options: Bound<'py, PyAny>,
    specs: Vec<ToolSpec<'py>>,
    skill_provider: Option<Py<PyAny>>,
    wait_for: Option<Py<PyAny>>,
    cancel_event: Option<Py<PyAny>>,
) -> PyResult<RunTask> {
    let spec = error::map(py, ToolkitSpec::from_json(&from_py(&options)?))?;
    let cancel = CancellationToken::new();
    let host = ToolkitHost {
        extra_tools: engine_tools(py, &specs, 0)?,
        skill_provider: skill_provider
            .filter(|p| !p.is_none(py))
            .map(|func| Arc::new(PySkillProvider { func }) as Arc<dyn engine::SkillProvider>),
        wait_for: crate::mcp::elicitation_wait_for(py, wait_for, &waker),
        cancel: cancel.clone(),
    };
    let objects: Vec<Py<PyAny>> = specs.into_iter().map(|s| s.4).collect();
    let fut = async move {
        let mut tk = Toolkit::create(spec.value, host).await?;
        let mut warnings = warning_pairs(spec.warnings);
        warnings.extend(warnings_of(&mut tk));
        let make: MakePy =
            Box::new(move |py| Ok(Py::new(py, PyToolkit { inner: Arc::new(tk), objects, warnings })?.into_any()));
        Ok(make)
    };
    RunTask::start_object(py, waker.get(), future, cancel, cancel_event, fut)
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

    /// The skill catalog for the system prompt (empty without a skill source).
    fn skills_prompt(&self) -> &str {
        self.inner.skills_prompt()
    }

    /// The skills the toolkit exposes, as `SkillInfo` dicts.
    fn skills<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        skill_infos(py, self.inner.skills().skills())
    }

    /// Every configured MCP server's status by name.
    fn mcp_status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let status: serde_json::Map<String, Value> =
            self.inner.mcp_status().into_iter().map(|(k, v)| (k, Value::from(v.as_str()))).collect();
        to_py(py, &Value::Object(status))
    }

    /// Stops the MCP servers the toolkit started (idempotent).
    fn close(&self, py: Python<'_>, waker: PyRef<'_, LoopWaker>, future: Py<PyAny>) -> PyResult<RunTask> {
        let tk = self.inner.clone();
        let fut = async move {
            tk.close().await;
            Ok(String::new())
        };
        RunTask::start(py, &waker, future, CancellationToken::new(), None, fut)
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

    /// The tools the engine kept, in order: the package's `Tool` object of each one the host
    /// gave, an `EngineTool` for each one a source made.
    fn tool_objects(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        let object = |t: &Tool| -> PyResult<Py<PyAny>> {
            match t.host_ref().and_then(|r| self.objects.get(r as usize)) {
                Some(o) => Ok(o.clone_ref(py)),
                None => Ok(Py::new(py, EngineTool { inner: t.clone() })?.into_any()),
            }
        };
        self.inner.tools().iter().map(object).collect()
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
