//! Translation (SPEC §11) end to end against a loopback provider: what each style is sent,
//! what comes back, and what translate never does (run a tool, loop, keep state).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use support::mock::{Mock, MockReply};
use toolnexus::metrics::{MetricEvent, OnMetric};
use toolnexus::{
    BeforeLlmEvent, Client, ClientOptions, ErrorKind, HookFuture, Hooks, LlmOverride, Style, Tool, ToolResult, Toolkit,
    TranslateRequest,
};

fn client(mock: &Mock, style: Style, base: &str) -> ClientOptions {
    let mut o = ClientOptions::new(mock.url(base), style, "stub");
    o.api_key = Some("k".into());
    o.retry_base_ms = 1;
    o
}

fn weather_tools() -> Vec<Value> {
    vec![json!({"type": "function", "function": {"name": "get_weather", "description": "Weather.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}})]
}

fn request(messages: Value) -> TranslateRequest {
    TranslateRequest::from_json(&json!({"messages": messages})).unwrap()
}

#[tokio::test]
async fn anthropic_tool_use_comes_back_as_an_openai_call_and_tools_go_out_native() {
    let mock = Mock::start().await;
    mock.script(vec![MockReply::json(json!({
        "content": [{"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Chennai"}},
                    {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "Madurai"}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5}
    }))]);
    let mut o = client(&mock, Style::Anthropic, "");
    o.system_prompt = Some("Be brief.".into());
    let mut req = request(json!([{"role": "user", "content": "weather?"}]));
    req.tools = weather_tools();
    req.tool_choice = Some(json!({"type": "function", "function": {"name": "get_weather"}}));
    let r = Client::new(o).unwrap().translate(req, None, None).await.unwrap();
    assert_eq!((r.text.as_str(), r.finish_reason.as_str()), ("Checking.", "tool_calls"));
    let calls: Vec<(&str, &str)> = r.tool_calls.iter().map(|c| (c.id.as_str(), c.arguments.as_str())).collect();
    assert_eq!(calls, [("toolu_1", "{\"city\":\"Chennai\"}"), ("toolu_2", "{\"city\":\"Madurai\"}")]);
    assert_eq!((r.usage.prompt_tokens, r.usage.total_tokens), (10, 15));
    let seen = mock.seen();
    assert_eq!(seen.len(), 1, "one call, no loop");
    assert_eq!(seen[0].path, "/v1/messages");
    let b = &seen[0].body;
    assert_eq!(b["system"], "Be brief.");
    assert_eq!(b["max_tokens"], 4096);
    assert_eq!(b["tools"][0]["input_schema"]["required"], json!(["city"]));
    assert!(b["tools"][0].get("parameters").is_none());
    assert_eq!(b["tool_choice"], json!({"type": "tool", "name": "get_weather"}));
    assert_eq!(r.raw["stop_reason"], "tool_use");
}

#[tokio::test]
async fn a_tool_exchange_reaches_anthropic_with_its_structure() {
    let mock = Mock::start().await;
    mock.script(vec![MockReply::json(
        json!({"content": [{"type": "text", "text": "Sunny."}], "stop_reason": "end_turn"}),
    )]);
    let msgs = json!([
        {"role": "system", "content": "From the messages."},
        {"role": "user", "content": "weather in two cities?"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"X\"}"}},
            {"id": "b", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Y"}}}]},
        {"role": "tool", "tool_call_id": "a", "content": "sun"},
        {"role": "tool", "tool_call_id": "b", "content": "rain"}
    ]);
    let r = Client::new(client(&mock, Style::Anthropic, "/v1"))
        .unwrap()
        .translate(request(msgs), None, None)
        .await
        .unwrap();
    assert_eq!((r.text.as_str(), r.finish_reason.as_str(), r.tool_calls.len()), ("Sunny.", "stop", 0));
    let seen = mock.seen();
    assert_eq!(seen[0].path, "/v1/messages");
    let b = &seen[0].body;
    assert_eq!(b["system"], "From the messages.");
    let m = b["messages"].as_array().unwrap();
    assert_eq!(m.len(), 3);
    assert_eq!(m[1]["content"][1]["input"], json!({"city": "Y"}));
    assert_eq!(m[2]["content"].as_array().unwrap().len(), 2, "both results in one user turn");
    assert_eq!(m[2]["content"][1]["tool_use_id"], "b");
}

#[tokio::test]
async fn openai_is_a_passthrough_with_its_own_endpoint_rule() {
    let mock = Mock::start().await;
    let reply = json!({"choices": [{"message": {"content": "", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{ \"city\" : \"Madurai\" }"}}]},
        "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}});
    mock.script(vec![MockReply::json(reply.clone()), MockReply::json(reply)]);
    let mut o = client(&mock, Style::OpenAi, "");
    o.system_prompt = Some("Own.".into());
    o.request_params = json!({"temperature": 0}).as_object().cloned();
    let c = Client::new(o).unwrap();
    let mut req = request(json!([{"role": "user", "content": "weather?"}]));
    req.tools = weather_tools();
    req.tool_choice = Some(json!("required"));
    req.max_tokens = Some(50);
    let r = c.translate(req, None, None).await.unwrap();
    assert_eq!(r.tool_calls[0].arguments, "{ \"city\" : \"Madurai\" }", "byte for byte");
    assert_eq!((r.finish_reason.as_str(), r.usage.total_tokens), ("tool_calls", 7));
    let seen = mock.seen();
    assert_eq!(seen[0].path, "/v1/chat/completions", "a base without /v1 gets it");
    let b = &seen[0].body;
    assert_eq!(b["messages"][0], json!({"role": "system", "content": "Own."}));
    assert_eq!(b["tools"], json!(weather_tools()));
    assert_eq!(
        (b["tool_choice"].as_str(), b["max_tokens"].as_u64(), b["temperature"].as_u64()),
        (Some("required"), Some(50), Some(0))
    );
    // A system message of the caller's own is not doubled.
    let req = request(json!([{"role": "developer", "content": "Mine."}, {"role": "user", "content": "x"}]));
    c.translate(req, None, None).await.unwrap();
    let b = &mock.seen()[1].body;
    assert_eq!(b["messages"].as_array().unwrap().len(), 2);
    assert!(b.get("tools").is_none() && b.get("tool_choice").is_none() && b.get("max_tokens").is_none());
}

#[derive(Default)]
struct Counting {
    llm: AtomicUsize,
    tool: AtomicUsize,
}

impl Hooks for Counting {
    fn before_llm(&self, ev: BeforeLlmEvent) -> HookFuture<Option<LlmOverride>> {
        self.llm.fetch_add(1, Ordering::SeqCst);
        assert_eq!(ev.turn, 0);
        Box::pin(async { Ok(Some(LlmOverride { model: Some("other".into()), ..Default::default() })) })
    }

    fn before_tool(&self, _: toolnexus::BeforeToolEvent) -> HookFuture<Option<toolnexus::ToolOverride>> {
        self.tool.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok(None) })
    }
}

#[tokio::test]
async fn a_toolkit_is_declared_never_run_and_hooks_fire_once() {
    let mock = Mock::start().await;
    mock.script(vec![MockReply::json(json!({
        "content": [{"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 1}}], "stop_reason": "tool_use"
    }))]);
    let ran = Arc::new(AtomicUsize::new(0));
    let r2 = ran.clone();
    let add = Tool::from_sync("add", "Add.", json!({"type": "object"}), move |_, _| {
        r2.fetch_add(1, Ordering::SeqCst);
        Ok(ToolResult::ok("2"))
    });
    let tk = Toolkit::new(vec![add]).unwrap();
    let hooks = Arc::new(Counting::default());
    let events = Arc::new(Mutex::new(Vec::new()));
    let ev2 = events.clone();
    let mut o = client(&mock, Style::Anthropic, "");
    o.hooks = Some(hooks.clone());
    let sink: Arc<dyn OnMetric> = Arc::new(move |e: &MetricEvent| ev2.lock().unwrap().push(e.to_json()));
    o.on_metric = Some(sink);
    let mut req = request(json!([{"role": "user", "content": "go"}]));
    req.tools = weather_tools();
    let r = Client::new(o).unwrap().translate(req, Some(&tk), None).await.unwrap();
    assert_eq!((r.tool_calls[0].name.as_str(), r.model.as_str()), ("add", "other"));
    assert_eq!(ran.load(Ordering::SeqCst), 0, "translate runs no tool");
    assert_eq!((hooks.llm.load(Ordering::SeqCst), hooks.tool.load(Ordering::SeqCst)), (1, 0));
    let b = &mock.seen()[0].body;
    let names: Vec<&str> = b["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["add", "get_weather"], "the toolkit's declarations first");
    assert_eq!(b["model"], "other");
    let ev = events.lock().unwrap();
    assert_eq!(ev.len(), 1, "one llm event, no run event");
    assert_eq!((ev[0]["event"].as_str(), ev[0]["model"].as_str()), (Some("llm"), Some("other")));
}

#[tokio::test]
async fn bad_requests_and_failures_are_clear_errors() {
    for (v, needle) in [
        (json!({}), "\"messages\" is required"),
        (json!({"messages": {}}), "must be an array"),
        (json!({"messages": [], "tool": []}), "unknown translate request key \"tool\""),
        (json!({"messages": [], "maxTokens": -1}), "\"maxTokens\""),
    ] {
        let e = TranslateRequest::from_json(&v).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().contains(needle), "{}", e.message());
    }
    let mock = Mock::start().await;
    let both = json!({"type": "image", "mimeType": "image/png", "data": "AA==", "url": "https://x.test/a.png"});
    let audio = json!({"type": "audio", "mimeType": "audio/mpeg", "data": "AA=="});
    for (style, content, kind) in [
        (Style::OpenAi, both.clone(), ErrorKind::ContentPart),
        (Style::Anthropic, both, ErrorKind::ContentPart),
        // A user's own part the provider has no block for fails as in a run, before any call.
        (Style::Anthropic, audio, ErrorKind::UnsupportedPart),
    ] {
        let msgs = json!([{"role": "user", "content": [content]}]);
        let e =
            Client::new(client(&mock, style, "/v1")).unwrap().translate(request(msgs), None, None).await.unwrap_err();
        assert_eq!(e.kind(), kind, "{}", e.message());
    }
    assert!(mock.seen().is_empty(), "nothing was sent");
    mock.script(vec![MockReply {
        status: 400,
        headers: vec![],
        body: json!({"error": {"message": "bad k"}}),
        delay: Default::default(),
    }]);
    let e = Client::new(client(&mock, Style::OpenAi, "/v1"))
        .unwrap()
        .translate(request(json!([])), None, None)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Http);
}

const PNG: &str = "iVBORw0KGgo=";

fn png() -> Value {
    json!({"type": "image", "mimeType": "image/png", "data": PNG})
}

/// A user turn with an image, then a tool exchange whose result carries one.
fn messages_with_parts() -> Value {
    json!([
        {"role": "user", "content": [{"type": "text", "text": "what is this"}, png()]},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "shot", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "shot", "content": [{"type": "text", "text": "taken"}, png()]},
    ])
}

#[tokio::test]
async fn parts_go_out_as_each_styles_blocks_and_events_describe_them() {
    let mock = Mock::start().await;
    let reply = |style| match style {
        Style::OpenAi => json!({"choices": [{"message": {"content": "a chart"}, "finish_reason": "stop"}]}),
        Style::Anthropic => json!({"content": [{"type": "text", "text": "a chart"}], "stop_reason": "end_turn"}),
    };
    for style in [Style::OpenAi, Style::Anthropic] {
        mock.script(vec![MockReply::json(reply(style))]);
        let events = Arc::new(Mutex::new(Vec::new()));
        let ev2 = events.clone();
        let mut o = client(&mock, style, "/v1");
        let sink: Arc<dyn OnMetric> = Arc::new(move |e: &MetricEvent| ev2.lock().unwrap().push(e.to_json()));
        o.on_metric = Some(sink);
        let r = Client::new(o).unwrap().translate(request(messages_with_parts()), None, None).await.unwrap();
        assert_eq!(r.text, "a chart");
        let body = mock.seen().pop().unwrap().body;
        let data_url = format!("data:image/png;base64,{PNG}");
        match style {
            Style::OpenAi => {
                let m = body["messages"].as_array().unwrap();
                assert_eq!(m[0]["content"][1], json!({"type": "image_url", "image_url": {"url": data_url}}));
                assert_eq!(m[2]["content"], "taken", "a tool message carries text only");
                assert_eq!(m[3]["role"], "user", "the tool's image follows in a user message: {}", m[3]);
                assert_eq!(m[3]["content"][0]["text"], "Output of tool shot (c1):");
                assert_eq!(m[3]["content"][1]["image_url"]["url"], data_url);
            }
            Style::Anthropic => {
                let m = body["messages"].as_array().unwrap();
                let block =
                    json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}});
                assert_eq!(m[0]["content"], json!([{"type": "text", "text": "what is this"}, block]));
                assert_eq!(m[2]["content"][0]["content"], json!([{"type": "text", "text": "taken"}, block]));
            }
        }
        let events = events.lock().unwrap();
        let want = json!([{"type": "image", "mimeType": "image/png", "bytes": 8}, {"type": "image", "mimeType": "image/png", "bytes": 8}]);
        assert_eq!(events[0]["parts"], want, "{style:?}");
        assert!(!serde_json::to_string(&*events).unwrap().contains(PNG), "an event never carries a part's data");
    }
}

