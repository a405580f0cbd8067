//! Content parts on the wire (SPEC §8A): the transcript keeps parts in their canonical form;
//! here, as a request is sent, each becomes its style's block. A prompt's own part ("attached")
//! that cannot be sent fails the run before any request; a part a tool returned ("derived")
//! becomes a text placeholder, so a remote server cannot fail the run. OpenAI tool messages
//! cannot carry images, so a turn's derived parts move into one user message after its tool
//! messages, each labelled with its tool; that message exists only on the wire.

use std::borrow::Cow;

use serde_json::{json, Value};

use super::field;
use crate::client::options::{ClientOptions, Style, UnsupportedPart};
use crate::content::{encode_part, is_part, part_bytes, placeholder_text, too_large};
use crate::error::{ErrorKind, Result};

/// How this client sends parts.
pub(crate) struct PartPolicy<'a> {
    pub style: Style,
    /// Decoded bytes; `None`: no limit.
    pub limit: Option<u64>,
    pub mode: Option<UnsupportedPart>,
    /// Reports a placeholder sent, under a key it is said once for.
    pub warn: &'a (dyn Fn(String, String) + Sync),
}

/// Whether `v` is a canonical image, file or audio part (text parts are just text).
pub(crate) fn is_media(v: &Value) -> bool {
    is_part(v) && field(v, "type").and_then(Value::as_str) != Some("text")
}

fn role(m: &Value) -> &str {
    field(m, "role").and_then(Value::as_str).unwrap_or("")
}

/// Whether `messages` hold a part to encode; without one the transcript is sent as it is.
fn has_parts(messages: &[Value]) -> bool {
    messages.iter().any(|m| {
        field(m, "parts").is_some()
            || field(m, "content").and_then(Value::as_array).is_some_and(|blocks| {
                blocks.iter().any(|b| {
                    is_media(b)
                        || (field(b, "type").and_then(Value::as_str) == Some("tool_result")
                            && field(b, "parts").is_some())
                })
            })
    })
}

