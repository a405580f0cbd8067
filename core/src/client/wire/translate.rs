//! Translation (SPEC §11) as pure mapping: OpenAI-shaped `messages`, `tools` and
//! `tool_choice` into the Anthropic request, and either provider's reply back into the OpenAI
//! shape. No I/O here; the call itself is `client/translate.rs`.

use serde_json::{json, Map, Value};

use super::parts::{is_media, wire_messages, PartPolicy};
use crate::client::options::{Style, UnsupportedPart};
use crate::content::validate;
use crate::error::Result;

/// One tool call the model asked for, in the OpenAI shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TranslatedToolCall {
    /// The id the caller echoes on its `tool` result message.
    pub id: String,
    /// The function name.
    pub name: String,
    /// The arguments as a JSON string (the OpenAI wire form).
    pub arguments: String,
}

/// Text of an OpenAI `content`: the string itself, or the text parts of an array joined.
pub(crate) fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect(),
        _ => String::new(),
    }
}

/// Arguments as an object, from either wire form (a JSON string or an object); anything
/// unusable is `{}`.
fn args_object(args: Option<&Value>) -> Value {
    match args {
        Some(v @ Value::Object(_)) => v.clone(),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Object(_)) => v,
            _ => json!({}),
        },
        _ => json!({}),
    }
}

/// Arguments as the JSON string the OpenAI wire form uses (an object is written compactly).
pub(crate) fn args_string(args: Option<&Value>) -> String {
    match args {
        Some(Value::String(s)) => s.clone(),
        Some(v @ Value::Object(_)) => v.to_string(),
        _ => "{}".to_string(),
    }
}

/// The OpenAI `finish_reason` for a provider stop reason: tool calls always win.
pub fn finish_reason_for(has_tool_calls: bool, provider_stop: Option<&str>) -> &'static str {
    match provider_stop {
        _ if has_tool_calls => "tool_calls",
        Some("max_tokens" | "length") => "length",
        Some("refusal" | "content_filter") => "content_filter",
        _ => "stop",
    }
}

/// An assistant message's OpenAI `tool_calls`; malformed entries are skipped.
fn openai_tool_calls(message: &Value) -> Vec<TranslatedToolCall> {
    let Some(calls) = message.get("tool_calls").and_then(Value::as_array) else { return Vec::new() };
    calls
        .iter()
        .filter_map(|tc| {
            let f = tc.get("function")?.as_object()?;
            Some(TranslatedToolCall {
                id: text_of(tc.get("id")),
                name: text_of(f.get("name")),
                arguments: args_string(f.get("arguments")),
            })
        })
        .collect()
}

