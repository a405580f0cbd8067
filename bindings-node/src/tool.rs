//! Tools: `defineTool` (a JS `run` function the engine calls through a weak
//! ThreadsafeFunction), `relayTool` (a declaration the host executes), the `Tool` class
//! both return, and any object shaped like the JS port's `Tool` interface (its `execute`
//! called the same way).

use std::sync::Arc;

use engine::{ToolContext, ToolHandler, ToolSource};
use futures_util::future::BoxFuture;
use napi::bindgen_prelude::{
    ClassInstance, FromNapiValue, JsObjectValue, JsValuesTupleIntoVec, Object, PromiseRaw, ToNapiValue, Unknown,
};
use napi::{sys, Env, JsValue, ValueType};
use napi_derive::napi;
use serde_json::Value;

use crate::args::{arg, object_arg, optional_object_arg, type_of};
use crate::call::{call, callback, method, Callback, MaybePromise};
use crate::convert::{to_json_text, tool_result_from_json, Answer, ToolResult, ToolValue};
use crate::error::{invalid, throw};
use crate::helpers::{self, Helper};

/// The second argument of a tool's `run`.
#[napi(object, object_from_js = false)]
#[allow(dead_code)] // declares the TypeScript shape of what `ToolCall` builds
pub struct ToolRunContext {
    /// The provider's tool-call id: the same on the first run, the re-run after an answer and
    /// a durable resume (an idempotency key for tools with side effects).
    pub call_id: String,
    /// Present only when the tool re-runs to consume the answer to its own suspension.
    pub answer: Option<Answer>,
    /// Milliseconds left before the run's deadline, when it has one.
    pub timeout: Option<f64>,
}

/// One call of a JS tool: converted to `(args, ctx)` on the JS thread.
pub struct ToolCall {
    args: Value,
    answer: Option<engine::Answer>,
    call_id: String,
    timeout_ms: Option<f64>,
}

impl JsValuesTupleIntoVec for ToolCall {
    /// Through the `toolCall` helper (`helpers.rs`): the arguments are made by `JSON.parse`, as
    /// the JS port reads them (napi's own conversion made an integer past 2^32 a BigInt), in
    /// one call instead of napi's per property.
    fn into_vec(self, env: sys::napi_env) -> napi::Result<Vec<sys::napi_value>> {
        let undefined = |env| unsafe { <()>::to_napi_value(env, ()) };
        // SAFETY (the conversions): napi's own call, on the JS thread.
        let args = unsafe { <&str>::to_napi_value(env, &to_json_text(&self.args)?) }?;
        let call_id = unsafe { String::to_napi_value(env, self.call_id) }?;
        let answer = match self.answer {
            Some(a) => unsafe { Answer::to_napi_value(env, Answer::from(a)) }?,
            None => undefined(env)?,
        };
        let timeout = match self.timeout_ms {
            Some(ms) => unsafe { f64::to_napi_value(env, ms) }?,
            None => undefined(env)?,
        };
        let pair = helpers::call(env, Helper::ToolCall, &[args, call_id, answer, timeout])?;
        let (mut args, mut ctx) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: `pair` is the helper's two-element array, a value of `env`.
        unsafe {
            napi::check_status!(sys::napi_get_element(env, pair, 0, &mut args))?;
            napi::check_status!(sys::napi_get_element(env, pair, 1, &mut ctx))?;
        }
        Ok(vec![args, ctx])
    }
}

/// What a JS tool function answered, read on the JS thread into the engine's result.
pub trait Answered: 'static + FromNapiValue + Send {
    fn result(self) -> engine::Result<engine::ToolResult>;
}

impl Answered for ToolValue {
    fn result(self) -> engine::Result<engine::ToolResult> {
        self.0
    }
}

/// A JS `run(args, ctx)` (or a tool object's `execute`) as the engine's tool handler. A throw
/// or a rejection becomes an error result whose output is the error's message, or the
/// `String()` of a thrown value that is not an Error (the run goes on).
struct JsTool<V: Answered>(Arc<Callback<ToolCall, V>>);

