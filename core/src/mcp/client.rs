//! The MCP source (SPEC §2): connect to every enabled server of a config at once, list its
//! tools (every page) and turn each into a [`Tool`] named `sanitize(server)_sanitize(tool)`.
//!
//! One server never breaks the others: one that cannot start, hangs or dies is recorded as
//! `failed` with a warning saying why, within its timeout per phase (connect plus
//! `initialize`, then `tools/list`). Only the caller's cancellation aborts the whole load.
//! The source owns the connections: [`McpSource::close`] ends them, and dropping the source
//! kills every server process it started (see `child.rs`).

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::{join_all, BoxFuture};
use rmcp::model::{CallToolRequestParams, PaginatedRequestParams};
use rmcp::service::{Peer, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::child::{self, ChildGroup, StderrTail};
use super::config::{expand_env, HttpServer, McpConfig, ServerConfig, ServerTransport};
use super::elicit::Bridge;
use super::result::{call_result, failed_call, filter_tools, input_schema};
use crate::error::{Error, ErrorKind, Result};
use crate::hooks::WaitFor;
use crate::redact::Secrets;
use crate::tool::{sanitize, Tool, ToolHandler, ToolSource};
use crate::types::{ToolContext, ToolResult};
use crate::warning::Warning;

/// The most `tools/list` pages read from one server.
pub const MAX_LIST_PAGES: usize = 1_000;

/// How long `close` waits for a server to end by itself before killing it.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// A server's state after loading.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum McpStatus {
    /// Started, initialised and listed.
    Connected,
    /// Skipped by its config.
    Disabled,
    /// Could not start, answer or list in time; see the source's warnings.
    Failed,
}

impl McpStatus {
    /// The wire string: `connected`, `disabled` or `failed`.
    pub const fn as_str(self) -> &'static str {
        match self {
            McpStatus::Connected => "connected",
            McpStatus::Disabled => "disabled",
            McpStatus::Failed => "failed",
        }
    }
}

impl fmt::Display for McpStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One live server: the rmcp service, and the process group of a stdio server.
struct Connection {
    service: RunningService<RoleClient, Bridge>,
    group: Option<ChildGroup>,
}

impl Connection {
    async fn close(mut self) {
        // A graceful end first (stdin closed, the session deleted), then the group killed: a
        // server that ignores end-of-input, or what it started, is not left behind.
        let _ = self.service.close_with_timeout(CLOSE_GRACE).await;
        if let Some(mut group) = self.group.take() {
            group.kill();
        }
    }
}

/// The tools of every connected server and the status of every configured one.
pub struct McpSource {
    /// The tools, server by server in config order, each server's in its listed order.
    pub tools: Vec<Tool>,
    /// Every configured server's status, by name.
    pub status: BTreeMap<String, McpStatus>,
    /// Why servers failed, and which `tools` filter names matched nothing.
    pub warnings: Vec<Warning>,
    connections: Vec<Connection>,
}

impl McpSource {
    /// Ends every connection: each server gets a moment to exit once its input closes, then
    /// its process group is killed. The tools answer with an error from then on. Calling it
    /// again does nothing.
    pub async fn close(&mut self) {
        join_all(std::mem::take(&mut self.connections).into_iter().map(Connection::close)).await;
    }

    /// The pids of the server processes still owned (group leaders), for diagnostics.
    pub fn child_pids(&self) -> Vec<u32> {
        self.connections.iter().filter_map(|c| c.group.as_ref()?.pid()).collect()
    }
}

// Hosts hand sources and servers across threads (and bindings keep them in shared handles).
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<McpSource>();
    send_sync::<McpInventory>();
};

impl fmt::Debug for McpSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpSource")
            .field("tools", &self.tools.iter().map(Tool::name).collect::<Vec<_>>())
            .field("status", &self.status)
            .field("warnings", &self.warnings)
            .finish_non_exhaustive()
    }
}

/// One listed tool under its original name, as [`list_mcp_tools`] reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolInfo {
    /// The server's own name for the tool.
    pub name: String,
    /// Its description (empty when it has none).
    pub description: String,
    /// Its input schema, as [`Tool::input_schema`] would be.
    pub input_schema: Value,
}

/// What a list-only pass found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct McpInventory {
    /// Each connected server's full tool list, unfiltered by its `tools` filter.
    pub tools: BTreeMap<String, Vec<ToolInfo>>,
    /// Every configured server's status.
    pub status: BTreeMap<String, McpStatus>,
    /// Why servers failed.
    pub warnings: Vec<Warning>,
}

