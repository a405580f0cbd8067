//! MCP, both ways, as the engine does it: `loadMcp` / `listMcpTools` (the client side,
//! outside a toolkit), the elicitation mappings, and `Toolkit.serveMcp` (the toolkit served as
//! an MCP server). The engine reads every config; this side converts its results.

use std::collections::BTreeMap;
use std::sync::Arc;

use engine::mcp::{McpConfig, McpStatus};
use engine::CancellationToken;
use napi::bindgen_prelude::{Object, PromiseRaw, Unknown};
use napi::Env;
use napi_derive::napi;
use serde_json::{json, Map, Value};
use tokio::sync::Mutex;

use crate::args::optional_object_arg;
use crate::client::watch_signal;
use crate::convert::Request;
use crate::error::{throw, to_js};
use crate::keepalive;
use crate::options::json_value;
use crate::tool::Tool;
use crate::toolkit::{signal_option, tools_arg, wait_for_option};

/// Server statuses as `{name: "connected" | "disabled" | "failed"}`.
pub fn status_json(status: &BTreeMap<String, McpStatus>) -> Map<String, Value> {
    status.iter().map(|(k, v)| (k.clone(), Value::String(v.as_str().into()))).collect()
}

/// The MCP config argument `input` of `func`: the path of a JSON file, or a config object.
fn config_arg(env: &Env, input: Unknown, func: &str) -> napi::Result<engine::Parsed<McpConfig>> {
    let parsed = match json_value(env, input, func, "input")? {
        Value::String(path) => McpConfig::from_file(path),
        other => McpConfig::from_json(&other),
    };
    parsed.map_err(|e| throw(env, e))
}

// ---- the client side ------------------------------------------------------------------------

/// One listed tool, under the server's own name (the TypeScript shape of what `listMcpTools`
/// builds as JSON).
#[napi(object, object_from_js = false)]
#[allow(dead_code)]
pub struct ToolInfo {
    pub name: String,
    pub description: String,
    #[napi(ts_type = "Record<string, unknown>")]
    pub input_schema: Value,
}

/// What a list-only pass found.
#[napi(object, object_from_js = false)]
pub struct McpInventory {
    /// Each connected server's full tool list, unfiltered by its `tools` filter.
    #[napi(ts_type = "Record<string, ToolInfo[]>")]
    pub tools: Value,
    #[napi(ts_type = "Record<string, McpStatus>")]
    pub status: Map<String, Value>,
}

/// `listMcpTools` / `loadMcp` options.
#[napi(object, object_to_js = false)]
#[allow(dead_code)]
pub struct LoadMcpOptions<'a> {
    /// Where servers' elicitations go (`loadMcp` only).
    #[napi(ts_type = "(request: Request) => Answer | null | undefined | Promise<Answer | null | undefined>")]
    pub wait_for: Option<Unknown<'a>>,
    /// Aborts the load: every server started so far is stopped.
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Unknown<'a>>,
}

/// What `loadMcp` and `listMcpTools` take besides the config.
type LoadOptions<'e> = (Option<Object<'e>>, Option<Arc<dyn engine::WaitFor>>);

/// The signal and `waitFor` of the options argument `opts` of `func`.
fn load_options<'e>(env: &Env, opts: Unknown<'e>, func: &str) -> napi::Result<LoadOptions<'e>> {
    let Some(o) = optional_object_arg::<Object>(env, opts, func, "opts")? else { return Ok((None, None)) };
    Ok((signal_option(env, &o, func, "opts.signal")?, wait_for_option(env, &o, func, "opts.waitFor")?))
}

