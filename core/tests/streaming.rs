//! Streaming runs against a loopback server that answers in server-sent events, paced: text
//! reaches the host while the answer is still arriving; tool calls, results and suspensions
//! come in order in both styles; a cut, garbled or stalled stream is a typed error.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use toolnexus::{
    answer_output, pending, Answer, Client, ClientOptions, ErrorKind, HookFuture, PendingSpec, Request, RunInput,
    RunStatus, StreamEvent, StreamTo, Style, Tool, ToolResult, Toolkit, WaitFor,
};

/// One answer: its events, each sent after its pause.
type Answer_ = Vec<(u64, String)>;

/// Serves one scripted stream per request, recording the bodies. An event `<wait>` holds the
/// rest of the answer until `gate` is notified (at most 5 s; `held_too_long` then says so).
async fn sse_server(answers: Vec<Answer_>) -> (String, Arc<Mutex<Vec<Value>>>) {
    sse_server_gated(answers, Arc::new(Gate::default())).await
}

#[derive(Default)]
struct Gate {
    open: tokio::sync::Notify,
    held_too_long: std::sync::atomic::AtomicBool,
}

async fn sse_server_gated(answers: Vec<Answer_>, gate: Arc<Gate>) -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let answers = Arc::new(Mutex::new(answers));
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else { return };
            let (seen, answers, gate) = (seen2.clone(), answers.clone(), gate.clone());
            tokio::spawn(async move {
                loop {
                    let mut buf = Vec::new();
                    let mut tmp = [0u8; 4096];
                    let body = loop {
                        let Ok(n) = sock.read(&mut tmp).await else { return };
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&tmp[..n]);
                        let text = String::from_utf8_lossy(&buf).to_string();
                        if let Some(end) = text.find("\r\n\r\n") {
                            let len: usize = text[..end]
                                .lines()
                                .find_map(|l| {
                                    l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_string())
                                })
                                .and_then(|v| v.parse().ok())
                                .unwrap_or(0);
                            if buf.len() >= end + 4 + len {
                                break buf[end + 4..end + 4 + len].to_vec();
                            }
                        }
                    };
                    seen.lock().unwrap().push(serde_json::from_slice(&body).unwrap_or(Value::Null));
                    let events = { answers.lock().unwrap().remove(0) };
                    let head =
                        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
                    if sock.write_all(head.as_bytes()).await.is_err() {
                        return;
                    }
                    for (pause, ev) in events {
                        tokio::time::sleep(Duration::from_millis(pause)).await;
                        if ev == "<cut>" {
                            return; // drops the connection mid-stream
                        }
                        if ev == "<wait>" {
                            if tokio::time::timeout(Duration::from_secs(5), gate.open.notified()).await.is_err() {
                                gate.held_too_long.store(true, std::sync::atomic::Ordering::SeqCst);
                            }
                            continue;
                        }
                        let chunk = format!("{:x}\r\n{ev}\r\n", ev.len());
                        if sock.write_all(chunk.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                    if sock.write_all(b"0\r\n\r\n").await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, seen)
}

fn data(v: Value) -> (u64, String) {
    (0, format!("data: {v}\n\n"))
}

fn openai_text(parts: &[&str], pause: u64) -> Answer_ {
    let mut out: Answer_ = parts
        .iter()
        .map(|p| (pause, format!("data: {}\n\n", json!({"choices": [{"delta": {"content": p}}]}))))
        .collect();
    out.push(data(json!({"choices": [{"delta": {}, "finish_reason": "stop"}]})));
    out.push(data(json!({"choices": [], "usage": {"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5}})));
    out.push((0, "data: [DONE]\n\n".into()));
    out
}

fn openai_call(id: &str, name: &str) -> Answer_ {
    vec![
        data(
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": id, "function": {"name": name, "arguments": "{\"a\""}}]}}]}),
        ),
        data(json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": ":1}"}}]}}]})),
        data(
            json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}),
        ),
        (0, "data: [DONE]\n\n".into()),
    ]
}

#[derive(Default, Clone)]
struct Seen(Arc<Mutex<Vec<(Instant, StreamEvent)>>>);

impl Seen {
    fn to(&self) -> StreamTo {
        let s = self.0.clone();
        StreamTo(Arc::new(move |e: StreamEvent| s.lock().unwrap().push((Instant::now(), e))))
    }

    fn kinds(&self) -> Vec<String> {
        self.0.lock().unwrap().iter().map(|(_, e)| e.to_json()["type"].as_str().unwrap().to_string()).collect()
    }
}

