//! MCP serve (SPEC §7C): a toolkit exposed as an MCP server over streamable HTTP, so any
//! MCP client can call its tools. `tools/list` declares each exposed tool under its toolkit
//! name; `tools/call` goes straight to [`Tool::execute`] and answers with its output as one
//! text block and its `is_error`. There is no model and no loop here: the calling client is
//! the LLM host. Stateless: every POST to `/mcp` is answered on its own.
//!
//! A server of tools that run commands and read files is a way into the machine, so:
//! - it listens on `127.0.0.1` unless told otherwise, and on any other address only with a
//!   bearer token (it refuses to start without one);
//! - with a token, every request must carry `Authorization: Bearer <token>` (else 401);
//! - a request whose `Origin` is not this server's own (or one listed in
//!   [`McpServeOptions::allowed_origins`]) is refused (403): a web page the user visits cannot
//!   drive the tools, by DNS rebinding or otherwise, and on a loopback address the `Host` must
//!   be a loopback name too;
//! - the built-in tools that run commands or touch files ([`GATED_BUILTINS`]) are exposed only
//!   when [`McpServeOptions::tools`] names them.

use std::convert::Infallible;
use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, AUTHORIZATION, CONTENT_TYPE, ORIGIN, WWW_AUTHENTICATE};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, ErrorKind, Result};
use crate::tool::{Tool, ToolSource};
use crate::toolkit::Toolkit;
use crate::types::{ToolContext, ToolResult};
use crate::warning::Warning;

/// The built-in tools exposed only when named in [`McpServeOptions::tools`]: the shell, and
/// every tool that reads or writes files (`read`, `grep` and `glob` included: they can read
/// any file the process can, keys and tokens among them). A host tool of the same name is
/// the host's own and is not gated.
pub const GATED_BUILTINS: [&str; 7] = ["bash", "read", "write", "edit", "grep", "glob", "apply_patch"];

/// The path the MCP endpoint is served at.
pub const MCP_PATH: &str = "/mcp";

/// How to serve.
#[derive(Clone)]
pub struct McpServeOptions {
    /// Where to listen (default `127.0.0.1:0`, an ephemeral loopback port). Any address that
    /// is not loopback requires [`McpServeOptions::token`].
    pub addr: SocketAddr,
    /// `serverInfo.name` (default `toolnexus`).
    pub name: String,
    /// `serverInfo.version` (default `0.1.0`).
    pub version: String,
    /// Expose exactly these tools (names the toolkit lacks are a warning). `None`: every tool
    /// but the [`GATED_BUILTINS`] built-ins and relay tools (which only a run can answer).
    pub tools: Option<Vec<String>>,
    /// The bearer token every request must carry. Required off loopback.
    pub token: Option<String>,
    /// Browser origins allowed besides the server's own, as `scheme://host:port`.
    pub allowed_origins: Vec<String>,
}

impl Default for McpServeOptions {
    fn default() -> Self {
        McpServeOptions {
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            name: "toolnexus".into(),
            version: "0.1.0".into(),
            tools: None,
            token: None,
            allowed_origins: Vec::new(),
        }
    }
}

/// Every key [`McpServeOptions::from_json`] reads (snake_case; camelCase is read too).
pub const MCP_SERVE_KEYS: [&str; 6] = ["addr", "name", "version", "tools", "token", "allowed_origins"];

impl McpServeOptions {
    /// Reads the options from JSON (`null` or `{}`: the defaults): `addr` as `host:port`
    /// (`localhost` meaning `127.0.0.1`), `name`, `version`, `tools` (names), `token`,
    /// `allowed_origins`. An unknown key or a wrong type is an
    /// [`ErrorKind::InvalidArgument`] error naming it; the token never appears in one.
    pub fn from_json(v: &serde_json::Value) -> Result<McpServeOptions> {
        let mut opts = McpServeOptions::default();
        if v.is_null() {
            return Ok(opts);
        }
        let f = crate::spec_json::Fields::new("MCP serve option", v, &MCP_SERVE_KEYS, true)?;
        if let Some(addr) = f.string("addr")? {
            opts.addr = parse_addr(&addr)?;
        }
        if let Some(name) = f.string("name")? {
            opts.name = name;
        }
        if let Some(version) = f.string("version")? {
            opts.version = version;
        }
        opts.tools = f.strings("tools")?;
        opts.token = match f.get("token") {
            None => None,
            Some(serde_json::Value::String(t)) => Some(t.clone()),
            Some(_) => return Err(Error::invalid("MCP serve option \"token\" must be a string")),
        };
        opts.allowed_origins = f.strings("allowed_origins")?.unwrap_or_default();
        Ok(opts)
    }
}