fn text_of(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// The media parts of a `content` array, each checked: a malformed one is an error rather
/// than a block the provider would refuse.
fn media_of(content: Option<&Value>) -> Result<Vec<Value>> {
    let Some(Value::Array(items)) = content else { return Ok(Vec::new()) };
    items.iter().filter(|b| is_media(b)).map(|b| validate(b).map(|()| b.clone())).collect()
}

/// A tool message's parts: those it carries as a transcript's (`parts`), then `media`, the
/// ones in its content.
fn tool_parts(m: &Value, media: Vec<Value>) -> Vec<Value> {
    let mut parts = m.get("parts").and_then(Value::as_array).cloned().unwrap_or_default();
    parts.extend(media);
    parts
}

/// Whether `messages` already holds a system or developer message.
pub(crate) fn has_system_message(messages: &[Value]) -> bool {
    messages.iter().any(|m| matches!(m.get("role").and_then(Value::as_str), Some("system" | "developer")))
}

/// OpenAI `messages` in the transcript's form for the OpenAI style: a `tool` message whose
/// content array holds parts gets its text as `content` and its parts as `parts`, as a run's
/// transcript keeps them, so the wire step relocates them as it does in a run.
pub(crate) fn openai_transcript(messages: Vec<Value>) -> Result<Vec<Value>> {
    messages
        .into_iter()
        .map(|mut m| {
            let media = media_of(m.get("content"))?;
            if matches!(m.get("role").and_then(Value::as_str), Some("tool" | "function")) && !media.is_empty() {
                m["content"] = json!(content_text(m.get("content")));
                m["parts"] = Value::Array(tool_parts(&m, media));
            }
            Ok(m)
        })
        .collect()
}

/// [`openai_messages_to_anthropic`]'s structure, with parts still canonical: a user turn's
/// parts stay in its content (after one text block of its text), a tool result's ride its
/// block's `parts`, for the wire step to encode by the client's rules.
pub(crate) fn anthropic_transcript(messages: &[Value]) -> Result<(Vec<Value>, String)> {
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    let mut system: Vec<String> = Vec::new();
    let mut results: Vec<Value> = Vec::new();
    let flush = |out: &mut Vec<Value>, results: &mut Vec<Value>| {
        if !results.is_empty() {
            out.push(json!({"role": "user", "content": std::mem::take(results)}));
        }
    };
    for m in messages.iter().filter(|m| m.is_object()) {
        let content = m.get("content");
        let media = media_of(content)?;
        match m.get("role").and_then(Value::as_str) {
            Some("system" | "developer") => {
                flush(&mut out, &mut results);
                let s = content_text(content);
                if !s.is_empty() {
                    system.push(s);
                }
            }
            Some("tool" | "function") => {
                let mut block = Map::new();
                block.insert("type".into(), json!("tool_result"));
                block.insert("content".into(), json!(content_text(content)));
                if let Some(id) = m.get("tool_call_id").filter(|v| !v.is_null() && v.as_str() != Some("")) {
                    block.insert("tool_use_id".into(), json!(text_of(Some(id))));
                }
                let parts = tool_parts(m, media);
                if !parts.is_empty() {
                    block.insert("parts".into(), Value::Array(parts));
                }
                results.push(Value::Object(block));
            }
            Some("assistant") => {
                flush(&mut out, &mut results);
                let mut blocks = Vec::new();
                let s = content_text(content);
                if !s.is_empty() {
                    blocks.push(json!({"type": "text", "text": s}));
                }
                for tc in openai_tool_calls(m) {
                    let input = args_object(Some(&Value::String(tc.arguments)));
                    blocks.push(json!({"type": "tool_use", "id": tc.id, "name": tc.name, "input": input}));
                }
                // An empty assistant turn would be refused.
                if !blocks.is_empty() {
                    out.push(json!({"role": "assistant", "content": blocks}));
                }
            }
            _ => {
                flush(&mut out, &mut results);
                let s = content_text(content);
                match content {
                    // Text parts join into one block ahead of the others, which keep their order.
                    Some(Value::Array(items)) if !media.is_empty() => {
                        let lead = (!s.is_empty()).then(|| json!({"type": "text", "text": s}));
                        let rest = items.iter().filter(|b| b.get("type").and_then(Value::as_str) != Some("text"));
                        let blocks: Vec<Value> = lead.into_iter().chain(rest.cloned()).collect();
                        out.push(json!({"role": "user", "content": blocks}));
                    }
                    _ if !s.is_empty() => out.push(json!({"role": "user", "content": s})),
                    // Provider-native blocks without text go through as given.
                    Some(Value::Array(a)) if !a.is_empty() => out.push(json!({"role": "user", "content": a})),
                    _ => {}
                }
            }
        }
    }
    flush(&mut out, &mut results);
    Ok((out, system.join("\n\n")))
}

/// OpenAI `messages` as Anthropic messages plus the system text they carried: tool calls
/// become `tool_use` blocks (arguments parsed back into objects), consecutive `tool` results
/// one user turn of `tool_result` blocks, system and developer messages the system text.
/// Content parts become Anthropic blocks (a tool's inside its `tool_result`); one Anthropic
/// has no block for (audio) becomes its text placeholder, since a pure mapping has no run to
/// fail and must not drop it. A malformed part is a [`crate::ErrorKind::ContentPart`] error.
pub fn openai_messages_to_anthropic(messages: &[Value]) -> Result<(Vec<Value>, String)> {
    let (out, system) = anthropic_transcript(messages)?;
    let lenient =
        PartPolicy { style: Style::Anthropic, limit: None, mode: Some(UnsupportedPart::Text), warn: &|_, _| {} };
    let out = wire_messages(&out, &lenient)?.into_owned();
    Ok((out, system))
}

/// OpenAI `tools` as Anthropic declarations: native entries (a `name`, no `function`) pass
/// through, unrecognised ones are skipped.
pub fn openai_tools_to_anthropic(tools: &[Value]) -> Vec<Value> {
    tools
        .iter()
        .filter_map(|t| {
            let Some(f) = t.get("function").and_then(Value::as_object) else {
                return t.get("name").filter(|n| is_set(n)).map(|_| t.clone());
            };
            let name = f.get("name").filter(|n| is_set(n))?;
            let mut d = Map::new();
            d.insert("name".into(), name.clone());
            if let Some(desc) = f.get("description").filter(|d| is_set(d)) {
                d.insert("description".into(), desc.clone());
            }
            let schema = match f.get("parameters") {
                Some(p @ Value::Object(_)) => p.clone(),
                _ => json!({"type": "object", "properties": {}}),
            };
            d.insert("input_schema".into(), schema);
            Some(Value::Object(d))
        })
        .collect()
}

fn is_set(v: &Value) -> bool {
    !matches!(v, Value::Null | Value::Bool(false)) && v.as_str() != Some("")
}

/// OpenAI `tool_choice` in Anthropic's shape; `None` for `auto` (the default), absent and
/// anything unrecognised.
pub fn openai_tool_choice_to_anthropic(choice: &Value) -> Option<Value> {
    match choice {
        Value::String(s) => match s.as_str() {
            "required" | "any" => Some(json!({"type": "any"})),
            "none" => Some(json!({"type": "none"})),
            _ => None,
        },
        Value::Object(_) => {
            let name = choice.get("function")?.get("name").filter(|n| is_set(n))?;
            Some(json!({"type": "tool", "name": name}))
        }
        _ => None,
    }
}

/// The text, tool calls and finish reason of an OpenAI reply.
pub(crate) fn openai_reply(data: &Value) -> (String, Vec<TranslatedToolCall>, String) {
    let Some(choice) = data.get("choices").and_then(Value::as_array).and_then(|c| c.first()) else {
        return (String::new(), Vec::new(), "stop".into());
    };
    let message = choice.get("message").cloned().unwrap_or(Value::Null);
    let text = content_text(message.get("content"));
    let calls = openai_tool_calls(&message);
    let finish = match choice.get("finish_reason").and_then(Value::as_str).filter(|s| !s.is_empty()) {
        Some(f) => f.to_string(),
        None => finish_reason_for(!calls.is_empty(), None).to_string(),
    };
    (text, calls, finish)
}

/// The text, tool calls and finish reason of an Anthropic reply.
pub(crate) fn anthropic_reply(data: &Value) -> (String, Vec<TranslatedToolCall>, String) {
    let mut text = String::new();
    let mut calls = Vec::new();
    for b in data.get("content").and_then(Value::as_array).into_iter().flatten() {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(b.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => calls.push(TranslatedToolCall {
                id: text_of(b.get("id")),
                name: text_of(b.get("name")),
                arguments: match b.get("input") {
                    Some(v @ Value::Object(_)) => v.to_string(),
                    _ => "{}".into(),
                },
            }),
            _ => {}
        }
    }
    let finish = finish_reason_for(!calls.is_empty(), data.get("stop_reason").and_then(Value::as_str));
    (text, calls, finish.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_exchanges_keep_their_structure() {
        let msgs = vec![
            json!({"role": "system", "content": "Be brief."}),
            json!({"role": "user", "content": [{"type": "text", "text": "a "}, {"type": "text", "text": "b"}]}),
            json!({"role": "assistant", "content": "", "tool_calls": [
                {"id": "x", "type": "function", "function": {"name": "f", "arguments": "{\"q\":1}"}},
                {"id": "y", "type": "function", "function": {"name": "g", "arguments": {"r": 2}}}]}),
            json!({"role": "tool", "tool_call_id": "x", "content": "one"}),
            json!({"role": "tool", "tool_call_id": "y", "content": "two"}),
            json!({"role": "developer", "content": "Cite."}),
        ];
        let (out, system) = openai_messages_to_anthropic(&msgs).unwrap();
        assert_eq!(system, "Be brief.\n\nCite.");
        assert_eq!(out[0], json!({"role": "user", "content": "a b"}));
        assert_eq!(out[1]["content"][1], json!({"type": "tool_use", "id": "y", "name": "g", "input": {"r": 2}}));
        assert_eq!(out[2]["content"].as_array().unwrap().len(), 2, "two results, one user turn");
        assert_eq!(out[2]["content"][0], json!({"type": "tool_result", "content": "one", "tool_use_id": "x"}));
        assert_eq!(out.len(), 3);
    }

    #[test]
    fn tools_choices_and_finish_reasons_map() {
        let tools = [
            json!({"type": "function", "function": {"name": "w", "description": "W", "parameters": {"type": "object"}}}),
            json!({"name": "native", "input_schema": {}}),
            json!({"type": "function", "function": {"name": ""}}),
            json!(7),
        ];
        let out = openai_tools_to_anthropic(&tools);
        assert_eq!(
            out,
            [json!({"name": "w", "description": "W", "input_schema": {"type": "object"}}), tools[1].clone()]
        );
        assert_eq!(openai_tool_choice_to_anthropic(&json!("required")), Some(json!({"type": "any"})));
        assert_eq!(openai_tool_choice_to_anthropic(&json!("auto")), None);
        let named = json!({"type": "function", "function": {"name": "w"}});
        assert_eq!(openai_tool_choice_to_anthropic(&named), Some(json!({"type": "tool", "name": "w"})));
        assert_eq!(finish_reason_for(true, Some("max_tokens")), "tool_calls");
        assert_eq!(finish_reason_for(false, Some("refusal")), "content_filter");
        assert_eq!(finish_reason_for(false, Some("stop_sequence")), "stop");
    }

    #[test]
    fn parts_become_anthropic_blocks_and_audio_its_placeholder() {
        let img = json!({"type": "image", "mimeType": "image/png", "data": "AA=="});
        let audio = json!({"type": "audio", "mimeType": "audio/mpeg", "data": "AA=="});
        let msgs = vec![
            json!({"role": "user", "content": [{"type": "text", "text": "see"}, img, audio]}),
            json!({"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "shot", "arguments": "{}"}}]}),
            json!({"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": "done"}, img]}),
        ];
        let (out, _) = openai_messages_to_anthropic(&msgs).unwrap();
        let png = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}});
        assert_eq!(out[0]["content"][0], json!({"type": "text", "text": "see"}));
        assert_eq!(out[0]["content"][1], png);
        assert_eq!(out[0]["content"][2]["type"], "text", "audio has no Anthropic block: {}", out[0]);
        assert!(out[0]["content"][2]["text"].as_str().unwrap().contains("audio"));
        let result = &out[2]["content"][0];
        assert_eq!(result["tool_use_id"], "c");
        assert_eq!(result["content"], json!([{"type": "text", "text": "done"}, png]));
        assert!(result.get("parts").is_none());
    }

    #[test]
    fn openai_tool_parts_ride_the_transcript_field() {
        let img = json!({"type": "image", "mimeType": "image/png", "url": "https://x.test/a.png"});
        let msgs = vec![json!({"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": "t"}, img]})];
        let out = openai_transcript(msgs).unwrap();
        assert_eq!(out[0]["content"], "t");
        assert_eq!(out[0]["parts"], json!([img]));
    }

    #[test]
    fn a_malformed_part_is_refused_not_sent() {
        let bad = json!({"role": "user", "content": [{"type": "image", "mimeType": "image/png", "data": "AA==", "url": "u"}]});
        let e = openai_messages_to_anthropic(std::slice::from_ref(&bad)).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::ContentPart);
        assert_eq!(openai_transcript(vec![bad]).unwrap_err().kind(), crate::ErrorKind::ContentPart);
    }
}
