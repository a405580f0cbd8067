//! The loop's behaviour beyond the conformance files: hooks, concurrency, cancellation,
//! deadlines, retries and their classifier, secrets in errors, request shaping.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use support::mock::{Mock, MockReply};
use toolnexus::scripted::{ScriptedReply, ScriptedTransport};
use toolnexus::{
    answer_output, pending, AfterToolEvent, Answer, BeforeLlmEvent, BeforeToolEvent, CancellationToken, Client,
    ClientOptions, Error, ErrorInfo, ErrorKind, HookFuture, Hooks, LlmOverride, PendingSpec, Request, RunInput,
    RunStatus, Style, Tier, Tool, ToolOverride, ToolResult, Toolkit,
};

fn scripted_client(style: Style, replies: Vec<ScriptedReply>) -> (ClientOptions, ScriptedTransport) {
    let t = ScriptedTransport::new(replies);
    let mut o = ClientOptions::new("http://model.invalid/v1", style, "base-model");
    o.api_key = Some("k".into());
    o.transport = Some(Arc::new(t.clone()));
    (o, t)
}

fn text_tool(name: &str, out: &'static str) -> Tool {
    Tool::from_sync(name, "", json!({"type": "object"}), move |_, _| Ok(ToolResult::ok(out)))
}

#[derive(Default)]
struct RecordingHooks {
    seen_tools: Mutex<Vec<String>>,
}

impl Hooks for RecordingHooks {
    fn before_llm(&self, ev: BeforeLlmEvent) -> HookFuture<Option<LlmOverride>> {
        // Turn 0 runs on another model; turn 1 keeps the client's.
        let ov = (ev.turn == 0).then(|| LlmOverride { model: Some("turn-model".into()), ..Default::default() });
        Box::pin(async move { Ok(ov) })
    }

    fn before_tool(&self, ev: BeforeToolEvent) -> HookFuture<Option<ToolOverride>> {
        let ov = match ev.name.as_str() {
            "denied" => Some(ToolOverride { result: Some(ToolResult::error("denied by policy")), args: None }),
            "rewritten" => Some(ToolOverride { result: None, args: Some(json!({"x": "rewritten"})) }),
            "gated" => Some(ToolOverride {
                result: Some(pending(PendingSpec {
                    id: Some("gate-1".into()),
                    kind: "approval".into(),
                    prompt: "Allow gated?".into(),
                    ..Default::default()
                })),
                args: None,
            }),
            _ => None,
        };
        Box::pin(async move { Ok(ov) })
    }

    fn after_tool(&self, ev: AfterToolEvent) -> HookFuture<Option<ToolResult>> {
        self.seen_tools.lock().unwrap().push(ev.name.clone());
        let out = (ev.name == "echo").then(|| ToolResult::ok(format!("{} [checked]", ev.result.output)));
        Box::pin(async move { Ok(out) })
    }
}

#[tokio::test]
async fn hooks_override_model_short_circuit_rewrite_and_transform() {
    let (mut o, t) = scripted_client(
        Style::OpenAi,
        vec![
            ScriptedReply::openai_calls(&[("c1", "denied", "{}"), ("c2", "rewritten", "{}"), ("c3", "echo", "{}")]),
            ScriptedReply::openai_text("done"),
        ],
    );
    let hooks = Arc::new(RecordingHooks::default());
    o.hooks = Some(hooks.clone());
    let ran_denied = Arc::new(AtomicUsize::new(0));
    let rd = ran_denied.clone();
    let tk = Toolkit::new(vec![
        Tool::from_sync("denied", "", json!({}), move |_, _| {
            rd.fetch_add(1, Ordering::SeqCst);
            Ok(ToolResult::ok("ran"))
        }),
        Tool::from_sync("rewritten", "", json!({}), |args, _| Ok(ToolResult::ok(args["x"].as_str().unwrap_or("?")))),
        text_tool("echo", "hello"),
    ])
    .unwrap();
    let r = Client::new(o).unwrap().run("go", Some(&tk)).await.unwrap();
    let reqs = t.requests();
    assert_eq!(reqs[0].body["model"], "turn-model");
    assert_eq!(reqs[1].body["model"], "base-model");
    assert_eq!(r.model, "base-model");
    assert_eq!(ran_denied.load(Ordering::SeqCst), 0, "a short-circuited tool never runs");
    let outs: Vec<&str> = r.tool_calls.iter().map(|c| c.output.as_str()).collect();
    assert_eq!(outs, ["denied by policy", "rewritten", "hello [checked]"]);
    assert_eq!(r.tool_calls[1].args, json!({"x": "rewritten"}));
    // after_tool saw the two tools that ran, not the short-circuited one.
    let mut seen = hooks.seen_tools.lock().unwrap().clone();
    seen.sort();
    assert_eq!(seen, ["echo", "rewritten"]);
}

