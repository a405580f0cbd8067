//! HTTP tools against a loopback server: the request built from the arguments (placeholders,
//! query, body modes, `${ENV}` headers), the result for 2xx and other statuses, timeouts and
//! cancellation, and header secrets kept out of every error result.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio::net::TcpListener;
use toolnexus::{
    expand_env_headers, http_tool, BodyMode, CancellationToken, HttpToolSpec, ResultMode, Tool, ToolContext,
    ToolResult, ToolSource, REDACTED,
};

/// What the server saw of one request.
#[derive(Clone, Debug)]
struct Seen {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// A reply: status, body, and how long to hold it back. `{auth}` in the body is replaced
/// by the request's Authorization header (a server that echoes credentials).
#[derive(Clone)]
struct Reply(u16, &'static str, Duration);

#[derive(Clone)]
struct Server {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    async fn start(reply: Reply) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { return };
                let (log, reply) = (log.clone(), reply.clone());
                tokio::spawn(async move {
                    let svc = service_fn(move |req| handle(log.clone(), reply.clone(), req));
                    let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), svc).await;
                });
            }
        });
        Server { port, seen }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn last(&self) -> Seen {
        self.seen.lock().unwrap().last().cloned().expect("a request reached the server")
    }
}

async fn handle(
    log: Arc<Mutex<Vec<Seen>>>,
    reply: Reply,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let method = req.method().to_string();
    let target = req.uri().path_and_query().map(|p| p.to_string()).unwrap_or_default();
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or_default().to_string()))
        .collect();
    let auth = headers.iter().find(|(k, _)| k == "authorization").map(|(_, v)| v.clone()).unwrap_or_default();
    let bytes = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    log.lock().unwrap().push(Seen { method, target, headers, body: String::from_utf8_lossy(&bytes).into_owned() });
    if !reply.2.is_zero() {
        tokio::time::sleep(reply.2).await;
    }
    let body = reply.1.replace("{auth}", &auth);
    Ok(Response::builder().status(reply.0).body(Full::new(Bytes::from(body))).unwrap())
}

fn spec(name: &str, method: &str, url: String) -> HttpToolSpec {
    HttpToolSpec { description: format!("{name} tool"), ..HttpToolSpec::new(name, method, url) }
}

async fn run(tool: &Tool, args: Value) -> ToolResult {
    tool.execute(args, ToolContext::default()).await.unwrap()
}

fn status_of(r: &ToolResult) -> Option<u64> {
    r.metadata.as_ref().and_then(|m| m.get("status")).and_then(Value::as_u64)
}

