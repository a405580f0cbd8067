//! The OpenAI `/chat/completions` shapes: the request body and the reply.

use serde::Serialize;
use serde_json::{json, Map, Value};

use super::{parse_args, Call, Reply, ToolsField};
use crate::client::lenient::{lenient_object, ErrorField, First, Loose};
use crate::error::{Error, Result};
use crate::types::{json_type, Usage};

/// The request body's fields before `messages` (build_body writes them in between).
#[derive(Serialize)]
pub(super) struct Head<'a> {
    pub model: &'a str,
}

/// The request body's fields after `messages`.
#[derive(Serialize)]
pub(super) struct Tail<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsField<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
}

/// Every top-level key of a request body.
pub(super) const KEYS: &[&str] = &["model", "messages", "tools", "tool_choice", "stream", "stream_options"];

/// `stream_options`: usage comes in the stream's last chunk only when asked for.
#[derive(Serialize)]
pub(super) struct StreamOptions {
    pub include_usage: bool,
}

pub(super) fn parse(mut body: Value) -> Result<Reply> {
    let msg = body
        .get_mut("choices")
        .and_then(|c| c.get_mut(0))
        .and_then(|c| c.get_mut("message"))
        .filter(|m| m.is_object())
        .map(Value::take);
    parse_message(msg)
}

lenient_object! {
    /// What the loop reads of a `/chat/completions` body.
    struct Body<'a> {
        error: Loose<ErrorField<'a>> = "error",
        choices: Loose<First<Choice<'a>>> = "choices",
        usage: Loose<Counts<'a>> = "usage",
    }
}

lenient_object! {
    struct Choice<'a> {
        message: Loose<Map<String, Value>> = "message",
    }
}

lenient_object! {
    struct Counts<'a> {
        prompt: Loose<u64> = "prompt_tokens",
        completion: Loose<u64> = "completion_tokens",
        total: Loose<u64> = "total_tokens",
    }
}

/// [`parse`] and [`usage`] of a body still in its bytes (`super::read_reply`).
pub(super) fn read(body: &[u8]) -> serde_json::Result<(Usage, Result<Reply>)> {
    let body = super::read_lenient::<Body>(body)?.unwrap_or_default();
    let usage = match body.usage.0 {
        Some(c) => counted(c.prompt.0.unwrap_or(0), c.completion.0.unwrap_or(0), c.total.0.unwrap_or(0)),
        None => Usage::default(),
    };
    if let Some(e) = body.error.0 {
        return Ok((usage, Err(super::error_object(e.message.0.as_deref()))));
    }
    let msg = body.choices.0.and_then(|c| c.0).and_then(|c| c.message.0).map(Value::Object);
    Ok((usage, parse_message(msg)))
}

/// The reply of `choices[0].message`, when it is an object.
fn parse_message(msg: Option<Value>) -> Result<Reply> {
    let mut msg = msg.ok_or_else(|| Error::protocol("malformed openai response: no choices[0].message object"))?;
    let text = openai_text(msg.get("content"))?;
    let calls = match msg.get("tool_calls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(arr)) => arr.iter().enumerate().map(|(i, c)| call(i, c)).collect::<Result<_>>()?,
        Some(other) => {
            return Err(Error::protocol(format!(
                "malformed openai response: tool_calls is {}, not an array",
                json_type(other)
            )));
        }
    };
    if let Some(m) = msg.as_object_mut() {
        // What the model said is the assistant's turn, whatever role a provider wrote (or
        // left out): recorded otherwise, its tool turn could not be found on resume.
        m.insert("role".into(), Value::String("assistant".into()));
        if calls.is_empty() {
            // OpenAI refuses an assistant message whose tool_calls list is empty.
            m.remove("tool_calls");
        }
    }
    let message = if text.is_empty() && calls.is_empty() { None } else { Some(msg) };
    Ok(Reply { message, text, calls })
}

fn openai_text(content: Option<&Value>) -> Result<String> {
    match content {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => Ok(parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect()),
        // Read as empty text, a number or an object would silently lose the reply.
        Some(other) => Err(Error::protocol(format!(
            "malformed openai response: message content is {}, not a string or an array",
            json_type(other)
        ))),
    }
}

pub(super) fn call(i: usize, c: &Value) -> Result<Call> {
    let bad = |what: &str| Error::protocol(format!("malformed openai response: tool_calls[{i}] {what}"));
    let id = c.get("id").and_then(Value::as_str).filter(|s| !s.is_empty()).ok_or_else(|| bad("has no id"))?;
    let f = c.get("function").ok_or_else(|| bad("has no function"))?;
    let name = f.get("name").and_then(Value::as_str).filter(|s| !s.is_empty()).ok_or_else(|| bad("has no name"))?;
    let (args, raw_args) = match f.get("arguments") {
        None | Some(Value::Null) => (Ok(json!({})), String::new()),
        Some(Value::String(s)) => (parse_args(s), s.clone()),
        Some(obj @ Value::Object(_)) => (Ok(obj.clone()), obj.to_string()),
        Some(other) => (Err(format!("arguments must be a JSON object, got {}", json_type(other))), other.to_string()),
    };
    Ok(Call { id: id.into(), name: name.into(), args, raw_args })
}

pub(super) fn usage(u: &Value) -> Usage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    counted(n("prompt_tokens"), n("completion_tokens"), n("total_tokens"))
}

/// The usage of the counts a reply gave (0 for each one it did not): a total of 0 is the sum.
fn counted(p: u64, c: u64, t: u64) -> Usage {
    Usage { prompt_tokens: p, completion_tokens: c, total_tokens: if t > 0 { t } else { p.saturating_add(c) } }
}
