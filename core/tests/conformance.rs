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
    suspend, Answer, BeforeToolEvent, Client, ClientOptions, Error, HookFuture, Hooks, Request, RunResult, Style, Tool,
    ToolOverride, ToolResult, Toolkit, WaitFor,
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

/// The scenario's `before_tool` hook: a call of a listed tool is answered with the listed
/// Request's suspension instead of running the tool.
struct GateHooks {
    gates: Map<String, Value>,
}

impl Hooks for GateHooks {
    fn before_tool(&self, ev: BeforeToolEvent) -> HookFuture<Option<ToolOverride>> {
        let ov = self
            .gates
            .get(&ev.name)
            .map(|req| ToolOverride { result: Some(suspend(Request::from_json(req).unwrap())), args: None });
        Box::pin(std::future::ready(Ok(ov)))
    }
}

fn client_for(sc: &Value, mock: &Mock, wait_for: Option<Arc<ScriptedWaitFor>>) -> Client {
    let style = Style::parse(sc["style"].as_str().unwrap()).unwrap();
    let c = &sc["client"];
    let base = match style {
        Style::OpenAi => mock.url("/v1"),
        Style::Anthropic => mock.url(""),
    };
    let mut o = ClientOptions::new(base, style, c["model"].as_str().unwrap());
    o.api_key = Some(c.get("api_key").and_then(Value::as_str).unwrap_or("test-key").to_string());
    o.system_prompt = c.get("system_prompt").and_then(Value::as_str).map(str::to_string);
    if let Some(n) = c.get("max_turns").and_then(Value::as_u64) {
        o.max_turns = n as u32;
    }
    if let Some(n) = c.get("retries").and_then(Value::as_u64) {
        o.retries = n as u32;
    }
    o.timeout_ms = c.get("timeout_ms").and_then(Value::as_u64);
    o.retry_base_ms = c.get("retry_base_ms").and_then(Value::as_u64).unwrap_or(1);
    o.wait_for = wait_for.map(|w| w as Arc<dyn WaitFor>);
    if let Some(Value::Object(gates)) = sc.get("before_tool") {
        o.hooks = Some(Arc::new(GateHooks { gates: gates.clone() }));
    }
    Client::new(o).unwrap()
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

/// Runs one scenario; returns its blessed form and the list of mismatches.
async fn replay(path: &Path) -> (Value, Vec<String>) {
    let mut sc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let name = sc["name"].as_str().unwrap().to_string();
    assert_eq!(Some(name.as_str()), path.file_stem().and_then(|s| s.to_str()), "name must match the file");
    let mock = Mock::start().await;
    let counts: Counts = Arc::default();
    let toolkit = match sc.get("tools") {
        Some(Value::Array(ts)) => Some(Toolkit::new(ts.iter().map(|t| build_tool(t, &counts)).collect()).unwrap()),
        _ => None,
    };
    let wait_for = match sc.get("wait_for") {
        Some(Value::Array(answers)) => Some(Arc::new(ScriptedWaitFor {
            answers: Mutex::new(answers.iter().cloned().collect()),
            seen: Mutex::new(Vec::new()),
        })),
        _ => None,
    };
    let client = client_for(&sc, &mock, wait_for.clone());
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
        let outcome = if let Some(run) = step.get("run") {
            let prompt = run["prompt"].as_str().unwrap();
            let history = run.get("history").and_then(Value::as_array).cloned().unwrap_or_default();
            client.run_with_history(prompt, toolkit.as_ref(), history).await
        } else {
            let prev = previous.clone().expect("a resume step needs a previous step");
            let answer = Answer::from_json(&step["resume"]["answer"]).unwrap();
            let pending = prev
                .pending
                .clone()
                .unwrap_or_else(|| Request::from_json(&json!({"id":"","kind":"","prompt":""})).unwrap());
            client.run_with_answer(toolkit.as_ref(), prev.messages.clone(), &pending, &answer).await
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