/// Connects to every enabled server, lists its tools and disconnects: nothing is left
/// running. A failed server is isolated (status `failed`, a warning).
#[napi(
    ts_args_type = "input: string | Record<string, unknown>, opts?: { signal?: AbortSignal }",
    ts_return_type = "Promise<McpInventory>"
)]
pub fn list_mcp_tools<'e>(
    env: &'e Env,
    input: Unknown<'e>,
    opts: Unknown<'e>,
) -> napi::Result<PromiseRaw<'e, McpInventory>> {
    const F: &str = "listMcpTools";
    let config = config_arg(env, input, F)?;
    crate::warning::emit(env, &config.warnings)?;
    let (signal, _) = load_options(env, opts, F)?;
    let token = CancellationToken::new();
    let id = keepalive::next_id();
    let watch = watch_signal(env, signal, token.clone(), id, F, "opts.signal")?;
    let work = async move { engine::mcp::list_mcp_tools(&config.value, token).await };
    keepalive::spawn(env, id, work, move |env, listed| {
        let cause = match watch {
            Some(w) => w.finish(env)?,
            None => None,
        };
        let inv = listed.map_err(|e| to_js(env, e, cause))?;
        crate::warning::emit(env, &inv.warnings)?;
        let tools: Map<String, Value> = inv
            .tools
            .iter()
            .map(|(server, list)| {
                let list = list
                    .iter()
                    .map(|t| json!({"name": t.name, "description": t.description, "inputSchema": t.input_schema}))
                    .collect();
                (server.clone(), Value::Array(list))
            })
            .collect();
        Ok(McpInventory { tools: Value::Object(tools), status: status_json(&inv.status) })
    })
}

/// The tools of the MCP servers of a config, outside a toolkit (`loadMcp`).
#[napi]
pub struct McpSource {
    tools: Vec<engine::Tool>,
    status: BTreeMap<String, McpStatus>,
    source: Arc<Mutex<engine::mcp::McpSource>>,
}

#[napi]
impl McpSource {
    /// Every connected server's tools, named `<server>_<tool>`.
    #[napi(getter)]
    pub fn tools(&self) -> Vec<Tool> {
        self.tools.iter().map(|t| Tool { inner: t.clone() }).collect()
    }

    /// Every configured server's status.
    #[napi(getter, ts_return_type = "Record<string, McpStatus>")]
    pub fn status(&self) -> Map<String, Value> {
        status_json(&self.status)
    }

    /// Ends every connection (the tools answer with an error from then on).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'e>(&self, env: &'e Env) -> napi::Result<PromiseRaw<'e, ()>> {
        let source = self.source.clone();
        keepalive::spawn(env, keepalive::next_id(), async move { source.lock().await.close().await }, |_, ()| Ok(()))
    }
}

/// Connects to every enabled server and converts its tools. A failed server is isolated
/// (status `failed`, a warning); only an aborted `signal` rejects.
#[napi(
    ts_args_type = "input: string | Record<string, unknown>, opts?: LoadMcpOptions",
    ts_return_type = "Promise<McpSource>"
)]
pub fn load_mcp<'e>(env: &'e Env, input: Unknown<'e>, opts: Unknown<'e>) -> napi::Result<PromiseRaw<'e, McpSource>> {
    const F: &str = "loadMcp";
    let config = config_arg(env, input, F)?;
    crate::warning::emit(env, &config.warnings)?;
    let (signal, wait_for) = load_options(env, opts, F)?;
    let token = CancellationToken::new();
    let id = keepalive::next_id();
    let watch = watch_signal(env, signal, token.clone(), id, F, "opts.signal")?;
    let work = async move { engine::mcp::load_mcp(&config.value, wait_for, token).await };
    keepalive::spawn(env, id, work, move |env, loaded| {
        let cause = match watch {
            Some(w) => w.finish(env)?,
            None => None,
        };
        let mut source = loaded.map_err(|e| to_js(env, e, cause))?;
        crate::warning::emit(env, &std::mem::take(&mut source.warnings))?;
        Ok(McpSource {
            tools: source.tools.clone(),
            status: source.status.clone(),
            source: Arc::new(Mutex::new(source)),
        })
    })
}

/// The Request for an MCP `elicitation/create` request's params: kind `authorization` with
/// the `url` in URL mode, else kind `input` with the schema in `data.schema`.
#[napi(ts_args_type = "params: Record<string, unknown>", ts_return_type = "Request")]
pub fn elicitation_to_request(env: &Env, params: Unknown) -> napi::Result<Request> {
    let params = json_value(env, params, "elicitationToRequest", "params")?;
    Ok(Request::from(engine::mcp::elicitation_request(&params)))
}