impl<V: Answered> ToolHandler for JsTool<V> {
    fn execute(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, engine::Result<engine::ToolResult>> {
        let f = self.0.clone();
        let call_value = ToolCall {
            args,
            answer: ctx.answer,
            call_id: ctx.call_id,
            timeout_ms: ctx.timeout.map(|d| d.as_secs_f64() * 1000.0),
        };
        Box::pin(async move { call(&f, call_value).await?.result() })
    }
}

/// What a tool object's `execute` answered: a ToolResult `{output, isError, metadata?}`
/// (`isError` defaults to `false`; a non-string output is sent as its JSON text).
pub struct ExecuteAnswer(engine::Result<engine::ToolResult>);

impl FromNapiValue for ExecuteAnswer {
    unsafe fn from_napi_value(env: sys::napi_env, v: sys::napi_value) -> napi::Result<Self> {
        // SAFETY: called by napi on the JS thread with a live value of `env`.
        let unknown = unsafe { Unknown::from_raw_unchecked(env, v) };
        let not_a_result = || {
            invalid(format!(
                "execute must answer a ToolResult {{output, isError, metadata?}}, got {}",
                type_of(unknown)
            ))
        };
        if unknown.get_type()? != ValueType::Object || unknown.is_array()? {
            return Ok(ExecuteAnswer(Err(not_a_result())));
        }
        let answer = match unsafe { Value::from_napi_value(env, v) } {
            Ok(value) => tool_result_from_json(&value),
            Err(_) => Err(not_a_result()),
        };
        Ok(ExecuteAnswer(answer))
    }
}

impl Answered for ExecuteAnswer {
    fn result(self) -> engine::Result<engine::ToolResult> {
        self.0
    }
}

/// A tool given to `createToolkit` or `register`: a [`Tool`] of this package, or any object
/// shaped like the JS port's `Tool` interface (`name`, `description`, `inputSchema`,
/// `source?`, `execute(args, ctx)`). `what` names the argument in errors.
pub fn tool_arg(env: &Env, value: Unknown, func: &str, what: &str) -> napi::Result<engine::Tool> {
    if value.get_type()? == ValueType::Object && !value.is_array()? {
        // SAFETY: a live value of `env`; a value that is not a wrapped `Tool` fails cleanly.
        if let Ok(t) = unsafe { ClassInstance::<Tool>::from_napi_value(env.raw(), value.raw()) } {
            return Ok(t.inner.clone());
        }
        return tool_object(env, &Object::from_raw(env.raw(), value.raw()), func, what);
    }
    let message = format!(
        "{func}: {what} must be a Tool (defineTool, relayTool) or an object with name, description, inputSchema \
         and execute(args, ctx), got {}",
        type_of(value)
    );
    Err(throw(env, invalid(message)))
}

fn tool_object(env: &Env, obj: &Object, func: &str, what: &str) -> napi::Result<engine::Tool> {
    let field = |name: &str| -> napi::Result<(Unknown, String)> {
        Ok((obj.get_named_property::<Unknown>(name)?, format!("{what}.{name}")))
    };
    let (v, path) = field("name")?;
    let name: String = arg(env, v, func, &path, "a string")?;
    let (v, path) = field("description")?;
    let description: Option<String> = arg(env, v, func, &path, "a string")?;
    let (v, path) = field("inputSchema")?;
    let schema: Option<Value> = arg(env, v, func, &path, "a JSON Schema object")?;
    let (v, path) = field("source")?;
    let source: Option<String> = arg(env, v, func, &path, "a string")?;
    // Absent, `custom`: what the JS port's loop reports for a tool without a source.
    let source = source_of(env, source.as_deref(), ToolSource::Custom, func, &path)?;
    let handler: Arc<dyn ToolHandler> = match method::<ToolCall, MaybePromise<ExecuteAnswer>>(obj, "execute")? {
        Some(execute) => Arc::new(JsTool(callback(execute)?)),
        None => Arc::new(NotCallable("tool.execute")),
    };
    Ok(engine::Tool::new(&name, &description.unwrap_or_default(), schema.unwrap_or(Value::Null), source, handler))
}

/// A tool whose function is not a function. As in the JS port, which looks it up only to call
/// it, that is found when the tool runs: its result is the error JS gives for the call
/// (`opts.run is not a function`).
struct NotCallable(&'static str);

impl ToolHandler for NotCallable {
    fn execute(&self, _: Value, _: ToolContext) -> BoxFuture<'static, engine::Result<engine::ToolResult>> {
        let result = engine::ToolResult::error(format!("{} is not a function", self.0));
        Box::pin(async move { Ok(result) })
    }
}

/// A tool's `source` string (`default` when absent); `relay` is only for `relayTool`.
fn source_of(env: &Env, source: Option<&str>, default: ToolSource, func: &str, path: &str) -> napi::Result<ToolSource> {
    match source {
        None => Ok(default),
        Some(s) => match ToolSource::parse(s) {
            Some(ToolSource::Relay) | None => Err(throw(env, invalid(format!("{func}: unknown {path} {s:?}")))),
            Some(src) => Ok(src),
        },
    }
}

/// A tool: its declaration and, unless it is a relay tool, its `run`.
#[napi]
pub struct Tool {
    pub(crate) inner: engine::Tool,
}

#[napi]
impl Tool {
    /// The (sanitised) name.
    #[napi(getter)]
    pub fn name(&self) -> String {
        self.inner.name().to_string()
    }

    #[napi(getter)]
    pub fn description(&self) -> String {
        self.inner.description().to_string()
    }

    /// The JSON Schema of the arguments.
    #[napi(getter, ts_return_type = "Record<string, unknown>")]
    pub fn input_schema(&self) -> Value {
        self.inner.input_schema().clone()
    }