impl McpServeOptions {
    /// The options a serve call of `toolkit` uses: `given` (the call's own, as JSON), else the
    /// `mcpServer` profile of the `mcp_config` object the toolkit was built from; then `addr`,
    /// when given, as the address. Neither options nor a profile is an
    /// [`ErrorKind::InvalidArgument`] error: serving without an MCP profile (A2A alone) is
    /// not in this build.
    pub fn for_toolkit(
        toolkit: &Toolkit,
        given: Option<&serde_json::Value>,
        addr: Option<&str>,
    ) -> Result<McpServeOptions> {
        let mut opts = match (given, toolkit.mcp_serve_options()) {
            (Some(v), _) => McpServeOptions::from_json(v)?,
            (None, Some(profile)) => profile.clone(),
            (None, None) => {
                return Err(Error::invalid(
                    "serving needs MCP options, or a toolkit whose mcp_config has an mcpServer block (serving A2A \
                     alone is not available in this build)",
                ))
            }
        };
        if let Some(addr) = addr {
            opts.set_addr(addr)?;
        }
        Ok(opts)
    }

    /// Listens on `addr` (`host:port`, `localhost` meaning `127.0.0.1`) instead: how a serve
    /// call's own address overrides a profile's.
    pub fn set_addr(&mut self, addr: &str) -> Result<()> {
        self.addr = parse_addr(addr)?;
        Ok(())
    }
}

fn parse_addr(addr: &str) -> Result<SocketAddr> {
    let loopback_name = addr.strip_prefix("localhost:").map(|port| format!("127.0.0.1:{port}"));
    loopback_name.as_deref().unwrap_or(addr).parse().map_err(|_| {
        Error::invalid(format!("MCP serve option \"addr\" must be host:port (e.g. 127.0.0.1:8080), got {addr:?}"))
    })
}

// The token is a credential: Debug says only whether there is one.
impl fmt::Debug for McpServeOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServeOptions")
            .field("addr", &self.addr)
            .field("name", &self.name)
            .field("version", &self.version)
            .field("tools", &self.tools)
            .field("token", &self.token.as_ref().map(|_| crate::REDACTED))
            .field("allowed_origins", &self.allowed_origins)
            .finish()
    }
}

const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<McpServer>();
};

/// A running MCP server. Dropping it stops it too.
pub struct McpServer {
    url: String,
    addr: SocketAddr,
    tool_names: Vec<String>,
    warnings: Vec<Warning>,
    shutdown: CancellationToken,
    task: Option<JoinHandle<()>>,
    /// The served toolkit, kept while serving: its MCP servers (whose tools it may serve) live
    /// as long as some copy of it does.
    _toolkit: Arc<Toolkit>,
}

impl McpServer {
    /// The server's base URL, `http://<addr>` (the MCP endpoint is under [`MCP_PATH`]).
    pub fn base_url(&self) -> &str {
        self.url.strip_suffix(MCP_PATH).unwrap_or(&self.url)
    }

    /// The MCP endpoint, `http://<addr>/mcp`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The address it listens on (the real port when asked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The names of the tools it exposes.
    pub fn tool_names(&self) -> &[String] {
        &self.tool_names
    }

