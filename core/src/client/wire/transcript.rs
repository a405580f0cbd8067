//! Tool turns in a stored transcript, either style: appending a turn's results, reading the
//! calls and results back out, and balancing a transcript so every call has one result.

use serde_json::{json, Value};

use super::{anthropic, field, openai, Call};
use crate::client::options::Style;
use crate::error::{Error, Result};
use crate::types::ToolResult;

/// A result ready to enter the transcript: fresh from this run (the call's id, the tool's
/// name, its result), or kept verbatim from it.
pub(crate) enum Entry {
    Fresh(String, String, ToolResult),
    Verbatim(Value),
}

/// Appends one turn's results in the provider's tool-result shape. A result's content parts
/// ride beside it in the canonical form (`parts`; on an OpenAI tool message also the tool's
/// `name`, which labels them when they are sent): each style's blocks are made at send time.
pub(crate) fn append_results(style: Style, messages: &mut Vec<Value>, entries: Vec<Entry>) {
    match style {
        Style::OpenAi => messages.extend(entries.into_iter().map(|e| match e {
            Entry::Fresh(id, name, r) => {
                let mut m = json!({"role": "tool", "tool_call_id": id, "content": r.output});
                if let Some(parts) = r.parts.filter(|p| !p.is_empty()) {
                    m["parts"] = Value::Array(parts);
                    m["name"] = Value::String(name);
                }
                m
            }
            Entry::Verbatim(v) => v,
        })),
        Style::Anthropic => {
            if entries.is_empty() {
                return;
            }
            let blocks: Vec<Value> = entries
                .into_iter()
                .map(|e| match e {
                    Entry::Fresh(id, _, r) => {
                        let mut b = json!({
                            "type": "tool_result", "tool_use_id": id, "content": r.output, "is_error": r.is_error});
                        if let Some(parts) = r.parts.filter(|p| !p.is_empty()) {
                            b["parts"] = Value::Array(parts);
                        }
                        b
                    }
                    Entry::Verbatim(v) => v,
                })
                .collect();
            messages.push(json!({"role": "user", "content": blocks}));
        }
    }
}

/// The tool calls an assistant message carries (either style's shape), if any.
pub(crate) fn calls_of(msg: &Value) -> Option<Vec<Call>> {
    if field(msg, "role").and_then(Value::as_str) != Some("assistant") {
        return None;
    }
    if let Some(Value::Array(tcs)) = field(msg, "tool_calls") {
        let calls: Vec<Call> = tcs.iter().enumerate().filter_map(|(i, c)| openai::call(i, c).ok()).collect();
        return (!calls.is_empty()).then_some(calls);
    }
    let Some(Value::Array(blocks)) = field(msg, "content") else {
        return None;
    };
    let calls: Vec<Call> = blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| field(b, "type").and_then(Value::as_str) == Some("tool_use"))
        .filter_map(|(i, b)| anthropic::call(i, b).ok())
        .collect();
    (!calls.is_empty()).then_some(calls)
}

/// The results (message or block, by call id) in the messages that directly answer a tool
/// turn, and how many messages they span.
pub(crate) fn results_after(messages: &[Value]) -> (Vec<(String, Value)>, usize) {
    let mut found = Vec::new();
    let mut used = 0;
    for m in messages {
        match field(m, "role").and_then(Value::as_str) {
            Some("tool") => {
                let id = field(m, "tool_call_id").and_then(Value::as_str).unwrap_or("").to_string();
                found.push((id, m.clone()));
            }
            Some("user") => {
                let Some(Value::Array(blocks)) = field(m, "content") else { break };
                let results: Vec<&Value> =
                    blocks.iter().filter(|b| field(b, "type").and_then(Value::as_str) == Some("tool_result")).collect();
                if results.is_empty() || results.len() != blocks.len() {
                    break;
                }
                for b in results {
                    let id = field(b, "tool_use_id").and_then(Value::as_str).unwrap_or("").to_string();
                    found.push((id, b.clone()));
                }
                used += 1;
                break;
            }
            _ => break,
        }
        used += 1;
    }
    (found, used)
}

/// The content of the last assistant message whose content is a string (openai shape).
pub(crate) fn last_assistant_text(messages: &[Value]) -> String {
    messages
        .iter()
        .rev()
        .filter(|m| field(m, "role").and_then(Value::as_str) == Some("assistant"))
        .find_map(|m| field(m, "content").and_then(Value::as_str))
        .unwrap_or_default()
        .to_string()
}

/// The result text written for a call that never got one.
pub(crate) const NO_RESULT: &str = "no result: the run stopped before this tool call completed";

/// Checks that every entry of a caller's transcript is a message: an object with a string
/// `role`. Anything else would reach the provider as garbage, so it is refused up front.
pub(crate) fn check_history(messages: &[Value]) -> Result<()> {
    for (i, m) in messages.iter().enumerate() {
        if field(m, "role").and_then(Value::as_str).is_none() {
            let what = match m {
                Value::Object(_) => "an object without a string \"role\"",
                Value::Array(_) => "an array",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                Value::Bool(_) => "a boolean",
                Value::Null => "null",
            };
            return Err(Error::invalid(format!("history[{i}] is not a message: it is {what}")));
        }
    }
    Ok(())
}

/// Gives every tool call in a transcript exactly one result, in call order, so a provider
/// never sees an unanswered call. Missing results become error results; duplicates and
/// strays are dropped. Messages kept as they are move, uncloned.
pub(crate) fn balance(style: Style, mut messages: Vec<Value>) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    let mut i = 0;
    while i < messages.len() {
        let calls = calls_of(&messages[i]);
        out.push(std::mem::take(&mut messages[i]));
        i += 1;
        let Some(calls) = calls else { continue };
        let (found, used) = results_after(&messages[i..]);
        let results = i..i + used;
        i += used;
        let all_present = found.len() == calls.len() && calls.iter().zip(&found).all(|(c, (id, _))| *id == c.id);
        if all_present {
            out.extend(messages[results].iter_mut().map(std::mem::take));
            continue;
        }
        let entries = calls
            .iter()
            .map(|c| match found.iter().find(|(id, _)| *id == c.id) {
                Some((_, v)) => Entry::Verbatim(v.clone()),
                None => Entry::Fresh(c.id.clone(), c.name.clone(), ToolResult::error(NO_RESULT)),
            })
            .collect();
        append_results(style, &mut out, entries);
    }
    out
}