#[tokio::test]
async fn a_hook_raised_suspension_halts_and_resumes_like_a_tool_raised_one() {
    let (mut o, t) = scripted_client(
        Style::Anthropic,
        vec![ScriptedReply::anthropic_calls(&[("t1", "gated", json!({}))]), ScriptedReply::anthropic_text("ok")],
    );
    let hooks = Arc::new(RecordingHooks::default());
    o.hooks = Some(hooks.clone());
    let answers = Arc::new(Mutex::new(Vec::new()));
    let a2 = answers.clone();
    let tk = Toolkit::new(vec![Tool::from_sync("gated", "", json!({}), move |_, ctx| {
        a2.lock().unwrap().push(ctx.answer.clone());
        Ok(ToolResult::ok("gated ran"))
    })])
    .unwrap();
    let client = Client::new(o).unwrap();
    let halted = client.run("go", Some(&tk)).await.unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    let req = halted.pending.clone().unwrap();
    assert_eq!(req.id, "gate-1");
    assert!(answers.lock().unwrap().is_empty(), "the guarded tool is not reached");
    assert!(hooks.seen_tools.lock().unwrap().is_empty(), "after_tool never runs on a suspension");
    let done = client.run_with_answer(Some(&tk), halted.messages, &req, &answer_output("gate-1", "yes")).await.unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(answers.lock().unwrap().len(), 1);
    assert_eq!(answers.lock().unwrap()[0].as_ref().unwrap().id, "gate-1");
    assert_eq!(t.requests().len(), 2);
}

struct FailingHook;
impl Hooks for FailingHook {
    fn after_llm(&self, _ev: toolnexus::AfterLlmEvent) -> HookFuture<()> {
        Box::pin(async { Err(Error::host("quota exceeded in host".into())) })
    }
}

#[tokio::test]
async fn a_failing_hook_aborts_the_run_with_the_host_error() {
    let (mut o, _t) = scripted_client(Style::OpenAi, vec![ScriptedReply::openai_text("hi")]);
    o.hooks = Some(Arc::new(FailingHook));
    let e = Client::new(o).unwrap().run("go", None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Host);
    assert_eq!(e.host_source().unwrap().to_string(), "quota exceeded in host");
}

#[tokio::test]
async fn tools_of_one_turn_run_concurrently() {
    // Each tool waits for the other to start: run one after the other, they never finish.
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let mk = |name: &str| {
        let b = barrier.clone();
        Tool::from_fn(name, "", json!({}), move |_, _| {
            let b = b.clone();
            async move {
                b.wait().await;
                Ok(ToolResult::ok("met"))
            }
        })
    };
    let tk = Toolkit::new(vec![mk("a"), mk("b")]).unwrap();
    let (o, _t) = scripted_client(
        Style::OpenAi,
        vec![ScriptedReply::openai_calls(&[("1", "a", "{}"), ("2", "b", "{}")]), ScriptedReply::openai_text("ok")],
    );
    let client = Client::new(o).unwrap();
    let r = tokio::time::timeout(Duration::from_secs(10), client.run("go", Some(&tk))).await;
    assert_eq!(r.expect("tools ran one after the other").unwrap().tool_call_count, 2);
}

#[tokio::test]
async fn only_the_last_call_of_a_turn_to_start_is_told_so() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mk = |name: &'static str| {
        let seen = seen.clone();
        Tool::from_sync(name, "", json!({}), move |_, ctx| {
            seen.lock().unwrap().push((name, ctx.last_to_start));
            Ok(ToolResult::ok("done"))
        })
    };
    let tk = Toolkit::new(vec![mk("a"), mk("b"), mk("c")]).unwrap();
    let (o, _t) = scripted_client(
        Style::OpenAi,
        vec![
            // `nope` is no tool: its call needs no start, and is not waited for.
            ScriptedReply::openai_calls(&[("1", "a", "{}"), ("2", "b", "{}"), ("3", "nope", "{}")]),
            ScriptedReply::openai_calls(&[("4", "c", "{}")]),
            ScriptedReply::openai_text("ok"),
        ],
    );
    Client::new(o).unwrap().run("go", Some(&tk)).await.unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![("a", false), ("b", true), ("c", true)]);
}

#[tokio::test]
async fn a_panicking_tool_is_an_error_result() {
    let tk = Toolkit::new(vec![Tool::from_sync("bad", "", json!({}), |_, _| panic!("boom"))]).unwrap();
    let (o, _t) = scripted_client(
        Style::OpenAi,
        vec![ScriptedReply::openai_calls(&[("1", "bad", "{}")]), ScriptedReply::openai_text("ok")],
    );
    let r = Client::new(o).unwrap().run("go", Some(&tk)).await.unwrap();
    assert_eq!(r.tool_calls[0].output, "tool bad panicked");
    assert!(r.tool_calls[0].is_error);
}

