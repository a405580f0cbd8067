//! A reply body through the loop's reader, and what the README promises about what it
//! records: no empty assistant message, no empty text block, tool calls with an id and a name
//! and object arguments, and a transcript in which every call gets exactly one result. A body
//! that is JSON is also written back as a request body writes a transcript, byte for byte as
//! serde_json writes it, and a body that is UTF-8 is read by `toolnexus::parse_json` as
//! serde_json reads it (value, key order and error message).

use serde_json::Value;
use toolnexus::fuzzing::{self, ParsedCall, ParsedReply};
use toolnexus::{ErrorKind, Style, ToolResult};

/// A message that differs from what the text holds in one place (a key gone, a string
/// longer) is never taken for it when eliding a caller's history.
fn check_same_prefix(text: &str, value: Value) {
    let array = format!("[{text}]");
    assert!(fuzzing::same_prefix(&array, std::slice::from_ref(&value)) <= 1);
    let mut changed = value.clone();
    if let Value::Object(map) = &mut changed {
        // The last key: removing it leaves the others in their order.
        if let Some(last) = map.keys().next_back().cloned() {
            map.remove(&last);
            assert_eq!(fuzzing::same_prefix(&array, &[changed]), 0, "a key gone");
        }
    }
    let mut changed = value;
    if let Some(s) = first_string(&mut changed) {
        s.push('x');
        assert_eq!(fuzzing::same_prefix(&array, &[changed]), 0, "a string longer");
    }
}

/// The first string in `v`, depth first.
fn first_string(v: &mut Value) -> Option<&mut String> {
    match v {
        Value::String(s) => Some(s),
        Value::Array(items) => items.iter_mut().find_map(first_string),
        Value::Object(map) => map.values_mut().find_map(first_string),
        _ => None,
    }
}

/// Parses `body` as a 2xx reply in `style` and checks the result, and that reading it straight
/// from its bytes (as a call with no `after_llm` hook does) agrees.
pub fn check(style: Style, body: &[u8]) {
    if let Ok(text) = std::str::from_utf8(body) {
        match (toolnexus::parse_json(text), serde_json::from_str::<Value>(text)) {
            (Ok(ours), Ok(theirs)) => {
                assert_eq!(ours, theirs);
                assert_eq!(ours.to_string(), theirs.to_string(), "keys read in another order");
                check_same_prefix(text, ours);
            }
            (Err(ours), Err(theirs)) => assert_eq!(ours.to_string(), theirs.to_string()),
            (ours, theirs) => panic!("parse_json gave {ours:?} where serde_json gave {theirs:?}"),
        }
    }
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        let ours = fuzzing::write_json(&value);
        assert_eq!(ours, serde_json::to_vec(&value).unwrap(), "written otherwise than serde_json writes it");
    }
    let parsed = fuzzing::parse_reply(style, body);
    match &parsed {
        Ok(reply) => check_reply(style, reply),
        // A body the engine cannot read is a protocol error, nothing else.
        Err(e) => assert_eq!(e.kind(), ErrorKind::Protocol, "{e}"),
    }
    let read = fuzzing::read_reply(style, body);
    let not_json = |e: &toolnexus::Error| e.message().contains("with a body that is not JSON");
    match (&parsed, &read) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "the two readers disagree"),
        // What the parser refused may sit in a field the reader skips, which it checks as JSON
        // text and no further: the reader may then read the body, or fail on something else.
        (Err(a), read) if not_json(a) => {
            if let Ok(r) = read {
                check_reply(style, r);
            }
        }
        (Err(a), Err(b)) => assert_eq!(a.message(), b.message()),
        (Err(a), Ok(_)) => panic!("read, where parsing failed: {a}"),
        (Ok(_), Err(b)) => panic!("parsed, where reading failed: {b}"),
    }
}

fn check_reply(style: Style, reply: &ParsedReply) {
    for c in &reply.calls {
        assert!(!c.id.is_empty() && !c.name.is_empty(), "a call without id or name: {c:?}");
        if let Ok(args) = &c.args {
            assert!(args.is_object(), "arguments that are not an object: {c:?}");
        }
    }
    let Some(message) = &reply.message else {
        assert!(reply.calls.is_empty(), "calls without a message to record them");
        return;
    };
    assert!(message.is_object(), "a recorded message that is not an object");
    // Whatever role a provider wrote, the recorded message is the assistant's turn.
    assert_eq!(message["role"], "assistant");
    match style {
        Style::OpenAi => {
            if reply.calls.is_empty() {
                assert!(message.get("tool_calls").is_none(), "an empty tool_calls list is recorded");
                assert!(!reply.text.is_empty(), "an empty assistant message is recorded");
            }
        }
        Style::Anthropic => {
            let blocks = message["content"].as_array().map(Vec::as_slice).unwrap_or_default();
            assert!(!blocks.is_empty(), "an empty assistant message is recorded");
            for b in blocks {
                if b.get("type").and_then(Value::as_str) == Some("text") {
                    let text = b.get("text").and_then(Value::as_str).unwrap_or("");
                    assert!(!text.trim().is_empty(), "a blank text block is recorded: {b}");
                }
            }
        }
    }
    check_transcript(style, message, &reply.calls);
}

/// The reply recorded in a transcript, the way a resume reads it back and a provider sees it.
fn check_transcript(style: Style, message: &Value, calls: &[ParsedCall]) {
    let opening = serde_json::json!({"role": "user", "content": "hi"});
    let recorded = vec![opening, message.clone()];
    fuzzing::check_history(&recorded).unwrap_or_else(|e| panic!("the loop records a message it refuses: {e}"));
    let read_back = fuzzing::calls_of(message).unwrap_or_default();
    assert_eq!(read_back, calls, "the recorded message reads back as other calls");
    if calls.is_empty() {
        assert_eq!(fuzzing::balance(style, recorded.clone()), recorded);
        return;
    }
    // Unanswered, balancing gives each call exactly one result, in call order.
    let balanced = fuzzing::balance(style, recorded.clone());
    assert_eq!(result_ids(&balanced[2..]), calls.iter().map(|c| c.id.clone()).collect::<Vec<_>>());
    // Answered as the loop answers them, the transcript is already balanced.
    let mut answered = recorded;
    let results = calls.iter().map(|c| (c.id.clone(), ToolResult::ok("done"))).collect();
    fuzzing::append_results(style, &mut answered, results);
    assert_eq!(fuzzing::balance(style, answered.clone()), answered, "a balanced transcript was changed");
}

/// The call ids the result messages (either style) answer, in order.
fn result_ids(messages: &[Value]) -> Vec<String> {
    let id = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let mut out = Vec::new();
    for m in messages {
        if m["role"] == "tool" {
            out.push(id(m, "tool_call_id"));
        } else if let Some(blocks) = m["content"].as_array() {
            out.extend(blocks.iter().map(|b| id(b, "tool_use_id")));
        }
    }
    out
}