impl McpInventory {
    /// `{"tools": {server: [{name, description, input_schema}]}, "status": {server: status}}`
    /// (the warnings go to each binding's own channel).
    pub fn to_json(&self) -> Value {
        let tools: serde_json::Map<String, Value> = self
            .tools
            .iter()
            .map(|(server, list)| {
                let list = list
                    .iter()
                    .map(|t| serde_json::json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
                    .collect();
                (server.clone(), Value::Array(list))
            })
            .collect();
        let status: serde_json::Map<String, Value> =
            self.status.iter().map(|(k, v)| (k.clone(), Value::from(v.as_str()))).collect();
        serde_json::json!({"tools": tools, "status": status})
    }
}

/// Connects to every enabled server of `config` at once and converts its tools. With
/// `wait_for`, servers may elicit input through it (see [`crate::mcp::elicitation_request`]).
/// A server that fails is isolated (status `failed`, a warning); the only error is
/// `cancel` firing, which stops every server started so far and fails with
/// [`ErrorKind::Cancelled`].
pub async fn load_mcp(
    config: &McpConfig,
    wait_for: Option<Arc<dyn WaitFor>>,
    cancel: CancellationToken,
) -> Result<McpSource> {
    let outcomes = connect_all(config, wait_for, &cancel).await?;
    let mut source =
        McpSource { tools: Vec::new(), status: BTreeMap::new(), warnings: Vec::new(), connections: Vec::new() };
    for (server, outcome) in config.servers.iter().zip(outcomes) {
        let status = match outcome {
            Outcome::Disabled => McpStatus::Disabled,
            Outcome::Failed(w) => {
                source.warnings.push(w);
                McpStatus::Failed
            }
            Outcome::Connected(c) => {
                let (defs, warnings) =
                    filter_tools(&server.name, c.tools, |d| d.name.as_ref(), server.tools.as_deref());
                source.warnings.extend(warnings);
                source.tools.extend(defs.into_iter().map(|def| c.remote.tool(&server.name, def, server.timeout)));
                source.connections.push(c.connection);
                McpStatus::Connected
            }
        };
        source.status.insert(server.name.clone(), status);
    }
    Ok(source)
}

/// Connects to every enabled server, lists its tools and disconnects: nothing is left
/// running. Failures are isolated as in [`load_mcp`]; `tools` filters are not applied, so the
/// result shows what a filter can choose from.
pub async fn list_mcp_tools(config: &McpConfig, cancel: CancellationToken) -> Result<McpInventory> {
    let outcomes = connect_all(config, None, &cancel).await?;
    let mut inventory = McpInventory::default();
    let mut open = Vec::new();
    for (server, outcome) in config.servers.iter().zip(outcomes) {
        let status = match outcome {
            Outcome::Disabled => McpStatus::Disabled,
            Outcome::Failed(w) => {
                inventory.warnings.push(w);
                McpStatus::Failed
            }
            Outcome::Connected(c) => {
                let infos = c
                    .tools
                    .iter()
                    .map(|d| ToolInfo {
                        name: d.name.to_string(),
                        description: d.description.as_deref().unwrap_or_default().to_string(),
                        input_schema: input_schema(&Value::Object((*d.input_schema).clone())),
                    })
                    .collect();
                inventory.tools.insert(server.name.clone(), infos);
                open.push(c.connection);
                McpStatus::Connected
            }
        };
        inventory.status.insert(server.name.clone(), status);
    }
    join_all(open.into_iter().map(Connection::close)).await;
    Ok(inventory)
}

enum Outcome {
    Disabled,
    Failed(Warning),
    Connected(Box<Connected>),
}

struct Connected {
    connection: Connection,
    tools: Vec<rmcp::model::Tool>,
    remote: Remote,
}

async fn connect_all(
    config: &McpConfig,
    wait_for: Option<Arc<dyn WaitFor>>,
    cancel: &CancellationToken,
) -> Result<Vec<Outcome>> {
    let all = join_all(config.servers.iter().map(|s| connect_one(s, wait_for.clone())));
    tokio::select! {
        outcomes = all => {
            if cancel.is_cancelled() {
                // Cancelled as the last server finished: the whole load is still aborted.
                return Err(cancelled());
            }
            Ok(outcomes)
        }
        // Dropping the unfinished connections kills what they started.
        () = cancel.cancelled() => Err(cancelled()),
    }
}

fn cancelled() -> Error {
    Error::new(ErrorKind::Cancelled, "MCP load cancelled")
}

async fn connect_one(server: &ServerConfig, wait_for: Option<Arc<dyn WaitFor>>) -> Outcome {
    if !server.enabled {
        return Outcome::Disabled;
    }
    let fail = |secrets: &Secrets, why: String| {
        Outcome::Failed(Warning {
            code: "mcp_server_failed",
            message: secrets.scrub(&format!("[toolnexus] MCP server \"{}\" failed: {why}", server.name)),
        })
    };
    let bridge = Bridge::new(wait_for);
    let pending = bridge.pending();
    let ms = server.timeout.as_millis();
    let (started, group, stderr, secrets) = match &server.transport {
        ServerTransport::Invalid(why) => return fail(&Secrets::default(), format!("invalid config: {why}")),
        ServerTransport::Stdio(stdio) => {
            let secrets = Secrets::of(None, &stdio.env);
            let spawned = match tokio::time::timeout(server.timeout, child::spawn(stdio)).await {
                Ok(Ok(s)) => s,
                Ok(Err(e)) => return fail(&secrets, format!("cannot start {:?}: {e}", stdio.command)),
                Err(_) => return fail(&secrets, format!("{:?} did not start within {ms} ms", stdio.command)),
            };
            let started = tokio::time::timeout(server.timeout, bridge.serve(spawned.process)).await;
            (started, Some(spawned.group), spawned.stderr, secrets)
        }
        ServerTransport::Http(http) => {
            let (transport, secrets) = match http_transport(http) {
                Ok(t) => t,
                Err(why) => return fail(&Secrets::default(), why),
            };
            let started = tokio::time::timeout(server.timeout, bridge.serve(transport)).await;
            (started, None, StderrTail::default(), secrets)
        }
    };
    let explain = |why: String| {
        let tail = stderr.text();
        if tail.is_empty() {
            why
        } else {
            format!("{why}; its stderr ends: {tail}")
        }
    };
    let service = match started {
        Ok(Ok(service)) => service,
        Ok(Err(e)) => return fail(&secrets, explain(format!("initialize failed: {e}"))),
        Err(_) => return fail(&secrets, explain(format!("no answer to initialize within {ms} ms"))),
    };
    let peer = service.peer().clone();
    let connection = Connection { service, group };
    let tools = match tokio::time::timeout(server.timeout, list_tools(&peer)).await {
        Ok(Ok(tools)) => tools,
        Ok(Err(why)) => {
            connection.close().await;
            return fail(&secrets, explain(format!("tools/list failed: {why}")));
        }
        Err(_) => {
            connection.close().await;
            return fail(&secrets, explain(format!("no answer to tools/list within {ms} ms")));
        }
    };
    Outcome::Connected(Box::new(Connected { connection, tools, remote: Remote { peer, pending, secrets } }))
}

/// Every page of `tools/list`, following `nextCursor`; a repeated cursor or more than
/// [`MAX_LIST_PAGES`] pages is a failure, never an endless loop.
async fn list_tools(peer: &Peer<RoleClient>) -> std::result::Result<Vec<rmcp::model::Tool>, String> {
    let mut seen = HashSet::new();
    let mut cursor: Option<String> = None;
    let mut tools = Vec::new();
    for _ in 0..MAX_LIST_PAGES {
        let params = cursor.take().map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let page = peer.list_tools(params).await.map_err(|e| e.to_string())?;
        tools.extend(page.tools);
        match page.next_cursor {
            None => return Ok(tools),
            Some(next) if !seen.insert(next.clone()) => {
                return Err(format!("MCP list returned duplicate cursor: {next}"));
            }
            Some(next) => cursor = Some(next),
        }
    }
    Err(format!("MCP list exceeded {MAX_LIST_PAGES} pages"))
}

type HttpTransport = StreamableHttpClientTransport<reqwest::Client>;

/// The streamable-HTTP transport for `http`, its headers' `${ENV}` expanded, and the
/// expanded header values as secrets for every message about this server.
fn http_transport(http: &HttpServer) -> std::result::Result<(HttpTransport, Secrets), String> {
    use reqwest::header::{HeaderName, HeaderValue};
    let expanded: Vec<(String, String)> = http.headers.iter().map(|(k, v)| (k.clone(), expand_env(v))).collect();
    let secrets = Secrets::of(None, &expanded);
    let mut headers = std::collections::HashMap::new();
    for (k, v) in &expanded {
        let name = HeaderName::from_bytes(k.as_bytes()).map_err(|_| format!("header name {k:?} is not valid"))?;
        let value = HeaderValue::from_str(v).map_err(|_| format!("the value of header {k:?} is not valid"))?;
        headers.insert(name, value);
    }
    let config = StreamableHttpClientTransportConfig::with_uri(http.url.as_str()).custom_headers(headers);
    Ok((StreamableHttpClientTransport::with_client(http_client()?, config), secrets))
}

/// One HTTP client for every remote server: rustls with the ring provider and the platform's
/// trust store (as the engine's own transport), HTTP/1.1, no proxy from the environment, no
/// idle pooling, and only same-origin 307/308 redirects (a POST must keep its body, and
/// headers must not reach another host).
fn http_client() -> std::result::Result<reqwest::Client, String> {
    static CLIENT: std::sync::OnceLock<std::result::Result<reqwest::Client, String>> = std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| {
            let mut tls = crate::transport::tls::client_config().map_err(|e| e.message().to_string())?;
            tls.alpn_protocols = vec![b"http/1.1".to_vec()];
            let same_origin_307_308 = reqwest::redirect::Policy::custom(|attempt| {
                let keeps_body = matches!(attempt.status().as_u16(), 307 | 308);
                let same_origin =
                    attempt.previous().first().is_some_and(|first| first.origin() == attempt.url().origin());
                if !keeps_body || !same_origin || attempt.previous().len() > 10 {
                    attempt.stop()
                } else {
                    attempt.follow()
                }
            });
            reqwest::Client::builder()
                .tls_backend_preconfigured(tls)
                .pool_max_idle_per_host(0)
                .redirect(same_origin_307_308)
                .build()
                .map_err(|e| format!("HTTP client setup failed: {e}"))
        })
        .clone()
}

