//! Content parts through whole runs: a prompt of parts, tools returning parts (relocated for
//! OpenAI, native for Anthropic), the size limit and unsupported parts by provenance, warnings
//! said once, and the canonical transcript the host gets back.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use toolnexus::scripted::{ScriptedReply, ScriptedTransport};
use toolnexus::{
    Client, ClientOptions, ErrorKind, RunInput, Style, Tool, ToolResult, Toolkit, UnsupportedPart, Warning,
};

const G: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAGUlEQVR42mP4z8AARwyrkBAVJZClkAEVJQBm3VpRJDtqMQAAAABJRU5ErkJggg==";

fn image() -> Value {
    json!({"type": "image", "mimeType": "image/png", "data": G})
}

fn audio() -> Value {
    json!({"type": "audio", "mimeType": "audio/mpeg", "data": G})
}

/// A tool returning `parts` beside its text.
fn shot(name: &str, part: Value) -> Tool {
    let out = format!("{name} output");
    Tool::from_sync(name, "", json!({"type": "object"}), move |_, _| {
        Ok(ToolResult { parts: Some(vec![part.clone()]), ..ToolResult::ok(out.clone()) })
    })
}

struct Setup {
    client: Client,
    transport: ScriptedTransport,
    warnings: Arc<Mutex<Vec<Warning>>>,
}

fn setup(style: Style, replies: Vec<ScriptedReply>, edit: impl FnOnce(&mut ClientOptions)) -> Setup {
    let transport = ScriptedTransport::new(replies);
    let mut o = ClientOptions::new("http://model.invalid/v1", style, "m");
    o.api_key = Some("k".into());
    o.transport = Some(Arc::new(transport.clone()));
    let warnings = Arc::new(Mutex::new(Vec::new()));
    let w = warnings.clone();
    o.on_warning = Some(Arc::new(move |x: &Warning| w.lock().unwrap().push(x.clone())));
    edit(&mut o);
    Setup { client: Client::new(o).unwrap(), transport, warnings }
}

fn has_data(v: &Value) -> bool {
    v.to_string().contains(G)
}

#[tokio::test]
async fn openai_sends_tool_images_in_one_user_message_after_the_tool_messages() {
    let s = setup(
        Style::OpenAi,
        vec![
            ScriptedReply::openai_calls(&[("c1", "shotA", "{}"), ("c2", "shotB", "{}")]),
            ScriptedReply::openai_text("seen"),
        ],
        |_| {},
    );
    let tk = Toolkit::new(vec![shot("shotA", image()), shot("shotB", image())]).unwrap();
    let r = s.client.run("look", Some(&tk)).await.unwrap();
    let sent = &s.transport.requests()[1].body["messages"];
    let n = sent.as_array().unwrap().len();
    assert_eq!(sent[n - 3], json!({"role": "tool", "tool_call_id": "c1", "content": "shotA output"}));
    let url = json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{G}")}});
    assert_eq!(
        sent[n - 1],
        json!({"role": "user", "content": [
            {"type": "text", "text": "Output of tool shotA (c1):"}, url,
            {"type": "text", "text": "Output of tool shotB (c2):"}, url]})
    );
    // The host's transcript is canonical: the parts ride the tool messages; no synthetic message.
    let tool_msg = r.messages.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(tool_msg["parts"], json!([image()]));
    assert_eq!(tool_msg["name"], "shotA");
    assert!(!r.messages.iter().any(|m| m["role"] == "user" && m["content"].is_array()));
}

