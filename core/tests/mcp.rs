//! The MCP source and MCP serve against servers and a client no one here wrote: the
//! reference servers `@modelcontextprotocol/server-everything` (stdio and streamable HTTP) and
//! `server-filesystem` from npm, servers on the official Python SDK (tests/mcp/py_*.py), and
//! that SDK's client driving our serve. Plus the failures: a server that never answers
//! `initialize`, one that dies in the middle of a call, an endpoint that accepts and never
//! replies, cancellation, and no process left behind. Setup: tests/mcp_env (pinned installs).
#![cfg(feature = "mcp")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod mcp_env;

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolnexus::mcp::{
    list_mcp_tools, load_mcp, serve_mcp, McpConfig, McpServeOptions, McpSource, McpStatus, GATED_BUILTINS,
};
use toolnexus::{Answer, CancellationToken, Request, Tool, ToolContext, ToolResult, ToolSource, Toolkit, WaitFor};

fn config(v: Value) -> McpConfig {
    McpConfig::from_json(&v).unwrap().value
}

async fn load(v: Value) -> McpSource {
    load_mcp(&config(v), None, CancellationToken::new()).await.unwrap()
}

async fn call(source: &McpSource, name: &str, args: Value) -> ToolResult {
    let tool = source.tools.iter().find(|t| t.name() == name).unwrap_or_else(|| panic!("no tool {name}: {source:?}"));
    tool.execute(args, ToolContext::default()).await.unwrap()
}

