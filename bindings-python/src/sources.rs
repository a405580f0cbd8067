//! The engine's tool sources for Python: its tools as `_native.EngineTool` objects (built-ins,
//! the skill tool, MCP and HTTP tools), the built-in and HTTP factories, skill loading, and
//! the hop that runs a tool on the event loop for a caller on another thread (MCP serve).
//! The options are handed to the engine as JSON: its readers check them and word the errors.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine::{
    BuiltinsSpec, CancellationToken, Error, ErrorKind, HookFuture, HttpToolSpec, Parsed, SkillDef, SkillInfo,
    SkillProvider, SkillSkip, SkillsSpec, Tool, ToolContext, ToolHandler, ToolResult, Warning,
};
use futures_util::future::BoxFuture;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use serde_json::{json, Value};
use tokio::sync::oneshot;

use crate::bridge::{LoopWaker, RunTask, Sink};
use crate::convert::{from_py, to_py};
use crate::error::{self, PyHostError};

/// A warning as the package shows it: `(code, message)`.
pub type WarningPair = (String, String);

/// Engine tools and what making them warned about.
type ToolsAndWarnings = (Vec<Py<EngineTool>>, Vec<WarningPair>);

/// Warnings as `(code, message)`, as the package shows them.
pub fn warning_pairs(warnings: Vec<Warning>) -> Vec<(String, String)> {
    warnings.into_iter().map(|w| (w.code.to_string(), w.message)).collect()
}

/// An optional Python value as JSON (`None`: null).
fn json_of(v: Option<&Bound<'_, PyAny>>) -> PyResult<Value> {
    v.map(from_py).transpose().map(Option::unwrap_or_default)
}

/// One of the engine's own tools, run by the engine (`execute` below).
#[pyclass(frozen, module = "toolnexus._native", name = "EngineTool")]
pub struct EngineTool {
    pub inner: Tool,
}

#[pymethods]
impl EngineTool {
    /// The (sanitised) name.
    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }

    /// The description.
    #[getter]
    fn description(&self) -> &str {
        self.inner.description()
    }

    /// Where the tool comes from (`builtin`, `skill`, `mcp`, `http`).
    #[getter]
    fn source(&self) -> &'static str {
        self.inner.source().as_str()
    }

    /// The JSON-Schema of its arguments.
    #[getter]
    fn input_schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, self.inner.input_schema())
    }

    /// Runs the tool on the loop `waker` serves, resolving `future` with its ToolResult as
    /// JSON text. The handle owns the call: dropping or cancelling it stops the tool.
    #[pyo3(signature = (waker, future, args, answer=None, timeout=None, call_id=None))]
    #[allow(clippy::too_many_arguments)]
    fn execute(
        &self,
        py: Python<'_>,
        waker: PyRef<'_, LoopWaker>,
        future: Py<PyAny>,
        args: Bound<'_, PyAny>,
        answer: Option<Bound<'_, PyAny>>,
        timeout: Option<f64>,
        call_id: Option<String>,
    ) -> PyResult<RunTask> {
        let args = from_py(&args)?;
        let answer = match json_of(answer.as_ref())? {
            Value::Null => None,
            v => Some(error::map(py, engine::Answer::from_json(&v))?),
        };
        let timeout = timeout
            .map(Duration::try_from_secs_f64)
            .transpose()
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("toolnexus: ToolContext.timeout: {e}")))?;
        let cancel = CancellationToken::new();
        let ctx = ToolContext {
            answer,
            cancel: cancel.clone(),
            timeout,
            call_id: call_id.unwrap_or_default(),
            ..ToolContext::default()
        };
        let tool = self.inner.clone();
        let fut = async move { result_text(tool.execute(args, ctx).await?) };
        RunTask::start(py, &waker, future, cancel, None, fut)
    }
}

fn result_text(r: ToolResult) -> engine::Result<String> {
    serde_json::to_string(&r).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))
}

/// Engine tools as `EngineTool` objects.
pub fn engine_tool_objects(py: Python<'_>, tools: Vec<Tool>) -> PyResult<Vec<Py<EngineTool>>> {
    tools.into_iter().map(|inner| Py::new(py, EngineTool { inner })).collect()
}

fn builtins_spec(py: Python<'_>, cfg: Option<&Bound<'_, PyAny>>) -> PyResult<Parsed<BuiltinsSpec>> {
    error::map(py, BuiltinsSpec::from_json(&json_of(cfg)?))
}

/// All ten built-in tools whatever the toggles say (upstream's `create_builtin_tools`).
#[pyfunction]
#[pyo3(signature = (cfg=None))]
pub fn create_builtin_tools(py: Python<'_>, cfg: Option<Bound<'_, PyAny>>) -> PyResult<ToolsAndWarnings> {
    let spec = builtins_spec(py, cfg.as_ref())?;
    Ok((engine_tool_objects(py, engine::create_builtin_tools(&spec.value))?, warning_pairs(spec.warnings)))
}

