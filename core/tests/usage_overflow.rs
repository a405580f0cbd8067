//! Token counts come from the provider: a count near `u64::MAX` must not overflow the sums
//! (a panic in a debug build, a wrapped total in a release build). Found by fuzz/ (target
//! `reply_openai`). Each count saturates instead.
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::Arc;

use serde_json::json;
use toolnexus::scripted::{ScriptedReply, ScriptedTransport};
use toolnexus::{Client, ClientOptions, Style, Tool, ToolResult, Toolkit, Usage};

async fn run(style: Style, replies: Vec<ScriptedReply>) -> Usage {
    let mut o = ClientOptions::new("http://127.0.0.1:9/v1", style, "m");
    o.api_key = Some("k".into());
    o.transport = Some(Arc::new(ScriptedTransport::new(replies)));
    let echo = Tool::from_sync("echo", "Echo.", json!({"type": "object"}), |_, _| Ok(ToolResult::ok("ok")));
    let tk = Toolkit::new(vec![echo]).unwrap();
    Client::new(o).unwrap().run("go", Some(&tk)).await.unwrap().usage
}

#[tokio::test]
async fn huge_token_counts_saturate() {
    let max = u64::MAX;
    let call = json!({"id": "call_1", "type": "function", "function": {"name": "echo", "arguments": "{}"}});
    let openai = |usage| {
        ScriptedReply::ok(json!({
            "choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [call]}}], "usage": usage}))
    };
    let usage = run(
        Style::OpenAi,
        vec![
            openai(json!({"prompt_tokens": max, "completion_tokens": 1})),
            ScriptedReply::ok(json!({
                "choices": [{"message": {"role": "assistant", "content": "done"}}],
                "usage": {"prompt_tokens": 5, "completion_tokens": max, "total_tokens": max}})),
        ],
    )
    .await;
    assert_eq!(usage, Usage { prompt_tokens: max, completion_tokens: max, total_tokens: max });

    let tool_use = json!({"type": "tool_use", "id": "toolu_1", "name": "echo", "input": {}});
    let usage = run(
        Style::Anthropic,
        vec![
            ScriptedReply::ok(json!({"content": [tool_use], "usage": {"input_tokens": max, "output_tokens": max}})),
            ScriptedReply::ok(json!({"content": [{"type": "text", "text": "done"}], "usage": {"input_tokens": 1}})),
        ],
    )
    .await;
    assert_eq!(usage, Usage { prompt_tokens: max, completion_tokens: max, total_tokens: max });
}
