//! `createToolkit` and the `Toolkit` class: the engine's toolkit (first name wins, relay
//! names checked against the built-ins) with the JS port's methods.

use std::sync::{Arc, RwLock};

use napi::bindgen_prelude::{Array, Either, PromiseRaw, Unknown};
use napi::{Env, JsValue};
use napi_derive::napi;
use serde_json::Value;

use crate::args::{arg, optional_object_arg, type_of};
use crate::convert::ToolResult;
use crate::error::{invalid, throw};
use crate::tool::{tool_arg, tool_context, ExecuteContext, Tool};

/// `createToolkit` options.
#[napi(object, object_to_js = false)]
pub struct ToolkitOptions<'a> {
    /// The JS port's built-in toolset switch (`false`, `{disabled: true}`, `{enabled: false}`
    /// turn it off). The engine ships no built-in tools yet, so a toolkit holds only the
    /// tools given to it either way, and asking for them (the default) emits a warning.
    #[napi(ts_type = "boolean | { disabled?: boolean; enabled?: boolean; tools?: Record<string, boolean> }")]
    pub builtins: Option<Value>,
    /// The tools: from `defineTool` or `relayTool`, or objects shaped like the JS port's
    /// `Tool` interface.
    #[napi(ts_type = "Array<Tool | ToolLike>")]
    pub extra_tools: Option<Unknown<'a>>,
}

/// An ordered set of uniquely named tools, with provider schema adapters.
#[napi]
pub struct Toolkit {
    /// Replaced whole by `register`, so a run holds the snapshot it started with.
    pub(crate) inner: RwLock<Arc<engine::Toolkit>>,
}