fn toolkit() -> Toolkit {
    let add = Tool::from_sync("add", "Add.", json!({"type": "object"}), |args, _| {
        Ok(ToolResult::ok(format!("got {}", args["a"])))
    });
    let ask = Tool::from_sync("ask", "Ask.", json!({"type": "object"}), |_, ctx| {
        Ok(match &ctx.answer {
            Some(a) => ToolResult::ok(format!("told {}", a.data.clone().unwrap_or_default()["output"])),
            None => pending(PendingSpec { id: Some("q-1".into()), kind: "question".into(), ..Default::default() }),
        })
    });
    Toolkit::new(vec![add, ask]).unwrap()
}

fn options(url: &str, style: Style) -> ClientOptions {
    let mut o = ClientOptions::new(format!("{url}/v1"), style, "m");
    o.api_key = Some("k".into());
    o.retries = 0;
    o
}

#[tokio::test]
async fn text_arrives_while_the_answer_is_still_streaming() {
    // The server sends "Hel", then holds the rest of its answer until the host has seen "Hel":
    // a client that buffered the stream would keep it waiting.
    let mut answer = openai_text(&["Hel"], 0);
    answer.splice(1..1, [(0, "<wait>".to_string())]);
    answer.splice(2..2, openai_text(&["lo", " there"], 0).into_iter().take(2));
    let gate = Arc::new(Gate::default());
    let (url, seen_bodies) = sse_server_gated(vec![answer], gate.clone()).await;
    let texts = Arc::new(Mutex::new(Vec::new()));
    let (t2, g2) = (texts.clone(), gate.clone());
    let to = StreamTo(Arc::new(move |e: StreamEvent| {
        if let StreamEvent::Text(d) = e {
            t2.lock().unwrap().push(d);
            g2.open.notify_one();
        }
    }));
    let c = Client::new(options(&url, Style::OpenAi)).unwrap();
    let r = c.run_input(RunInput { stream: Some(to), ..RunInput::prompt("hi") }).await.unwrap();
    assert_eq!((r.text.as_str(), r.usage.total_tokens), ("Hello there", 5));
    assert_eq!(*texts.lock().unwrap(), ["Hel", "lo", " there"]);
    assert!(
        !gate.held_too_long.load(std::sync::atomic::Ordering::SeqCst),
        "the first delta came only with the whole answer"
    );
    let body = &seen_bodies.lock().unwrap()[0];
    assert_eq!((body["stream"].as_bool(), body["stream_options"]["include_usage"].as_bool()), (Some(true), Some(true)));
}

struct Blue;

impl WaitFor for Blue {
    fn wait_for(&self, req: Request) -> HookFuture<Option<Answer>> {
        Box::pin(async move { Ok(Some(answer_output(&req.id, "blue"))) })
    }
}

#[tokio::test]
async fn tool_calls_results_and_an_inline_suspension_come_in_order() {
    let answers = vec![openai_call("c1", "add"), openai_call("c2", "ask"), openai_text(&["ok"], 0)];
    let (url, _) = sse_server(answers).await;
    let seen = Seen::default();
    let mut o = options(&url, Style::OpenAi);
    o.wait_for = Some(Arc::new(Blue));
    let c = Client::new(o).unwrap();
    let tk = toolkit();
    let r = c.run_input(RunInput { stream: Some(seen.to()), ..RunInput::prompt("go").toolkit(&tk) }).await.unwrap();
    assert_eq!(r.status, RunStatus::Done);
    assert_eq!(seen.kinds(), ["tool_call", "tool_result", "tool_call", "pending", "tool_result", "text", "usage"]);
    let events = seen.0.lock().unwrap();
    assert_eq!(events[0].1, StreamEvent::ToolCall { id: "c1".into(), name: "add".into(), args: json!({"a": 1}) });
    assert_eq!(
        events[1].1.to_json(),
        json!({"type": "tool_result", "id": "c1", "name": "add", "output": "got 1", "is_error": false})
    );
    assert_eq!(events[4].1.to_json()["output"], "told \"blue\"");
}