#[tokio::test]
async fn an_inline_answer_with_the_wrong_id_is_an_error() {
    let tk = Toolkit::new(vec![Tool::from_sync("ask", "", json!({}), |_, _| {
        Ok(pending(PendingSpec {
            id: Some("p1".into()),
            kind: "input".into(),
            prompt: "?".into(),
            ..Default::default()
        }))
    })])
    .unwrap();
    let (mut o, _t) = scripted_client(Style::OpenAi, vec![ScriptedReply::openai_calls(&[("1", "ask", "{}")])]);
    o.wait_for = Some(Arc::new(|_r: Request| async { Ok(Some(answer_output("p2", "x"))) }));
    let e = Client::new(o).unwrap().run("go", Some(&tk)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AnswerMismatch);
}

#[tokio::test]
async fn a_history_entry_that_is_not_a_message_is_refused_before_any_request() {
    let (o, t) = scripted_client(Style::OpenAi, vec![ScriptedReply::openai_text("never sent")]);
    let client = Client::new(o).unwrap();
    for (bad, what) in [(json!("role"), "a string"), (json!({"content": "x"}), "an object without a string \"role\"")] {
        let history = vec![json!({"role": "user", "content": "hi"}), bad];
        let e = client.run_with_history("go", None, history).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert_eq!(e.message(), format!("history[1] is not a message: it is {what}"));
    }
    assert!(t.requests().is_empty());
}

#[tokio::test]
async fn a_run_cancelled_while_a_tool_runs_sends_nothing_more() {
    // The tool cancels the run and still answers; the next turn's reply would be ready at once
    // (scripted), so only a cancellation checked before every poll of the run stops it.
    for _ in 0..20 {
        let token = CancellationToken::new();
        let t2 = token.clone();
        let tk = Toolkit::new(vec![Tool::from_sync("stop", "", json!({}), move |_, _| {
            t2.cancel();
            Ok(ToolResult::ok("answered anyway"))
        })])
        .unwrap();
        let replies = vec![ScriptedReply::openai_calls(&[("1", "stop", "{}")]), ScriptedReply::openai_text("more")];
        let (o, t) = scripted_client(Style::OpenAi, replies);
        let input = RunInput::prompt("go").toolkit(&tk).cancel(token);
        let e = Client::new(o).unwrap().run_input(input).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Cancelled);
        assert_eq!(t.requests().len(), 1);
    }
}

/// A before_llm hook that cancels the run it is called for, without yielding.
struct CancellingHook(CancellationToken);
impl Hooks for CancellingHook {
    fn before_llm(&self, _ev: BeforeLlmEvent) -> HookFuture<Option<LlmOverride>> {
        self.0.cancel();
        Box::pin(std::future::ready(Ok(None)))
    }
}

#[tokio::test]
async fn a_run_cancelled_by_its_before_llm_hook_sends_nothing() {
    let token = CancellationToken::new();
    let (mut o, t) = scripted_client(Style::OpenAi, vec![ScriptedReply::openai_text("never")]);
    o.hooks = Some(Arc::new(CancellingHook(token.clone())));
    let e = Client::new(o).unwrap().run_input(RunInput::prompt("go").cancel(token)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Cancelled);
    assert!(t.requests().is_empty());
}

#[tokio::test]
async fn a_deadline_passed_while_a_tool_runs_sends_nothing_more() {
    let tk = Toolkit::new(vec![Tool::from_sync("slow", "", json!({}), |_, _| {
        std::thread::sleep(Duration::from_millis(60));
        Ok(ToolResult::ok("late"))
    })])
    .unwrap();
    let replies = vec![ScriptedReply::openai_calls(&[("1", "slow", "{}")]), ScriptedReply::openai_text("more")];
    let (mut o, t) = scripted_client(Style::OpenAi, replies);
    o.timeout_ms = Some(30);
    let e = Client::new(o).unwrap().run("go", Some(&tk)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert_eq!(t.requests().len(), 1);
}

fn mock_client(mock: &Mock, f: impl FnOnce(&mut ClientOptions)) -> Client {
    let mut o = ClientOptions::new(mock.url("/v1"), Style::OpenAi, "m");
    o.api_key = Some("sk-secret-123456".into());
    o.retry_base_ms = 1;
    f(&mut o);
    Client::new(o).unwrap()
}

fn slow_reply() -> MockReply {
    let mut r = MockReply::json(json!({"choices":[{"message":{"role":"assistant","content":"late"}}]}));
    r.delay = Duration::from_secs(30);
    r
}

#[tokio::test]
async fn cancel_aborts_the_in_flight_request() {
    let mock = Mock::start().await;
    mock.script(vec![slow_reply()]);
    let client = mock_client(&mock, |_| {});
    let token = CancellationToken::new();
    let t2 = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        t2.cancel();
    });
    let r = tokio::time::timeout(Duration::from_secs(10), client.run_input(RunInput::prompt("hi").cancel(token))).await;
    assert_eq!(r.expect("cancel did not abort").unwrap_err().kind(), ErrorKind::Cancelled);
    assert_eq!(mock.seen().len(), 1, "an abort is never retried");
}