/// What each of a server's tools needs to call it.
#[derive(Clone)]
struct Remote {
    peer: Peer<RoleClient>,
    pending: watch::Receiver<usize>,
    secrets: Secrets,
}

impl Remote {
    fn tool(&self, server: &str, def: rmcp::model::Tool, timeout: Duration) -> Tool {
        let name = format!("{}_{}", sanitize(server), sanitize(&def.name));
        let description = def.description.as_deref().unwrap_or_default().to_string();
        let schema = input_schema(&Value::Object((*def.input_schema).clone()));
        let handler = McpTool { server: server.into(), tool: def.name.to_string(), timeout, remote: self.clone() };
        Tool::new(&name, &description, schema, ToolSource::Mcp, Arc::new(handler))
    }
}

/// Calls one tool of one server.
struct McpTool {
    server: String,
    tool: String,
    timeout: Duration,
    remote: Remote,
}

impl ToolHandler for McpTool {
    fn execute(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, Result<ToolResult>> {
        let (server, tool, remote) = (self.server.clone(), self.tool.clone(), self.remote.clone());
        // The run's remaining time when it has a deadline, else the server's timeout (upstream).
        let limit = ctx.timeout.unwrap_or(self.timeout);
        Box::pin(async move {
            let mut params = CallToolRequestParams::new(tool.clone());
            if let Value::Object(args) = args {
                params = params.with_arguments(args);
            }
            let call = remote.peer.call_tool(params);
            tokio::pin!(call);
            let mut deadline = Instant::now() + limit;
            let answered = loop {
                tokio::select! {
                    r = &mut call => break r,
                    () = ctx.cancel.cancelled() => {
                        return Ok(failed_call(&server, format!("MCP tool {tool} on server \"{server}\" was cancelled")));
                    }
                    () = tokio::time::sleep_until(deadline) => {
                        // A person answering the server's question is not the server hanging.
                        if *remote.pending.borrow() > 0 {
                            deadline = Instant::now() + limit;
                            continue;
                        }
                        return Ok(failed_call(&server, format!(
                            "MCP tool {tool} on server \"{server}\" timed out after {} ms", limit.as_millis()
                        )));
                    }
                }
            };
            Ok(match answered {
                Ok(result) => match serde_json::to_value(&result) {
                    Ok(v) => call_result(&server, &v),
                    Err(e) => failed_call(&server, format!("unreadable MCP result: {e}")),
                },
                Err(e) => failed_call(&server, remote.secrets.scrub(&format!("MCP server \"{server}\": {e}"))),
            })
        })
    }
}