    /// What starting it warned about (names in `tools` the toolkit lacks).
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// Stops listening and ends every open connection (calls in flight are cancelled).
    pub async fn close(&mut self) {
        self.shutdown.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for McpServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// The tools `tools` selects from `toolkit` (see [`McpServeOptions::tools`]), and a warning
/// for each name it lacks.
pub fn exposed_tools(toolkit: &Toolkit, tools: Option<&[String]>) -> (Vec<Tool>, Vec<Warning>) {
    let runnable = toolkit.tools().iter().filter(|t| !t.is_relay());
    let Some(wanted) = tools else {
        let gated = |t: &Tool| t.source() == ToolSource::Builtin && GATED_BUILTINS.contains(&t.name());
        return (runnable.filter(|t| !gated(t)).cloned().collect(), Vec::new());
    };
    let exposed: Vec<Tool> = runnable.filter(|t| wanted.iter().any(|w| w == t.name())).cloned().collect();
    let warnings = wanted
        .iter()
        .filter(|w| !exposed.iter().any(|t| t.name() == w.as_str()))
        .map(|w| Warning {
            code: "mcp_serve_tools",
            message: format!("[toolnexus] MCP serve: tools names {w:?}, which the toolkit has no runnable tool of"),
        })
        .collect();
    (exposed, warnings)
}

/// Serves `toolkit` over streamable HTTP at `http://<opts.addr>/mcp`. Fails with
/// [`ErrorKind::InvalidArgument`] for an address off loopback without a token, and with
/// [`ErrorKind::Network`] when the address cannot be bound.
pub async fn serve_mcp(toolkit: Arc<Toolkit>, opts: McpServeOptions) -> Result<McpServer> {
    let token = opts.token.clone().filter(|t| !t.trim().is_empty());
    let loopback = opts.addr.ip().is_loopback();
    if !loopback && token.is_none() {
        return Err(Error::invalid(format!(
            "refusing to serve MCP on {} without a bearer token: set a token, or listen on 127.0.0.1",
            opts.addr
        )));
    }
    let (tools, warnings) = exposed_tools(&toolkit, opts.tools.as_deref());
    let listener = TcpListener::bind(opts.addr)
        .await
        .map_err(|e| Error::new(ErrorKind::Network, format!("cannot listen on {}: {e}", opts.addr)))?;
    let addr = listener
        .local_addr()
        .map_err(|e| Error::new(ErrorKind::Network, format!("cannot read the listening address: {e}")))?;

    let shutdown = CancellationToken::new();
    let gateway = Gateway::new(tools, &opts);
    let tool_names = gateway.tools.iter().map(|t| t.name().to_string()).collect();
    let mut config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_cancellation_token(shutdown.child_token());
    config = if loopback {
        // DNS rebinding: a page whose name resolves to this address still sends its own `Host`.
        config.with_allowed_hosts(["localhost".to_string(), "127.0.0.1".into(), "::1".into(), addr.ip().to_string()])
    } else {
        // Off loopback the token is the guard: the `Host` is whatever name reaches this machine.
        config.disable_allowed_hosts()
    };
    let service =
        StreamableHttpService::new(move || Ok(gateway.clone()), Arc::new(NeverSessionManager::default()), config);
    let guard = Arc::new(Guard { token, origins: own_origins(addr, &opts.allowed_origins), service });
    let task = tokio::spawn(accept_loop(listener, guard, shutdown.clone()));
    Ok(McpServer {
        url: format!("http://{addr}{MCP_PATH}"),
        addr,
        tool_names,
        warnings,
        shutdown,
        task: Some(task),
        _toolkit: toolkit,
    })
}

async fn accept_loop(listener: TcpListener, guard: Arc<Guard>, shutdown: CancellationToken) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(serve_connection(stream, guard.clone()));
                }
                // Out of descriptors and the like: wait instead of spinning.
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    connections.shutdown().await;
}

async fn serve_connection(stream: TcpStream, guard: Arc<Guard>) {
    let service = hyper::service::service_fn(move |req| {
        let guard = guard.clone();
        async move { Ok::<_, Infallible>(guard.handle(req).await) }
    });
    let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
}

type Body = BoxBody<Bytes, Infallible>;

/// The checks every request passes before rmcp sees it.
struct Guard {
    token: Option<String>,
    origins: Vec<String>,
    service: StreamableHttpService<Gateway, NeverSessionManager>,
}