/// Waits up to 3 s for `done`, without blocking the runtime (it reaps the children).
async fn eventually(done: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(3);
    while !done() {
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

fn py_stdio(python: &std::path::Path) -> Value {
    json!({"command": [python, mcp_env::script("py_server.py"), "stdio"]})
}

#[tokio::test]
async fn everything_over_stdio_lists_calls_and_maps_results() {
    let Some(node) = mcp_env::node() else { return };
    // Claude Desktop's spelling: command plus args, and env.
    let mut source = load(json!({"mcpServers": {"everything": {
        "command": "node", "args": [node.everything, "stdio"], "env": {"TN_MCP_PROBE": "from-config"}
    }}}))
    .await;
    assert_eq!(source.status["everything"], McpStatus::Connected, "{:?}", source.warnings);
    let names: Vec<&str> = source.tools.iter().map(Tool::name).collect();
    for want in ["everything_echo", "everything_get-sum", "everything_get-tiny-image", "everything_get-env"] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    let echo = source.tools.iter().find(|t| t.name() == "everything_echo").unwrap();
    assert_eq!(echo.source(), ToolSource::Mcp);
    assert_eq!(echo.input_schema()["type"], "object");
    assert_eq!(echo.input_schema()["additionalProperties"], false);
    assert_eq!(echo.input_schema()["properties"]["message"]["type"], "string");

    let r = call(&source, "everything_echo", json!({"message": "hi"})).await;
    assert_eq!((r.output.as_str(), r.is_error), ("Echo: hi", false));
    assert_eq!(r.metadata.unwrap()["server"], "everything");
    let r = call(&source, "everything_get-sum", json!({"a": 2, "b": 3})).await;
    assert!(r.output.contains('5'), "{r:?}");
    // The environment given in the config reaches the server.
    let r = call(&source, "everything_get-env", json!({})).await;
    assert!(r.output.contains("from-config"), "{}", r.output);
    // Structured content wins, as compact JSON.
    let r = call(&source, "everything_get-structured-content", json!({"location": "Chicago"})).await;
    let v: Value = serde_json::from_str(&r.output).unwrap_or_else(|_| panic!("not JSON: {}", r.output));
    assert_eq!(v["temperature"], 36);
    assert!(!r.output.contains(": "), "{}", r.output);
    // Text and an image: the text is the output, the image is the result's content part.
    let r = call(&source, "everything_get-tiny-image", json!({})).await;
    assert!(!r.is_error && !r.output.is_empty(), "{r:?}");
    let parts = r.parts.clone().unwrap();
    assert_eq!(parts[0]["type"], "image");
    assert_eq!(parts[0]["mimeType"], "image/png");
    // A call the server refuses is an error result, never a failure of the run.
    let r = call(&source, "everything_get-sum", json!({"a": "x"})).await;
    assert!(r.is_error, "{r:?}");
    source.close().await;
}

#[tokio::test]
async fn everything_over_streamable_http() {
    let Some(node) = mcp_env::node() else { return };
    let port = mcp_env::free_port();
    let mut cmd = Command::new("node");
    cmd.arg(&node.everything).arg("streamableHttp").env("PORT", port.to_string());
    let server = mcp_env::start_http(cmd, port);
    let mut source = load(json!({"servers": {"remote everything": {"url": server.url, "timeout": 10000}}})).await;
    assert_eq!(source.status["remote everything"], McpStatus::Connected, "{:?}", source.warnings);
    assert!(source.child_pids().is_empty());
    // The server name is sanitised into the prefix.
    let r = call(&source, "remote_everything_echo", json!({"message": "over http"})).await;
    assert_eq!(r.output, "Echo: over http");
    source.close().await;
}

#[tokio::test]
async fn filesystem_server_with_a_tools_filter() {
    let Some(node) = mcp_env::node() else { return };
    let dir = std::env::temp_dir().join(mcp_env::marker("fs"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.txt"), "hello from a file").unwrap();
    let mut source = load(json!({"fs": {
        "command": ["node", node.filesystem, dir],
        "tools": {"read_text_file": true, "list_directory": true, "no_such_tool": true}
    }}))
    .await;
    assert_eq!(source.status["fs"], McpStatus::Connected, "{:?}", source.warnings);
    let mut names: Vec<&str> = source.tools.iter().map(Tool::name).collect();
    names.sort_unstable();
    assert_eq!(names, ["fs_list_directory", "fs_read_text_file"]);
    assert_eq!(source.warnings.len(), 1);
    assert_eq!(
        source.warnings[0].message,
        "[toolnexus] server \"fs\" tools filter name \"no_such_tool\" matched no tool"
    );
    // The server answers with structured content too, which wins (as compact JSON).
    let r = call(&source, "fs_read_text_file", json!({"path": dir.join("a.txt")})).await;
    assert_eq!((r.output.as_str(), r.is_error), (r#"{"content":"hello from a file"}"#, false));
    let r = call(&source, "fs_list_directory", json!({"path": dir})).await;
    assert!(r.output.contains("a.txt"), "{}", r.output);
    // Outside the allowed directory the server says no: an error result.
    let r = call(&source, "fs_read_text_file", json!({"path": "/etc/hostname"})).await;
    assert!(r.is_error, "{r:?}");
    source.close().await;
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn python_sdk_server_results_env_and_cwd() {
    let Some(python) = mcp_env::python() else { return };
    let dir = std::env::temp_dir();
    let mut source = load(json!({"py": {
        "command": [python, mcp_env::script("py_server.py"), "stdio"],
        "environment": {"TN_MCP_FROM_CONFIG": "yes"}, "cwd": dir
    }}))
    .await;
    assert_eq!(source.status["py"], McpStatus::Connected, "{:?}", source.warnings);
    assert_eq!(call(&source, "py_echo", json!({"text": "same"})).await, {
        let mut m = toolnexus::JsonObject::new();
        m.insert("server".into(), json!("py"));
        ToolResult { output: "same".into(), is_error: false, metadata: Some(m), parts: None }
    });
    assert_eq!(call(&source, "py_weather", json!({"city": "Paris"})).await.output, r#"{"city":"Paris","celsius":21}"#);
    let r = call(&source, "py_fail", json!({"reason": "no such city"})).await;
    assert_eq!((r.output.as_str(), r.is_error), ("Error executing tool fail: no such city", true));
    // An image and no text: the output describes it.
    let r = call(&source, "py_picture", json!({})).await;
    assert_eq!(r.output, "image (image/png, 68 bytes)");
    assert_eq!(call(&source, "py_env", json!({"name": "TN_MCP_FROM_CONFIG"})).await.output, "yes");
    let cwd = call(&source, "py_cwd", json!({})).await.output;
    assert_eq!(std::fs::canonicalize(cwd).unwrap(), std::fs::canonicalize(dir).unwrap());
    source.close().await;
}

#[tokio::test]
async fn python_sdk_server_over_http_gets_expanded_headers() {
    let Some(python) = mcp_env::python() else { return };
    let port = mcp_env::free_port();
    let mut cmd = Command::new(python);
    cmd.arg(mcp_env::script("py_server.py")).arg("http").arg(port.to_string());
    let server = mcp_env::start_http(cmd, port);
    std::env::set_var("TN_MCP_TEST_HEADER_TOKEN", "t0k3n-from-env");
    let mut source = load(json!({"mcp": {"pyhttp": {
        "type": "remote", "url": server.url, "headers": {"X-Test-Token": "Bearer ${TN_MCP_TEST_HEADER_TOKEN}"}
    }}}))
    .await;
    assert_eq!(source.status["pyhttp"], McpStatus::Connected, "{:?}", source.warnings);
    let r = call(&source, "pyhttp_header", json!({"name": "X-Test-Token"})).await;
    assert_eq!(r.output, "Bearer t0k3n-from-env");
    assert_eq!(call(&source, "pyhttp_echo", json!({"text": "sse"})).await.output, "sse");
    source.close().await;
}

#[tokio::test]
async fn pages_of_tools_are_all_read() {
    let Some(python) = mcp_env::python() else { return };
    let mut source = load(json!({"paged": {"command": [python, mcp_env::script("py_paged.py")]}})).await;
    let names: Vec<&str> = source.tools.iter().map(Tool::name).collect();
    assert_eq!(names, ["paged_t0", "paged_t1", "paged_t2", "paged_t3", "paged_t4"], "{:?}", source.warnings);
    assert_eq!(call(&source, "paged_t3", json!({})).await.output, "called t3");
    source.close().await;
}

#[tokio::test]
async fn a_hanging_a_missing_and_a_silent_server_are_isolated() {
    let Some(python) = mcp_env::python() else { return };
    let marker = mcp_env::marker("hang");
    // Accepts connections and never answers.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_url = format!("http://{}/mcp", silent.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((s, _)) = silent.accept().await {
            open.push(s);
        }
    });
    let started = Instant::now();
    let mut source = load(json!({
        "hang": {"command": [python, mcp_env::script("hang_server.py"), &marker], "timeout": 500},
        "missing": {"command": "/nonexistent/mcp-server"},
        "silent": {"url": silent_url, "timeout": 500},
        "broken": {"command": 42},
        "off": {"command": "whatever", "enabled": false},
        "good": py_stdio(python),
    }))
    .await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "not bounded by the per-server timeout: {took:?}");
    let status: Vec<(&str, McpStatus)> = source.status.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        status,
        [
            ("broken", McpStatus::Failed),
            ("good", McpStatus::Connected),
            ("hang", McpStatus::Failed),
            ("missing", McpStatus::Failed),
            ("off", McpStatus::Disabled),
            ("silent", McpStatus::Failed),
        ]
    );
    let warnings: Vec<&str> = source.warnings.iter().map(|w| w.message.as_str()).collect();
    assert!(warnings.iter().all(|w| w.starts_with("[toolnexus] MCP server \"")), "{warnings:?}");
    assert!(
        warnings.contains(&"[toolnexus] MCP server \"hang\" failed: no answer to initialize within 500 ms"),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.contains("\"missing\" failed: cannot start \"/nonexistent/mcp-server\"")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.contains("\"silent\" failed: no answer to initialize within 500 ms")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.contains("\"broken\" failed: invalid config: \"command\" must be")),
        "{warnings:?}"
    );
    assert!(source.tools.iter().all(|t| t.name().starts_with("good_")));
    // The server that hung is not left running.
    assert!(eventually(|| mcp_env::processes_with(&marker).is_empty()).await, "hang_server.py still runs");
    source.close().await;
    held.abort();
}

#[tokio::test]
async fn a_server_that_dies_mid_call_fails_that_call_only() {
    let Some(python) = mcp_env::python() else { return };
    let mut source = load(json!({"a": py_stdio(python), "b": py_stdio(python)})).await;
    let started = Instant::now();
    let r = call(&source, "a_crash", json!({})).await;
    assert!(r.is_error, "{r:?}");
    assert!(r.output.starts_with("MCP server \"a\": "), "{}", r.output);
    assert!(started.elapsed() < Duration::from_secs(5));
    // Its other tools now fail fast; the other server is untouched.
    assert!(call(&source, "a_echo", json!({"text": "x"})).await.is_error);
    assert_eq!(call(&source, "b_echo", json!({"text": "still up"})).await.output, "still up");
    source.close().await;
}

#[tokio::test]
async fn a_slow_call_times_out_with_the_server_timeout_or_the_run_deadline() {
    let Some(python) = mcp_env::python() else { return };
    let mut source =
        load(json!({"py": {"command": [python, mcp_env::script("py_server.py"), "stdio"], "timeout": 3000}})).await;
    let tool = source.tools.iter().find(|t| t.name() == "py_slow").unwrap();
    let ctx = ToolContext { timeout: Some(Duration::from_millis(300)), ..ToolContext::default() };
    let r = tool.execute(json!({"seconds": 5}), ctx).await.unwrap();
    assert!(r.is_error && r.output.contains("timed out after 300 ms"), "{r:?}");
    let cancel = CancellationToken::new();
    let ctx = ToolContext { cancel: cancel.clone(), ..ToolContext::default() };
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    let r = tool.execute(json!({"seconds": 5}), ctx).await.unwrap();
    assert!(r.is_error && r.output.contains("cancelled"), "{r:?}");
    canceller.await.unwrap();
    // The server still answers after both.
    assert_eq!(call(&source, "py_echo", json!({"text": "ok"})).await.output, "ok");
    source.close().await;
}

/// Answers elicitations as told and records the requests.
struct Asker {
    seen: Mutex<Vec<Request>>,
    answer: fn(&Request) -> Option<Answer>,
}

impl WaitFor for Asker {
    fn wait_for(&self, request: Request) -> toolnexus::HookFuture<Option<Answer>> {
        let answer = (self.answer)(&request);
        self.seen.lock().unwrap().push(request);
        Box::pin(async move { Ok(answer) })
    }
}

fn asker(answer: fn(&Request) -> Option<Answer>) -> Arc<Asker> {
    Arc::new(Asker { seen: Mutex::new(Vec::new()), answer })
}

fn form_ok_url_declined(r: &Request) -> Option<Answer> {
    let mut data = toolnexus::JsonObject::new();
    data.insert("name".into(), json!("Ada"));
    Some(match r.kind.as_str() {
        "input" => Answer { id: r.id.clone(), ok: true, data: Some(data), reason: None },
        _ => toolnexus::answer_declined(&r.id, "declined"),
    })
}

#[tokio::test]
async fn python_server_elicits_through_wait_for_in_both_modes() {
    let Some(python) = mcp_env::python() else { return };
    let w = asker(form_ok_url_declined);
    let wait_for: Arc<dyn WaitFor> = w.clone();
    let mut source =
        load_mcp(&config(json!({"py": py_stdio(python)})), Some(wait_for), CancellationToken::new()).await.unwrap();
    assert_eq!(call(&source, "py_ask_name", json!({})).await.output, "Hello Ada");
    assert_eq!(call(&source, "py_login", json!({})).await.output, "login: decline");
    let seen = w.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    assert_eq!((seen[0].kind.as_str(), seen[0].prompt.as_str()), ("input", "Your name?"));
    assert!(seen[0].id.starts_with("elc-"));
    assert_eq!(seen[0].data.as_ref().unwrap()["schema"]["properties"]["name"]["type"], "string");
    assert_eq!(seen[1].kind, "authorization");
    assert_eq!(seen[1].url.as_deref(), Some("https://auth.example/login"));
    assert_eq!(seen[1].prompt, "Log in to continue");
    assert!(seen[1].data.is_none());
    source.close().await;

    // No answer, or one without a reason, is a cancel.
    let w = asker(|_| None);
    let wait_for: Arc<dyn WaitFor> = w.clone();
    let mut source =
        load_mcp(&config(json!({"py": py_stdio(python)})), Some(wait_for), CancellationToken::new()).await.unwrap();
    assert_eq!(call(&source, "py_ask_name", json!({})).await.output, "no name: cancel");
    source.close().await;

    // Without wait_for the capability is not advertised: the server gets no name.
    let mut source = load(json!({"py": py_stdio(python)})).await;
    let r = call(&source, "py_ask_name", json!({})).await;
    assert!(!r.output.contains("Hello"), "{r:?}");
    source.close().await;
}

#[tokio::test]
async fn everything_server_elicits_a_form_and_only_offers_it_when_we_can_answer() {
    let Some(node) = mcp_env::node() else { return };
    let server = json!({"e": {"command": ["node", node.everything, "stdio"]}});
    let mut without = load(server.clone()).await;
    assert!(without.tools.iter().all(|t| t.name() != "e_trigger-elicitation-request"));
    without.close().await;
    let w = asker(form_ok_url_declined);
    let wait_for: Arc<dyn WaitFor> = w.clone();
    let mut source = load_mcp(&config(server), Some(wait_for), CancellationToken::new()).await.unwrap();
    let r = call(&source, "e_trigger-elicitation-request", json!({})).await;
    assert!(!r.is_error && r.output.contains("Ada"), "{r:?}");
    let r = call(&source, "e_trigger-url-elicitation", json!({"url": "https://auth.example/x"})).await;
    assert!(r.output.to_lowercase().contains("decline"), "{r:?}");
    let seen = w.seen.lock().unwrap().clone();
    assert_eq!(seen[0].kind, "input");
    assert!(seen[0].data.as_ref().unwrap()["schema"]["properties"]["email"].is_object());
    assert_eq!((seen[1].kind.as_str(), seen[1].url.as_deref()), ("authorization", Some("https://auth.example/x")));
    source.close().await;
}

#[tokio::test]
async fn close_and_drop_leave_no_server_process() {
    let (Some(python), Some(node)) = (mcp_env::python(), mcp_env::node()) else { return };
    let servers = json!({"py": py_stdio(python), "e": {"command": ["node", node.everything, "stdio"]}});
    let mut source = load(servers.clone()).await;
    let pids = source.child_pids();
    assert_eq!(pids.len(), 2, "{source:?}");
    assert!(pids.iter().all(|p| mcp_env::alive(*p)));
    source.close().await;
    assert!(eventually(|| pids.iter().all(|p| !mcp_env::alive(*p))).await, "close left {pids:?} running");
    assert!(source.child_pids().is_empty());
    // The tools answer with an error once closed.
    assert!(call(&source, "py_echo", json!({"text": "x"})).await.is_error);
    source.close().await;

    let source = load(servers).await;
    let pids = source.child_pids();
    assert_eq!(pids.len(), 2);
    drop(source);
    assert!(eventually(|| pids.iter().all(|p| !mcp_env::alive(*p))).await, "drop left {pids:?} running");
}

#[tokio::test]
async fn cancelling_the_load_aborts_it_and_stops_its_servers() {
    let Some(python) = mcp_env::python() else { return };
    let marker = mcp_env::marker("cancel");
    let cancel = CancellationToken::new();
    let fire = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(800)).await;
        fire.cancel();
    });
    let started = Instant::now();
    let cfg =
        config(json!({"hang": {"command": [python, mcp_env::script("hang_server.py"), &marker], "timeout": 60000}}));
    let e = load_mcp(&cfg, None, cancel).await.unwrap_err();
    assert_eq!(e.kind(), toolnexus::ErrorKind::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(eventually(|| mcp_env::processes_with(&marker).is_empty()).await, "the cancelled server still runs");
    let fired = CancellationToken::new();
    fired.cancel();
    assert!(list_mcp_tools(&cfg, fired).await.is_err());
}

