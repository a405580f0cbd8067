//! Replays every scenario in `tests/conformance/` against a loopback mock model, with the
//! scenario's tools written in Rust. See `tests/conformance/README.md` for the format.
//! `TOOLNEXUS_BLESS=1` rewrites the `expect` sections from what the engine does.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Map, Value};
use support::mock::{Mock, MockReply};
use toolnexus::{
    suspend, Answer, BeforeLlmEvent, BeforeToolEvent, Client, ClientOptions, Error, ErrorInfo, HookFuture, Hooks,
    LlmOverride, OnError, Request, RunResult, Tier, Tool, ToolOverride, ToolResult, Toolkit, ToolkitHost, WaitFor,
};

fn scenario_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/conformance")
}

fn scenario_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(scenario_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

type Counts = Arc<Mutex<BTreeMap<String, usize>>>;

fn build_tool(spec: &Value, counts: &Counts) -> Tool {
    let name = spec["name"].as_str().unwrap().to_string();
    let description = spec["description"].as_str().unwrap_or("").to_string();
    let schema = spec.get("input_schema").cloned().unwrap_or(Value::Null);
    let behavior = spec["behavior"].clone();
    if behavior["type"] == "relay" {
        return Tool::relay(&name, &description, Some(schema));
    }
    let counts = counts.clone();
    let tool_name = name.clone();
    Tool::from_fn(&name, &description, schema, move |_args, ctx| {
        let b = behavior.clone();
        let counts = counts.clone();
        let tool_name = tool_name.clone();
        async move {
            *counts.lock().unwrap().entry(tool_name).or_default() += 1;
            if let Some(ms) = b.get("delay_ms").and_then(Value::as_u64) {
                tokio::time::sleep(Duration::from_millis(ms)).await;
            }
            let text = |k: &str| b[k].as_str().unwrap_or("").to_string();
            match b["type"].as_str().unwrap() {
                "text" => Ok(ToolResult::ok(text("output"))),
                "error_result" => Ok(ToolResult::error(text("output"))),
                "fail" => Err(Error::host(text("message").into())),
                "suspend" => {
                    let answered = ctx.answer.as_ref();
                    if answered.is_none() || b["always"] == true {
                        return Ok(suspend(Request::from_json(&b["request"]).unwrap()));
                    }
                    let out = answered.and_then(toolnexus::answer_output_of).unwrap_or("");
                    Ok(ToolResult::ok(text("on_answer").replace("{output}", out)))
                }
                other => panic!("unknown behaviour {other}"),
            }
        }
    })
}

struct ScriptedWaitFor {
    answers: Mutex<VecDeque<Value>>,
    seen: Mutex<Vec<Value>>,
}

impl WaitFor for ScriptedWaitFor {
    fn wait_for(&self, request: Request) -> toolnexus::HookFuture<Option<Answer>> {
        self.seen.lock().unwrap().push(request.to_json());
        let next = {
            let mut answers = self.answers.lock().unwrap();
            // An answer may name the Request it is `for`; the others go in order.
            let mine = answers.iter().position(|a| a.get("for").and_then(Value::as_str) == Some(request.id.as_str()));
            let free = || answers.iter().position(|a| a.get("for").is_none());
            let at = mine.or_else(free).expect("wait_for called more often than scripted");
            answers.remove(at).unwrap()
        };
        let answer = if next.is_null() {
            None
        } else {
            let mut a = next.as_object().unwrap().clone();
            a.remove("for");
            a.insert("id".into(), json!(request.id));
            Some(Answer::from_json(&Value::Object(a)).unwrap())
        };
        Box::pin(std::future::ready(Ok(answer)))
    }
}

/// The scenario's hooks: `before_tool` answers a call of a listed tool with the listed
/// Request's suspension instead of running the tool; `before_llm` fails with its message.
struct GateHooks {
    gates: Map<String, Value>,
    llm_failure: Option<String>,
}

impl Hooks for GateHooks {
    fn before_llm(&self, _ev: BeforeLlmEvent) -> HookFuture<Option<LlmOverride>> {
        let outcome = match &self.llm_failure {
            Some(message) => Err(Error::host(message.clone().into())),
            None => Ok(None),
        };
        Box::pin(std::future::ready(outcome))
    }

    fn before_tool(&self, ev: BeforeToolEvent) -> HookFuture<Option<ToolOverride>> {
        let ov = self
            .gates
            .get(&ev.name)
            .map(|req| ToolOverride { result: Some(suspend(Request::from_json(req).unwrap())), args: None });
        Box::pin(std::future::ready(Ok(ov)))
    }
}

/// The scenario's `on_error`: answers every failed model call with the scripted tier and
/// records what it was told.
struct ScriptedOnError {
    tier: Tier,
    seen: Mutex<Vec<Value>>,
}

impl OnError for ScriptedOnError {
    fn classify(&self, info: ErrorInfo) -> HookFuture<Tier> {
        let mut event = json!({"attempt": info.attempt, "retryable": info.retryable});
        if let Some(status) = info.status {
            event["status"] = json!(status);
        }
        self.seen.lock().unwrap().push(event);
        Box::pin(std::future::ready(Ok(self.tier)))
    }
}

/// The client, its plain options read as a binding hands them over (`ClientOptions::from_json`,
/// which also drops a `request_params` key the engine owns), its host behaviour set after.
fn client_for(
    sc: &Value,
    mock: &Mock,
    wait_for: Option<Arc<ScriptedWaitFor>>,
    on_error: Option<Arc<ScriptedOnError>>,
) -> Client {
    let c = &sc["client"];
    let base = if sc["style"] == "openai" { mock.url("/v1") } else { mock.url("") };
    let mut options = json!({"base_url": base, "style": sc["style"], "model": c["model"],
        "api_key": c.get("api_key").cloned().unwrap_or(json!("test-key")),
        "retry_base_ms": c.get("retry_base_ms").cloned().unwrap_or(json!(1))});
    for key in ["system_prompt", "max_turns", "retries", "timeout_ms", "request_params"] {
        if let Some(v) = c.get(key) {
            options[key] = v.clone();
        }
    }
    let mut o = ClientOptions::from_json(&options).unwrap().value;
    o.wait_for = wait_for.map(|w| w as Arc<dyn WaitFor>);
    o.on_error = on_error.map(|e| e as Arc<dyn OnError>);
    let gates = sc.get("before_tool").and_then(Value::as_object).cloned();
    let llm_failure = sc.pointer("/before_llm/fail").and_then(Value::as_str).map(str::to_string);
    if gates.is_some() || llm_failure.is_some() {
        o.hooks = Some(Arc::new(GateHooks { gates: gates.unwrap_or_default(), llm_failure }));
    }
    Client::new(o).unwrap()
}

/// The scenario's toolkit: with `sources`, built from them by the engine's factory (the
/// file's `tools` as the host's own); else just the file's `tools`; else none.
async fn toolkit_for(sc: &Value, counts: &Counts) -> Option<Toolkit> {
    let tools: Vec<Tool> = match sc.get("tools") {
        Some(Value::Array(ts)) => ts.iter().map(|t| build_tool(t, counts)).collect(),
        _ => Vec::new(),
    };
    match sc.get("sources") {
        Some(sources @ Value::Object(_)) => {
            let host = ToolkitHost { extra_tools: tools, ..ToolkitHost::default() };
            Some(Toolkit::create_from_json(sources, host).await.unwrap())
        }
        _ if sc.get("tools").is_some_and(Value::is_array) => Some(Toolkit::new(tools).unwrap()),
        _ => None,
    }
}

/// The request headers a scenario pins, per style.
fn pinned_headers(style: &str) -> &'static [&'static str] {
    match style {
        "openai" => &["authorization", "content-type"],
        _ => &["x-api-key", "anthropic-version", "content-type"],
    }
}

