//! The two wire formats as pure mapping: request bodies, reply parsing, tool-result
//! messages, and reading tool turns back out of a stored transcript. No I/O here.
//!
//! Where upstream's bytes would be refused by the real provider we send what it accepts:
//! no anthropic `system` key without system text, no empty text block or empty assistant
//! message recorded from a reply, and every tool call answered by exactly one result.

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::options::{ClientOptions, Style};
use crate::error::{Error, Result};
use crate::toolkit::Declarations;
use crate::types::{json_type, JsonObject, ToolResult, Usage};

/// One tool call the model made.
#[derive(Clone, Debug)]
pub(crate) struct Call {
    pub id: String,
    pub name: String,
    /// The argument object, or why the arguments are unusable.
    pub args: std::result::Result<Value, String>,
    /// The raw arguments JSON as the model sent it.
    pub raw_args: String,
}

/// A parsed model reply.
pub(crate) struct Reply {
    /// The assistant message to record (`None` when the reply carried nothing).
    pub message: Option<Value>,
    pub text: String,
    pub calls: Vec<Call>,
    pub usage: Usage,
}

/// The `tools` field: the toolkit's cached JSON when unchanged, else the values.
#[derive(Serialize)]
#[serde(untagged)]
enum ToolsField<'a> {
    Raw(&'a RawValue),
    Values(&'a [Value]),
}

impl<'a> ToolsField<'a> {
    fn of(d: &'a Declarations) -> Option<ToolsField<'a>> {
        if d.is_empty() {
            return None;
        }
        Some(match &d.json {
            Some(raw) => ToolsField::Raw(raw),
            None => ToolsField::Values(&d.values),
        })
    }
}

#[derive(Serialize)]
struct OpenAiBody<'a> {
    model: &'a str,
    messages: &'a [Value],
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<ToolsField<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'static str>,
}

#[derive(Serialize)]
struct AnthropicBody<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<&'a str>,
    messages: &'a [Value],
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<ToolsField<'a>>,
}

/// The request body of one turn, serialised once straight to bytes.
pub(crate) fn build_body(
    opts: &ClientOptions,
    model: &str,
    system: Option<&str>,
    messages: &[Value],
    tools: &Declarations,
) -> Result<Vec<u8>> {
    // Anthropic refuses a system text that is empty or only whitespace: send none instead.
    let system = system.filter(|s| !s.trim().is_empty());
    let tools = ToolsField::of(tools);
    let encoded = match opts.style {
        Style::OpenAi => {
            let tool_choice = tools.as_ref().map(|_| "auto");
            encode(&OpenAiBody { model, messages, tools, tool_choice }, opts.request_params.as_ref())
        }
        Style::Anthropic => encode(
            &AnthropicBody { model, max_tokens: opts.max_tokens, system, messages, tools },
            opts.request_params.as_ref(),
        ),
    };
    encoded.map_err(|e| Error::new(crate::ErrorKind::Internal, format!("cannot encode the request body: {e}")))
}

fn encode<T: Serialize>(body: &T, params: Option<&JsonObject>) -> serde_json::Result<Vec<u8>> {
    let Some(params) = params.filter(|p| !p.is_empty()) else {
        return serde_json::to_vec(body);
    };
    let mut v = serde_json::to_value(body)?;
    if let Value::Object(m) = &mut v {
        for (k, val) in params {
            m.insert(k.clone(), val.clone());
        }
    }
    serde_json::to_vec(&v)
}

/// The first user message of a run: the system message (openai, fresh runs only) and the prompt.
pub(crate) fn opening_messages(style: Style, system: Option<&str>, fresh: bool, prompt: &str) -> Vec<Value> {
    let mut out = Vec::with_capacity(2);
    if let (Style::OpenAi, true, Some(s)) = (style, fresh, system.filter(|s| !s.is_empty())) {
        out.push(json!({"role": "system", "content": s}));
    }
    out.push(json!({"role": "user", "content": prompt}));
    out
}

/// Parses a 2xx response body, taking the parts it keeps out of it.
pub(crate) fn parse_reply(style: Style, body: Value) -> Result<Reply> {
    if let Some(err) = provider_error(&body) {
        return Err(Error::protocol(format!("provider returned an error object: {err}")));
    }
    match style {
        Style::OpenAi => parse_openai(body),
        Style::Anthropic => parse_anthropic(body),
    }
}

fn provider_error(body: &Value) -> Option<String> {
    let e = body.get("error")?;
    if e.is_null() {
        return None;
    }
    Some(match e.get("message").and_then(Value::as_str) {
        Some(m) => m.chars().take(200).collect(),
        None => "(no message)".into(),
    })
}