#[tokio::test]
async fn list_only_inventory_is_unfiltered_and_leaves_nothing_running() {
    let Some(python) = mcp_env::python() else { return };
    let marker = mcp_env::marker("inventory");
    let inv = list_mcp_tools(
        &config(json!({
            "good": {"command": [python, mcp_env::script("py_server.py"), "stdio", &marker], "tools": {"echo": true}},
            "bad": {"url": "http://127.0.0.1:1/mcp", "timeout": 500},
            "off": {"url": "http://127.0.0.1:1/mcp", "disabled": true},
        })),
        CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(inv.status["good"], McpStatus::Connected);
    assert_eq!(inv.status["bad"], McpStatus::Failed);
    assert_eq!(inv.status["off"], McpStatus::Disabled);
    assert!(!inv.tools.contains_key("off") && !inv.tools.contains_key("bad"));
    let names: Vec<&str> = inv.tools["good"].iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"echo") && names.contains(&"weather") && names.len() > 5, "{names:?}");
    let echo = &inv.tools["good"][0];
    assert_eq!((echo.name.as_str(), echo.description.as_str()), ("echo", "Echo the text back."));
    assert_eq!(echo.input_schema["additionalProperties"], false);
    assert!(eventually(|| mcp_env::processes_with(&marker).is_empty()).await, "list_mcp_tools left its server running");
}

