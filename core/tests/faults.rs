//! The fault suite through the Rust API: every scenario of `tests/faults/scenarios.json`
//! against `tests/faults/fault_server.py` (spawned here; it exits when its stdin closes).
//! Each must end in its typed error or its error tool result within its bound, and leave
//! nothing running: the run's future completed, every future a host callback started was
//! dropped, and the runtime holds no task.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::HashMap;
use std::fmt;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use toolnexus::{
    suspend, AfterLlmEvent, AfterToolEvent, Answer, BeforeLlmEvent, BeforeToolEvent, Client, ClientOptions, Error,
    ErrorInfo, HookFuture, HookSet, Hooks, LlmOverride, OnError, Request, Tier, Tool, ToolOverride, ToolResult,
    Toolkit, WaitFor,
};

fn faults_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/faults")
}

/// The fault server, for as long as this value lives.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new("python3")
            .arg(faults_dir().join("fault_server.py"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 must be on PATH to run the fault suite");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port = line.trim().parse().unwrap_or_else(|_| panic!("fault server said {line:?}"));
        Server { child, port }
    }

    /// What the server knows of `prefix`: `requests` (the POSTs it saw) and `open` (its
    /// connections not closed yet).
    fn stats(&self, prefix: &str) -> Value {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(s, "GET /_stats/{prefix} HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n").unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        let body = text.split("\r\n\r\n").nth(1).unwrap();
        serde_json::from_str(body).unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.child.stdin.take()); // the server exits on its own...
        let _ = self.child.kill(); // ...or now
        let _ = self.child.wait();
    }
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The host's own failure: it must come back as the run's error source.
#[derive(Debug)]
struct FaultError(String);

impl fmt::Display for FaultError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FaultError {}

fn host_failure(message: &str) -> Error {
    Error::host(Box::new(FaultError(message.to_string())))
}

/// Counts the host futures alive: each behaviour's future holds one `Live` while it exists.
#[derive(Clone, Default)]
struct Alive(Arc<AtomicUsize>);

struct Live(Arc<AtomicUsize>);

impl Alive {
    fn enter(&self) -> Live {
        self.0.fetch_add(1, Ordering::SeqCst);
        Live(self.0.clone())
    }

    fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A host callback's behaviour: `raise` fails with `message`, `hang` never answers.
async fn misbehave<T>(spec: &Value, live: Live) -> toolnexus::Result<T> {
    let _live = live;
    match spec["behavior"].as_str().unwrap() {
        "raise" => Err(host_failure(spec["message"].as_str().unwrap())),
        "hang" => std::future::pending().await,
        other => panic!("unknown host behaviour {other}"),
    }
}

fn probe_tool(spec: &Value, alive: &Alive) -> Tool {
    let behavior = spec.clone();
    let alive = alive.clone();
    let name = spec["name"].as_str().unwrap();
    let description = spec["description"].as_str().unwrap();
    Tool::from_fn(name, description, spec["input_schema"].clone(), move |_args, ctx| {
        let b = behavior.clone();
        let live = alive.enter();
        async move {
            match b["behavior"].as_str().unwrap() {
                "text" => Ok(ToolResult::ok(b["output"].as_str().unwrap())),
                "suspend" if ctx.answer.is_none() => Ok(suspend(
                    Request::from_json(&json!({"id": "pnd-fault", "kind": "approval", "prompt": b["prompt"]})).unwrap(),
                )),
                "suspend" => Ok(ToolResult::ok("approved")),
                _ => misbehave(&b, live).await,
            }
        }
    })
}

struct FaultWaitFor {
    spec: Value,
    alive: Alive,
}

impl WaitFor for FaultWaitFor {
    fn wait_for(&self, _request: Request) -> HookFuture<Option<Answer>> {
        let (spec, live) = (self.spec.clone(), self.alive.enter());
        Box::pin(async move { misbehave(&spec, live).await })
    }
}

struct FaultHooks {
    hooks: Map<String, Value>,
    alive: Alive,
}

impl FaultHooks {
    fn fire<T: Send + 'static>(&self, name: &str, none: T) -> HookFuture<T> {
        match self.hooks.get(name) {
            Some(spec) => {
                let (spec, live) = (spec.clone(), self.alive.enter());
                Box::pin(async move { misbehave(&spec, live).await })
            }
            None => Box::pin(std::future::ready(Ok(none))),
        }
    }
}

impl Hooks for FaultHooks {
    fn enabled(&self) -> HookSet {
        let has = |k: &str| self.hooks.contains_key(k);
        HookSet {
            before_llm: has("before_llm"),
            after_llm: has("after_llm"),
            before_tool: has("before_tool"),
            after_tool: has("after_tool"),
        }
    }

    fn before_llm(&self, _ev: BeforeLlmEvent) -> HookFuture<Option<LlmOverride>> {
        self.fire("before_llm", None)
    }

    fn after_llm(&self, _ev: AfterLlmEvent) -> HookFuture<()> {
        self.fire("after_llm", ())
    }

