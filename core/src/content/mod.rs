//! Content parts (SPEC §1B, §8A): images, files and audio beside text, in prompts and in tool
//! results. A part is upstream's canonical JSON object, `{"type", "text"?, "mimeType"?,
//! "data"?, "url"?, "name"?}`: a text part carries `text`; any other carries a `mimeType` and
//! exactly one of `data` (standard base64) or `url`, and never a filesystem path. Parts stay in
//! that form in every transcript; each provider's block shapes are made only when a request is
//! sent ([`encode_part`]).

mod build;
mod encode;

use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::{json, Map, Value};

pub use build::{
    base64, build_part, build_part_by_mime, build_part_from_json, extension, kind_for_mime, media_type, PartOptions,
    PartSource, PART_SPEC_KEYS,
};
pub use encode::encode_part;

use crate::error::{Error, ErrorKind, Result};

/// The media files a part is made from by extension: (extension, MIME type, part type).
pub const MEDIA_TYPES: [(&str, &str, &str); 8] = [
    ("png", "image/png", "image"),
    ("jpg", "image/jpeg", "image"),
    ("jpeg", "image/jpeg", "image"),
    ("gif", "image/gif", "image"),
    ("webp", "image/webp", "image"),
    ("pdf", "application/pdf", "file"),
    ("mp3", "audio/mpeg", "audio"),
    ("wav", "audio/wav", "audio"),
];

/// The part kinds besides `text`.
pub const MEDIA_KINDS: [&str; 3] = ["image", "file", "audio"];

/// A [`ErrorKind::ContentPart`] error.
pub(crate) fn part_error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::ContentPart, message)
}

fn field<'a>(part: &'a Value, key: &str) -> Option<&'a str> {
    part.get(key).and_then(Value::as_str)
}

fn present(part: &Value, key: &str) -> bool {
    field(part, key).is_some_and(|s| !s.is_empty())
}