// ---- MCP serve, driven by the official Python SDK's client ------------------------------

fn served_toolkit() -> Arc<Toolkit> {
    let echo = Tool::from_sync(
        "echo",
        "echo back text",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        |args, _| Ok(ToolResult::ok(args["text"].as_str().unwrap_or_default())),
    );
    let boom = Tool::from_sync("boom", "always fails", json!({"type": "object"}), |_, _| {
        Err(toolnexus::Error::invalid("kaboom"))
    });
    // Stand-ins for the built-ins the serve gates (source builtin, as the built-in source makes them).
    let builtin =
        |name: &str| Tool::new(name, "a built-in", json!({"type": "object"}), ToolSource::Builtin, Arc::new(Ran));
    let mut tools = vec![echo, boom];
    tools.extend(GATED_BUILTINS.iter().map(|n| builtin(n)));
    Arc::new(Toolkit::new(tools).unwrap())
}

struct Ran;

impl toolnexus::ToolHandler for Ran {
    fn execute(
        &self,
        _args: Value,
        _ctx: ToolContext,
    ) -> futures_util::future::BoxFuture<'static, toolnexus::Result<ToolResult>> {
        Box::pin(async { Ok(ToolResult::ok("ran")) })
    }
}

fn sdk_client(python: &std::path::Path, url: &str, probes: Value) -> Vec<Value> {
    let out =
        Command::new(python).arg(mcp_env::script("sdk_client.py")).arg(url).arg(probes.to_string()).output().unwrap();
    assert!(out.status.success(), "sdk_client.py: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("sdk_client.py printed {:?}", String::from_utf8_lossy(&out.stdout)))
}

/// POSTs an `initialize` to `/mcp` with the extra `headers` lines; the status and the head.
async fn raw_post(addr: std::net::SocketAddr, headers: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let head = answer.split("\r\n\r\n").next().unwrap_or_default().to_string();
    (head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0), head)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_answers_the_official_client_and_guards_itself() {
    let Some(python) = mcp_env::python() else { return };
    let opts = McpServeOptions {
        name: "gateway".into(),
        version: "2.0.0".into(),
        token: Some("s3cr3t-token".into()),
        ..McpServeOptions::default()
    };
    let mut server = serve_mcp(served_toolkit(), opts).await.unwrap();
    assert!(server.url().starts_with("http://127.0.0.1:") && server.url().ends_with("/mcp"));
    let own = format!("http://127.0.0.1:{}", server.local_addr().port());
    let url = server.url().to_string();
    let python = python.clone();
    let results = tokio::task::spawn_blocking(move || {
        sdk_client(
            &python,
            &url,
            json!([
                {"token": "s3cr3t-token", "call": {"name": "echo", "arguments": {"text": "over http"}}},
                {"token": "s3cr3t-token", "call": {"name": "boom"}},
                {},
                {"token": "wrong"},
                {"token": "s3cr3t-token", "origin": "http://evil.example"},
                {"token": "s3cr3t-token", "origin": own, "call": {"name": "bash"}},
            ]),
        )
    })
    .await
    .unwrap();
    let ok = &results[0];
    assert_eq!(ok["ok"], true, "{ok}");
    assert_eq!((ok["server"].as_str(), ok["version"].as_str()), (Some("gateway"), Some("2.0.0")));
    // Every tool but the gated built-ins, under its toolkit name, with its schema.
    assert_eq!(ok["tools"], json!(["echo", "boom"]));
    assert_eq!(ok["schemas"]["echo"]["required"], json!(["text"]));
    assert_eq!(ok["call"], json!({"text": "over http", "isError": false}));
    assert_eq!(results[1]["call"], json!({"text": "kaboom", "isError": true}));
    for (i, why) in [(2, "no token"), (3, "a wrong token"), (4, "a foreign Origin")] {
        assert_eq!(results[i]["ok"], false, "{why} was let in: {}", results[i]);
    }
    // What they were told, on the wire.
    let addr = server.local_addr();
    let status = |headers: &'static str| raw_post(addr, headers);
    let (code, head) = status("").await;
    assert_eq!(code, 401);
    assert!(head.to_ascii_lowercase().contains("www-authenticate: bearer"), "{head}");
    assert_eq!(status("Authorization: Bearer wrong\r\n").await.0, 401);
    assert_eq!(status("Authorization: Bearer s3cr3t-token\r\nOrigin: http://evil.example\r\n").await.0, 403);
    assert_eq!(status("Authorization: Bearer s3cr3t-token\r\nOrigin: null\r\n").await.0, 403);
    assert_eq!(status("Authorization: Bearer s3cr3t-token\r\n").await.0, 200);
    // The server's own origin is fine; bash is not exposed: calling it is the SDK's invalid-params error.
    assert_eq!(results[5]["ok"], true, "{}", results[5]);
    assert!(results[5]["call"]["error"].as_str().unwrap().contains("Unknown tool: bash"), "{}", results[5]);
    server.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_exposes_a_gated_builtin_only_when_named() {
    let Some(python) = mcp_env::python() else { return };
    let opts = McpServeOptions {
        tools: Some(vec!["bash".into(), "echo".into(), "nope".into()]),
        ..McpServeOptions::default()
    };
    let mut server = serve_mcp(served_toolkit(), opts).await.unwrap();
    assert_eq!(server.tool_names(), ["echo", "bash"]);
    assert_eq!(server.warnings().len(), 1);
    let (python, url) = (python.clone(), server.url().to_string());
    let results = tokio::task::spawn_blocking(move || {
        sdk_client(&python, &url, json!([{"call": {"name": "bash", "arguments": {}}}]))
    })
    .await
    .unwrap();
    assert_eq!(results[0]["tools"], json!(["echo", "bash"]), "{}", results[0]);
    assert_eq!(results[0]["call"], json!({"text": "ran", "isError": false}));
    server.close().await;
}

#[tokio::test]
async fn our_client_against_our_serve() {
    let opts = McpServeOptions { token: Some("tok-123456".into()), ..McpServeOptions::default() };
    let mut server = serve_mcp(served_toolkit(), opts).await.unwrap();
    std::env::set_var("TN_MCP_TEST_SERVE_TOKEN", "tok-123456");
    let mut source = load(json!({
        "srv": {"url": server.url(), "headers": {"Authorization": "Bearer ${TN_MCP_TEST_SERVE_TOKEN}"}, "tools": {"boom": false}},
        "nokey": {"url": server.url(), "timeout": 5000},
    }))
    .await;
    assert_eq!(source.status["srv"], McpStatus::Connected, "{:?}", source.warnings);
    assert_eq!(source.status["nokey"], McpStatus::Failed);
    let names: Vec<&str> = source.tools.iter().map(Tool::name).collect();
    assert_eq!(names, ["srv_echo"]);
    assert_eq!(call(&source, "srv_echo", json!({"text": "round trip"})).await.output, "round trip");
    source.close().await;
    server.close().await;
    // Closed: the port no longer answers.
    assert!(tokio::net::TcpStream::connect(server.local_addr()).await.is_err());
}