impl<'a> PartPolicy<'a> {
    /// The policy of a client with these options.
    pub(crate) fn of(opts: &ClientOptions, warn: &'a (dyn Fn(String, String) + Sync)) -> PartPolicy<'a> {
        PartPolicy {
            style: opts.style,
            limit: opts.max_part_bytes.or_else(crate::content::max_part_bytes),
            mode: opts.on_unsupported_part,
            warn,
        }
    }

    /// `part` as a block of the style, or what stands for it.
    fn block(&self, part: &Value, attached: bool) -> Result<Value> {
        let placeholder = || json!({"type": "text", "text": placeholder_text(part)});
        let bytes = part_bytes(part);
        if let Some(limit) = self.limit.filter(|l| bytes > *l) {
            let e = too_large(bytes, limit);
            if attached {
                return Err(e);
            }
            let key = format!("toolarge:{}:{}", kind(part), part.get("mimeType").and_then(Value::as_str).unwrap_or(""));
            (self.warn)(key, format!("[toolnexus] {} — sent as a text placeholder", e.message()));
            return Ok(placeholder());
        }
        match encode_part(part, self.style) {
            Ok(b) => Ok(b),
            Err(e) if e.kind() == ErrorKind::UnsupportedPart => {
                let mode = self.mode.unwrap_or(if attached { UnsupportedPart::Error } else { UnsupportedPart::Text });
                if mode == UnsupportedPart::Error {
                    return Err(e);
                }
                let style = if self.style == Style::OpenAi { "openai" } else { "anthropic" };
                (self.warn)(
                    format!("{}:{style}", kind(part)),
                    format!("[toolnexus] {} — sent as a text placeholder", e.message()),
                );
                Ok(placeholder())
            }
            Err(e) => Err(e),
        }
    }

    /// The output text, then the parts as blocks (derived).
    /// The output text, then the parts. An empty text block is left out: Anthropic refuses one
    /// ("text content blocks must be non-empty"), and a tool that answers with an image alone
    /// has no output text (upstream sends the empty block and gets the 400).
    fn result_content(&self, output: &Value, parts: &[Value]) -> Result<Vec<Value>> {
        let output = output.as_str().unwrap_or("");
        let mut out = Vec::with_capacity(parts.len() + 1);
        if !output.is_empty() {
            out.push(json!({"type": "text", "text": output}));
        }
        for p in parts {
            if kind(p) == "text" && p.get("text").and_then(Value::as_str).is_none_or(str::is_empty) {
                continue;
            }
            out.push(if is_media(p) { self.block(p, false)? } else { p.clone() });
        }
        Ok(out)
    }
}

fn kind(part: &Value) -> &str {
    part.get("type").and_then(Value::as_str).unwrap_or("")
}

/// `messages` as the provider is sent them.
pub(crate) fn wire_messages<'m>(messages: &'m [Value], policy: &PartPolicy<'_>) -> Result<Cow<'m, [Value]>> {
    if !has_parts(messages) {
        return Ok(Cow::Borrowed(messages));
    }
    let mut out = Vec::with_capacity(messages.len() + 1);
    let mut moved: Vec<Value> = Vec::new();
    let flush = |out: &mut Vec<Value>, moved: &mut Vec<Value>| {
        if !moved.is_empty() {
            out.push(json!({"role": "user", "content": std::mem::take(moved)}));
        }
    };
    for m in messages {
        let mut m = m.clone();
        if policy.style == Style::OpenAi && role(&m) == "tool" {
            let obj = m.as_object_mut();
            let (parts, name) = match obj {
                Some(o) => (o.remove("parts"), o.remove("name")),
                None => (None, None),
            };
            let parts = match parts {
                Some(Value::Array(p)) => p,
                _ => Vec::new(),
            };
            let texts: Vec<Value> = parts.iter().filter(|p| kind(p) == "text").cloned().collect();
            if !texts.is_empty() {
                let mut content = vec![json!({"type": "text", "text": m["content"].as_str().unwrap_or("")})];
                content.extend(texts);
                m["content"] = Value::Array(content);
            }
            let label = format!(
                "Output of tool {} ({}):",
                name.as_ref().and_then(Value::as_str).unwrap_or("None"),
                m.get("tool_call_id").and_then(Value::as_str).unwrap_or("None")
            );
            for p in parts.iter().filter(|p| kind(p) != "text") {
                moved.push(json!({"type": "text", "text": label}));
                moved.push(policy.block(p, false)?);
            }
            out.push(m);
            continue;
        }
        flush(&mut out, &mut moved);
        let attached = role(&m) == "user";
        if let Some(Value::Array(blocks)) = m.get("content") {
            let mut encoded = Vec::with_capacity(blocks.len());
            for b in blocks {
                let is_result = b.get("type").and_then(Value::as_str) == Some("tool_result");
                match b.get("parts") {
                    Some(Value::Array(parts)) if is_result && policy.style == Style::Anthropic => {
                        let mut r = b.clone();
                        let content = policy.result_content(&b["content"], parts)?;
                        if let Some(o) = r.as_object_mut() {
                            o.remove("parts");
                            o.insert("content".into(), Value::Array(content));
                        }
                        encoded.push(r);
                    }
                    _ if is_media(b) => encoded.push(policy.block(b, attached)?),
                    _ => encoded.push(b.clone()),
                }
            }
            m["content"] = Value::Array(encoded);
        }
        out.push(m);
    }
    flush(&mut out, &mut moved);
    Ok(Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: &str = "Zm9v";

    fn img() -> Value {
        json!({"type": "image", "mimeType": "image/png", "data": G})
    }

    fn with<T>(
        style: Style,
        limit: Option<u64>,
        mode: Option<UnsupportedPart>,
        f: impl FnOnce(&PartPolicy) -> T,
    ) -> (T, Vec<String>) {
        let said = std::sync::Mutex::new(Vec::new());
        let warn = |_k: String, m: String| said.lock().unwrap().push(m);
        let out = f(&PartPolicy { style, limit, mode, warn: &warn });
        (out, said.into_inner().unwrap())
    }

    #[test]
    fn a_transcript_without_parts_is_sent_as_it_is() {
        let msgs = vec![
            json!({"role": "user", "content": "hi"}),
            json!({"role": "tool", "tool_call_id": "c", "content": "x"}),
        ];
        let (out, _) =
            with(Style::OpenAi, None, None, |p| matches!(wire_messages(&msgs, p).unwrap(), Cow::Borrowed(_)));
        assert!(out);
    }

    #[test]
    fn openai_moves_tool_parts_into_one_user_message_after_the_tool_messages() {
        let msgs = vec![
            json!({"role": "assistant", "content": null, "tool_calls": []}),
            json!({"role": "tool", "tool_call_id": "c1", "content": "shotA output", "parts": [img()], "name": "shotA"}),
            json!({"role": "tool", "tool_call_id": "c2", "content": "shotB output", "parts": [img()], "name": "shotB"}),
        ];
        let (out, _) = with(Style::OpenAi, None, None, |p| wire_messages(&msgs, p).unwrap().into_owned());
        assert_eq!(out.len(), 4);
        assert_eq!(out[1], json!({"role": "tool", "tool_call_id": "c1", "content": "shotA output"}));
        let url = json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{G}")}});
        assert_eq!(
            out[3],
            json!({"role": "user", "content": [
                {"type": "text", "text": "Output of tool shotA (c1):"}, url,
                {"type": "text", "text": "Output of tool shotB (c2):"}, url]})
        );
    }

    #[test]
    fn an_image_alone_is_sent_without_an_empty_text_block() {
        let msgs = vec![json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "u1", "content": "", "is_error": false,
             "parts": [{"type": "text", "text": ""}, img()]}]})];
        let (out, _) = with(Style::Anthropic, None, None, |p| wire_messages(&msgs, p).unwrap().into_owned());
        let content = &out[0]["content"][0]["content"];
        assert_eq!(content.as_array().map(Vec::len), Some(1), "{content}");
        assert_eq!(content[0]["type"], "image");
    }

    #[test]
    fn anthropic_keeps_parts_inside_the_tool_result_and_degrades_audio() {
        let audio = json!({"type": "audio", "mimeType": "audio/mpeg", "data": G});
        let msgs = vec![json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "u1", "content": "out", "is_error": false, "parts": [img(), audio]}]})];
        let (out, said) = with(Style::Anthropic, None, None, |p| wire_messages(&msgs, p).unwrap().into_owned());
        assert_eq!(
            out[0]["content"][0],
            json!({"type": "tool_result", "tool_use_id": "u1", "content": [
                {"type": "text", "text": "out"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": G}},
                {"type": "text", "text": "[unsupported audio part (audio/mpeg, 3 bytes)]"}], "is_error": false})
        );
        assert_eq!(
            said,
            ["[toolnexus] no \"anthropic\" block shape for a audio part (audio/mpeg) — sent as a text placeholder"]
        );
    }

    #[test]
    fn a_prompts_own_part_fails_where_a_tools_degrades() {
        let audio = json!({"type": "audio", "mimeType": "audio/mpeg", "data": G});
        let attached = vec![json!({"role": "user", "content": [{"type": "text", "text": "hear"}, audio.clone()]})];
        let (e, _) = with(Style::Anthropic, None, None, |p| wire_messages(&attached, p).unwrap_err());
        assert_eq!(e.kind(), ErrorKind::UnsupportedPart);
        let (ok, _) =
            with(Style::Anthropic, None, Some(UnsupportedPart::Text), |p| wire_messages(&attached, p).is_ok());
        assert!(ok, "\"text\" degrades a prompt's part too");
        let big = vec![json!({"role": "user", "content": [img()]})];
        let (e, _) = with(Style::OpenAi, Some(2), None, |p| wire_messages(&big, p).unwrap_err());
        assert_eq!(e.message(), "content part is 3 decoded bytes, over the maxPartBytes limit of 2");
        let derived = vec![json!({"role": "tool", "tool_call_id": "c", "content": "o", "parts": [img()], "name": "t"})];
        let (out, said) = with(Style::OpenAi, Some(2), None, |p| wire_messages(&derived, p).unwrap().into_owned());
        assert_eq!(
            out[1]["content"][1],
            json!({"type": "text", "text": "[unsupported image part (image/png, 3 bytes)]"})
        );
        assert!(said[0].contains("over the maxPartBytes limit of 2 — sent as a text placeholder"));
    }
}