    fn before_tool(&self, _ev: BeforeToolEvent) -> HookFuture<Option<ToolOverride>> {
        self.fire("before_tool", None)
    }

    fn after_tool(&self, _ev: AfterToolEvent) -> HookFuture<Option<ToolResult>> {
        self.fire("after_tool", None)
    }
}

struct FaultOnError {
    spec: Value,
    alive: Alive,
}

impl OnError for FaultOnError {
    fn classify(&self, _info: ErrorInfo) -> HookFuture<Tier> {
        let (spec, live) = (self.spec.clone(), self.alive.enter());
        Box::pin(async move { misbehave(&spec, live).await })
    }
}

fn client_for(sc: &Value, base_url: &str, alive: &Alive) -> Client {
    let mut opts = sc["client"].as_object().unwrap().clone();
    opts.insert("base_url".into(), json!(base_url));
    opts.insert("style".into(), sc["style"].clone());
    let mut o: ClientOptions = ClientOptions::from_json(&Value::Object(opts)).unwrap().value;
    if let Some(spec) = sc.get("wait_for") {
        o.wait_for = Some(Arc::new(FaultWaitFor { spec: spec.clone(), alive: alive.clone() }));
    }
    if let Some(Value::Object(hooks)) = sc.get("hooks") {
        o.hooks = Some(Arc::new(FaultHooks { hooks: hooks.clone(), alive: alive.clone() }));
    }
    if let Some(spec) = sc.get("on_error") {
        o.on_error = Some(Arc::new(FaultOnError { spec: spec.clone(), alive: alive.clone() }));
    }
    Client::new(o).unwrap()
}

/// Every text of `e` a host could show.
fn error_texts(e: &Error) -> Vec<String> {
    let mut t = vec![e.to_string(), format!("{e:?}")];
    if let Some(d) = e.http_detail() {
        t.push(d.body.clone());
        t.extend(d.retry_after.clone());
    }
    t
}

fn secrets_of(sc: &Value) -> Vec<String> {
    let mut s: Vec<String> = sc["expect"]["must_not_contain"]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
        .unwrap_or_default();
    s.extend(sc["client"]["api_key"].as_str().map(str::to_string));
    if let Some(h) = sc["client"]["headers"].as_object() {
        s.extend(h.values().map(|v| v.as_str().unwrap().to_string()));
    }
    s
}

fn check_error(sc: &Value, e: &Error, problems: &mut Vec<String>) {
    let want = &sc["expect"]["error"];
    let kind = want["kind"].as_str().unwrap();
    if e.kind().name() != kind {
        problems.push(format!("kind {} ({e:?}), want {kind}", e.kind().name()));
        return;
    }
    if kind == "host" && e.host_source().and_then(|s| s.downcast_ref::<FaultError>()).is_none() {
        problems.push(format!("the host's own error did not come back: {e:?}"));
    }
    if let Some(m) = want["message"].as_str() {
        if e.message() != m {
            problems.push(format!("message {:?}, want {m:?}", e.message()));
        }
    }
    if let Some(m) = want["message_contains"].as_str() {
        if !e.message().contains(m) {
            problems.push(format!("message {:?} lacks {m:?}", e.message()));
        }
    }
    if let Some(status) = want.get("status") {
        let d = e.http_detail();
        if d.map(|d| u64::from(d.status)) != status.as_u64() {
            problems.push(format!("http detail {d:?}, want status {status}"));
        }
        if let (Some(d), Some(ra)) = (d, want.get("retry_after")) {
            if d.retry_after.as_deref() != ra.as_str() {
                problems.push(format!("retry_after {:?}, want {ra}", d.retry_after));
            }
        }
        if let (Some(d), Some(body)) = (d, want["body"].as_str()) {
            if d.body != body {
                problems.push(format!("body {:?}, want {body:?}", d.body));
            }
        }
        if let (Some(d), Some(part)) = (d, want["body_contains"].as_str()) {
            if !d.body.contains(part) {
                problems.push(format!("body {:?} lacks {part:?}", d.body));
            }
        }
    }
    if let Some(max) = sc["expect"]["max_message_chars"].as_u64() {
        if e.message().chars().count() as u64 > max {
            problems.push(format!("message is {} chars long, at most {max} wanted", e.message().chars().count()));
        }
    }
    for secret in secrets_of(sc) {
        if error_texts(e).iter().any(|t| t.contains(&secret)) {
            problems.push(format!("the error shows the secret {secret:?}: {e:?}"));
        }
    }
}

fn check_result(sc: &Value, r: &toolnexus::RunResult, problems: &mut Vec<String>) {
    let want = &sc["expect"];
    if r.status != toolnexus::RunStatus::Done {
        problems.push(format!("status {:?}, want done", r.status));
    }
    if let Some(t) = want["text"].as_str() {
        if r.text != t {
            problems.push(format!("text {:?}, want {t:?}", r.text));
        }
    }
    if let Some(p) = want["text_prefix"].as_str() {
        if !r.text.starts_with(p) {
            problems.push(format!("text {:?}, want it to start with {p:?}", r.text));
        }
    }
    if let Some(calls) = want["tool_calls"].as_array() {
        if calls.len() != r.tool_calls.len() {
            problems.push(format!("{} tool calls, want {}", r.tool_calls.len(), calls.len()));
        }
        for (got, want) in r.tool_calls.iter().zip(calls) {
            let output_ok = want["output"].as_str().is_none_or(|o| o == got.output);
            if got.name != want["name"] || Some(got.is_error) != want["is_error"].as_bool() || !output_ok {
                problems.push(format!("tool call {got:?}, want {want}"));
            }
        }
    }
}

