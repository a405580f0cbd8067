//! In-process models through whole runs: the request the host's model sees, tool calls
//! looping back, a suspension halting and resuming, and a model failure ending the run once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use toolnexus::{
    answer_output, pending, Client, ClientOptions, Error, ErrorKind, HookFuture, InProcessModel, PendingSpec,
    RunStatus, Tool, ToolResult, Toolkit,
};

/// Answers from a script, recording what it was asked.
struct Scripted {
    answers: Mutex<Vec<Value>>,
    seen: Mutex<Vec<Value>>,
}

impl Scripted {
    fn new(answers: Vec<Value>) -> Arc<Scripted> {
        Arc::new(Scripted { answers: Mutex::new(answers), seen: Mutex::new(Vec::new()) })
    }
}

impl InProcessModel for Scripted {
    fn generate(&self, request: Value) -> HookFuture<Value> {
        self.seen.lock().unwrap().push(request);
        let next = self.answers.lock().unwrap().remove(0);
        Box::pin(async move { Ok(next) })
    }
}

fn toolkit() -> Toolkit {
    let add = Tool::from_sync("add", "Add.", json!({"type": "object"}), |args, _| {
        Ok(ToolResult::ok((args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0)).to_string()))
    });
    let ask = Tool::from_sync("ask", "Ask.", json!({"type": "object"}), |_, ctx| {
        Ok(match &ctx.answer {
            Some(a) => ToolResult::ok(format!("told {}", a.data.clone().unwrap_or_default()["output"])),
            None => pending(PendingSpec { id: Some("q-1".into()), kind: "question".into(), ..Default::default() }),
        })
    });
    Toolkit::new(vec![add, ask]).unwrap()
}

#[tokio::test]
async fn a_run_loops_through_tools_and_halts_and_resumes_on_a_suspension() {
    let model = Scripted::new(vec![
        json!({"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}], "usage": {"prompt_tokens": 4, "completion_tokens": 1}}),
        json!({"toolCalls": [{"id": "q", "name": "ask", "arguments": "{}"}]}),
        json!({"content": "all done"}),
    ]);
    let mut o = ClientOptions::in_process("local", model.clone());
    o.system_prompt = Some("Be terse.".into());
    let c = Client::new(o).unwrap();
    let tk = toolkit();
    let halted = c.run("2+3, then ask", Some(&tk)).await.unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    assert_eq!(halted.tool_calls[0].output, "5");
    assert_eq!(halted.usage.total_tokens, 5);
    let req = halted.pending.clone().unwrap();
    // Resumed from plain JSON, as another process would.
    let messages: Vec<Value> = serde_json::from_str(&serde_json::to_string(&halted.messages).unwrap()).unwrap();
    let done = c.run_with_answer(Some(&tk), messages, &req, &answer_output(&req.id, "blue")).await.unwrap();
    assert_eq!((done.status, done.text.as_str()), (RunStatus::Done, "all done"));
    assert_eq!(done.tool_calls[0].output, "told \"blue\"");
    let seen = model.seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[0]["model"], "local");
    assert_eq!(seen[0]["messages"][0], json!({"role": "system", "content": "Be terse."}));
    assert_eq!(seen[0]["tools"][0]["function"]["name"], "add");
    assert_eq!(seen[0]["body"]["model"], "local");
    let last = seen[2]["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!((last["role"].as_str(), last["tool_call_id"].as_str()), (Some("tool"), Some("q")));
}

struct Broken(AtomicUsize);

impl InProcessModel for Broken {
    fn generate(&self, _: Value) -> HookFuture<Value> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Err(Error::host("my in-process model blew up".into())) })
    }
}

#[tokio::test]
async fn a_failing_model_ends_the_run_at_once_even_with_retries() {
    let model = Arc::new(Broken(AtomicUsize::new(0)));
    let mut o = ClientOptions::in_process("m", model.clone());
    o.retries = 3;
    let e = Client::new(o).unwrap().run("hi", None).await.unwrap_err();
    // The word "in-process" is nobody's secret: it is shown as written.
    assert_eq!((e.kind(), e.message()), (ErrorKind::Host, "my in-process model blew up"));
    assert_eq!(model.0.load(Ordering::SeqCst), 1);
    let streamed = Client::new(ClientOptions::in_process("m", Scripted::new(vec![json!({"content": "x"})]))).unwrap();
    let sink = toolnexus::StreamTo(Arc::new(|_: toolnexus::StreamEvent| {}));
    let e = streamed
        .run_input(toolnexus::RunInput { stream: Some(sink), ..toolnexus::RunInput::prompt("hi") })
        .await
        .unwrap_err();
    assert!(e.kind() == ErrorKind::Config && e.message().contains("does not support streaming"), "{}", e.message());
    let bad = Scripted::new(vec![json!("not a message")]);
    let e = Client::new(ClientOptions::in_process("m", bad)).unwrap().run("hi", None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}
