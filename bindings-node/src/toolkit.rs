//! `createToolkit` and the `Toolkit` class: the engine's toolkit, built from its sources by
//! the engine (MCP servers, skills, built-ins, the host's tools; `Toolkit::create`), with the
//! JS port's methods. The options that are plain data go to the engine as JSON, named as the
//! user wrote them; only the host's own values (tools, `skillProvider`, `waitFor`, `signal`)
//! are wrapped here.

use std::sync::{Arc, RwLock};

use napi::bindgen_prelude::{Array, Either, Function, JsObjectValue, Object, PromiseRaw, Unknown};
use napi::{Env, JsValue, ValueType};
use napi_derive::napi;
use serde_json::Value;

use crate::args::{arg, check_function, optional_object_arg, type_of};
use crate::call::{call, callback, Callback, MaybePromise};
use crate::callbacks::JsWaitFor;
use crate::client::watch_signal;
use crate::convert::{Json, Request, ToolResult};
use crate::error::{invalid, throw, to_js};
use crate::keepalive;
use crate::options::plain_json;
use crate::tool::{tool_arg, tool_context, ExecuteContext, Tool};

/// `createToolkit` options (the JS port's names). The type the declarations show; the data
/// options are read and checked by the engine.
#[napi(object, object_to_js = false)]
#[allow(dead_code)]
pub struct ToolkitOptions<'a> {
    /// MCP servers: a config object (`{mcpServers: {...}}`, `{servers}`, `{mcp}` or the bare
    /// server map) or the path of a JSON file. Their tools come first, named
    /// `<server>_<tool>`; a server that fails is skipped with a warning (see `mcpStatus`).
    #[napi(ts_type = "string | Record<string, unknown>")]
    pub mcp_config: Option<Value>,
    /// Folders searched for `**/SKILL.md`.
    #[napi(ts_type = "string | string[]")]
    pub skills_dir: Option<Value>,
    /// Skills supplied as data, after the folders' ones.
    #[napi(ts_type = "SkillDef[]")]
    pub skills: Option<Value>,
    /// Data skills computed when the toolkit is built; a failure is a warning.
    #[napi(ts_type = "() => SkillDef[] | Promise<SkillDef[]>")]
    pub skill_provider: Option<Unknown<'a>>,
    /// Which skills are exposed: any `true` makes an allowlist, only `false`s a drop-list.
    #[napi(ts_type = "Record<string, boolean>")]
    pub skills_filter: Option<Value>,
    /// The `<skill_files>` sample size: 0 the default (10), n > 0 at most n, -1 none.
    pub skill_sample_limit: Option<f64>,
    /// Skills dropped by name (an explicit `skillsFilter` entry wins).
    pub disable_skills: Option<Vec<String>>,
    /// Tools dropped by their final name, whatever their source.
    pub disable_tools: Option<Vec<String>>,
    /// The built-in tools (on by default): `false`, `{disabled: true}` or `{enabled: false}`
    /// turn them off, `{tools: {bash: false}}` drops some, `root` confines the file tools to
    /// one folder. A host tool of the same name replaces a built-in.
    #[napi(ts_type = "BuiltinsConfig")]
    pub builtins: Option<Value>,
    /// Which of the tools sharing a name is kept (default `keep_first`).
    #[napi(ts_type = "'keep_first' | 'keep_last'")]
    pub duplicates: Option<String>,
    /// Remote A2A agents: not in this build (a non-empty list is an error).
    #[napi(ts_type = "never[]")]
    pub agents: Option<Value>,
    /// The host's tools: from `defineTool`, `relayTool` or `httpTool`, or objects shaped
    /// like the JS port's `Tool` interface.
    #[napi(ts_type = "Array<Tool | ToolLike>")]
    pub extra_tools: Option<Unknown<'a>>,
    /// Where MCP servers' questions to the user (elicitation) go: a form becomes a Request of
    /// kind `input`, a URL one of kind `authorization`. Absent, servers are told the client
    /// cannot answer.
    #[napi(ts_type = "(request: Request) => Answer | null | undefined | Promise<Answer | null | undefined>")]
    pub wait_for: Option<Unknown<'a>>,
    /// Aborts the MCP load (every server started so far is stopped); the Promise rejects
    /// with an `AbortError`.
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Unknown<'a>>,
}

