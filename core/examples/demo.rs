//! The toolnexus demo: an agent run against the built-in scripted model, no network.
//!
//! 1. Inline: the `deploy` tool suspends for approval, a (simulated) human approves through
//!    `wait_for`, the tool re-runs with the answer, and the run finishes.
//! 2. Durable: the same request with no `wait_for` halts with status `pending`; the transcript
//!    and the Request are stored as JSON, and a fresh client resumes them with the answer.
//!
//! Run it with `make demo` (or `cargo run -p toolnexus --example demo`).

use std::sync::Arc;

use serde_json::{json, Value};
use toolnexus::scripted::{ScriptedReply, ScriptedTransport};
use toolnexus::{
    answer_output, answer_output_of, pending, Answer, Client, ClientOptions, PendingSpec, Request, RunResult, Style,
    Tool, ToolResult, Toolkit,
};

fn deploy_tool() -> Tool {
    let schema = json!({"type": "object", "properties": {"env": {"type": "string"}}, "required": ["env"]});
    Tool::from_sync("deploy", "Deploy the latest build to an environment.", schema, |args, ctx| {
        let env = args["env"].as_str().unwrap_or("prod").to_string();
        match &ctx.answer {
            // The re-run: the approval came back.
            Some(answer) => {
                let who = answer_output_of(answer).unwrap_or("someone");
                Ok(ToolResult::ok(format!("deployed build 42 to {env} (approved by {who})")))
            }
            // The first run: ask before doing anything irreversible. The provider's call id
            // makes the request id stable across the first run and the re-run.
            None => Ok(pending(PendingSpec {
                id: Some(format!("approve-{}", ctx.call_id)),
                kind: "approval".into(),
                prompt: format!("OK to deploy build 42 to {env}?"),
                ..PendingSpec::default()
            })),
        }
    })
}

/// The scripted model: asks for `deploy`, then reports what the tool said.
fn model() -> ScriptedTransport {
    ScriptedTransport::new(vec![
        ScriptedReply::openai_calls(&[("call_1", "deploy", r#"{"env":"prod"}"#)]),
        ScriptedReply::openai_text("Build 42 is live in prod."),
    ])
}

fn client(model: &ScriptedTransport, wait_for: Option<Arc<dyn toolnexus::WaitFor>>) -> toolnexus::Result<Client> {
    let mut opts = ClientOptions::new("http://scripted.invalid/v1", Style::OpenAi, "scripted-model");
    opts.api_key = Some("not-needed".into());
    opts.system_prompt = Some("You are a careful release assistant.".into());
    opts.transport = Some(Arc::new(model.clone()));
    opts.wait_for = wait_for;
    Client::new(opts)
}

fn show(label: &str, r: &RunResult) {
    println!("  {label}: status={} turns={} text={:?}", r.status.as_str(), r.turns, r.text);
    for c in &r.tool_calls {
        println!("    tool {} -> {:?}{}", c.name, c.output, if c.is_error { " (error)" } else { "" });
    }
}

async fn inline() -> toolnexus::Result<()> {
    println!("1. inline: wait_for resolves the approval while the run waits");
    let toolkit = Toolkit::new(vec![deploy_tool()])?;
    let approve = |req: Request| async move {
        println!("  human sees: [{}] {}  -> approves", req.kind, req.prompt);
        Ok(Some(answer_output(&req.id, "alice")))
    };
    let r = client(&model(), Some(Arc::new(approve)))?.run("Ship build 42 to prod.", Some(&toolkit)).await?;
    show("finished", &r);
    Ok(())
}

async fn durable() -> toolnexus::Result<()> {
    println!("2. durable: no wait_for, the run halts and resumes later from stored JSON");
    let toolkit = Toolkit::new(vec![deploy_tool()])?;
    let model = model();
    let halted = client(&model, None)?.run("Ship build 42 to prod.", Some(&toolkit)).await?;
    show("halted", &halted);

    // What a durable host persists: plain JSON, readable by any process or language.
    let stored = json!({"messages": halted.messages, "pending": halted.pending});
    let text = serde_json::to_string(&stored).unwrap_or_default();
    println!("  stored {} bytes of JSON; pending request: {}", text.len(), stored["pending"]);

    // Later, perhaps in another process: read it back and resume with the human's answer.
    let back: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let pending = Request::from_json(&back["pending"])?;
    let messages = back["messages"].as_array().cloned().unwrap_or_default();
    let answer = Answer::from_json(&json!({"id": pending.id, "ok": true, "data": {"output": "bob"}}))?;
    let done = client(&model, None)?.run_with_answer(Some(&toolkit), messages, &pending, &answer).await?;
    show("resumed", &done);
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    println!("toolnexus {} demo (scripted model, no network)\n", toolnexus::VERSION);
    if let Err(e) = async {
        inline().await?;
        println!();
        durable().await
    }
    .await
    {
        eprintln!("demo failed: {e}");
        std::process::exit(1);
    }
}
