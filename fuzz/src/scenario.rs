//! A conformance scenario (`tests/conformance/README.md`) read and replayed in-process, the
//! way the runners read it, except that every part goes through the engine's own readers and
//! a malformed part ends the replay instead of failing a test: `Style::parse`,
//! `ClientOptions::from_json` (the bindings' option reader), `Toolkit::new`,
//! `Request::from_json` / `Answer::from_json` for suspensions, gates and answers, the
//! history check of `run_with_history`, and the resume of `run_with_answer`. The model is a
//! script of the file's replies, on a paused clock, so delays and backoffs cost nothing.
//!
//! Checked on every request the engine sends: each tool call in it has exactly one result
//! (balancing it changes nothing); on every outcome: an error is of a kind the engine
//! documents for the cause, and a result survives its canonical JSON form.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{json, Map, Value};
use toolnexus::fuzzing;
use toolnexus::{
    suspend, Answer, BeforeToolEvent, Client, ClientOptions, Error, ErrorKind, HookFuture, Hooks, HttpRequest,
    HttpResponse, Request, RunResult, Style, Tool, ToolOverride, ToolResult, Toolkit, Transport, WaitFor,
};

/// Replays the scenario in `data`, if it is one.
pub fn replay(data: &[u8]) {
    let Ok(sc) = serde_json::from_slice::<Value>(data) else { return };
    let Some(Ok(style)) = sc.get("style").and_then(Value::as_str).map(Style::parse) else { return };
    let model = Script::default();
    let wait_for = match sc.get("wait_for") {
        Some(Value::Array(answers)) => Some(Arc::new(Scripted(Mutex::new(answers.iter().cloned().collect())))),
        _ => None,
    };
    let Some(client) = client(&sc, style, &model, wait_for) else { return };
    let toolkit = match sc.get("tools") {
        Some(Value::Array(specs)) => match specs.iter().map(tool).collect::<Option<Vec<_>>>().map(Toolkit::new) {
            Some(Ok(tk)) => Some(tk),
            _ => return,
        },
        _ => None,
    };
    let Some(steps) = sc.get("steps").and_then(Value::as_array) else { return };
    runtime().block_on(async {
        let mut previous: Option<RunResult> = None;
        for step in steps {
            let Some(replies) = replies(step) else { return };
            model.load(replies);
            let outcome = if let Some(run) = step.get("run") {
                let Some(prompt) = run.get("prompt").and_then(Value::as_str) else { return };
                let history = match run.get("history") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(h)) => h.clone(),
                    Some(_) => return,
                };
                client.run_with_history(prompt, toolkit.as_ref(), history).await
            } else {
                let Some(Ok(answer)) = step.pointer("/resume/answer").map(Answer::from_json) else { return };
                let Some(prev) = previous.take() else { return };
                let pending = prev.pending.clone().unwrap_or_else(empty_request);
                client.run_with_answer(toolkit.as_ref(), prev.messages, &pending, &answer).await
            };
            model.check_requests(style);
            match outcome {
                Ok(r) => {
                    check_result(&r);
                    previous = Some(r);
                }
                Err(e) => {
                    check_error(&e);
                    previous = None;
                }
            }
        }
    });
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap_or_else(|e| panic!("no runtime: {e}"))
    })
}

fn empty_request() -> Request {
    Request { id: String::new(), kind: String::new(), prompt: String::new(), url: None, data: None, expires_at: None }
}

/// The file's `client` section through `ClientOptions::from_json`, with the runner's defaults.
fn client(sc: &Value, style: Style, model: &Script, wait_for: Option<Arc<Scripted>>) -> Option<Client> {
    let mut o = match sc.get("client") {
        Some(Value::Object(o)) => o.clone(),
        None | Some(Value::Null) => Map::new(),
        Some(_) => return None,
    };
    o.insert("base_url".into(), json!("http://127.0.0.1:9/v1"));
    o.insert("style".into(), json!(style.as_str()));
    o.entry("api_key").or_insert(json!("test-key"));
    o.entry("retry_base_ms").or_insert(json!(1));
    let mut opts = ClientOptions::from_json(&Value::Object(o)).ok()?.value;
    opts.transport = Some(Arc::new(model.clone()));
    opts.wait_for = wait_for.map(|w| w as Arc<dyn WaitFor>);
    if let Some(Value::Object(gates)) = sc.get("before_tool") {
        opts.hooks = Some(Arc::new(Gates(gates.clone())));
    }
    Client::new(opts).ok()
}