/// The built-in tools the option selects (upstream's `select_builtins`).
#[pyfunction]
#[pyo3(signature = (cfg=None))]
pub fn select_builtins(py: Python<'_>, cfg: Option<Bound<'_, PyAny>>) -> PyResult<ToolsAndWarnings> {
    let spec = builtins_spec(py, cfg.as_ref())?;
    let tools = error::map(py, engine::builtin_tools(&spec.value))?;
    Ok((engine_tool_objects(py, tools)?, warning_pairs(spec.warnings)))
}

/// Whether the option leaves the built-in source on.
#[pyfunction]
#[pyo3(signature = (cfg=None))]
pub fn builtins_enabled(py: Python<'_>, cfg: Option<Bound<'_, PyAny>>) -> PyResult<(bool, Vec<(String, String)>)> {
    let spec = builtins_spec(py, cfg.as_ref())?;
    Ok((engine::builtins_enabled(&spec.value), warning_pairs(spec.warnings)))
}

/// The interpreter `bash` runs commands with.
#[pyfunction]
#[pyo3(signature = (cfg=None))]
pub fn builtin_shell(py: Python<'_>, cfg: Option<Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    let spec = builtins_spec(py, cfg.as_ref())?;
    error::map(py, engine::builtin_shell(&spec.value))
}

/// The HTTP tool an `HttpToolSpec` object declares.
#[pyfunction]
pub fn http_tool(py: Python<'_>, spec: Bound<'_, PyAny>) -> PyResult<EngineTool> {
    let spec = error::map(py, HttpToolSpec::from_json(&from_py(&spec)?))?;
    Ok(EngineTool { inner: error::map(py, engine::http_tool(spec))? })
}

/// `${NAME}` in each header value expanded from the environment, in order.
#[pyfunction]
pub fn expand_env_headers(headers: Vec<(String, String)>) -> Vec<(String, String)> {
    engine::expand_env_headers(&headers)
}

fn skills_json(skills: &[SkillInfo]) -> Value {
    Value::Array(skills.iter().map(SkillInfo::to_json).collect())
}

fn skips_json(skips: &[SkillSkip]) -> Value {
    Value::Array(skips.iter().map(SkillSkip::to_json).collect())
}

/// The skill infos of a catalog, as dicts.
pub fn skill_infos<'py>(py: Python<'py>, skills: &[SkillInfo]) -> PyResult<Bound<'py, PyAny>> {
    to_py(py, &skills_json(skills))
}

/// The options of upstream's `load_skills` / `list_skills` (`dirs`, `skills`, `filter`,
/// `sample_limit`), read by the engine.
fn load_spec(py: Python<'_>, options: &Bound<'_, PyAny>) -> PyResult<SkillsSpec> {
    error::map(py, SkillsSpec::from_load_json(&from_py(options)?))
}

/// The catalog of `options` (upstream's `load_skills` arguments): `(skills, skipped, prompt,
/// tool, warnings)`. The folders are read with the GIL released.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn load_skills<'py>(
    py: Python<'py>,
    options: Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, String, Option<EngineTool>, Vec<(String, String)>)> {
    let spec = load_spec(py, &options)?;
    let loaded = py.detach(|| engine::load_skills_now(&spec));
    let c = loaded.value;
    Ok((
        skill_infos(py, c.skills())?,
        to_py(py, &skips_json(c.skipped()))?,
        c.prompt(),
        c.tool().map(|inner| EngineTool { inner }),
        warning_pairs(loaded.warnings),
    ))
}

/// The unfiltered inventory of `options` (`dirs`, `skills`): `(skills, skipped, warnings)`.
#[pyfunction]
pub fn list_skills<'py>(
    py: Python<'py>,
    options: Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Vec<WarningPair>)> {
    let spec = load_spec(py, &options)?;
    let listed = py.detach(|| engine::list_skills_now(&spec));
    Ok((
        skill_infos(py, &listed.value.skills)?,
        to_py(py, &skips_json(&listed.value.skipped))?,
        warning_pairs(listed.warnings),
    ))
}

/// A `skill_provider` callable (sync or async) returning skill dicts.
pub struct PySkillProvider {
    pub func: Py<PyAny>,
}

impl SkillProvider for PySkillProvider {
    fn skills(&self) -> HookFuture<Vec<SkillDef>> {
        let func = Python::attach(|py| self.func.clone_ref(py));
        Box::pin(async move {
            let args = Python::attach(|py| -> PyResult<_> {
                Ok((crate::host::bridge_fn(py, "skill_provider")?, PyTuple::new(py, [func])?.unbind()))
            })
            .map_err(|e| Python::attach(|py| PyHostError::wrap(py, e)))?;
            let out = crate::bridge::call_py(args.0, args.1).await?;
            let v = Python::attach(|py| from_py(out.bind(py)).map_err(|e| PyHostError::wrap(py, e)))?;
            // The engine's reader of a `skills` list checks what the provider returned.
            let spec = SkillsSpec::from_json(&json!({ "skills": v }))?;
            Ok(spec.value.skills.unwrap_or_default())
        })
    }
}