/// A text part.
pub fn text_part(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// Whether `v` is a part in the canonical form: a text part with a string `text`, or a media
/// part with a string `mimeType` (a provider's own block, `image_url` say, is not).
pub fn is_part(v: &Value) -> bool {
    match field(v, "type") {
        Some("text") => v.get("text").is_some_and(Value::is_string),
        Some(t) if MEDIA_KINDS.contains(&t) => v.get("mimeType").is_some_and(Value::is_string),
        _ => false,
    }
}

/// Checks a part, with upstream's messages (a [`ErrorKind::ContentPart`] error).
pub fn validate(part: &Value) -> Result<()> {
    let kind = field(part, "type").unwrap_or("");
    if kind == "text" {
        return match part.get("text") {
            Some(Value::String(_)) => Ok(()),
            _ => Err(part_error("a text part needs text")),
        };
    }
    if !MEDIA_KINDS.contains(&kind) {
        return Err(part_error(format!("unknown content part type \"{kind}\"")));
    }
    if !present(part, "mimeType") {
        return Err(part_error(format!("a {kind} part needs a mimeType")));
    }
    match (present(part, "data"), present(part, "url")) {
        (true, true) => Err(part_error(format!("a {kind} part carries both data and url — exactly one is allowed"))),
        (false, false) => {
            Err(part_error(format!("a {kind} part carries neither data nor url — exactly one is required")))
        }
        _ => Ok(()),
    }
}

/// [`validate`], then the part's decoded bytes checked against `limit` (none: no check; the
/// process-wide limit is not consulted), as the JS port's `validatePart(part, maxPartBytes)`.
pub fn validate_within(part: &Value, limit: Option<u64>) -> Result<()> {
    validate(part)?;
    match (limit, part_bytes(part)) {
        (Some(l), size) if size > l => Err(too_large(size, l)),
        _ => Ok(()),
    }
}

/// A part in its canonical key order with only the keys it carries (`to_dict`): text parts
/// `{type, text}`; others `{type, mimeType, data?, url?, name?}`.
pub fn canonical(part: &Value) -> Value {
    let kind = field(part, "type").unwrap_or("");
    if kind == "text" {
        return json!({"type": "text", "text": field(part, "text").unwrap_or("")});
    }
    let mut out = Map::new();
    out.insert("type".into(), json!(kind));
    out.insert("mimeType".into(), part.get("mimeType").cloned().unwrap_or(Value::Null));
    for key in ["data", "url"] {
        if let Some(v) = part.get(key).filter(|v| !v.is_null()) {
            out.insert(key.into(), v.clone());
        }
    }
    if present(part, "name") {
        out.insert("name".into(), part["name"].clone());
    }
    Value::Object(out)
}

/// A prompt given as parts, checked and in canonical form: each item a part, or a string (a
/// text part). Order is kept: it means something to the model.
pub fn normalize_parts(items: &[Value]) -> Result<Vec<Value>> {
    items
        .iter()
        .map(|item| {
            let part = match item {
                Value::String(s) => json!({"type": "text", "text": s}),
                Value::Object(_) => item.clone(),
                other => return Err(part_error(format!("not a content part: {}", crate::types::json_type(other)))),
            };
            validate(&part)?;
            Ok(canonical(&part))
        })
        .collect()
}

/// The decoded length of standard base64, without decoding it.
pub fn decoded_len(b64: &str) -> u64 {
    if b64.is_empty() {
        return 0;
    }
    let pad = if b64.ends_with("==") { 2 } else { u64::from(b64.ends_with('=')) };
    (b64.len() as u64 / 4 * 3).saturating_sub(pad)
}

/// The decoded bytes a part carries (0 for text and url parts).
pub fn part_bytes(part: &Value) -> u64 {
    field(part, "data").map_or(0, decoded_len)
}

/// `{type, mimeType, bytes}`: what events and logs may say of a part, never its data.
pub fn summarize(part: &Value) -> Value {
    json!({"type": field(part, "type").unwrap_or(""), "mimeType": part.get("mimeType").cloned().unwrap_or(Value::Null),
        "bytes": part_bytes(part)})
}

/// Every image, file and audio part in a transcript, [`summarize`]d: a message's `parts`, the
/// parts in its `content`, and an Anthropic `tool_result` block's `parts`.
pub fn part_summaries(messages: &[Value]) -> Vec<Value> {
    let mut found = Vec::new();
    let mut scan = |parts: Option<&Value>, canonical_only: bool| {
        for p in parts.and_then(Value::as_array).into_iter().flatten() {
            if (!canonical_only || is_part(p)) && p.is_object() && field(p, "type") != Some("text") {
                found.push(summarize(p));
            }
        }
    };
    for m in messages {
        scan(m.get("parts"), false);
        scan(m.get("content"), true);
        for b in m.get("content").and_then(Value::as_array).into_iter().flatten() {
            if field(b, "type") == Some("tool_result") {
                scan(b.get("parts"), false);
            }
        }
    }
    found
}

/// The decoded bytes a media part counts as one token for.
pub const PART_BYTES_PER_TOKEN: u64 = 750;

/// The fewest tokens a media part counts as.
pub const MIN_PART_TOKENS: u64 = 85;

/// The tokens a media part of `bytes` decoded bytes counts as: `max(85, bytes / 750)`.
pub fn media_tokens(bytes: u64) -> u64 {
    (bytes / PART_BYTES_PER_TOKEN).max(MIN_PART_TOKENS)
}

/// The tokens a part is counted as: text `max(1, chars / 4)`, media [`media_tokens`].
pub fn estimate_tokens(part: &Value) -> u64 {
    match field(part, "type") {
        Some("text") => (field(part, "text").unwrap_or("").chars().count() as u64 / 4).max(1),
        _ => media_tokens(part_bytes(part)),
    }
}

/// `<type> (<mimeType>, <bytes> bytes)`, the same in every port.
pub fn describe_part(part: &Value) -> String {
    format!(
        "{} ({}, {} bytes)",
        field(part, "type").unwrap_or(""),
        field(part, "mimeType").unwrap_or(""),
        part_bytes(part)
    )
}

/// A part as the JS and Clojure ports show it in a log line (their `describePart`): a text
/// part `{type, bytes}` (its text's UTF-8 length), any other [`summarize`]d. Never its data.
pub fn part_view(part: &Value) -> Value {
    match field(part, "type") {
        Some("text") => json!({"type": "text", "bytes": field(part, "text").unwrap_or("").len()}),
        _ => summarize(part),
    }
}

/// A part on one line, as the JS and Clojure ports render it (their `summarizePart`): a text
/// part is its text, any other [`describe_part`].
pub fn part_line(part: &Value) -> String {
    match field(part, "type") {
        Some("text") => field(part, "text").unwrap_or("").to_string(),
        _ => describe_part(part),
    }
}

/// What a host may say of a part without sending it, never its data: `"view"`
/// ([`part_view`]), `"line"` ([`part_line`]), `"description"` ([`describe_part`]),
/// `"placeholder"` ([`placeholder_text`]), `"bytes"` ([`part_bytes`]) and
/// `"estimated_tokens"` ([`estimate_tokens`]). Nothing is checked: a malformed part is
/// described as it stands ([`validate`] says what is wrong).
pub fn inspect(part: &Value) -> Value {
    json!({"view": part_view(part), "line": part_line(part), "description": describe_part(part),
        "placeholder": placeholder_text(part), "bytes": part_bytes(part), "estimated_tokens": estimate_tokens(part)})
}

/// `[unsupported <type> part (<mimeType>, <bytes> bytes)]`: what a model sees for a part it
/// cannot be sent.
pub fn placeholder_text(part: &Value) -> String {
    format!("[unsupported {}]", describe_part(part).replacen(" (", " part (", 1))
}

/// The process-wide `maxPartBytes` (decoded bytes; -1 for none).
static MAX_PART_BYTES: AtomicI64 = AtomicI64::new(-1);

/// Sets the process-wide part size limit, in decoded bytes (`None`: no limit). A client's own
/// `max_part_bytes` wins over it.
pub fn set_max_part_bytes(limit: Option<u64>) {
    MAX_PART_BYTES.store(limit.map_or(-1, |l| l.min(i64::MAX as u64) as i64), Ordering::Relaxed);
}

/// The process-wide part size limit.
pub fn max_part_bytes() -> Option<u64> {
    u64::try_from(MAX_PART_BYTES.load(Ordering::Relaxed)).ok()
}

/// The size error of a part of `size` decoded bytes over `limit`.
pub fn too_large(size: u64, limit: u64) -> Error {
    part_error(format!("content part is {size} decoded bytes, over the maxPartBytes limit of {limit}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAGUlEQVR42mP4z8AARwyrkBAVJZClkAEVJQBm3VpRJDtqMQAAAABJRU5ErkJggg==";

    #[test]
    fn validation_speaks_upstreams_words() {
        let msg = |v: Value| validate(&v).unwrap_err().message().to_string();
        assert_eq!(msg(json!({"type": "text"})), "a text part needs text");
        assert!(validate(&json!({"type": "text", "text": ""})).is_ok());
        assert_eq!(msg(json!({"type": "video"})), "unknown content part type \"video\"");
        assert_eq!(msg(json!({"type": "image", "data": "x"})), "a image part needs a mimeType");
        assert_eq!(
            msg(json!({"type": "image", "mimeType": "image/png", "data": "x", "url": "https://a"})),
            "a image part carries both data and url — exactly one is allowed"
        );
        assert_eq!(
            msg(json!({"type": "file", "mimeType": "application/pdf", "data": ""})),
            "a file part carries neither data nor url — exactly one is required"
        );
        assert_eq!(validate(&json!({"type": "x"})).unwrap_err().kind(), ErrorKind::ContentPart);
    }

    #[test]
    fn the_helpers_agree_with_upstream() {
        let p = json!({"type": "image", "mimeType": "image/png", "data": PNG});
        assert_eq!(decoded_len(PNG), 82);
        assert_eq!(summarize(&p), json!({"type": "image", "mimeType": "image/png", "bytes": 82}));
        assert_eq!(describe_part(&p), "image (image/png, 82 bytes)");
        assert_eq!(placeholder_text(&p), "[unsupported image part (image/png, 82 bytes)]");
        assert_eq!(estimate_tokens(&p), 85);
        assert_eq!(estimate_tokens(&json!({"type": "image", "mimeType": "x", "data": "A".repeat(2_666_668)})), 2666);
        assert_eq!(estimate_tokens(&json!({"type": "text", "text": "ab"})), 1);
        let url = json!({"type": "file", "mimeType": "application/pdf", "url": "https://x/y.pdf"});
        assert_eq!(describe_part(&url), "file (application/pdf, 0 bytes)");
    }

    #[test]
    fn prompts_normalise_in_order_and_refuse_provider_blocks() {
        let parts = normalize_parts(&[
            json!("before"),
            json!({"name": "", "data": PNG, "mimeType": "image/png", "type": "image"}),
        ])
        .unwrap();
        assert_eq!(parts[0], json!({"type": "text", "text": "before"}));
        assert_eq!(
            serde_json::to_string(&parts[1]).unwrap(),
            format!(r#"{{"type":"image","mimeType":"image/png","data":"{PNG}"}}"#)
        );
        let e = normalize_parts(&[json!({"type": "image_url", "image_url": {"url": "x"}})]).unwrap_err();
        assert_eq!(e.message(), "unknown content part type \"image_url\"");
        assert!(is_part(&parts[1]) && !is_part(&json!({"type": "image"})));
    }
}