/// The MCP `ElicitResult` for a resolved Answer: `ok` ⇒ `accept` with its `data`,
/// `reason: "declined"` ⇒ `decline`, anything else ⇒ `cancel`.
#[napi(
    ts_args_type = "answer: Answer",
    ts_return_type = "{ action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> }"
)]
pub fn answer_to_elicit_result(env: &Env, answer: Unknown) -> napi::Result<Value> {
    let answer = json_value(env, answer, "answerToElicitResult", "answer")?;
    let answer = engine::Answer::from_json(&answer).map_err(|e| throw(env, e))?;
    Ok(match engine::mcp::elicit_action(Some(&answer)) {
        engine::mcp::ElicitAction::Accept(content) => json!({"action": "accept", "content": content}),
        engine::mcp::ElicitAction::Decline => json!({"action": "decline"}),
        engine::mcp::ElicitAction::Cancel => json!({"action": "cancel"}),
    })
}

// ---- the server side --------------------------------------------------------------------------

/// `Toolkit.serveMcp` options (read by the engine).
#[napi(object, object_to_js = false)]
#[allow(dead_code)]
pub struct McpServeOptions {
    /// `host:port` (default `127.0.0.1:0`, an ephemeral loopback port).
    pub addr: Option<String>,
    /// `serverInfo.name` (default `toolnexus`).
    pub name: Option<String>,
    /// `serverInfo.version` (default `0.1.0`).
    pub version: Option<String>,
    /// Exactly these tools (names the toolkit lacks are a warning).
    pub tools: Option<Vec<String>>,
    /// The bearer token every request must carry; required off loopback.
    pub token: Option<String>,
    /// Browser origins allowed besides the server's own (`scheme://host:port`).
    pub allowed_origins: Option<Vec<String>>,
}

/// The options argument `opts` of `func`, read by the engine.
fn serve_options(env: &Env, opts: Unknown, func: &str) -> napi::Result<engine::mcp::McpServeOptions> {
    let json = json_value(env, opts, func, "opts")?;
    engine::mcp::McpServeOptions::from_json(&json).map_err(|e| throw(env, e))
}

/// The tools an MCP server of `tools` would expose with the serve options `cfg` (upstream's
/// `exposedMcpTools`, with the engine's rule: without `cfg.tools`, the built-ins that touch
/// files or run commands are left out).
#[napi(ts_args_type = "tools: Array<Tool | ToolLike>, cfg?: McpServeOptions", ts_return_type = "Tool[]")]
pub fn exposed_mcp_tools(env: &Env, tools: Unknown, cfg: Unknown) -> napi::Result<Vec<Tool>> {
    const F: &str = "exposedMcpTools";
    let tools = tools_arg(env, tools, F, "tools")?;
    let opts = serve_options(env, cfg, F)?;
    let toolkit = engine::Toolkit::new(tools).map_err(|e| throw(env, e))?;
    let (exposed, warnings) = engine::mcp::exposed_tools(&toolkit, opts.tools.as_deref());
    crate::warning::emit(env, &warnings)?;
    Ok(exposed.into_iter().map(|t| Tool { inner: t }).collect())
}

/// A running MCP server (`Toolkit.serveMcp`).
#[napi]
pub struct McpServer {
    url: String,
    base_url: String,
    tools: Vec<String>,
    server: Arc<Mutex<engine::mcp::McpServer>>,
    /// Fired by `close`: ends what keeps the process alive while serving.
    closed: CancellationToken,
}

#[napi]
impl McpServer {
    /// The MCP endpoint, `http://<addr>/mcp`.
    #[napi(getter)]
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// The names of the tools it exposes.
    #[napi(getter)]
    pub fn tools(&self) -> Vec<String> {
        self.tools.clone()
    }

    /// The server's base URL, `http://<addr>`.
    #[napi(getter)]
    pub fn base_url(&self) -> String {
        self.base_url.clone()
    }

    /// Stops listening and ends every open connection.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'e>(&self, env: &'e Env) -> napi::Result<PromiseRaw<'e, ()>> {
        let server = self.server.clone();
        let closed = self.closed.clone();
        let work = async move {
            server.lock().await.close().await;
            closed.cancel();
        };
        keepalive::spawn(env, keepalive::next_id(), work, |_, ()| Ok(()))
    }
}

/// `Toolkit.serveMcp`: starts the engine's server for `toolkit`.
pub fn serve<'e>(
    env: &'e Env,
    toolkit: Arc<engine::Toolkit>,
    opts: Unknown<'e>,
) -> napi::Result<PromiseRaw<'e, McpServer>> {
    let opts = serve_options(env, opts, "Toolkit.serveMcp")?;
    start(env, toolkit, opts, |s| s)
}