#[tokio::test]
async fn post_fills_placeholders_query_headers_and_a_json_body() {
    std::env::set_var("TN_HTTP_TEST_TOKEN", "tok-from-env-1234");
    let server = Server::start(Reply(201, r#"{"id": 7}"#, Duration::ZERO)).await;
    let mut s = spec("create_item", "post", server.url("/lists/{list}/items"));
    s.headers = vec![("Authorization".into(), "Bearer ${TN_HTTP_TEST_TOKEN}".into()), ("X-Static".into(), "v".into())];
    s.query = vec!["page".into()];
    let tool = http_tool(s).unwrap();
    assert_eq!((tool.name(), tool.source()), ("create_item", ToolSource::Http));
    let r = run(&tool, json!({"list": "a b/c", "page": 2, "title": "Tea", "done": false, "n": 1.5})).await;
    assert_eq!((r.output.as_str(), r.is_error, status_of(&r)), (r#"{"id": 7}"#, false, Some(201)));
    let seen = server.last();
    assert_eq!(seen.method, "POST");
    assert_eq!(seen.target, "/lists/a%20b%2Fc/items?page=2");
    assert_eq!(seen.header("authorization"), Some("Bearer tok-from-env-1234"));
    assert_eq!(seen.header("x-static"), Some("v"));
    assert_eq!(seen.header("content-type"), Some("application/json"));
    // Python's json.dumps, byte for byte: ", " and ": " separators.
    assert_eq!(seen.body, r#"{"title": "Tea", "done": false, "n": 1.5}"#);
}

#[tokio::test]
async fn form_and_raw_bodies() {
    let server = Server::start(Reply(200, "ok", Duration::ZERO)).await;
    let mut s = spec("form", "POST", server.url("/f"));
    s.body = BodyMode::Form;
    let tool = http_tool(s).unwrap();
    run(&tool, json!({"q": "a&b c", "flag": true})).await;
    let seen = server.last();
    assert_eq!((seen.method.as_str(), seen.body.as_str()), ("POST", "q=a%26b+c&flag=True"));
    assert_eq!(seen.header("content-type"), Some("application/x-www-form-urlencoded"));
    let mut s = spec("raw", "POST", server.url("/r"));
    s.body = BodyMode::Raw;
    s.headers = vec![("Content-Type".into(), "text/plain".into())];
    run(&http_tool(s).unwrap(), json!({"body": "plain text", "ignored": 1})).await;
    let seen = server.last();
    assert_eq!((seen.body.as_str(), seen.header("content-type")), ("plain text", Some("text/plain")));
}

#[tokio::test]
async fn result_modes() {
    let server = Server::start(Reply(200, "{\"a\":[1,2.0],\"b\":\"é\"}", Duration::ZERO)).await;
    let mut s = spec("j", "POST", server.url("/"));
    s.result_mode = ResultMode::Json;
    assert_eq!(run(&http_tool(s).unwrap(), json!({})).await.output, r#"{"a": [1, 2.0], "b": "\u00e9"}"#);
    let mut s = spec("st", "POST", server.url("/"));
    s.result_mode = ResultMode::StatusText;
    assert_eq!(run(&http_tool(s).unwrap(), json!({})).await.output, "200\n{\"a\":[1,2.0],\"b\":\"é\"}");
    let text = Server::start(Reply(200, "not json", Duration::ZERO)).await;
    let mut s = spec("j2", "POST", text.url("/"));
    s.result_mode = ResultMode::Json;
    assert_eq!(run(&http_tool(s).unwrap(), json!({})).await.output, r#""not json""#);
}

#[tokio::test]
async fn a_non_2xx_status_is_an_error_result_with_the_body() {
    let server = Server::start(Reply(404, "nope", Duration::ZERO)).await;
    let r = run(&http_tool(spec("missing", "POST", server.url("/x"))).unwrap(), json!({"id": 99})).await;
    assert_eq!((r.output.as_str(), r.is_error, status_of(&r)), ("HTTP 404: nope", true, Some(404)));
    let empty = Server::start(Reply(503, "", Duration::ZERO)).await;
    let r = run(&http_tool(spec("down", "POST", empty.url("/"))).unwrap(), json!({})).await;
    assert_eq!((r.output.as_str(), r.is_error), ("HTTP 503: ", true));
}

#[tokio::test]
async fn header_secrets_never_reach_an_error_result() {
    std::env::set_var("TN_HTTP_TEST_SECRET", "sk-very-secret-value");
    std::env::set_var("TN_HTTP_TEST_SHORT", "k9");
    let server = Server::start(Reply(500, "bad credentials: {auth} (key k9)", Duration::ZERO)).await;
    let mut s = spec("echo", "POST", server.url("/"));
    s.headers = vec![
        ("Authorization".into(), "Bearer ${TN_HTTP_TEST_SECRET}".into()),
        ("X-Short".into(), "${TN_HTTP_TEST_SHORT}".into()),
    ];
    let r = run(&http_tool(s.clone()).unwrap(), json!({})).await;
    assert!(r.is_error);
    assert_eq!(r.output, format!("HTTP 500: bad credentials: {REDACTED} (key {REDACTED})"));
    // A value that cannot be sent: the error names the header, never the value.
    std::env::set_var("TN_HTTP_TEST_BROKEN", "sk-line\r\nbreak-secret");
    s.headers = vec![("X-Token".into(), "${TN_HTTP_TEST_BROKEN}".into())];
    let r = run(&http_tool(s).unwrap(), json!({})).await;
    assert!(r.is_error && r.output.contains("x-token"), "{}", r.output);
    assert!(!r.output.contains("sk-line") && !r.output.contains("break-secret"), "{}", r.output);
    // Expansion itself, as MCP reuses it.
    let h = expand_env_headers(&[("A".into(), "${TN_HTTP_TEST_SHORT}-${TN_HTTP_TEST_UNSET_VAR}".into())]);
    assert_eq!(h, [("A".to_string(), "k9-".to_string())]);
}

#[tokio::test]
async fn a_slow_server_times_out_as_an_error_result() {
    let server = Server::start(Reply(200, "late", Duration::from_secs(5))).await;
    let mut s = spec("slow", "POST", server.url("/"));
    s.timeout_ms = Some(150);
    let start = Instant::now();
    let r = run(&http_tool(s).unwrap(), json!({})).await;
    assert!(r.is_error && r.output.contains("timed out"), "{}", r.output);
    assert!(start.elapsed() < Duration::from_secs(2));
    // The run's time left caps the tool's own timeout.
    let tool = http_tool(spec("slow2", "POST", server.url("/"))).unwrap();
    let ctx = ToolContext { timeout: Some(Duration::from_millis(150)), ..ToolContext::default() };
    let start = Instant::now();
    let r = tool.execute(json!({}), ctx).await.unwrap();
    assert!(r.is_error && start.elapsed() < Duration::from_secs(2), "{}", r.output);
}

#[tokio::test]
async fn cancellation_ends_the_call() {
    let server = Server::start(Reply(200, "late", Duration::from_secs(5))).await;
    let tool = http_tool(spec("slow", "POST", server.url("/"))).unwrap();
    let cancel = CancellationToken::new();
    let ctx = ToolContext { cancel: cancel.clone(), ..ToolContext::default() };
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let start = Instant::now();
    let r = tool.execute(json!({}), ctx).await.unwrap();
    assert_eq!((r.output.as_str(), r.is_error), ("the HTTP request was cancelled", true));
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn nothing_listening_is_an_error_result() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let r = run(&http_tool(spec("gone", "POST", format!("http://127.0.0.1:{port}/"))).unwrap(), json!({})).await;
    assert!(r.is_error && r.output.contains("connection"), "{}", r.output);
}

#[tokio::test]
async fn put_and_head_are_sent_as_asked() {
    let server = Server::start(Reply(200, "ok", Duration::ZERO)).await;
    let r = run(&http_tool(spec("put", "put", server.url("/items/{id}"))).unwrap(), json!({"id": 7, "a": 1})).await;
    assert_eq!((r.output.as_str(), r.is_error), ("ok", false));
    let seen = server.last();
    assert_eq!((seen.method.as_str(), seen.target.as_str(), seen.body.as_str()), ("PUT", "/items/7", r#"{"a": 1}"#));
    // A HEAD answer announces a length it does not send: reading it must not wait for it.
    let r = run(&http_tool(spec("probe", "HEAD", server.url("/"))).unwrap(), json!({})).await;
    assert_eq!((r.output.as_str(), r.is_error), ("", false));
    assert_eq!(server.last().method, "HEAD");
    let e = http_tool(spec("bad", "GE T", server.url("/"))).unwrap_err();
    assert!(e.message().contains("GE T"), "{}", e.message());
}

/// Upstream's own GET test (`test_http_tool_placeholder_env_header_query`).
#[tokio::test]
async fn get_sends_every_argument_in_the_query() {
    std::env::set_var("TN_HTTP_TEST_GET_TOKEN", "tok");
    let server = Server::start(Reply(200, r#"{"id": 5, "title": "hello"}"#, Duration::ZERO)).await;
    let mut s = spec("get_post", "GET", server.url("/posts/{id}"));
    s.headers = vec![("Authorization".into(), "Bearer ${TN_HTTP_TEST_GET_TOKEN}".into())];
    let r = run(&http_tool(s).unwrap(), json!({"id": 5, "q": "x"})).await;
    assert!(!r.is_error && r.output.contains("hello"), "{}", r.output);
    let seen = server.last();
    assert_eq!((seen.method.as_str(), seen.target.as_str()), ("GET", "/posts/5?q=x"));
    assert_eq!((seen.header("authorization"), seen.body.as_str()), (Some("Bearer tok"), ""));
}

#[test]
fn specs_read_from_json() {
    let s = HttpToolSpec::from_json(&json!({
        "name": "get_post",
        "description": "Fetch a post.",
        "method": "GET",
        "url": "https://api.example.com/posts/{id}",
        "headers": {"Authorization": "Bearer ${TOKEN}"},
        "inputSchema": {"type": "object", "properties": {"id": {"type": "number"}}, "required": ["id"]},
    }))
    .unwrap();
    let tool = http_tool(s).unwrap();
    assert_eq!(tool.description(), "Fetch a post.");
    assert_eq!(tool.input_schema()["required"], json!(["id"]));
    let e = HttpToolSpec::from_json(&json!({"name": "x", "description": "", "method": "GET"})).unwrap_err();
    assert_eq!(e.message(), "HTTP tool key \"url\" is required");
    let e = HttpToolSpec::from_json(&json!({"name": "x", "description": "", "method": "GET", "url": "http://h/",
        "headers": {"Authorization": ["sk-not-shown"]}}))
    .unwrap_err();
    assert!(!e.message().contains("sk-not-shown"), "{}", e.message());
}

#[test]
fn headers_from_json_expand_and_name_a_bad_header_without_its_value() {
    std::env::set_var("TN_HTTP_TEST_JSON_TOKEN", "tok-json");
    let out = toolnexus::expand_env_headers_json(&json!({"A": "Bearer ${TN_HTTP_TEST_JSON_TOKEN}"})).unwrap();
    assert_eq!(out["A"], "Bearer tok-json");
    let e = toolnexus::expand_env_headers_json(&json!({"A": ["sk-hidden-value"]})).unwrap_err();
    assert_eq!(e.message(), "header \"A\" must be a string, got array");
    assert!(toolnexus::expand_env_headers_json(&json!("x")).is_err());
}