#[tokio::test]
async fn timeout_ms_bounds_the_whole_run() {
    let mock = Mock::start().await;
    mock.script(vec![slow_reply()]);
    let client = mock_client(&mock, |o| o.timeout_ms = Some(150));
    let r = tokio::time::timeout(Duration::from_secs(10), client.run("hi", None)).await;
    let e = r.expect("deadline did not fire").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert!(e.message().contains("150ms"));
}

#[tokio::test]
async fn a_tool_sees_the_run_cancel_and_its_call_id() {
    let seen = Arc::new(Mutex::new(None));
    let s2 = seen.clone();
    let tk = Toolkit::new(vec![Tool::from_fn("wait", "", json!({}), move |_, ctx| {
        let s2 = s2.clone();
        async move {
            *s2.lock().unwrap() = Some(ctx.call_id.clone());
            ctx.cancel.cancelled().await;
            Ok(ToolResult::ok("cancelled"))
        }
    })])
    .unwrap();
    let (mut o, _t) = scripted_client(Style::OpenAi, vec![ScriptedReply::openai_calls(&[("call-77", "wait", "{}")])]);
    o.timeout_ms = Some(100);
    let e = Client::new(o).unwrap().run("go", Some(&tk)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert_eq!(seen.lock().unwrap().as_deref(), Some("call-77"));
}

#[tokio::test]
async fn network_errors_are_retried_and_classified() {
    // Bind then drop a listener: the port refuses connections.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let infos: Arc<Mutex<Vec<ErrorInfo>>> = Arc::default();
    let i2 = infos.clone();
    let mut o = ClientOptions::new(format!("http://127.0.0.1:{port}/v1"), Style::OpenAi, "m");
    o.api_key = Some("k".into());
    o.retries = 2;
    o.retry_base_ms = 1;
    o.on_error = Some(Arc::new(move |info: &ErrorInfo| {
        i2.lock().unwrap().push(info.clone());
        Tier::Retry
    }));
    let e = Client::new(o).unwrap().run("hi", None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Network);
    let infos = infos.lock().unwrap();
    assert_eq!(infos.iter().map(|i| i.attempt).collect::<Vec<_>>(), [0, 1, 2]);
    assert!(infos.iter().all(|i| i.retryable && i.status.is_none() && i.error.is_some()));
}

#[tokio::test]
async fn on_error_fail_stops_retrying_and_extra_statuses_widen_the_set() {
    let mock = Mock::start().await;
    let err = |s: u16| MockReply { status: s, headers: vec![], body: json!({"error": "x"}), delay: Duration::ZERO };
    mock.script(vec![err(503), err(503)]);
    let c = mock_client(&mock, |o| o.on_error = Some(Arc::new(|_: &ErrorInfo| Tier::Fail)));
    assert_eq!(c.run("hi", None).await.unwrap_err().http_detail().unwrap().status, 503);
    assert_eq!(mock.seen().len(), 1);

    mock.script(vec![err(520), MockReply::json(json!({"choices":[{"message":{"role":"assistant","content":"ok"}}]}))]);
    let c = mock_client(&mock, |o| o.retryable_statuses = vec![520]);
    assert_eq!(c.run("hi", None).await.unwrap().text, "ok");
    assert_eq!(mock.seen().len(), 2);

    // "default" leaves each failure to the default policy: a 503 is retried, a 400 is not.
    mock.script(vec![err(503), err(400)]);
    let c = mock_client(&mock, |o| o.on_error = Some(Arc::new(|_: &ErrorInfo| Tier::Default)));
    assert_eq!(c.run("hi", None).await.unwrap_err().http_detail().unwrap().status, 400);
    assert_eq!(mock.seen().len(), 2);
    assert_eq!(Tier::from_answer(None).unwrap(), Tier::Default);
    assert_eq!(Tier::from_answer(Some("fail")).unwrap(), Tier::Fail);
    assert!(Tier::from_answer(Some("maybe")).unwrap_err().message().contains("\"maybe\""));
}

#[tokio::test]
async fn each_parallel_suspension_gets_its_own_wait_for_all_at_once() {
    // A host may park every wait_for and answer them together (the Go port's parking proxy):
    // that only works if all of a turn's suspensions reach it before any is answered.
    let calls = [("c1", "alpha", "{}"), ("c2", "beta", "{}"), ("c3", "gamma", "{}")];
    let (mut o, _t) = scripted_client(
        Style::OpenAi,
        vec![ScriptedReply::openai_calls(&calls), ScriptedReply::openai_text("all answered")],
    );
    let all_parked = Arc::new(tokio::sync::Barrier::new(3));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (b, s) = (all_parked.clone(), seen.clone());
    o.wait_for = Some(Arc::new(move |req: Request| {
        let (b, s) = (b.clone(), s.clone());
        async move {
            let names: Vec<String> = toolnexus::relay::relay_calls_of(&req).into_iter().map(|c| c.name).collect();
            s.lock().unwrap().push(names.clone());
            b.wait().await;
            Ok(Some(answer_output(&req.id, &format!("out-{}", names.join(",")))))
        }
    }));
    let tk = Toolkit::new(vec![
        Tool::relay("alpha", "", None),
        Tool::relay("beta", "", None),
        Tool::relay("gamma", "", None),
    ])
    .unwrap();
    let client = Client::new(o).unwrap();
    let r = tokio::time::timeout(Duration::from_secs(5), client.run("go", Some(&tk)))
        .await
        .expect("the suspensions were waited for one at a time")
        .unwrap();
    assert_eq!(r.text, "all answered");
    assert_eq!(*seen.lock().unwrap(), [["alpha"], ["beta"], ["gamma"]]);
    let outputs: Vec<&str> = r.tool_calls.iter().map(|c| c.output.as_str()).collect();
    assert_eq!(outputs, ["out-alpha", "out-beta", "out-gamma"]);
}

#[tokio::test]
async fn a_run_cut_short_by_max_turns_reports_the_last_assistant_text_as_upstream() {
    let calls = || ScriptedReply::openai_calls(&[("c1", "t", "{}")]);
    let mut with_text = calls();
    with_text.body["choices"][0]["message"]["content"] = json!("thinking");
    // openai: the last assistant message with text, even when a later turn had none.
    let (mut o, _t) = scripted_client(Style::OpenAi, vec![with_text, calls()]);
    o.max_turns = 2;
    let tk = Toolkit::new(vec![text_tool("t", "x")]).unwrap();
    let r = Client::new(o).unwrap().run("go", Some(&tk)).await.unwrap();
    assert_eq!((r.status, r.text.as_str()), (RunStatus::Incomplete, "thinking"));
    // anthropic: none.
    let mut use_and_text = ScriptedReply::anthropic_calls(&[("u1", "t", json!({}))]);
    use_and_text.body["content"].as_array_mut().unwrap().insert(0, json!({"type": "text", "text": "thinking"}));
    let (mut o, _t) = scripted_client(Style::Anthropic, vec![use_and_text]);
    o.max_turns = 1;
    let r = Client::new(o).unwrap().run("go", Some(&tk)).await.unwrap();
    assert_eq!((r.status, r.text.as_str()), (RunStatus::Incomplete, ""));
}

#[tokio::test]
async fn max_turns_zero_sends_nothing_and_ends_incomplete() {
    let (mut o, t) = scripted_client(Style::OpenAi, vec![ScriptedReply::openai_text("never")]);
    o.max_turns = 0;
    let r = Client::new(o).unwrap().run("hi", None).await.unwrap();
    assert_eq!((r.status, r.limit.as_deref(), r.turns), (RunStatus::Incomplete, Some("maxTurns"), 0));
    assert!(t.requests().is_empty());
}

/// A host client's own HTTP error type, as a host transport raises it.
#[derive(Debug)]
struct HostHttpError(u16);

impl std::fmt::Display for HostHttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A gateway's body, as a careless host client puts it in its message.
        write!(f, "host says {}: bad key sk-live-0123456789", self.0)
    }
}

