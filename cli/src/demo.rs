//! `toolnexus demo`: a model that needs no network. It is stateless (its reply is a function
//! of the transcript it is sent), so a demo run that halted in a store resumes in another
//! process too (`toolnexus resume ID --demo ...`). It asks for `deploy`, a tool that takes a
//! moment and is gated behind an approval, then says what the tool reported.

use std::time::Duration;

use bytes::Bytes;
use serde_json::{json, Value};
use toolnexus::scripted::ScriptedReply;
use toolnexus::{HttpRequest, HttpResponse, Tool, ToolResult, Transport};

/// The demo's default prompt.
pub const DEMO_PROMPT: &str = "Ship build 42 to prod.";
/// The base URL a demo client carries (never dialled).
pub const DEMO_BASE_URL: &str = "http://demo.invalid/v1";
/// The demo model's name.
pub const DEMO_MODEL: &str = "toolnexus-demo";
/// How long `deploy` works, so its progress shows.
const DEPLOY_TAKES: Duration = Duration::from_millis(1200);

/// The demo's one tool (gated by the caller).
pub fn deploy_tool() -> Tool {
    let schema = json!({"type": "object", "properties": {"env": {"type": "string"}}, "required": ["env"]});
    Tool::from_fn("deploy", "Deploy the latest build to an environment.", schema, |args, ctx| async move {
        let env = args["env"].as_str().unwrap_or("prod").to_string();
        tokio::select! {
            _ = tokio::time::sleep(DEPLOY_TAKES) => Ok(ToolResult::ok(format!("deployed build 42 to {env}"))),
            _ = ctx.cancel.cancelled() => Ok(ToolResult::error("deploy cancelled")),
        }
    })
}

/// The demo model.
pub struct DemoModel;

impl DemoModel {
    /// The reply to a request body: call `deploy` for a new prompt, sum up after its result.
    fn reply(body: &Value) -> Reply {
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let last = messages.last().cloned().unwrap_or(Value::Null);
        if last["role"] == "tool" {
            let said = last["content"].as_str().unwrap_or_default().to_string();
            let text = if said.starts_with("declined/expired") {
                format!("I did not deploy: the release was not approved ({said}).")
            } else {
                format!("Build 42 is live in prod. The deploy tool said: {said}.")
            };
            return Reply::Text(text);
        }
        let n = messages.iter().filter(|m| m["role"] == "assistant").count() + 1;
        Reply::Call(format!("call_demo_{n}"))
    }
}

enum Reply {
    Text(String),
    Call(String),
}

/// Server-sent events as an OpenAI-style provider streams them.
fn sse(reply: &Reply) -> String {
    let mut chunks: Vec<Value> = Vec::new();
    let finish = match reply {
        Reply::Text(text) => {
            chunks.extend(text.split_inclusive(' ').map(|w| json!({"choices": [{"delta": {"content": w}}]})));
            "stop"
        }
        Reply::Call(id) => {
            chunks.push(json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": id, "type": "function",
                "function": {"name": "deploy", "arguments": "{\"env\":\"prod\"}"}}]}}]}));
            "tool_calls"
        }
    };
    chunks.push(json!({"choices": [{"delta": {}, "finish_reason": finish}]}));
    chunks.push(json!({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}));
    let mut out: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    out.push_str("data: [DONE]\n\n");
    out
}

impl Transport for DemoModel {
    fn post(&self, request: HttpRequest) -> toolnexus::HookFuture<HttpResponse> {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let reply = DemoModel::reply(&body);
        let bytes = if body["stream"] == true {
            sse(&reply).into_bytes()
        } else {
            let r = match &reply {
                Reply::Text(t) => ScriptedReply::openai_text(t),
                Reply::Call(id) => ScriptedReply::openai_calls(&[(id, "deploy", "{\"env\":\"prod\"}")]),
            };
            r.body.to_string().into_bytes()
        };
        Box::pin(std::future::ready(Ok(HttpResponse { status: 200, headers: Vec::new(), body: Bytes::from(bytes) })))
    }
}