/// One `tools` entry with its behaviour; `None` when the entry is not a tool.
fn tool(spec: &Value) -> Option<Tool> {
    let name = spec.get("name")?.as_str()?;
    let description = spec.get("description").and_then(Value::as_str).unwrap_or("");
    let schema = spec.get("input_schema").cloned().unwrap_or(Value::Null);
    let behavior = spec.get("behavior").cloned().unwrap_or(Value::Null);
    if behavior["type"] == "relay" {
        return Some(Tool::relay(name, description, Some(schema)));
    }
    Some(Tool::from_fn(name, description, schema, move |_args, ctx| {
        let b = behavior.clone();
        async move {
            if let Some(ms) = b.get("delay_ms").and_then(Value::as_u64) {
                tokio::time::sleep(Duration::from_millis(ms.min(60_000))).await;
            }
            let text = |k: &str| b[k].as_str().unwrap_or("").to_string();
            match b["type"].as_str() {
                Some("text") => Ok(ToolResult::ok(text("output"))),
                Some("error_result") => Ok(ToolResult::error(text("output"))),
                Some("suspend") => {
                    let answered = ctx.answer.as_ref();
                    if answered.is_none() || b["always"] == true {
                        return Ok(suspend(Request::from_json(&b["request"])?));
                    }
                    let out = answered.and_then(toolnexus::answer_output_of).unwrap_or("");
                    Ok(ToolResult::ok(text("on_answer").replace("{output}", out)))
                }
                _ => Err(Error::host(text("message").into())),
            }
        }
    }))
}

/// A step's `replies`, as the mock serves them; `None` when one is malformed.
fn replies(step: &Value) -> Option<Vec<HttpResponse>> {
    let list = match step.get("replies") {
        None | Some(Value::Null) => return Some(Vec::new()),
        Some(v) => v.as_array()?,
    };
    list.iter()
        .map(|r| {
            let status = match r.get("status") {
                None => 200,
                Some(s) => u16::try_from(s.as_u64()?).ok()?,
            };
            let headers = match r.get("headers") {
                None | Some(Value::Null) => Vec::new(),
                Some(h) => h
                    .as_object()?
                    .iter()
                    .map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect::<Option<_>>()?,
            };
            let body = serde_json::to_vec(r.get("body").unwrap_or(&Value::Null)).ok()?;
            Some(HttpResponse { status, headers, body: body.into() })
        })
        .collect()
}

/// The scripted model: serves the step's replies in order and keeps the request bodies.
#[derive(Clone, Default)]
struct Script(Arc<Mutex<(VecDeque<HttpResponse>, Vec<Value>)>>);

impl Script {
    fn load(&self, replies: Vec<HttpResponse>) {
        let mut g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *g = (replies.into(), Vec::new());
    }

    /// Every request of the step: each tool call answered exactly once.
    fn check_requests(&self, style: Style) {
        let g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        for body in &g.1 {
            let messages = body["messages"].as_array().cloned().unwrap_or_else(|| panic!("a request without messages"));
            let balanced = fuzzing::balance(style, messages.clone());
            assert_eq!(balanced, messages, "a request with an unanswered or doubly answered tool call");
        }
    }
}

impl Transport for Script {
    fn post(&self, request: HttpRequest) -> Pin<Box<dyn Future<Output = toolnexus::Result<HttpResponse>> + Send>> {
        let mut g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let body =
            serde_json::from_slice(&request.body).unwrap_or_else(|e| panic!("a request body that is not JSON: {e}"));
        g.1.push(body);
        let reply = g.0.pop_front().ok_or_else(|| Error::protocol("the script has no reply left"));
        Box::pin(std::future::ready(reply))
    }
}

/// The file's `wait_for` answers, one per call; `null` or running out is no answer.
struct Scripted(Mutex<VecDeque<Value>>);

impl WaitFor for Scripted {
    fn wait_for(&self, request: Request) -> HookFuture<Option<Answer>> {
        let next = self.0.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
        let answer = match next {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(mut a)) => {
                a.insert("id".into(), json!(request.id));
                Answer::from_json(&Value::Object(a)).map(Some)
            }
            Some(other) => Answer::from_json(&other).map(Some),
        };
        Box::pin(std::future::ready(answer))
    }
}

/// The file's `before_tool` gates: a listed tool's call is answered with the listed suspension.
struct Gates(Map<String, Value>);

impl Hooks for Gates {
    fn before_tool(&self, ev: BeforeToolEvent) -> HookFuture<Option<ToolOverride>> {
        let ov = match self.0.get(&ev.name).map(Request::from_json) {
            None => Ok(None),
            Some(Ok(req)) => Ok(Some(ToolOverride { result: Some(suspend(req)), args: None })),
            Some(Err(e)) => Err(e),
        };
        Box::pin(std::future::ready(ov))
    }
}

fn check_result(r: &RunResult) {
    assert_eq!(r.tool_call_count, r.tool_calls.len());
    assert_eq!(r.pending.is_some(), r.status == toolnexus::RunStatus::Pending, "pending without status, or back");
    let canonical = serde_json::to_value(r).unwrap_or_else(|e| panic!("a RunResult that does not serialise: {e}"));
    let back: RunResult =
        serde_json::from_value(canonical).unwrap_or_else(|e| panic!("a RunResult that does not read back: {e}"));
    assert_eq!(&back, r, "a RunResult changed through its canonical JSON");
}

fn check_error(e: &Error) {
    // A scripted run fails only by the script (replies, statuses, answers, tools' requests),
    // never inside the engine.
    assert_ne!(e.kind(), ErrorKind::Internal, "an internal error: {e}");
}