impl std::error::Error for HostHttpError {}

/// A transport that raises `HostHttpError` for the statuses in `fail`, then answers "ok".
struct RaisingTransport {
    fail: Mutex<Vec<(u16, Option<&'static str>)>>,
    sent: AtomicUsize,
}

impl toolnexus::Transport for RaisingTransport {
    fn post(
        &self,
        _: toolnexus::HttpRequest,
    ) -> futures_util::future::BoxFuture<'static, toolnexus::Result<toolnexus::HttpResponse>> {
        self.sent.fetch_add(1, Ordering::SeqCst);
        let next = { self.fail.lock().unwrap().pop() };
        Box::pin(async move {
            match next {
                Some((status, retry_after)) => Err(Error::http_from_host(
                    toolnexus::HttpErrorDetail {
                        status,
                        body: "bad key sk-live-0123456789".into(),
                        retry_after: retry_after.map(String::from),
                    },
                    Box::new(HostHttpError(status)),
                )),
                None => Ok(toolnexus::HttpResponse {
                    status: 200,
                    headers: vec![],
                    body: json!({"choices":[{"message":{"role":"assistant","content":"ok"}}]}).to_string().into(),
                }),
            }
        })
    }
}

#[tokio::test]
async fn a_host_transports_own_http_error_is_retried_by_status_and_surfaces_unchanged() {
    let run = |fail: Vec<(u16, Option<&'static str>)>| async move {
        let t = Arc::new(RaisingTransport { fail: Mutex::new(fail), sent: AtomicUsize::new(0) });
        let mut o = ClientOptions::new("http://model.invalid/v1", Style::OpenAi, "m");
        o.api_key = Some("sk-live-0123456789".into());
        o.retry_base_ms = 60_000; // only Retry-After: 0 keeps this test fast
        o.transport = Some(t.clone());
        let r = Client::new(o).unwrap().run("hi", None).await;
        (r, t.sent.load(Ordering::SeqCst))
    };
    // A retryable status is retried, honouring its Retry-After.
    let (r, sent) = run(vec![(503, Some("0")), (429, Some("0"))]).await;
    assert_eq!((r.unwrap().text, sent), ("ok".to_string(), 3));
    // A status outside the set fails at once, as the host's own error object.
    let (r, sent) = run(vec![(400, None)]).await;
    let e = r.unwrap_err();
    assert_eq!((e.kind(), e.http_detail().map(|d| d.status), sent), (ErrorKind::Http, Some(400), 1));
    // The host's text is scrubbed of the key; the host's object itself travels on.
    assert_eq!(e.message(), "host says 400: bad key «redacted»");
    assert_eq!(e.http_detail().unwrap().body, "bad key «redacted»");
    let source = e.into_host_source().unwrap();
    assert!(source.downcast_ref::<HostHttpError>().is_some());
}