/// A tool whose calls come from another thread (MCP serve's connections) and must run on
/// the event loop, where the package's tools and their asyncio calls live.
pub struct OnLoop {
    inner: Tool,
    waker: Py<LoopWaker>,
}

impl OnLoop {
    /// `tool`, run on the loop `waker` serves (relay tools stay as they are: only a run
    /// answers them).
    pub fn wrap(py: Python<'_>, tool: Tool, waker: &Py<LoopWaker>) -> Tool {
        if tool.is_relay() {
            return tool;
        }
        let handler = OnLoop { inner: tool.clone(), waker: waker.clone_ref(py) };
        Tool::new(tool.name(), tool.description(), tool.input_schema().clone(), tool.source(), Arc::new(handler))
    }
}

impl ToolHandler for OnLoop {
    fn execute(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, engine::Result<ToolResult>> {
        let tool = self.inner.clone();
        let cancel = ctx.cancel.clone();
        let waker = Python::attach(|py| self.waker.clone_ref(py));
        let out = hop(waker, cancel, Box::pin(async move { result_text(tool.execute(args, ctx).await?) }));
        Box::pin(async move {
            let text = out.await?;
            serde_json::from_str(&text).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))
        })
    }
}

/// `wait_for` for MCP elicitations, which the MCP client asks from its own tasks: the
/// host's callable is called on the event loop.
pub struct WaitForOnLoop {
    pub inner: Arc<dyn engine::WaitFor>,
    pub waker: Py<LoopWaker>,
}

impl engine::WaitFor for WaitForOnLoop {
    fn wait_for(&self, request: engine::Request) -> HookFuture<Option<engine::Answer>> {
        let inner = self.inner.clone();
        let waker = Python::attach(|py| self.waker.clone_ref(py));
        let out = hop(
            waker,
            CancellationToken::new(),
            Box::pin(async move {
                let answer = inner.wait_for(request).await?;
                Ok(answer.map(|a| a.to_json()).unwrap_or(Value::Null).to_string())
            }),
        );
        Box::pin(async move {
            let v: Value =
                serde_json::from_str(&out.await?).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
            if v.is_null() {
                return Ok(None);
            }
            engine::Answer::from_json(&v).map(Some)
        })
    }
}

/// A call waiting to start on the loop.
struct HopCall {
    fut: Mutex<Option<BoxFuture<'static, engine::Result<String>>>>,
    tx: Mutex<Option<oneshot::Sender<engine::Result<String>>>>,
    /// The call's run, once started: dropped (stopping the work) when the caller gives up.
    task: Mutex<Option<RunTask>>,
    cancel: CancellationToken,
}

/// What the loop runs: starts the call there.
#[pyclass(frozen, module = "toolnexus._native", name = "HopStart")]
pub struct HopStart {
    call: Arc<HopCall>,
    waker: Py<LoopWaker>,
}

#[pymethods]
impl HopStart {
    fn __call__(&self, py: Python<'_>) -> PyResult<()> {
        let call = &self.call;
        let Some(fut) = call.fut.lock().unwrap_or_else(|p| p.into_inner()).take() else { return Ok(()) };
        let Some(tx) = call.tx.lock().unwrap_or_else(|p| p.into_inner()).take() else { return Ok(()) };
        let waker = self.waker.borrow(py);
        let sink = Sink::Rust(Mutex::new(Some(tx)));
        let task = RunTask::start_with(py, &waker, sink, call.cancel.clone(), None, async move {
            fut.await.map(crate::bridge::Outcome::Text)
        })?;
        *call.task.lock().unwrap_or_else(|p| p.into_inner()) = Some(task);
        Ok(())
    }
}

/// Runs `fut` on the loop `waker` serves, polled there like a run, and gives its outcome to
/// the caller, whatever thread it awaits on. Dropping the returned future drops the work.
fn hop(
    waker: Py<LoopWaker>,
    cancel: CancellationToken,
    fut: BoxFuture<'static, engine::Result<String>>,
) -> BoxFuture<'static, engine::Result<String>> {
    let (tx, rx) = oneshot::channel();
    let call =
        Arc::new(HopCall { fut: Mutex::new(Some(fut)), tx: Mutex::new(Some(tx)), task: Mutex::new(None), cancel });
    let scheduled = Python::attach(|py| -> PyResult<()> {
        let Some(event_loop) = waker.borrow(py).event_loop(py) else {
            return Err(pyo3::exceptions::PyRuntimeError::new_err("toolnexus: the event loop is gone"));
        };
        let start = Py::new(py, HopStart { call: call.clone(), waker: waker.clone_ref(py) })?;
        event_loop.call_method1("call_soon_threadsafe", (start,))?;
        Ok(())
    });
    Box::pin(async move {
        scheduled.map_err(|e| Python::attach(|py| PyHostError::wrap(py, e)))?;
        let out = rx.await.map_err(|_| Error::new(ErrorKind::Cancelled, "the event loop dropped the call"));
        // Done (or given up on): release the run.
        drop(call.task.lock().unwrap_or_else(|p| p.into_inner()).take());
        out?
    })
}
