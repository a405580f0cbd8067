//! Metric events (SPEC §8) from real runs, and the registry's Prometheus text against the
//! committed fixture every binding shares.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use toolnexus::metrics::{MetricEvent, MetricsRegistry, OnMetric};
use toolnexus::scripted::{ScriptedReply, ScriptedTransport};
use toolnexus::{
    answer_output, pending, Answer, CancellationToken, Client, ClientOptions, PendingSpec, Request, RunInput,
    RunStatus, Style, Tool, ToolResult, Toolkit, WaitFor,
};

fn fixture(name: &str) -> String {
    let path = format!("{}/../tests/metrics/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_fixed_events_render_the_committed_text() {
    let events: Vec<Value> = serde_json::from_str(&fixture("fixed-events.json")).unwrap();
    let reg = MetricsRegistry::new();
    for e in &events {
        reg.record(&MetricEvent::from_json(e).unwrap());
    }
    assert_eq!(reg.render(), fixture("fixed.prom"));
}

#[derive(Default, Clone)]
struct Events(Arc<Mutex<Vec<Value>>>);

impl OnMetric for Events {
    fn on_metric(&self, event: &MetricEvent) {
        self.0.lock().unwrap().push(event.to_json());
    }
}

impl Events {
    fn take(&self) -> Vec<Value> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

fn client(replies: Vec<ScriptedReply>, events: &Events) -> (ClientOptions, ScriptedTransport) {
    let t = ScriptedTransport::new(replies);
    let mut o = ClientOptions::new("http://model.invalid/v1", Style::OpenAi, "gpt-x");
    o.api_key = Some("sk-secret-key".into());
    o.retries = 0;
    o.transport = Some(Arc::new(t.clone()));
    o.on_metric = Some(Arc::new(events.clone()));
    (o, t)
}

fn kinds(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["event"].as_str().unwrap()).collect()
}

fn toolkit() -> Toolkit {
    let add = Tool::from_sync("add", "", json!({"type": "object"}), |_, _| Ok(ToolResult::ok("5")));
    let ask = Tool::from_sync("ask", "", json!({"type": "object"}), |_, ctx| {
        Ok(match &ctx.answer {
            Some(a) => ToolResult::ok(format!("told {}", a.data.clone().unwrap_or_default()["output"])),
            None => pending(PendingSpec { id: Some("q-1".into()), kind: "question".into(), ..Default::default() }),
        })
    });
    Toolkit::new(vec![add, ask]).unwrap()
}

struct Yes;

impl WaitFor for Yes {
    fn wait_for(&self, req: Request) -> toolnexus::HookFuture<Option<Answer>> {
        Box::pin(async move { Ok(Some(answer_output(&req.id, "yes"))) })
    }
}

#[tokio::test]
async fn a_run_reports_each_call_each_tool_and_itself_last() {
    let events = Events::default();
    let (mut o, _) = client(
        vec![
            ScriptedReply::openai_calls(&[("c1", "add", "{}"), ("c2", "ask", "{}"), ("c3", "nope", "{}")]),
            ScriptedReply::openai_text("done"),
        ],
        &events,
    );
    o.wait_for = Some(Arc::new(Yes));
    let c = Client::new(o).unwrap();
    let r = c.run("go", Some(&toolkit())).await.unwrap();
    assert_eq!(r.status, RunStatus::Done);
    let ev = events.take();
    // Tools run concurrently, so their events come in completion order; each is there once,
    // the suspended call twice (its suspension, then its re-run with the answer).
    assert_eq!(kinds(&ev)[..1], ["llm"]);
    assert_eq!(kinds(&ev)[5..], ["llm", "run"]);
    let tools: Vec<(&str, &str, bool, bool)> = ev
        .iter()
        .filter(|e| e["event"] == "tool")
        .map(|e| {
            (e["tool"].as_str().unwrap(), e["source"].as_str().unwrap(), e["is_error"] == true, e["pending"] == true)
        })
        .collect();
    for want in [("add", "native", false, false), ("ask", "native", false, true), ("ask", "native", false, false)] {
        assert!(tools.contains(&want), "{tools:?}");
    }
    assert!(tools.contains(&("nope", "custom", true, false)), "{tools:?}");
    assert_eq!(ev[0]["model"], "gpt-x");
    assert_eq!((ev[0]["status"].as_str(), ev[0]["prompt_tokens"].as_u64()), (Some("ok"), Some(10)));
    let run = &ev[6];
    assert_eq!(
        (run["turns"].as_u64(), run["tool_calls"].as_u64(), run["total_tokens"].as_u64()),
        (Some(2), Some(3), Some(30))
    );
    assert!(run.get("error").is_none() && run["ms"].as_f64().unwrap() >= 0.0);
    let text = c.metrics();
    assert!(text.contains("toolnexus_llm_requests_total{model=\"gpt-x\",status=\"ok\"} 2\n"), "{text}");
    assert!(text.contains("toolnexus_llm_tokens_total{type=\"prompt\"} 20\n"));
    assert!(text.contains(
        "toolnexus_tool_calls_total{tool=\"ask\",source=\"native\",is_error=\"false\",pending=\"true\"} 1\n"
    ));
    assert!(text.contains("toolnexus_tool_duration_seconds_count{tool=\"ask\"} 2\n"));
    assert!(text.ends_with("# TYPE toolnexus_run_errors_total counter\n"));
}

#[tokio::test]
async fn a_run_without_a_toolkit_executes_nothing_and_reports_no_tool() {
    let events = Events::default();
    let (o, _) =
        client(vec![ScriptedReply::openai_calls(&[("c1", "add", "{}")]), ScriptedReply::openai_text("ok")], &events);
    let r = Client::new(o).unwrap().run("go", None).await.unwrap();
    assert_eq!(r.tool_call_count, 1);
    assert_eq!(kinds(&events.take()), ["llm", "llm", "run"]);
}

#[tokio::test]
async fn a_durable_halt_is_a_run_without_error_and_its_resume_another_run() {
    let events = Events::default();
    let (o, _) =
        client(vec![ScriptedReply::openai_calls(&[("c1", "ask", "{}")]), ScriptedReply::openai_text("ok")], &events);
    let c = Client::new(o).unwrap();
    let tk = toolkit();
    let r = c.run("go", Some(&tk)).await.unwrap();
    assert_eq!(r.status, RunStatus::Pending);
    assert_eq!(kinds(&events.take()), ["llm", "tool", "run"]);
    let req = r.pending.clone().unwrap();
    let done = c.run_with_answer(Some(&tk), r.messages, &req, &answer_output(&req.id, "x")).await.unwrap();
    assert_eq!(done.text, "ok");
    let ev = events.take();
    assert_eq!(kinds(&ev), ["tool", "llm", "run"]);
    assert_eq!((ev[0]["pending"].as_bool(), ev[0]["is_error"].as_bool()), (None, Some(false)));
}

#[tokio::test]
async fn a_failed_run_reports_the_failed_call_and_a_scrubbed_error() {
    let events = Events::default();
    let reply = ScriptedReply { status: 400, headers: vec![], body: json!({"error": "bad key sk-secret-key"}) };
    let (o, _) = client(vec![ScriptedReply::openai_calls(&[("c1", "add", "{}")]), reply], &events);
    let c = Client::new(o).unwrap();
    let err = c.run("go", Some(&toolkit())).await.unwrap_err();
    let ev = events.take();
    assert_eq!(kinds(&ev), ["llm", "tool", "llm", "run"]);
    assert_eq!(ev[2]["status"], "error");
    let run = &ev[3];
    assert_eq!(
        (run["turns"].as_u64(), run["tool_calls"].as_u64(), run["total_tokens"].as_u64()),
        (Some(2), Some(1), Some(15))
    );
    let msg = run["error"].as_str().unwrap();
    assert_eq!(msg, err.message());
    assert!(!msg.contains("sk-secret-key"), "{msg}");
    assert!(c.metrics().contains("toolnexus_run_errors_total{model=\"gpt-x\"} 1\n"));
}

#[tokio::test]
async fn a_cancelled_call_is_a_failed_call_then_a_failed_run() {
    let events = Events::default();
    let mut o = ClientOptions::new("http://127.0.0.1:9/v1", Style::OpenAi, "gpt-x");
    o.api_key = Some("k".into());
    o.on_metric = Some(Arc::new(events.clone()));
    // A model that never answers.
    o.transport = Some(Arc::new(Hang));
    let c = Client::new(o).unwrap();
    let token = CancellationToken::new();
    let t2 = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(30)).await;
        t2.cancel();
    });
    let err = c.run_input(RunInput::prompt("x").cancel(token)).await.unwrap_err();
    assert_eq!(err.kind(), toolnexus::ErrorKind::Cancelled);
    let ev = events.take();
    assert_eq!(kinds(&ev), ["llm", "run"]);
    assert_eq!((ev[0]["status"].as_str(), ev[1]["turns"].as_u64()), (Some("error"), Some(1)));
    assert_eq!(ev[1]["error"], "run cancelled");
}