fn parse_openai(mut body: Value) -> Result<Reply> {
    let mut msg = body
        .get_mut("choices")
        .and_then(|c| c.get_mut(0))
        .and_then(|c| c.get_mut("message"))
        .filter(|m| m.is_object())
        .map(Value::take)
        .ok_or_else(|| Error::protocol("malformed openai response: no choices[0].message object"))?;
    let text = openai_text(msg.get("content"))?;
    let calls = match msg.get("tool_calls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(arr)) => arr.iter().enumerate().map(|(i, c)| openai_call(i, c)).collect::<Result<_>>()?,
        Some(other) => {
            return Err(Error::protocol(format!(
                "malformed openai response: tool_calls is {}, not an array",
                json_type(other)
            )));
        }
    };
    let usage = body.get("usage").map(openai_usage).unwrap_or_default();
    if calls.is_empty() {
        // OpenAI refuses an assistant message whose tool_calls list is empty.
        if let Some(m) = msg.as_object_mut() {
            m.remove("tool_calls");
        }
    }
    let message = if text.is_empty() && calls.is_empty() { None } else { Some(msg) };
    Ok(Reply { message, text, calls, usage })
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

fn openai_call(i: usize, c: &Value) -> Result<Call> {
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

/// Parses an arguments string: blank means no arguments; anything else must be a JSON object.
pub(crate) fn parse_args(raw: &str) -> std::result::Result<Value, String> {
    if raw.trim().is_empty() {
        return Ok(json!({}));
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(other) => Err(format!("arguments must be a JSON object, got {}", json_type(&other))),
        Err(e) => Err(format!("arguments are not valid JSON ({e})")),
    }
}

fn openai_usage(u: &Value) -> Usage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    let (p, c) = (n("prompt_tokens"), n("completion_tokens"));
    let t = n("total_tokens");
    Usage { prompt_tokens: p, completion_tokens: c, total_tokens: if t > 0 { t } else { p + c } }
}

fn parse_anthropic(mut body: Value) -> Result<Reply> {
    let content = match body.get_mut("content").map(Value::take) {
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
            Some("tool_use") => calls.push(anthropic_call(i, &b)?),
            _ => {}
        }
        kept.push(b);
    }
    let u = body.get("usage");
    let n = |k: &str| u.and_then(|u| u.get(k)).and_then(Value::as_u64).unwrap_or(0);
    let (p, c) = (n("input_tokens"), n("output_tokens"));
    let usage = Usage { prompt_tokens: p, completion_tokens: c, total_tokens: p + c };
    let message = if kept.is_empty() { None } else { Some(json!({"role": "assistant", "content": kept})) };
    Ok(Reply { message, text, calls, usage })
}