#[tokio::test]
async fn error_text_never_carries_secrets() {
    let mock = Mock::start().await;
    let body = json!({"error": "bad key sk-secret-123456", "user_id": "u-42", "hdr": "tok-abcdefgh"});
    mock.script(vec![MockReply { status: 400, headers: vec![], body, delay: Duration::ZERO }]);
    let c = mock_client(&mock, |o| o.headers = vec![("X-Token".into(), "tok-abcdefgh".into())]);
    let e = c.run("hi", None).await.unwrap_err();
    let shown = format!("{e} {e:?}");
    for secret in ["sk-secret-123456", "u-42", "tok-abcdefgh"] {
        assert!(!shown.contains(secret), "{secret} leaked: {shown}");
    }
    assert!(e.message().starts_with("LLM 400: "));
    assert!(e.http_detail().unwrap().body.contains("«redacted»"));

    mock.script(vec![MockReply {
        status: 401,
        headers: vec![],
        body: json!({"key": "sk-secret-123456"}),
        delay: Duration::ZERO,
    }]);
    let e = c.run("hi", None).await.unwrap_err();
    assert_eq!(e.message(), "LLM 401");
    assert_eq!(e.http_detail().unwrap().body, "");
}

#[tokio::test]
async fn an_error_object_in_a_2xx_reply_is_scrubbed_like_any_error() {
    // A gateway that answers 200 with an error object echoing what it was sent.
    let mock = Mock::start().await;
    let echoed = "invalid key sk-secret-123456 for team blue via Bearer t0k";
    mock.script(vec![MockReply::json(json!({"error": {"message": echoed}}))]);
    let c = mock_client(&mock, |o| {
        o.api_key = Some("sk-secret-123456".into());
        o.headers = vec![("X-Team".into(), "blue".into()), ("X-Auth".into(), "Bearer t0k".into())];
    });
    let e = c.run("hi", None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol);
    let shown = format!("{e} {e:?}");
    for secret in ["sk-secret-123456", "blue", "t0k"] {
        assert!(!shown.contains(secret), "{secret} leaked: {shown}");
    }
    assert!(e.message().contains("provider returned an error object: invalid key «redacted»"), "{shown}");
}

#[tokio::test]
async fn a_retry_after_past_the_cap_surfaces_at_once_with_its_value() {
    let mock = Mock::start().await;
    let busy = |ra: &str| MockReply {
        status: 429,
        headers: vec![("retry-after".into(), ra.into())],
        body: json!({"error": "slow down"}),
        delay: Duration::ZERO,
    };
    mock.script(vec![busy("2147483647")]);
    let c = mock_client(&mock, |_| {});
    let started = std::time::Instant::now();
    let e = tokio::time::timeout(Duration::from_secs(10), c.run("hi", None)).await.expect("run parked").unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    let d = e.http_detail().unwrap();
    assert_eq!((e.kind(), d.status, d.retry_after.as_deref()), (ErrorKind::Http, 429, Some("2147483647")));
    assert_eq!(mock.seen().len(), 1);

    // Under the cap it is honoured, as before.
    mock.script(vec![
        busy("0"),
        MockReply::json(json!({"choices": [{"message": {"role": "assistant", "content": "ok"}}]})),
    ]);
    let c = mock_client(&mock, |o| o.max_retry_after_ms = 0);
    assert_eq!(c.run("hi", None).await.unwrap().text, "ok");
}

