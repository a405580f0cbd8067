//! The Anthropic `/v1/messages` shapes: the request body and the reply.

use serde::Serialize;
use serde_json::{json, Value};

use super::{Call, Reply, ToolsField};
use crate::client::lenient::{lenient_object, ErrorField, Loose, Present};
use crate::error::{Error, Result};
use crate::types::{json_type, Usage};

/// The request body's fields before `messages` (build_body writes them in between).
#[derive(Serialize)]
pub(super) struct Head<'a> {
    pub model: &'a str,
    pub max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<&'a str>,
}

/// The request body's fields after `messages`.
#[derive(Serialize)]
pub(super) struct Tail<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsField<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
}

/// Every top-level key of a request body.
pub(super) const KEYS: &[&str] = &["model", "max_tokens", "system", "messages", "tools", "stream"];

pub(super) fn parse(mut body: Value) -> Result<Reply> {
    parse_content(body.get_mut("content").map(Value::take))
}

lenient_object! {
    /// What the loop reads of a `/v1/messages` body.
    struct Body<'a> {
        error: Loose<ErrorField<'a>> = "error",
        content: Present = "content",
        usage: Loose<Counts<'a>> = "usage",
    }
}

lenient_object! {
    struct Counts<'a> {
        input: Loose<u64> = "input_tokens",
        output: Loose<u64> = "output_tokens",
    }
}

/// [`parse`] and [`usage`] of a body still in its bytes (`super::read_reply`).
pub(super) fn read(body: &[u8]) -> serde_json::Result<(Usage, Result<Reply>)> {
    let body = super::read_lenient::<Body>(body)?.unwrap_or_default();
    let usage = match body.usage.0 {
        Some(c) => counted(c.input.0.unwrap_or(0), c.output.0.unwrap_or(0)),
        None => Usage::default(),
    };
    if let Some(e) = body.error.0 {
        return Ok((usage, Err(super::error_object(e.message.0.as_deref()))));
    }
    Ok((usage, parse_content(body.content.0)))
}

/// The reply of a body's `content` (`None` when it had none).
fn parse_content(content: Option<Value>) -> Result<Reply> {
    let content = match content {
        Some(Value::Array(blocks)) => blocks,
        Some(other) => {
            return Err(Error::protocol(format!(
                "malformed anthropic response: content is {}, not an array",
                json_type(&other)
            )));
        }
        None => return Err(Error::protocol("malformed anthropic response: no content array")),
    };
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut kept = Vec::with_capacity(content.len());
    for (i, b) in content.into_iter().enumerate() {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => {
                let t = match b.get("text") {
                    None | Some(Value::Null) => "",
                    Some(Value::String(s)) => s.as_str(),
                    Some(other) => {
                        return Err(Error::protocol(format!(
                            "malformed anthropic response: content[{i}] text is {}, not a string",
                            json_type(other)
                        )));
                    }
                };
                text.push_str(t);
                // Anthropic refuses a text block without non-whitespace text.
                if t.trim().is_empty() {
                    continue;
                }
            }
            Some("tool_use") => calls.push(call(i, &b)?),
            _ => {}
        }
        kept.push(b);
    }
    let message = if kept.is_empty() { None } else { Some(json!({"role": "assistant", "content": kept})) };
    Ok(Reply { message, text, calls })
}

pub(super) fn call(i: usize, b: &Value) -> Result<Call> {
    let bad = |what: &str| Error::protocol(format!("malformed anthropic response: content[{i}] tool_use {what}"));
    let id = b.get("id").and_then(Value::as_str).filter(|s| !s.is_empty()).ok_or_else(|| bad("has no id"))?;
    let name = b.get("name").and_then(Value::as_str).filter(|s| !s.is_empty()).ok_or_else(|| bad("has no name"))?;
    let (args, raw_args) = match b.get("input") {
        None | Some(Value::Null) => (Ok(json!({})), "{}".to_string()),
        Some(obj @ Value::Object(_)) => (Ok(obj.clone()), obj.to_string()),
        Some(other) => (Err(format!("input must be a JSON object, got {}", json_type(other))), other.to_string()),
    };
    Ok(Call { id: id.into(), name: name.into(), args, raw_args })
}

pub(super) fn usage(u: &Value) -> Usage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    counted(n("input_tokens"), n("output_tokens"))
}

fn counted(p: u64, c: u64) -> Usage {
    Usage { prompt_tokens: p, completion_tokens: c, total_tokens: p.saturating_add(c) }
}