fn canonical(r: &RunResult) -> Value {
    serde_json::to_value(r).unwrap()
}

/// The client's Prometheus text as lines, each duration sample's value (`_bucket`, `_sum`)
/// replaced by `*`: how long a call took is the one thing a replay cannot fix.
fn masked_metrics(text: &str) -> Value {
    let lines = text.lines().map(|line| {
        let name = line.split(['{', ' ']).next().unwrap_or("");
        match line.rfind(' ') {
            Some(at)
                if !line.starts_with('#') && (name.ends_with("_seconds_bucket") || name.ends_with("_seconds_sum")) =>
            {
                format!("{} *", &line[..at])
            }
            _ => line.to_string(),
        }
    });
    Value::Array(lines.map(Value::String).collect())
}

/// Runs one scenario; returns its blessed form and the list of mismatches.
async fn replay(path: &Path) -> (Value, Vec<String>) {
    let mut sc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let name = sc["name"].as_str().unwrap().to_string();
    assert_eq!(Some(name.as_str()), path.file_stem().and_then(|s| s.to_str()), "name must match the file");
    let mock = Mock::start().await;
    let counts: Counts = Arc::default();
    let toolkit = toolkit_for(&sc, &counts).await;
    let wait_for = match sc.get("wait_for") {
        Some(Value::Array(answers)) => Some(Arc::new(ScriptedWaitFor {
            answers: Mutex::new(answers.iter().cloned().collect()),
            seen: Mutex::new(Vec::new()),
        })),
        _ => None,
    };
    let on_error = sc.get("on_error").and_then(Value::as_str).map(|tier| {
        Arc::new(ScriptedOnError { tier: Tier::from_answer(Some(tier)).unwrap(), seen: Mutex::new(Vec::new()) })
    });
    let client = client_for(&sc, &mock, wait_for.clone(), on_error.clone());
    let style = sc["style"].as_str().unwrap().to_string();
    let mut failures = Vec::new();
    let mut previous: Option<RunResult> = None;
    let steps = sc["steps"].as_array_mut().unwrap();
    for (i, step) in steps.iter_mut().enumerate() {
        let replies = step["replies"].as_array().cloned().unwrap_or_default();
        mock.script(replies.iter().map(MockReply::from_spec).collect());
        counts.lock().unwrap().clear();
        if let Some(w) = &wait_for {
            w.seen.lock().unwrap().clear();
        }
        if let Some(e) = &on_error {
            e.seen.lock().unwrap().clear();
        }
        let outcome = if let Some(run) = step.get("run") {
            let prompt = run["prompt"].as_str().unwrap();
            let history = run.get("history").and_then(Value::as_array).cloned().unwrap_or_default();
            client.run_with_history(prompt, toolkit.as_ref(), history).await
        } else {
            // A resume takes the previous step's transcript and pending Request, unless it
            // gives its own (a halted run stored as data).
            let resume = &step["resume"];
            let answer = Answer::from_json(&resume["answer"]).unwrap();
            let history = match resume.get("history").and_then(Value::as_array) {
                Some(h) => h.clone(),
                None => previous.as_ref().map(|p| p.messages.clone()).unwrap_or_default(),
            };
            let pending = match resume.get("pending") {
                Some(p) => Request::from_json(p).unwrap(),
                None => previous
                    .as_ref()
                    .and_then(|p| p.pending.clone())
                    .unwrap_or_else(|| Request::from_json(&json!({"id":"","kind":"","prompt":""})).unwrap()),
            };
            client.run_with_answer(toolkit.as_ref(), history, &pending, &answer).await
        };

        let mut got = Map::new();
        let seen: Vec<Value> = mock
            .seen()
            .iter()
            .map(|s| {
                let headers: Map<String, Value> = pinned_headers(&style)
                    .iter()
                    .filter_map(|h| s.header(h).map(|v| (h.to_string(), json!(v))))
                    .collect();
                json!({"path": s.path, "headers": headers, "body": s.body})
            })
            .collect();
        got.insert("requests".into(), Value::Array(seen));
        match &outcome {
            Ok(r) => {
                got.insert("result".into(), canonical(r));
                previous = Some(r.clone());
            }
            Err(e) => {
                let mut err = json!({"kind": e.kind().name()});
                if let Some(d) = e.http_detail() {
                    err["status"] = json!(d.status);
                }
                got.insert("error".into(), err);
                previous = None;
            }
        }
        let calls: Map<String, Value> = counts.lock().unwrap().iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        got.insert("calls".into(), Value::Object(calls));
        if let Some(w) = &wait_for {
            let mut seen = w.seen.lock().unwrap().clone();
            // One turn's suspensions are waited for concurrently: their order is not the rule.
            seen.sort_by_key(Value::to_string);
            got.insert("wait_for_requests".into(), Value::Array(seen));
        }
        if let Some(e) = &on_error {
            got.insert("on_error_calls".into(), Value::Array(e.seen.lock().unwrap().clone()));
        }
        if step.get("expect").is_some_and(|e| e.get("metrics").is_some()) {
            got.insert("metrics".into(), masked_metrics(&client.metrics()));
        }
        if mock.remaining() != 0 {
            failures.push(format!("{name} step {i}: {} scripted replies were never requested", mock.remaining()));
        }
        let mut expect = step.get("expect").cloned().unwrap_or(json!({}));
        if let Some(Value::Array(w)) = expect.get_mut("wait_for_requests") {
            w.sort_by_key(Value::to_string);
        }
        for (k, v) in &got {
            let want = expect.get(k).cloned().unwrap_or_else(|| if k == "calls" { json!({}) } else { Value::Null });
            if &want != v {
                failures.push(format!(
                    "{name} step {i}: `{k}` differs\n--- expected\n{}\n--- got\n{}",
                    serde_json::to_string_pretty(&want).unwrap(),
                    serde_json::to_string_pretty(v).unwrap()
                ));
            }
        }
        step["expect"] = Value::Object(got);
    }
    (sc, failures)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scenario_replays() {
    let files = scenario_files();
    assert!(files.len() >= 15, "expected at least 15 scenarios, found {}", files.len());
    let bless = std::env::var("TOOLNEXUS_BLESS").is_ok_and(|v| v == "1");
    let mut all = Vec::new();
    for f in &files {
        let (blessed, failures) = replay(f).await;
        if bless {
            let text = serde_json::to_string_pretty(&blessed).unwrap() + "\n";
            std::fs::write(f, text).unwrap();
        } else {
            all.extend(failures);
        }
    }
    assert!(all.is_empty(), "{} mismatches:\n\n{}", all.len(), all.join("\n\n"));
}