#[tokio::test]
async fn anthropic_sends_tool_parts_inside_the_tool_result_and_audio_as_a_placeholder() {
    let s = setup(
        Style::Anthropic,
        vec![
            ScriptedReply::anthropic_calls(&[("u1", "shotA", json!({})), ("u2", "mic", json!({}))]),
            ScriptedReply::anthropic_text("ok"),
        ],
        |_| {},
    );
    let tk = Toolkit::new(vec![shot("shotA", image()), shot("mic", audio())]).unwrap();
    let r = s.client.run("look", Some(&tk)).await.unwrap();
    assert_eq!(r.text, "ok", "a tool's unsupported part does not fail the run");
    let sent = &s.transport.requests()[1].body["messages"];
    let results = &sent[sent.as_array().unwrap().len() - 1]["content"];
    assert_eq!(
        results[0]["content"],
        json!([{"type": "text", "text": "shotA output"},
               {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": G}}])
    );
    assert_eq!(
        results[1]["content"][1],
        json!({"type": "text", "text": "[unsupported audio part (audio/mpeg, 82 bytes)]"})
    );
    let said = s.warnings.lock().unwrap().clone();
    assert_eq!(said.len(), 1);
    assert_eq!(
        said[0].message,
        "[toolnexus] no \"anthropic\" block shape for a audio part (audio/mpeg) — sent as a text placeholder"
    );
}

#[tokio::test]
async fn a_prompt_of_parts_keeps_its_order_and_its_canonical_form() {
    let s = setup(Style::OpenAi, vec![ScriptedReply::openai_text("a square")], |_| {});
    let input = RunInput {
        prompt_parts: Some(vec![json!("before"), image(), json!({"type": "text", "text": "after"})]),
        ..RunInput::default()
    };
    let r = s.client.run_input(input).await.unwrap();
    let sent = &s.transport.requests()[0].body["messages"][0]["content"];
    let kinds: Vec<&str> = sent.as_array().unwrap().iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["text", "image_url", "text"]);
    assert_eq!(r.messages[0]["content"][1], image());
    let bad =
        RunInput { prompt_parts: Some(vec![json!({"type": "image_url", "image_url": {}})]), ..RunInput::default() };
    let e = s.client.run_input(bad).await.unwrap_err();
    assert_eq!((e.kind(), e.message()), (ErrorKind::ContentPart, "unknown content part type \"image_url\""));
}

#[tokio::test]
async fn a_prompts_own_part_that_cannot_be_sent_fails_before_any_request() {
    let s = setup(Style::Anthropic, vec![ScriptedReply::anthropic_text("never")], |_| {});
    let e =
        s.client.run_input(RunInput { prompt_parts: Some(vec![audio()]), ..RunInput::default() }).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnsupportedPart);
    let big = setup(Style::OpenAi, vec![ScriptedReply::openai_text("never")], |o| o.max_part_bytes = Some(10));
    let e =
        big.client.run_input(RunInput { prompt_parts: Some(vec![image()]), ..RunInput::default() }).await.unwrap_err();
    assert_eq!(e.message(), "content part is 82 decoded bytes, over the maxPartBytes limit of 10");
    assert!(s.transport.requests().is_empty() && big.transport.requests().is_empty());
    assert!(!has_data(&json!(e.message())), "an error never carries a part's data");
}

#[tokio::test]
async fn a_tools_oversized_parts_are_placeholders_said_once() {
    let s = setup(
        Style::OpenAi,
        vec![ScriptedReply::openai_calls(&[("c1", "a", "{}"), ("c2", "b", "{}")]), ScriptedReply::openai_text("ok")],
        |o| o.max_part_bytes = Some(10),
    );
    let tk = Toolkit::new(vec![shot("a", image()), shot("b", image())]).unwrap();
    s.client.run("go", Some(&tk)).await.unwrap();
    let sent = &s.transport.requests()[1].body;
    assert!(!has_data(sent), "no oversized bytes on the wire");
    assert!(sent.to_string().contains("[unsupported image part (image/png, 82 bytes)]"));
    let said = s.warnings.lock().unwrap().clone();
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].message.contains("over the maxPartBytes limit of 10"));
}

#[tokio::test]
async fn on_unsupported_part_error_makes_a_tools_part_fail_the_run() {
    let s = setup(
        Style::Anthropic,
        vec![ScriptedReply::anthropic_calls(&[("u1", "mic", json!({}))]), ScriptedReply::anthropic_text("never")],
        |o| o.on_unsupported_part = Some(UnsupportedPart::Error),
    );
    let tk = Toolkit::new(vec![shot("mic", audio())]).unwrap();
    let e = s.client.run("go", Some(&tk)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnsupportedPart);
}