/// What `Toolkit.serve` returns, as the JS port's `ServeHandle`: `url` is the server's base.
#[napi]
pub struct ServeHandle {
    server: McpServer,
}

#[napi]
impl ServeHandle {
    /// The server's base URL, `http://<addr>` (MCP at `url + "/mcp"`).
    #[napi(getter)]
    pub fn url(&self) -> String {
        self.server.base_url.clone()
    }

    /// The MCP endpoint.
    #[napi(getter)]
    pub fn mcp_url(&self) -> String {
        self.server.url.clone()
    }

    /// The names of the tools it exposes.
    #[napi(getter)]
    pub fn tools(&self) -> Vec<String> {
        self.server.tools.clone()
    }

    /// Stops the server.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn stop<'e>(&self, env: &'e Env) -> napi::Result<PromiseRaw<'e, ()>> {
        self.server.close(env)
    }

    /// Alias of `stop()`.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'e>(&self, env: &'e Env) -> napi::Result<PromiseRaw<'e, ()>> {
        self.server.close(env)
    }
}

/// `Toolkit.serve(addr, {mcp})`: the JS port's entry. Without `mcp`, the `mcpServer` block of
/// the config the toolkit was built from; A2A serving (`a2a`, `client`, `onTask`) and
/// `onCall` are not in this build, and asking for them is an error.
pub fn serve_at<'e>(
    env: &'e Env,
    toolkit: Arc<engine::Toolkit>,
    addr: Unknown<'e>,
    opts: Unknown<'e>,
) -> napi::Result<PromiseRaw<'e, ServeHandle>> {
    const F: &str = "Toolkit.serve";
    let addr: String = crate::args::arg(env, addr, F, "addr", "a string host:port")?;
    let opts = match json_value(env, opts, F, "opts")? {
        Value::Null => Map::new(),
        Value::Object(o) => o,
        _ => return Err(throw(env, crate::error::invalid(format!("{F}: opts must be an object")))),
    };
    for key in ["a2a", "client", "onTask", "onCall"] {
        if opts.get(key).is_some_and(|v| !v.is_null()) {
            return Err(throw(env, crate::error::invalid(format!("{F}: {key} is not available in this build"))));
        }
    }
    let given = opts.get("mcp").filter(|v| !v.is_null());
    let options = engine::mcp::McpServeOptions::for_toolkit(&toolkit, given, Some(&addr)).map_err(|e| throw(env, e))?;
    start(env, toolkit, options, |server| ServeHandle { server })
}

/// Starts the engine's server; the Promise gets `wrap` of it.
fn start<'e, T: napi::bindgen_prelude::ToNapiValue + 'static>(
    env: &'e Env,
    toolkit: Arc<engine::Toolkit>,
    opts: engine::mcp::McpServeOptions,
    wrap: fn(McpServer) -> T,
) -> napi::Result<PromiseRaw<'e, T>> {
    let work = engine::mcp::serve_mcp(toolkit, opts);
    keepalive::spawn(env, keepalive::next_id(), work, move |env, started| {
        let server = started.map_err(|e| throw(env, e))?;
        crate::warning::emit(env, server.warnings())?;
        let closed = CancellationToken::new();
        // Listening keeps the process up, as a node:http server does, until `close`.
        let until = closed.clone();
        let _: PromiseRaw<()> =
            keepalive::spawn(env, keepalive::next_id(), async move { until.cancelled().await }, |_, ()| Ok(()))?;
        Ok(wrap(McpServer {
            url: server.url().to_string(),
            base_url: server.base_url().to_string(),
            tools: server.tool_names().to_vec(),
            server: Arc::new(Mutex::new(server)),
            closed,
        }))
    })
}

/// The server entries of an MCP config (a path or an object) as written: the JS port's
/// `parseMcpConfig`.
#[napi(ts_args_type = "input: string | Record<string, unknown>", ts_return_type = "Record<string, unknown>")]
pub fn parse_mcp_config(env: &Env, input: Unknown) -> napi::Result<Map<String, Value>> {
    let value = match json_value(env, input, "parseMcpConfig", "input")? {
        Value::String(path) => McpConfig::read_file(path).map_err(|e| throw(env, e))?,
        other => other,
    };
    McpConfig::server_entries(&value).map_err(|e| throw(env, e))
}
