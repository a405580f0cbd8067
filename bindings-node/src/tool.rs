//! Tools: `defineTool` (a JS `run` function the engine calls through a weak
//! ThreadsafeFunction), `relayTool` (a declaration the host executes), and the `Tool` class
//! both return.

use std::sync::Arc;

use engine::{ToolContext, ToolHandler, ToolSource};
use futures_util::future::BoxFuture;
use napi::bindgen_prelude::{Function, JsValuesTupleIntoVec, Object, PromiseRaw, ToNapiValue};
use napi::{sys, Env, JsValue};
use napi_derive::napi;
use serde_json::Value;

use crate::callbacks::{call, callback, Callback, MaybePromise};
use crate::convert::{Answer, ToolResult, ToolValue};
use crate::error::throw;

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
    fn into_vec(self, env: sys::napi_env) -> napi::Result<Vec<sys::napi_value>> {
        let args = unsafe { Value::to_napi_value(env, self.args)? };
        let mut ctx = Object::new(&Env::from_raw(env))?;
        ctx.set("callId", self.call_id)?;
        if let Some(a) = self.answer {
            ctx.set("answer", Answer::from(a))?;
        }
        if let Some(ms) = self.timeout_ms {
            ctx.set("timeout", ms)?;
        }
        Ok(vec![args, ctx.raw()])
    }
}

/// A JS `run(args, ctx)` as the engine's tool handler. A throw or a rejection becomes an
/// error result whose output is the error's message (the run goes on).
struct JsTool(Arc<Callback<ToolCall, ToolValue>>);

impl ToolHandler for JsTool {
    fn execute(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, engine::Result<engine::ToolResult>> {
        let f = self.0.clone();
        let call_value = ToolCall {
            args,
            answer: ctx.answer,
            call_id: ctx.call_id,
            timeout_ms: ctx.timeout.map(|d| d.as_secs_f64() * 1000.0),
        };
        Box::pin(async move { call(&f, call_value).await?.0 })
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
    #[napi(ts_args_type = "args?: Record<string, unknown>, ctx?: ExecuteContext")]
    pub fn execute<'e>(
        &self,
        env: &'e Env,
        args: Option<Value>,
        ctx: Option<ExecuteContext>,
    ) -> napi::Result<PromiseRaw<'e, ToolResult>> {
        let tool = self.inner.clone();
        let ctx = tool_context(ctx);
        let args = args.unwrap_or(Value::Null);
        env.spawn_future(async move { Ok(ToolResult::from(tool.execute(args, ctx).await)) })
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

/// `defineTool` options.
#[napi(object, object_to_js = false)]
pub struct DefineToolOptions<'a> {
    pub name: String,
    pub description: Option<String>,
    #[napi(ts_type = "Record<string, unknown>")]
    pub input_schema: Option<Value>,
    /// `native` (default), `custom`, `http`, `mcp`, `skill`, `builtin` or `a2a`.
    pub source: Option<String>,
    /// Returns a string, a `{output, isError, metadata?}` ToolResult, any JSON value (sent as
    /// its JSON text), or a Promise of one of those. A throw becomes an error result.
    #[napi(ts_type = "(args: Record<string, any>, ctx: ToolRunContext) => unknown | Promise<unknown>")]
    pub run: Function<'a, ToolCall, MaybePromise<ToolValue>>,
}

/// Wraps a JS function as a tool.
#[napi]
pub fn define_tool(env: &Env, opts: DefineToolOptions) -> napi::Result<Tool> {
    let source = match opts.source.as_deref() {
        None => ToolSource::Native,
        Some(s) => match ToolSource::parse(s) {
            Some(ToolSource::Relay) | None => {
                return Err(throw(env, crate::error::invalid(format!("defineTool: unknown source {s:?}"))))
            }
            Some(src) => src,
        },
    };
    let handler = JsTool(callback(opts.run)?);
    let schema = opts.input_schema.unwrap_or(Value::Null);
    let description = opts.description.unwrap_or_default();
    Ok(Tool { inner: engine::Tool::new(&opts.name, &description, schema, source, Arc::new(handler)) })
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
#[napi]
pub fn relay_tool(opts: RelayToolOptions) -> Tool {
    let description = opts.description.unwrap_or_default();
    Tool { inner: engine::Tool::relay(&opts.name, &description, opts.input_schema) }
}