/// Runs one scenario; returns what went wrong (nothing: it passed) and how long it took.
async fn replay(sc: &Value, server: &Server) -> (Vec<String>, Duration) {
    let name = sc["name"].as_str().unwrap();
    let prefix = format!("{}~rs-{name}", sc["server"].as_str().unwrap());
    let base = match sc["server"].as_str().unwrap() {
        "refused" => format!("http://127.0.0.1:{}/{prefix}/v1", closed_port()),
        _ => format!("http://127.0.0.1:{}/{prefix}/v1", server.port),
    };
    let alive = Alive::default();
    let client = client_for(sc, &base, &alive);
    let toolkit = sc.get("tool").map(|t| Toolkit::new(vec![probe_tool(t, &alive)]).unwrap());
    let prompt = sc["prompt"].as_str().unwrap();
    let runs = sc.get("runs").and_then(Value::as_u64).unwrap_or(1);
    let pause = Duration::from_millis(sc.get("pause_ms").and_then(Value::as_u64).unwrap_or(0));
    let bound = Duration::from_millis(sc["bound_ms"].as_u64().unwrap());
    let expect = &sc["expect"];
    let mut problems = Vec::new();

    let started = Instant::now();
    for run in 0..runs {
        if run > 0 {
            tokio::time::sleep(pause).await;
        }
        // A hang past the bound (and a grace) is reported, never waited out.
        let outcome = tokio::time::timeout(bound + Duration::from_secs(5), client.run(prompt, toolkit.as_ref())).await;
        match (outcome, expect.get("error").is_some() && run + 1 == runs) {
            (Err(_), _) => {
                problems.push(format!("run {run} hung past {} ms", (bound + Duration::from_secs(5)).as_millis()));
                break;
            }
            (Ok(Err(e)), true) => check_error(sc, &e, &mut problems),
            (Ok(Ok(r)), true) => problems.push(format!("run {run} succeeded ({:?}), want an error", r.text)),
            (Ok(Ok(r)), false) => check_result(sc, &r, &mut problems),
            (Ok(Err(e)), false) => problems.push(format!("run {run} failed: {e:?}")),
        }
    }
    let took = started.elapsed();

    if took > bound {
        problems.push(format!("took {} ms, bound {} ms", took.as_millis(), bound.as_millis()));
    }
    if let Some(min) = expect["min_ms"].as_u64() {
        if took < Duration::from_millis(min) {
            problems.push(format!("took {} ms, less than {min} ms", took.as_millis()));
        }
    }
    if let Some(n) = expect["requests"].as_u64() {
        let seen = &server.stats(&prefix)["requests"];
        if *seen != n {
            problems.push(format!("the server saw {seen} requests, want {n}"));
        }
    }
    // The engine let go of every connection it opened (a timed-out run's included).
    let mut open = server.stats(&prefix)["open"].as_u64().unwrap();
    for _ in 0..100 {
        if open == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        open = server.stats(&prefix)["open"].as_u64().unwrap();
    }
    if open != 0 {
        problems.push(format!("{open} connections still open a second after the run"));
    }
    // Nothing left running: every host future the run started has been dropped...
    if alive.count() != 0 {
        problems.push(format!("{} host futures still alive after the run", alive.count()));
    }
    // ...and the engine spawned nothing that outlives it.
    let tasks = tokio::runtime::Handle::current().metrics().num_alive_tasks();
    if tasks != 0 {
        problems.push(format!("{tasks} tokio tasks alive after the run"));
    }
    (problems, took)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fault_ends_typed_within_its_bound_with_nothing_left_running() {
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(faults_dir().join("scenarios.json")).unwrap()).unwrap();
    let server = Server::start();
    let mut failed: HashMap<String, Vec<String>> = HashMap::new();
    let mut passed = 0;
    for sc in doc["scenarios"].as_array().unwrap() {
        let name = sc["name"].as_str().unwrap();
        if let Some(why) = sc["skip"]["rust"].as_str() {
            eprintln!("skip {name}: {why}");
            continue;
        }
        let (problems, took) = replay(sc, &server).await;
        if problems.is_empty() {
            passed += 1;
            eprintln!("ok   {name} ({} ms)", took.as_millis());
        } else {
            eprintln!("FAIL {name} ({} ms): {}", took.as_millis(), problems.join("; "));
            failed.insert(name.to_string(), problems);
        }
    }
    assert!(failed.is_empty(), "{} passed, {} failed: {failed:#?}", passed, failed.len());
}