impl Toolkit {
    /// The current tools, for a run.
    pub(crate) fn snapshot(&self) -> Arc<engine::Toolkit> {
        match self.inner.read() {
            Ok(g) => g.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

/// The tools of an array argument `what` of `func`, each a [`Tool`] or a tool object.
fn tools_arg(env: &Env, value: Unknown, func: &str, what: &str) -> napi::Result<Vec<engine::Tool>> {
    if !value.is_array()? {
        let message = format!("{func}: {what} must be an array of tools, got {}", type_of(value));
        return Err(throw(env, invalid(message)));
    }
    let array: Array = arg(env, value, func, what, "an array of tools")?;
    let mut tools = Vec::with_capacity(array.len() as usize);
    for i in 0..array.len() {
        // In range, so always present.
        let Some(item) = array.get::<Unknown>(i)? else { continue };
        tools.push(tool_arg(env, item, func, &format!("{what}[{i}]"))?);
    }
    Ok(tools)
}

/// Builds a toolkit (async, as in the JS port).
#[napi(ts_args_type = "opts?: ToolkitOptions | undefined | null", ts_return_type = "Promise<Toolkit>")]
pub fn create_toolkit<'e>(env: &'e Env, opts: Unknown<'e>) -> napi::Result<PromiseRaw<'e, Toolkit>> {
    let opts: Option<ToolkitOptions> = optional_object_arg(env, opts, "createToolkit", "opts")?;
    let (builtins, extra) = opts.map_or((None, None), |o| (o.builtins, o.extra_tools));
    let tools = match extra {
        Some(list) if !matches!(type_of(list), "undefined" | "null") => {
            tools_arg(env, list, "createToolkit", "opts.extraTools")?
        }
        _ => Vec::new(),
    };
    let mut tk = engine::Toolkit::new(tools).map_err(|e| throw(env, e))?;
    let mut warnings: Vec<_> = engine::builtins_warning(&builtins.unwrap_or(Value::Null)).into_iter().collect();
    warnings.extend(tk.take_warnings());
    crate::warning::emit(env, &warnings)?;
    let toolkit = Toolkit { inner: RwLock::new(Arc::new(tk)) };
    env.spawn_future(async move { Ok(toolkit) })
}

/// The engine's toolkit for a list of tools, for the free adapter functions.
fn adapted(env: &Env, tools: Unknown, func: &str) -> napi::Result<engine::Toolkit> {
    let tools = tools_arg(env, tools, func, "tools")?;
    engine::Toolkit::new(tools).map_err(|e| throw(env, e))
}

/// The OpenAI declarations of `tools` (as `Toolkit.toOpenAI`).
#[napi(js_name = "toOpenAI", ts_args_type = "tools: Array<Tool | ToolLike>", ts_return_type = "any[]")]
pub fn to_openai_of(env: &Env, tools: Unknown) -> napi::Result<Vec<Value>> {
    Ok(adapted(env, tools, "toOpenAI")?.to_openai())
}

/// The Anthropic declarations of `tools` (as `Toolkit.toAnthropic`).
#[napi(js_name = "toAnthropic", ts_args_type = "tools: Array<Tool | ToolLike>", ts_return_type = "any[]")]
pub fn to_anthropic_of(env: &Env, tools: Unknown) -> napi::Result<Vec<Value>> {
    Ok(adapted(env, tools, "toAnthropic")?.to_anthropic())
}

/// The Gemini declarations of `tools` (as `Toolkit.toGemini`).
#[napi(js_name = "toGemini", ts_args_type = "tools: Array<Tool | ToolLike>", ts_return_type = "any[]")]
pub fn to_gemini_of(env: &Env, tools: Unknown) -> napi::Result<Vec<Value>> {
    Ok(adapted(env, tools, "toGemini")?.to_gemini())
}

#[napi]
impl Toolkit {
    /// The tools, in registration order.
    #[napi]
    pub fn tools(&self) -> Vec<Tool> {
        self.snapshot().tools().iter().map(|t| Tool { inner: t.clone() }).collect()
    }

    /// The tool called `name`.
    #[napi(ts_args_type = "name: string", ts_return_type = "Tool | undefined")]
    pub fn get(&self, env: &Env, name: Unknown) -> napi::Result<Either<Tool, ()>> {
        let name: String = arg(env, name, "Toolkit.get", "name", "a string")?;
        Ok(self.snapshot().get(&name).map_or(Either::B(()), |t| Either::A(Tool { inner: t.clone() })))
    }

    /// Adds tools (first name wins; a relay tool may not take a built-in tool's name): from
    /// `defineTool` or `relayTool`, or objects shaped like the JS port's `Tool` interface.
    /// Variadic as in the JS port (`index.js` flattens the arguments into one array).
    #[napi(ts_args_type = "...tools: Array<Tool | ToolLike | Array<Tool | ToolLike>>", ts_return_type = "this")]
    pub fn register(&self, env: &Env, tools: Unknown) -> napi::Result<()> {
        let tools = tools_arg(env, tools, "Toolkit.register", "tools")?;
        let mut guard = self.inner.write().map_err(|_| throw(env, invalid("toolkit lock poisoned")))?;
        let mut next = guard.as_ref().clone();
        next.register(tools).map_err(|e| throw(env, e))?;
        let warnings = next.take_warnings();
        *guard = Arc::new(next);
        drop(guard);
        crate::warning::emit(env, &warnings)?;
        Ok(())
    }

    /// Runs the tool `name` (an unknown tool is an error result naming it).
    #[napi(
        ts_args_type = "name: string, args?: Record<string, unknown>, ctx?: ExecuteContext",
        ts_return_type = "Promise<ToolResult>"
    )]
    pub fn execute<'e>(
        &self,
        env: &'e Env,
        name: Unknown<'e>,
        args: Unknown<'e>,
        ctx: Unknown<'e>,
    ) -> napi::Result<PromiseRaw<'e, ToolResult>> {
        let name: String = arg(env, name, "Toolkit.execute", "name", "a string")?;
        let args: Option<Value> = arg(env, args, "Toolkit.execute", "args", "an object")?;
        let ctx: Option<ExecuteContext> = optional_object_arg(env, ctx, "Toolkit.execute", "ctx")?;
        let toolkit = self.snapshot();
        let ctx = tool_context(ctx);
        let args = args.unwrap_or(Value::Null);
        // Only a host failure that aborts runs is an error here, and JS tools raise none.
        let work = async move { toolkit.execute(&name, args, ctx).await };
        crate::keepalive::spawn(env, crate::keepalive::next_id(), work, |env, r| {
            r.map(ToolResult::from).map_err(|e| throw(env, e))
        })
    }

    /// The OpenAI declarations: `{type: "function", function: {name, description, parameters}}`.
    #[napi(js_name = "toOpenAI", ts_return_type = "any[]")]
    pub fn to_openai(&self) -> Vec<Value> {
        self.snapshot().to_openai()
    }

    /// The Anthropic declarations: `{name, description, input_schema}`.
    #[napi(ts_return_type = "any[]")]
    pub fn to_anthropic(&self) -> Vec<Value> {
        self.snapshot().to_anthropic()
    }

    /// The Gemini declarations: `[{functionDeclarations: [...]}]`.
    #[napi(ts_return_type = "any[]")]
    pub fn to_gemini(&self) -> Vec<Value> {
        self.snapshot().to_gemini()
    }

    /// Releases the toolkit's resources (it holds no connections today).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'e>(&self, env: &'e Env) -> napi::Result<PromiseRaw<'e, ()>> {
        env.spawn_future(async { Ok(()) })
    }
}