/// The options that are the host's own values, not data.
const HOST_KEYS: [&str; 4] = ["extraTools", "skillProvider", "waitFor", "signal"];

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
pub(crate) fn tools_arg(env: &Env, value: Unknown, func: &str, what: &str) -> napi::Result<Vec<engine::Tool>> {
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

/// `skillProvider()`: data skills, or a Promise of them, read by the engine.
struct JsSkillProvider(Arc<Callback<(), Json>>);

impl engine::SkillProvider for JsSkillProvider {
    fn skills(&self) -> engine::HookFuture<Vec<engine::SkillDef>> {
        let f = self.0.clone();
        Box::pin(async move {
            let Json(skills) = call(&f, ()).await?;
            let spec = engine::SkillsSpec::from_json(&serde_json::json!({ "skills": skills }))?;
            Ok(spec.value.skills.unwrap_or_default())
        })
    }
}

/// `opts[key]`, unless `undefined` or `null`.
fn given<'e>(o: &Object<'e>, key: &str) -> napi::Result<Option<Unknown<'e>>> {
    let v: Unknown = o.get_named_property(key)?;
    Ok((!matches!(v.get_type()?, ValueType::Undefined | ValueType::Null)).then_some(v))
}

/// An optional `AbortSignal` option `path` of `func`.
pub(crate) fn signal_option<'e>(env: &Env, o: &Object<'e>, func: &str, path: &str) -> napi::Result<Option<Object<'e>>> {
    match given(o, "signal")? {
        None => Ok(None),
        Some(v) if v.get_type()? == ValueType::Object => Ok(Some(Object::from_raw(env.raw(), v.raw()))),
        Some(_) => Err(throw(env, invalid(format!("{func}: {path} must be an AbortSignal")))),
    }
}

/// `waitFor` of an options object, as the engine's trait.
pub(crate) fn wait_for_option(
    env: &Env,
    o: &Object<'_>,
    func: &str,
    path: &str,
) -> napi::Result<Option<Arc<dyn engine::WaitFor>>> {
    let Some(f) = given(o, "waitFor")? else { return Ok(None) };
    check_function(env, f.raw(), func, path)?;
    let f: Function<Request, MaybePromise<Option<Value>>> = o.get_named_property("waitFor")?;
    Ok(Some(Arc::new(JsWaitFor(callback(f)?))))
}