struct FailAt(&'static str);

impl toolnexus::Hooks for FailAt {
    fn before_llm(&self, ev: toolnexus::BeforeLlmEvent) -> toolnexus::HookFuture<Option<toolnexus::LlmOverride>> {
        let fail = self.0 == "before_llm" && ev.turn == 1;
        Box::pin(async move {
            if fail {
                Err(toolnexus::Error::host("no".into()))
            } else {
                Ok(None)
            }
        })
    }

    fn after_llm(&self, _: toolnexus::AfterLlmEvent) -> toolnexus::HookFuture<()> {
        let fail = self.0 == "after_llm";
        Box::pin(async move {
            if fail {
                Err(toolnexus::Error::host("no".into()))
            } else {
                Ok(())
            }
        })
    }
}

#[tokio::test]
async fn a_run_failed_by_a_hook_reports_the_turn_it_took_and_the_tokens_it_spent() {
    for (hook, turns, tokens) in [("before_llm", 2, 15), ("after_llm", 1, 15)] {
        let events = Events::default();
        let (mut o, _) =
            client(vec![ScriptedReply::openai_calls(&[("c1", "add", "{}")]), ScriptedReply::openai_text("x")], &events);
        o.hooks = Some(Arc::new(FailAt(hook)));
        Client::new(o).unwrap().run("go", Some(&toolkit())).await.unwrap_err();
        let ev = events.take();
        let run = ev.last().unwrap();
        assert_eq!((run["turns"].as_u64(), run["total_tokens"].as_u64()), (Some(turns), Some(tokens)), "{hook}: {run}");
        assert!(run["error"].is_string());
    }
}

struct Hang;

impl toolnexus::Transport for Hang {
    fn post(
        &self,
        _: toolnexus::HttpRequest,
    ) -> futures_util::future::BoxFuture<'static, toolnexus::Result<toolnexus::HttpResponse>> {
        Box::pin(std::future::pending())
    }
}

#[test]
fn a_plain_closure_is_a_sink() {
    let seen = Arc::new(Mutex::new(0));
    let s2 = seen.clone();
    let sink: Arc<dyn OnMetric> = Arc::new(move |_: &MetricEvent| *s2.lock().unwrap() += 1);
    sink.on_metric(&MetricEvent::from_json(&json!({"event": "run", "model": "m", "ms": 1})).unwrap());
    assert_eq!(*seen.lock().unwrap(), 1);
}