#[tokio::test]
async fn an_invalid_part_from_a_tool_is_its_error_result() {
    let s = setup(
        Style::OpenAi,
        vec![ScriptedReply::openai_calls(&[("c1", "bad", "{}")]), ScriptedReply::openai_text("ok")],
        |_| {},
    );
    let tk = Toolkit::new(vec![shot("bad", json!({"type": "image", "mimeType": "image/png"}))]).unwrap();
    let r = s.client.run("go", Some(&tk)).await.unwrap();
    assert!(r.tool_calls[0].is_error);
    assert_eq!(
        r.tool_calls[0].output,
        "bad returned an invalid content part: a image part carries neither data nor url — exactly one is required"
    );
}

#[tokio::test]
async fn llm_events_describe_each_calls_parts_without_their_data() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let ev = events.clone();
    let s = setup(
        Style::Anthropic,
        vec![ScriptedReply::anthropic_calls(&[("c1", "shotA", json!({}))]), ScriptedReply::anthropic_text("ok")],
        |o| {
            let sink: Arc<dyn toolnexus::metrics::OnMetric> =
                Arc::new(move |e: &toolnexus::metrics::MetricEvent| ev.lock().unwrap().push(e.to_json()));
            o.on_metric = Some(sink);
        },
    );
    let tk = Toolkit::new(vec![shot("shotA", audio())]).unwrap();
    let input =
        RunInput { prompt_parts: Some(vec![json!("look"), image()]), toolkit: Some(&tk), ..RunInput::default() };
    s.client.run_input(input).await.unwrap();
    let events = events.lock().unwrap();
    let llm: Vec<&Value> = events.iter().filter(|e| e["event"] == "llm").collect();
    let img = json!({"type": "image", "mimeType": "image/png", "bytes": 82});
    let aud = json!({"type": "audio", "mimeType": "audio/mpeg", "bytes": 82});
    assert_eq!(llm[0]["parts"], json!([img]));
    assert_eq!(llm[1]["parts"], json!([img, aud]), "the tool's part is in the second call's transcript");
    assert!(!has_data(&json!(*events)));
    assert!(events.iter().filter(|e| e["event"] != "llm").all(|e| e.get("parts").is_none()));
}