fn anthropic_call(i: usize, b: &Value) -> Result<Call> {
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

/// A result ready to enter the transcript: fresh from this run, or kept verbatim from it.
pub(crate) enum Entry {
    Fresh(String, ToolResult),
    Verbatim(Value),
}

/// Appends one turn's results in the provider's tool-result shape.
pub(crate) fn append_results(style: Style, messages: &mut Vec<Value>, entries: Vec<Entry>) {
    match style {
        Style::OpenAi => messages.extend(entries.into_iter().map(|e| match e {
            Entry::Fresh(id, r) => json!({"role": "tool", "tool_call_id": id, "content": r.output}),
            Entry::Verbatim(v) => v,
        })),
        Style::Anthropic => {
            if entries.is_empty() {
                return;
            }
            let blocks: Vec<Value> = entries
                .into_iter()
                .map(|e| match e {
                    Entry::Fresh(id, r) => json!({
                        "type": "tool_result", "tool_use_id": id, "content": r.output, "is_error": r.is_error}),
                    Entry::Verbatim(v) => v,
                })
                .collect();
            messages.push(json!({"role": "user", "content": blocks}));
        }
    }
}

/// The tool calls an assistant message carries (either style's shape), if any.
pub(crate) fn calls_of(msg: &Value) -> Option<Vec<Call>> {
    if msg.get("role").and_then(Value::as_str) != Some("assistant") {
        return None;
    }
    if let Some(Value::Array(tcs)) = msg.get("tool_calls") {
        let calls: Vec<Call> = tcs.iter().enumerate().filter_map(|(i, c)| openai_call(i, c).ok()).collect();
        return (!calls.is_empty()).then_some(calls);
    }
    let Some(Value::Array(blocks)) = msg.get("content") else {
        return None;
    };
    let calls: Vec<Call> = blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .filter_map(|(i, b)| anthropic_call(i, b).ok())
        .collect();
    (!calls.is_empty()).then_some(calls)
}

/// The results (message or block, by call id) in the messages that directly answer a tool
/// turn, and how many messages they span.
pub(crate) fn results_after(messages: &[Value]) -> (Vec<(String, Value)>, usize) {
    let mut found = Vec::new();
    let mut used = 0;
    for m in messages {
        match m.get("role").and_then(Value::as_str) {
            Some("tool") => {
                let id = m.get("tool_call_id").and_then(Value::as_str).unwrap_or("").to_string();
                found.push((id, m.clone()));
            }
            Some("user") => {
                let Some(Value::Array(blocks)) = m.get("content") else { break };
                let results: Vec<&Value> =
                    blocks.iter().filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result")).collect();
                if results.is_empty() || results.len() != blocks.len() {
                    break;
                }
                for b in results {
                    let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or("").to_string();
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
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
        .find_map(|m| m.get("content").and_then(Value::as_str))
        .unwrap_or_default()
        .to_string()
}

/// The result text written for a call that never got one.
pub(crate) const NO_RESULT: &str = "no result: the run stopped before this tool call completed";

/// Checks that every entry of a caller's transcript is a message: an object with a string
/// `role`. Anything else would reach the provider as garbage, so it is refused up front.
pub(crate) fn check_history(messages: &[Value]) -> Result<()> {
    for (i, m) in messages.iter().enumerate() {
        if m.get("role").and_then(Value::as_str).is_none() {
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
                None => Entry::Fresh(c.id.clone(), ToolResult::error(NO_RESULT)),
            })
            .collect();
        append_results(style, &mut out, entries);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_blank_is_empty_object_and_garbage_is_an_error() {
        assert_eq!(parse_args("  "), Ok(json!({})));
        assert_eq!(parse_args("{\"a\":1}"), Ok(json!({"a":1})));
        assert!(parse_args("{oops").unwrap_err().contains("not valid JSON"));
        assert!(parse_args("[1]").unwrap_err().contains("got array"));
    }

    #[test]
    fn anthropic_reply_drops_empty_text_blocks() {
        let r = parse_reply(
            Style::Anthropic,
            json!({"content":[{"type":"text","text":""},{"type":"tool_use","id":"t1","name":"x","input":{}}]}),
        )
        .unwrap();
        assert_eq!(
            r.message,
            Some(json!({"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"x","input":{}}]}))
        );
        let empty = parse_reply(Style::Anthropic, json!({"content":[{"type":"text","text":""}]})).unwrap();
        assert!(empty.message.is_none());
        let blank = parse_reply(
            Style::Anthropic,
            json!({"content":[{"type":"text","text":"\n\n"},{"type":"tool_use","id":"t1","name":"x","input":{}}]}),
        )
        .unwrap();
        assert_eq!(
            blank.message,
            Some(json!({"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"x","input":{}}]}))
        );
    }

    #[test]
    fn openai_reply_drops_an_empty_tool_calls_list() {
        let r = parse_reply(
            Style::OpenAi,
            json!({"choices":[{"message":{"role":"assistant","content":"hi","tool_calls":[]}}]}),
        )
        .unwrap();
        assert_eq!(r.message, Some(json!({"role":"assistant","content":"hi"})));
    }

    #[test]
    fn a_blank_system_text_is_not_sent() {
        let mut opts = ClientOptions::new("http://x/v1", Style::Anthropic, "m");
        opts.api_key = Some("k".into());
        let body =
            build_body(&opts, "m", Some("  \n"), &[json!({"role":"user","content":"hi"})], &Declarations::new(vec![]))
                .unwrap();
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert!(v.get("system").is_none(), "{v}");
    }

    #[test]
    fn malformed_replies_are_protocol_errors() {
        for (style, body) in [
            (Style::OpenAi, json!({})),
            (Style::OpenAi, json!({"choices":[{"message":{"tool_calls":[{"function":{"name":"x"}}]}}]})),
            (Style::OpenAi, json!({"choices":[{"message":{"tool_calls":{}}}]})),
            (Style::Anthropic, json!({"content":"hi"})),
            (Style::Anthropic, json!({"error":{"message":"overloaded"}})),
            (Style::OpenAi, json!({"choices":[{"message":{"content":42}}]})),
            (Style::OpenAi, json!({"choices":[{"message":{"content":{"text":"hi"}}}]})),
            (Style::OpenAi, json!({"choices":[{"message":{"content":true}}]})),
            (Style::Anthropic, json!({"content":[{"type":"text","text":7}]})),
        ] {
            assert_eq!(parse_reply(style, body).err().map(|e| e.kind()), Some(crate::ErrorKind::Protocol));
        }
    }

    #[test]
    fn balance_fills_missing_results_in_call_order() {
        let msgs = vec![
            json!({"role":"user","content":"hi"}),
            json!({"role":"assistant","content":null,"tool_calls":[
                {"id":"a","type":"function","function":{"name":"x","arguments":"{}"}},
                {"id":"b","type":"function","function":{"name":"y","arguments":"{}"}}]}),
            json!({"role":"tool","tool_call_id":"a","content":"A"}),
        ];
        let out = balance(Style::OpenAi, msgs);
        assert_eq!(out.len(), 4);
        assert_eq!(out[3], json!({"role":"tool","tool_call_id":"b","content":NO_RESULT}));
    }
}