#[tokio::test]
async fn anthropic_streams_and_a_durable_halt_surfaces_its_request() {
    let call = vec![
        data(
            json!({"type": "message_start", "message": {"id": "m1", "role": "assistant", "usage": {"input_tokens": 4}}}),
        ),
        data(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
        data(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Asking."}})),
        data(
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t1", "name": "ask", "input": {}}}),
        ),
        data(
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{}"}}),
        ),
        data(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 2}})),
        (0, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n".into()),
    ];
    let (url, _) = sse_server(vec![call]).await;
    let seen = Seen::default();
    let c = Client::new(options(&url, Style::Anthropic)).unwrap();
    let tk = toolkit();
    let r = c.run_input(RunInput { stream: Some(seen.to()), ..RunInput::prompt("go").toolkit(&tk) }).await.unwrap();
    assert_eq!((r.status, r.usage.total_tokens), (RunStatus::Pending, 6));
    assert_eq!(seen.kinds(), ["text", "tool_call", "pending"]);
    let events = seen.0.lock().unwrap();
    let StreamEvent::Pending(req) = &events[2].1 else { panic!() };
    assert_eq!(req.id, "q-1");
    assert_eq!(r.messages[1]["content"][0], json!({"type": "text", "text": "Asking."}));
}

#[tokio::test]
async fn a_cut_a_garbled_and_a_stalled_stream_are_typed_errors() {
    let cut = vec![data(json!({"choices": [{"delta": {"content": "par"}}]})), (10, "<cut>".into())];
    let garbled = vec![(0, "data: {nope\n\n".to_string())];
    let stalled = vec![data(json!({"choices": [{"delta": {"content": "wait"}}]})), (5_000, String::new())];
    let (url, _) = sse_server(vec![cut, garbled, stalled]).await;
    let seen = Seen::default();
    let mut o = options(&url, Style::OpenAi);
    o.retries = 2; // a failure after text arrived is never retried
    let c = Client::new(o).unwrap();
    let input = || RunInput { stream: Some(seen.to()), ..RunInput::prompt("x") };
    assert_eq!(c.run_input(input()).await.unwrap_err().kind(), ErrorKind::Network);
    assert_eq!(c.run_input(input()).await.unwrap_err().kind(), ErrorKind::Protocol);
    let mut o = options(&url, Style::OpenAi);
    o.timeout_ms = Some(300);
    let c = Client::new(o).unwrap();
    let started = Instant::now();
    assert_eq!(c.run_input(input()).await.unwrap_err().kind(), ErrorKind::Timeout);
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(seen.kinds(), ["text", "text"], "the deltas before each failure still reached the host");
}

/// The bodies of streamed runs in both styles, a tool exchange included. With
/// `TN_STREAMED_BODIES` set to a folder, each style's are written there as a scenario file, for
/// `tests/spec-check` to validate against the SDKs' streaming request types (`make spec-check`).
#[tokio::test]
async fn streamed_request_bodies_ask_for_a_stream() {
    let anthropic_call = vec![
        data(
            json!({"type": "message_start", "message": {"id": "m1", "role": "assistant", "usage": {"input_tokens": 4}}}),
        ),
        data(
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t1", "name": "add", "input": {}}}),
        ),
        data(
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"a\": 1}"}}),
        ),
        data(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 2}})),
    ];
    let anthropic_text = vec![
        data(
            json!({"type": "message_start", "message": {"id": "m2", "role": "assistant", "usage": {"input_tokens": 9}}}),
        ),
        data(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
        data(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "one"}})),
        data(json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}})),
    ];
    for (style, answers) in [
        (Style::OpenAi, vec![openai_call("c1", "add"), openai_text(&["one"], 0)]),
        (Style::Anthropic, vec![anthropic_call, anthropic_text]),
    ] {
        let (url, bodies) = sse_server(answers).await;
        let c = Client::new(options(&url, style)).unwrap();
        let tk = toolkit();
        let seen = Seen::default();
        let r =
            c.run_input(RunInput { stream: Some(seen.to()), ..RunInput::prompt("add").toolkit(&tk) }).await.unwrap();
        assert_eq!((r.status, r.text.as_str()), (RunStatus::Done, "one"), "{style:?}");
        let bodies = bodies.lock().unwrap().clone();
        assert_eq!(bodies.len(), 2);
        for b in &bodies {
            assert_eq!(b["stream"], true, "{b}");
            if style == Style::OpenAi {
                assert_eq!(b["stream_options"], json!({"include_usage": true}), "{b}");
            }
        }
        if let Some(dir) = std::env::var_os("TN_STREAMED_BODIES") {
            let name = if style == Style::OpenAi { "openai" } else { "anthropic" };
            let requests: Vec<Value> = bodies.into_iter().map(|body| json!({"body": body})).collect();
            let scenario = json!({"style": name, "steps": [{"expect": {"requests": requests}}]});
            std::fs::create_dir_all(&dir).unwrap();
            let path = std::path::Path::new(&dir).join(format!("{name}-streamed.json"));
            std::fs::write(path, serde_json::to_vec_pretty(&scenario).unwrap()).unwrap();
        }
    }
}