/// The JS port's constructors over the engine's: the type follows the MIME type, the source
/// says what a string is, a `Blob`'s declared type comes before its name's extension.
#[test]
fn parts_built_by_mime_take_their_type_from_it() {
    use toolnexus::content::{
        build_part_by_mime, kind_for_mime, media_tokens, validate_within, PartOptions, PartSource,
    };
    let opts = |v: Value| PartOptions::from_json(&v).unwrap();
    let msg = |r: toolnexus::Result<Value>| r.unwrap_err().message().to_string();
    assert_eq!(
        (kind_for_mime("image/svg+xml"), kind_for_mime("audio/ogg"), kind_for_mime("text/csv")),
        ("image", "audio", "file")
    );

    let dir = std::env::temp_dir().join(format!("tn-parts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join("shot.png");
    std::fs::write(&png, b"foo").unwrap();
    let p = build_part_by_mime(PartSource::Path(png.display().to_string()), &PartOptions::default()).unwrap();
    assert_eq!(p, json!({"type": "image", "mimeType": "image/png", "data": "Zm9v", "name": "shot.png"}));
    // An explicit MIME type changes the type too, and the name is the caller's.
    let p = build_part_by_mime(
        PartSource::Path(png.display().to_string()),
        &opts(json!({"mimeType": "application/pdf", "name": "r.pdf"})),
    );
    assert_eq!(p.unwrap(), json!({"type": "file", "mimeType": "application/pdf", "data": "Zm9v", "name": "r.pdf"}));
    std::fs::remove_dir_all(&dir).unwrap();

    let b = build_part_by_mime(PartSource::Bytes(b"foo".to_vec()), &opts(json!({"mimeType": "audio/wav"})));
    assert_eq!(b.unwrap(), json!({"type": "audio", "mimeType": "audio/wav", "data": "Zm9v"}));
    assert_eq!(
        msg(build_part_by_mime(PartSource::Bytes(vec![1]), &PartOptions::default())),
        "mime_type is required when building a part from bytes"
    );
    let typed = |mime: Option<&str>, name: Option<&str>| PartSource::Typed {
        bytes: b"foo".to_vec(),
        mime: mime.map(String::from),
        name: name.map(String::from),
    };
    let t = build_part_by_mime(typed(Some("image/gif"), Some("a.png")), &PartOptions::default()).unwrap();
    assert_eq!(t, json!({"type": "image", "mimeType": "image/gif", "data": "Zm9v", "name": "a.png"}));
    let t = build_part_by_mime(typed(Some(""), Some("r.pdf")), &PartOptions::default()).unwrap();
    assert_eq!((t["type"].as_str(), t["mimeType"].as_str()), (Some("file"), Some("application/pdf")));
    assert_eq!(
        msg(build_part_by_mime(typed(Some(""), Some("thing.xyz")), &PartOptions::default())),
        "unknown file extension \".xyz\" — pass an explicit mime_type"
    );
    assert_eq!(
        msg(build_part_by_mime(typed(None, None), &PartOptions::default())),
        "mime_type is required for a file-like source with no name"
    );
    let over = build_part_by_mime(typed(Some("image/png"), None), &opts(json!({"maxPartBytes": 2})));
    assert_eq!(msg(over), "content part is 3 decoded bytes, over the maxPartBytes limit of 2");

    // A string is what its source says it is: a data: URL, a URL or a path, never guessed.
    let d = build_part_by_mime(PartSource::DataUrl(format!("data:image/png;base64,{G}")), &PartOptions::default());
    assert_eq!(d.unwrap(), image());
    assert_eq!(
        msg(build_part_by_mime(PartSource::DataUrl("/etc/x.png".into()), &PartOptions::default())),
        "not a data: URL"
    );
    let u = build_part_by_mime(PartSource::Url("https://e.test/a.mp3".into()), &PartOptions::default()).unwrap();
    assert_eq!(u, json!({"type": "audio", "mimeType": "audio/mpeg", "url": "https://e.test/a.mp3"}));
    assert_eq!(
        msg(build_part_by_mime(PartSource::Url("ftp://e.test/a.png".into()), &PartOptions::default())),
        "only http:// and https:// URLs are kept as a part's url"
    );
    let path = msg(build_part_by_mime(PartSource::Path("https://e.test/none.png".into()), &PartOptions::default()));
    assert!(path.starts_with("cannot read https://e.test/none.png: "), "{path}");

    let e = PartOptions::from_json(&json!({"mimetype": "image/png"})).unwrap_err();
    assert_eq!((e.kind(), e.message()), (ErrorKind::InvalidArgument, "unknown part option key \"mimetype\""));
    let e = PartOptions::from_json(&json!({"maxPartBytes": -1})).unwrap_err();
    assert_eq!(e.message(), "part option key \"maxPartBytes\" must be a whole number of at least 0, got number");
    assert_eq!(PartOptions::from_json(&Value::Null).unwrap(), PartOptions::default());

    assert!(validate_within(&image(), Some(82)).is_ok());
    assert_eq!(
        validate_within(&image(), Some(81)).unwrap_err().message(),
        "content part is 82 decoded bytes, over the maxPartBytes limit of 81"
    );
    assert_eq!(
        validate_within(&json!({"type": "image", "mimeType": "image/png"}), None).unwrap_err().kind(),
        ErrorKind::ContentPart
    );
    assert_eq!((media_tokens(0), media_tokens(75_000), media_tokens(75_749)), (85, 100, 100));
}