/// Builds a toolkit from its sources (async, as in the JS port): MCP servers' tools, the
/// `skill` tool, the built-ins, then `extraTools`. What loading noticed (a server that
/// failed, a duplicate name) is emitted as warnings.
#[napi(ts_args_type = "opts?: ToolkitOptions | undefined | null", ts_return_type = "Promise<Toolkit>")]
pub fn create_toolkit<'e>(env: &'e Env, opts: Unknown<'e>) -> napi::Result<PromiseRaw<'e, Toolkit>> {
    const F: &str = "createToolkit";
    let opts: Option<Object> = optional_object_arg(env, opts, F, "opts")?;
    let mut host = engine::ToolkitHost::default();
    let mut plain = serde_json::Map::new();
    let mut signal = None;
    if let Some(o) = &opts {
        if let Some(list) = given(o, "extraTools")? {
            host.extra_tools = tools_arg(env, list, F, "opts.extraTools")?;
        }
        if let Some(f) = given(o, "skillProvider")? {
            check_function(env, f.raw(), F, "opts.skillProvider")?;
            let f: Function<(), MaybePromise<Json>> = o.get_named_property("skillProvider")?;
            host.skill_provider = Some(Arc::new(JsSkillProvider(callback(f)?)));
        }
        host.wait_for = wait_for_option(env, o, F, "opts.waitFor")?;
        signal = signal_option(env, o, F, "opts.signal")?;
        plain = plain_json(env, o, F, "opts", &HOST_KEYS, &[])?;
    }
    let spec = engine::ToolkitSpec::from_json(&Value::Object(plain)).map_err(|e| throw(env, e))?;
    crate::warning::emit(env, &spec.warnings)?;
    let id = keepalive::next_id();
    let watch = watch_signal(env, signal, host.cancel.clone(), id, F, "opts.signal")?;
    let work = engine::Toolkit::create(spec.value, host);
    keepalive::spawn(env, id, work, move |env, built| {
        let cause = match watch {
            Some(w) => w.finish(env)?,
            None => None,
        };
        let mut tk = built.map_err(|e| to_js(env, e, cause))?;
        crate::warning::emit(env, &tk.take_warnings())?;
        Ok(Toolkit { inner: RwLock::new(Arc::new(tk)) })
    })
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

    /// The skill catalog for the system prompt (empty without a skill source). A run appends
    /// it to the client's system prompt by itself.
    #[napi]
    pub fn skills_prompt(&self) -> String {
        self.snapshot().skills_prompt().to_string()
    }

    /// Each configured MCP server's status by name, as it was when the toolkit was built.
    #[napi(ts_return_type = "Record<string, McpStatus>")]
    pub fn mcp_status(&self) -> serde_json::Map<String, Value> {
        crate::mcp::status_json(&self.snapshot().mcp_status())
    }

    /// Stops the MCP servers the toolkit started (their tools answer with an error from then
    /// on); closing again does nothing. A process also exits without it.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'e>(&self, env: &'e Env) -> napi::Result<PromiseRaw<'e, ()>> {
        let toolkit = self.snapshot();
        keepalive::spawn(env, keepalive::next_id(), async move { toolkit.close().await }, |_, ()| Ok(()))
    }

    /// Serves the toolkit's tools as an MCP server (streamable HTTP at `http://<addr>/mcp`,
    /// default `127.0.0.1:0`). Without `tools`, every runnable tool but the built-ins that
    /// touch files or run commands is exposed; `token` makes every request carry
    /// `Authorization: Bearer <token>` (required off loopback); browser origins other than
    /// the server's own are refused unless listed in `allowedOrigins`. The server keeps the
    /// process alive until `close()`.
    #[napi(ts_args_type = "opts?: McpServeOptions | undefined | null", ts_return_type = "Promise<McpServer>")]
    pub fn serve_mcp<'e>(
        &self,
        env: &'e Env,
        opts: Unknown<'e>,
    ) -> napi::Result<PromiseRaw<'e, crate::mcp::McpServer>> {
        crate::mcp::serve(env, self.snapshot(), opts)
    }

    /// Serves the toolkit at `addr` (`host:port`) as the JS port does: `opts.mcp` is the MCP
    /// profile (`name`, `version`, `tools`, `token`, `allowedOrigins`; without it, the
    /// `mcpServer` block of the config the toolkit was built from). A2A serving and `onCall`
    /// are not in this build. The handle's `url` is the server's base (MCP at `url + "/mcp"`).
    #[napi(
        ts_args_type = "addr: string, opts?: { mcp?: McpServeOptions; a2a?: never; onCall?: never } | undefined | null",
        ts_return_type = "Promise<ServeHandle>"
    )]
    pub fn serve<'e>(
        &self,
        env: &'e Env,
        addr: Unknown<'e>,
        opts: Unknown<'e>,
    ) -> napi::Result<PromiseRaw<'e, crate::mcp::ServeHandle>> {
        crate::mcp::serve_at(env, self.snapshot(), addr, opts)
    }
}