#[tokio::test]
async fn request_params_are_merged_and_win() {
    let (mut o, t) = scripted_client(Style::Anthropic, vec![ScriptedReply::anthropic_text("hi")]);
    o.request_params = json!({"max_tokens": 100, "temperature": 0.5}).as_object().cloned();
    Client::new(o).unwrap().run("go", None).await.unwrap();
    let body = &t.requests()[0].body;
    assert_eq!(body["max_tokens"], 100);
    assert_eq!(body["temperature"], 0.5);
    let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["model", "max_tokens", "messages", "temperature"]);
}

#[tokio::test]
async fn a_malformed_reply_is_a_protocol_error() {
    let (o, _t) = scripted_client(Style::OpenAi, vec![ScriptedReply::ok(json!({"choices": []}))]);
    let e = Client::new(o).unwrap().run("go", None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol);
}

#[tokio::test]
async fn a_missing_api_key_is_a_config_error_that_names_the_variables() {
    let vars = ["OPENROUTER_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"];
    if vars.iter().any(|v| std::env::var(v).is_ok()) {
        eprintln!("skipped: an API key variable is set in this environment");
        return;
    }
    let mut o = ClientOptions::new("http://127.0.0.1:9/v1", Style::OpenAi, "m");
    o.api_key = None;
    let e = Client::new(o).unwrap().run("go", None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config);
    assert!(e.message().contains("OPENAI_API_KEY"));
    // A host transport changes nothing (as upstream): the run fails before any request.
    let (mut o, t) = scripted_client(Style::Anthropic, vec![ScriptedReply::anthropic_text("hi")]);
    o.api_key = None;
    let e = Client::new(o.clone()).unwrap().run("go", None).await.unwrap_err();
    assert_eq!((e.kind(), t.requests().len()), (ErrorKind::Config, 0));
    // Unless no key is required: then no auth header of the engine's own is sent.
    o.require_api_key = false;
    assert_eq!(Client::new(o).unwrap().run("go", None).await.unwrap().text, "hi");
    let names: Vec<String> = t.requests()[0].headers.iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(names, ["anthropic-version", "content-type"]);
}