    /// `native`, `relay`, ... (the JS port's ToolSource strings).
    #[napi(getter)]
    pub fn source(&self) -> String {
        self.inner.source().as_str().to_string()
    }

    /// Runs the tool outside a run (a relay tool answers with an error result).
    #[napi(
        ts_args_type = "args?: Record<string, unknown>, ctx?: ExecuteContext",
        ts_return_type = "Promise<ToolResult>"
    )]
    pub fn execute<'e>(
        &self,
        env: &'e Env,
        args: Unknown<'e>,
        ctx: Unknown<'e>,
    ) -> napi::Result<PromiseRaw<'e, ToolResult>> {
        let args: Option<Value> = arg(env, args, "Tool.execute", "args", "an object")?;
        let ctx: Option<ExecuteContext> = optional_object_arg(env, ctx, "Tool.execute", "ctx")?;
        let tool = self.inner.clone();
        let ctx = tool_context(ctx);
        let args = args.unwrap_or(Value::Null);
        // Only a host failure that aborts runs is an error here, and JS tools raise none.
        let work = async move { tool.execute(args, ctx).await };
        crate::keepalive::spawn(env, crate::keepalive::next_id(), work, |env, r| {
            r.map(ToolResult::from).map_err(|e| throw(env, e))
        })
    }
}

/// What `execute` may tell the tool.
#[napi(object)]
pub struct ExecuteContext {
    /// The resolution of the tool's own earlier suspension.
    pub answer: Option<Answer>,
    /// The id the tool sees as `ctx.callId`.
    pub call_id: Option<String>,
}

/// The engine's context for an `execute` outside a run.
pub fn tool_context(ctx: Option<ExecuteContext>) -> ToolContext {
    let ctx = ctx.unwrap_or(ExecuteContext { answer: None, call_id: None });
    let answer = ctx.answer.map(|a| engine::Answer { id: a.id, ok: a.ok, data: a.data, reason: a.reason });
    ToolContext { answer, call_id: ctx.call_id.unwrap_or_default(), ..ToolContext::default() }
}

// `run` is not a field: `dts-header.d.ts` declares it (required, as in the JS port), and
// `define_tool` reads it as any value, checked only when the tool runs.
/// `defineTool` options (`run` is declared with the first part of this interface, above).
#[napi(object, object_to_js = false)]
pub struct DefineToolOptions {
    pub name: String,
    pub description: Option<String>,
    #[napi(ts_type = "Record<string, unknown>")]
    pub input_schema: Option<Value>,
    /// `native` (default), `custom`, `http`, `mcp`, `skill`, `builtin` or `a2a`.
    pub source: Option<String>,
}

/// Wraps a JS function as a tool. Like the JS port's, it takes one argument (a second one is
/// ignored) and calls `opts.run` with `opts` as `this`.
#[napi(ts_args_type = "opts: DefineToolOptions", ts_return_type = "Tool")]
pub fn define_tool(env: &Env, opts: Unknown) -> napi::Result<Tool> {
    let raw = opts;
    let opts: DefineToolOptions = object_arg(env, opts, "defineTool", "opts")?;
    let source = source_of(env, opts.source.as_deref(), ToolSource::Native, "defineTool", "opts.source")?;
    let run = method::<ToolCall, MaybePromise<ToolValue>>(&Object::from_raw(env.raw(), raw.raw()), "run")?;
    let handler: Arc<dyn ToolHandler> = match run {
        Some(run) => Arc::new(JsTool(callback(run)?)),
        None => Arc::new(NotCallable("opts.run")),
    };
    let schema = opts.input_schema.unwrap_or(Value::Null);
    let description = opts.description.unwrap_or_default();
    Ok(Tool { inner: engine::Tool::new(&opts.name, &description, schema, source, handler) })
}

/// `relayTool` options.
#[napi(object, object_to_js = false)]
pub struct RelayToolOptions {
    pub name: String,
    pub description: Option<String>,
    #[napi(ts_type = "Record<string, unknown>")]
    pub input_schema: Option<Value>,
}

/// A declaration-only tool: the model may call it, the run suspends with a `tool_call`
/// Request carrying the calls, and the host supplies the results in its Answer.
#[napi(ts_args_type = "opts: RelayToolOptions", ts_return_type = "Tool")]
pub fn relay_tool(env: &Env, opts: Unknown) -> napi::Result<Tool> {
    let opts: RelayToolOptions = object_arg(env, opts, "relayTool", "opts")?;
    let description = opts.description.unwrap_or_default();
    Ok(Tool { inner: engine::Tool::relay(&opts.name, &description, opts.input_schema) })
}

/// Replaces every character outside `[a-zA-Z0-9_-]` with `_`, as tool names are made.
#[napi(ts_args_type = "value: string", ts_return_type = "string")]
pub fn sanitize(env: &Env, value: Unknown) -> napi::Result<String> {
    let value: String = arg(env, value, "sanitize", "value", "a string")?;
    Ok(engine::sanitize(&value))
}