impl Guard {
    async fn handle(&self, req: Request<Incoming>) -> Response<Body> {
        if req.uri().path() != MCP_PATH {
            return plain(StatusCode::NOT_FOUND, "Not Found");
        }
        if let Some(token) = &self.token {
            let given = req.headers().get(AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(bearer);
            if !given.is_some_and(|g| same(g.as_bytes(), token.as_bytes())) {
                let mut r = plain(StatusCode::UNAUTHORIZED, "Unauthorized: a bearer token is required");
                r.headers_mut().insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                return r;
            }
        }
        if let Some(origin) = req.headers().get(ORIGIN) {
            let origin = origin.to_str().unwrap_or("").trim_end_matches('/').to_ascii_lowercase();
            if !self.origins.contains(&origin) {
                return plain(StatusCode::FORBIDDEN, "Forbidden: Origin not allowed");
            }
        }
        self.service.handle(req).await
    }
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    r
}

/// The credential of `Bearer <credential>` (the scheme in any case).
fn bearer(value: &str) -> Option<&str> {
    let (scheme, credential) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| credential.trim())
}

/// Compares without stopping at the first difference, so timing tells nothing of the token.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The origins of this server itself (its loopback names when it listens on loopback or on
/// every address), and the extra ones allowed, lowercased.
fn own_origins(addr: SocketAddr, extra: &[String]) -> Vec<String> {
    let port = addr.port();
    let mut hosts = vec![addr.ip().to_string()];
    if addr.ip().is_loopback() || addr.ip().is_unspecified() {
        hosts.extend(["127.0.0.1".to_string(), "localhost".to_string(), "[::1]".to_string()]);
    }
    let mut origins: Vec<String> = hosts
        .into_iter()
        .map(|h| if h.contains(':') && !h.starts_with('[') { format!("[{h}]") } else { h })
        .map(|h| format!("http://{h}:{port}"))
        .collect();
    origins.extend(extra.iter().map(|o| o.trim().trim_end_matches('/').to_ascii_lowercase()));
    origins
}

/// The MCP server behind the guard: one per request (stateless), cheap to clone.
#[derive(Clone)]
struct Gateway {
    tools: Arc<Vec<Tool>>,
    declared: Arc<Vec<rmcp::model::Tool>>,
    info: ServerConfig,
}