#[tokio::test]
async fn a_tools_part_the_provider_cannot_take_is_its_placeholder_said_once() {
    let mock = Mock::start().await;
    let said = Arc::new(Mutex::new(Vec::new()));
    let said2 = said.clone();
    let mut o = client(&mock, Style::Anthropic, "");
    o.on_warning = Some(Arc::new(move |w: &toolnexus::Warning| said2.lock().unwrap().push(w.code)));
    let c = Client::new(o).unwrap();
    let msgs = json!([
        {"role": "user", "content": "play it"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "rec", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "ok"},
            {"type": "audio", "mimeType": "audio/mpeg", "data": "AA=="}]},
    ]);
    for _ in 0..2 {
        mock.script(vec![MockReply::json(
            json!({"content": [{"type": "text", "text": "x"}], "stop_reason": "end_turn"}),
        )]);
        c.translate(request(msgs.clone()), None, None).await.unwrap();
    }
    let body = mock.seen().pop().unwrap().body;
    let result = &body["messages"][2]["content"][0]["content"];
    assert_eq!(result[1]["type"], "text", "{result}");
    assert!(result[1]["text"].as_str().unwrap().contains("audio"), "{result}");
    assert_eq!(*said.lock().unwrap(), ["content_part_placeholder"], "said once per client");
}