#[tokio::test]
async fn resume_rejects_a_transcript_without_a_tool_turn() {
    let (o, _t) = scripted_client(Style::OpenAi, vec![]);
    let req = Request::from_json(&json!({"id": "p", "kind": "input", "prompt": "?"})).unwrap();
    let ans = Answer::from_json(&json!({"id": "p", "ok": true})).unwrap();
    let history: Vec<Value> = vec![json!({"role": "user", "content": "hi"})];
    let e = Client::new(o).unwrap().run_with_answer(None, history, &req, &ans).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

#[tokio::test]
async fn body_transform_rewrites_the_body_last() {
    let (mut o, t) = scripted_client(Style::OpenAi, vec![ScriptedReply::openai_text("hi")]);
    o.request_params = json!({"temperature": 0.1}).as_object().cloned();
    o.body_transform = Some(Arc::new(|mut body: Value| {
        // It sees the merged params, and what it returns is what is sent.
        let t = body["temperature"].clone();
        body["seen_temperature"] = t;
        body.as_object_mut().map(|m| m.remove("temperature"));
        Some(body)
    }));
    Client::new(o).unwrap().run("go", None).await.unwrap();
    let body = &t.requests()[0].body;
    assert_eq!(body["seen_temperature"], 0.1);
    assert!(body.get("temperature").is_none());
}

/// Hooks speaking JSON, as every binding's are.
struct JsonHost;

impl toolnexus::JsonHooks for JsonHost {
    fn enabled(&self) -> toolnexus::HookSet {
        toolnexus::HookSet::ALL
    }

    fn call(&self, hook: toolnexus::HookName, event: Value) -> HookFuture<Value> {
        let out = match hook {
            toolnexus::HookName::BeforeLlm if event["turn"] == 0 => json!({"model": "json-model"}),
            toolnexus::HookName::BeforeTool => json!({"args": {"x": event["name"]}}),
            toolnexus::HookName::AfterTool => {
                json!({"result": {"output": format!("{}+", event["result"]["output"].as_str().unwrap()), "is_error": false}})
            }
            _ => Value::Null,
        };
        Box::pin(async move { Ok(out) })
    }
}

#[tokio::test]
async fn json_hooks_follow_the_documented_shapes() {
    let (mut o, t) = scripted_client(
        Style::OpenAi,
        vec![ScriptedReply::openai_calls(&[("c1", "echo", "{}")]), ScriptedReply::openai_text("done")],
    );
    o.hooks = Some(Arc::new(toolnexus::JsonHooksAdapter(JsonHost)));
    let tk = Toolkit::new(vec![Tool::from_sync("echo", "", json!({}), |args, _| {
        Ok(ToolResult::ok(args["x"].as_str().unwrap_or("?")))
    })])
    .unwrap();
    let r = Client::new(o).unwrap().run("go", Some(&tk)).await.unwrap();
    assert_eq!(t.requests()[0].body["model"], "json-model");
    assert_eq!(r.tool_calls[0].output, "echo+");
}

/// A JSON host whose `hook` answers `answer`, every other hook nothing.
struct Answering(toolnexus::HookName, Value);

impl toolnexus::JsonHooks for Answering {
    fn enabled(&self) -> toolnexus::HookSet {
        toolnexus::HookSet::ALL
    }

    fn call(&self, hook: toolnexus::HookName, _: Value) -> HookFuture<Value> {
        let out = if hook == self.0 { self.1.clone() } else { Value::Null };
        Box::pin(async move { Ok(out) })
    }
}

#[tokio::test]
async fn a_hook_answer_of_the_wrong_shape_is_an_error_naming_the_hook_and_key() {
    use toolnexus::HookName::{AfterTool, BeforeLlm, BeforeTool};
    for (hook, answer, names) in [
        (BeforeLlm, json!(5), "before_llm must return an object"),
        (BeforeLlm, json!({"messages": "all"}), "before_llm: \"messages\" must be an array"),
        (BeforeLlm, json!({"model": 7}), "before_llm: \"model\" must be a string"),
        (BeforeTool, json!({"args": "x"}), "before_tool: \"args\" must be an object"),
        (AfterTool, json!({"result": "done"}), "after_tool: \"result\" must be a ToolResult object"),
        (AfterTool, json!({"result": {"output": 1}}), "after_tool: \"result\" is not a ToolResult"),
    ] {
        let (mut o, t) = scripted_client(
            Style::OpenAi,
            vec![ScriptedReply::openai_calls(&[("c1", "echo", "{}")]), ScriptedReply::openai_text("done")],
        );
        o.hooks = Some(Arc::new(toolnexus::JsonHooksAdapter(Answering(hook, answer.clone()))));
        let tk = Toolkit::new(vec![text_tool("echo", "x")]).unwrap();
        let e = Client::new(o).unwrap().run("go", Some(&tk)).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{answer}");
        assert!(e.message().contains(names), "{answer}: {}", e.message());
        let _ = t;
    }
}

/// Rewrites the content of the transcript's second message before the first model call.
struct RewriteSecond;

impl Hooks for RewriteSecond {
    fn before_llm(&self, ev: BeforeLlmEvent) -> HookFuture<Option<LlmOverride>> {
        let mut messages = ev.messages;
        messages[1]["content"] = json!("rewritten");
        Box::pin(
            async move { Ok((ev.turn == 0).then_some(LlmOverride { messages: Some(messages), ..Default::default() })) },
        )
    }
}

#[tokio::test]
async fn an_eliding_run_keeps_the_given_messages_up_to_the_first_the_engine_changed() {
    let history = vec![
        json!({"role": "user", "content": "one \"quoted\"\n"}),
        json!({"role": "assistant", "content": "two"}),
        json!({"role": "user", "content": "three"}),
    ];
    // The text a binding passed the history as, written otherwise than serde_json writes it.
    let text = "[ {\"role\":\"user\",\"content\":\"one \\u0022quoted\\\"\\n\"},\n{\"role\":\"assistant\",\"content\":\"two\"},{\"role\":\"user\",\"content\":\"three\"}]";
    assert_eq!(serde_json::from_str::<Value>(text).unwrap(), json!(history));
    for hooked in [false, true] {
        let mut by_copy = None;
        for through_text in [false, true] {
            let (mut o, _t) = scripted_client(Style::OpenAi, vec![ScriptedReply::openai_text("done")]);
            if hooked {
                o.hooks = Some(Arc::new(RewriteSecond));
            }
            let client = Client::new(o).unwrap();
            let input = RunInput { prompt: Some("go".into()), history: history.clone(), ..Default::default() };
            let (r, kept) = if through_text {
                client.run_eliding_text(input, text).await.unwrap()
            } else {
                client.run_eliding(input).await.unwrap()
            };
            // Unhooked, the whole history is the caller's; hooked, only the first message.
            assert_eq!(kept, if hooked { 1 } else { 3 }, "hooked {hooked}, through text {through_text}");
            assert_eq!(
                r.messages.first().map(|m| m["content"].clone()),
                Some(json!(if hooked { "rewritten" } else { "go" }))
            );
            match &by_copy {
                None => by_copy = Some((r.messages, kept)),
                Some(first) => assert_eq!(first, &(r.messages, kept)),
            }
        }
    }
}