impl Gateway {
    fn new(tools: Vec<Tool>, opts: &McpServeOptions) -> Gateway {
        let declared = tools
            .iter()
            .map(|t| {
                let schema = t.input_schema().as_object().cloned().unwrap_or_default();
                rmcp::model::Tool::new(t.name().to_string(), t.description().to_string(), Arc::new(schema))
            })
            .collect();
        let capabilities: ServerCapabilities = serde_json::from_value(json!({"tools": {}})).unwrap_or_default();
        let info = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(opts.name.clone(), opts.version.clone()));
        Gateway { tools: Arc::new(tools), declared: Arc::new(declared), info }
    }
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        self.info.clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.declared.to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        let Some(tool) = self.tools.iter().find(|t| t.name() == request.name) else {
            return Err(ErrorData::invalid_params(format!("Unknown tool: {}", request.name), None));
        };
        let args = request.arguments.map_or_else(|| json!({}), Value::Object);
        let ctx = ToolContext { cancel: context.ct.clone(), call_id: context.id.to_string(), ..ToolContext::default() };
        // A failure that would abort a run still answers this one call.
        let result = tool.execute(args, ctx).await.unwrap_or_else(|e| ToolResult::error(e.message().to_string()));
        let content = vec![ContentBlock::text(result.output)];
        Ok(if result.is_error { CallToolResult::error(content) } else { CallToolResult::success(content) }.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::empty_schema;

    fn tool(name: &str, source: ToolSource) -> Tool {
        let handler: Arc<dyn crate::ToolHandler> = Arc::new(Echo);
        Tool::new(name, "", empty_schema(), source, handler)
    }

    #[test]
    fn options_read_from_json() {
        let o = McpServeOptions::from_json(&serde_json::json!({
            "addr": "localhost:0", "name": "n", "tools": ["bash"], "token": "s3cret-token", "allowedOrigins": ["http://a:1"]
        }))
        .unwrap();
        assert_eq!((o.addr.to_string().as_str(), o.name.as_str(), o.version.as_str()), ("127.0.0.1:0", "n", "0.1.0"));
        assert_eq!(
            (o.tools, o.token.as_deref(), o.allowed_origins),
            (Some(vec!["bash".into()]), Some("s3cret-token"), vec!["http://a:1".to_string()])
        );
        assert_eq!(McpServeOptions::from_json(&Value::Null).unwrap().addr, McpServeOptions::default().addr);
        let e = McpServeOptions::from_json(&serde_json::json!({"adr": "x"})).unwrap_err();
        assert_eq!(e.message(), "unknown MCP serve option key \"adr\"");
        let e = McpServeOptions::from_json(&serde_json::json!({"addr": "nowhere"})).unwrap_err();
        assert!(e.message().contains("host:port"), "{}", e.message());
        let e = McpServeOptions::from_json(&serde_json::json!({"token": ["s3cret-token"]})).unwrap_err();
        assert!(!e.message().contains("s3cret"), "{}", e.message());
    }

    struct Echo;
    impl crate::ToolHandler for Echo {
        fn execute(&self, _a: Value, _c: ToolContext) -> futures_util::future::BoxFuture<'static, Result<ToolResult>> {
            Box::pin(async { Ok(ToolResult::ok("")) })
        }
    }

    #[test]
    fn gated_builtins_need_naming_and_relays_never_serve() {
        let tk = Toolkit::new(vec![
            tool("bash", ToolSource::Builtin),
            tool("read", ToolSource::Builtin),
            tool("webfetch", ToolSource::Builtin),
            tool("mine", ToolSource::Native),
            Tool::relay("refund", "", None),
        ])
        .unwrap();
        let names = |(t, _): (Vec<Tool>, Vec<Warning>)| t.iter().map(|t| t.name().to_string()).collect::<Vec<_>>();
        assert_eq!(names(exposed_tools(&tk, None)), ["webfetch", "mine"]);
        let wanted = vec!["bash".to_string(), "mine".into(), "refund".into(), "nope".into()];
        let (t, w) = exposed_tools(&tk, Some(&wanted));
        assert_eq!(names((t, Vec::new())), ["bash", "mine"]);
        assert_eq!(w.len(), 2);
        assert!(w[1].message.contains("\"nope\""));
        // A host's own tool called bash is the host's choice.
        let host = Toolkit::new(vec![tool("bash", ToolSource::Native)]).unwrap();
        assert_eq!(names(exposed_tools(&host, None)), ["bash"]);
    }

    #[test]
    fn bearer_and_constant_time_compare() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer  abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert!(same(b"abc", b"abc") && !same(b"abc", b"abd") && !same(b"abc", b"ab"));
    }

    #[test]
    fn own_origins_cover_the_loopback_names() {
        let o = own_origins("127.0.0.1:8080".parse().unwrap(), &["https://App.example:443/".into()]);
        assert!(o.contains(&"http://127.0.0.1:8080".to_string()));
        assert!(o.contains(&"http://localhost:8080".to_string()));
        assert!(o.contains(&"http://[::1]:8080".to_string()));
        assert!(o.contains(&"https://app.example:443".to_string()));
        let v6 = own_origins("[::1]:9".parse().unwrap(), &[]);
        assert!(v6.contains(&"http://[::1]:9".to_string()));
    }

    #[test]
    fn debug_hides_the_token() {
        let o = McpServeOptions { token: Some("s3cr3t".into()), ..McpServeOptions::default() };
        let shown = format!("{o:?}");
        assert!(!shown.contains("s3cr3t") && shown.contains(crate::REDACTED));
    }

    #[tokio::test]
    async fn off_loopback_without_a_token_is_refused() {
        let tk = Arc::new(Toolkit::new(vec![]).unwrap());
        let opts = McpServeOptions { addr: "0.0.0.0:0".parse().unwrap(), ..McpServeOptions::default() };
        let e = serve_mcp(tk, opts).await.err().unwrap();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().contains("without a bearer token"));
    }
}
