//! What an MCP server's answers become in the engine (SPEC §0.4 and §2, as the 0.21.0 Python
//! package maps them): a `tools/call` result as a [`ToolResult`], a listed tool's schema as
//! the one the model sees, and the per-server `tools` filter. Pure functions over the wire
//! JSON, so every mapping rule is tested without a server.
//!
//! A result's images, audio and binary resources become the result's content parts
//! ([`crate::content`]); when a result has no text at all the output describes them one per
//! line, `<type> (<mimeType>, <bytes> bytes)`, as upstream's does, rather than handing the
//! model an empty string.

use serde_json::{json, Map, Value};

pub use crate::content::describe_part;
use crate::types::{JsonObject, ToolResult};
use crate::warning::Warning;

/// The output of an error result whose content has no text.
pub const NO_ERROR_TEXT: &str = "MCP tool returned an error";

/// A `tools/call` result (`{content, structuredContent?, isError?}`) as a [`ToolResult`]:
/// `isError` ⇒ an error with the non-blank text parts joined by a blank line;
/// `structuredContent` ⇒ its compact JSON; else the text parts (then the text of embedded
/// resources) joined by newlines, or a description of the non-text parts when there is no
/// text. `metadata` is `{server}`; the parts, on every branch, `parts`.
pub fn call_result(server: &str, result: &Value) -> ToolResult {
    let content = result.get("content").and_then(Value::as_array).map(Vec::as_slice);
    let found = content.map(collect_parts).unwrap_or_default();
    let metadata = metadata(server);
    if result.get("isError") == Some(&Value::Bool(true)) {
        return ToolResult { output: error_text(content), is_error: true, metadata, parts: some(found) };
    }
    if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
        return ToolResult { output: structured.to_string(), is_error: false, metadata, parts: some(found) };
    }
    let mut output = joined_text(content.unwrap_or_default());
    if output.is_empty() && !found.is_empty() {
        output = found.iter().map(describe_part).collect::<Vec<_>>().join("\n");
    }
    ToolResult { output, is_error: false, metadata, parts: some(found) }
}

/// `None` for no parts: a text-only result stays byte-identical to one from before parts.
fn some(parts: Vec<Value>) -> Option<Vec<Value>> {
    (!parts.is_empty()).then_some(parts)
}

/// The result of a call that never got an answer (timeout, transport closed, server gone).
pub fn failed_call(server: &str, message: String) -> ToolResult {
    ToolResult { output: message, is_error: true, metadata: metadata(server), parts: None }
}

fn metadata(server: &str) -> Option<JsonObject> {
    let mut m = Map::new();
    m.insert("server".into(), Value::String(server.into()));
    Some(m)
}

fn text_of(item: &Value) -> Option<&str> {
    (item.get("type").and_then(Value::as_str) == Some("text")).then(|| item.get("text").and_then(Value::as_str))?
}

fn error_text(content: Option<&[Value]>) -> String {
    let Some(content) = content else { return NO_ERROR_TEXT.into() };
    let texts: Vec<&str> = content.iter().filter_map(text_of).filter(|t| !t.trim().is_empty()).collect();
    if texts.is_empty() {
        NO_ERROR_TEXT.into()
    } else {
        texts.join("\n\n")
    }
}

/// The text parts, then the text of every embedded text resource: text the server meant the
/// model to read.
fn joined_text(content: &[Value]) -> String {
    let embedded = content
        .iter()
        .filter(|i| i.get("type").and_then(Value::as_str) == Some("resource"))
        .filter_map(|i| i.get("resource").and_then(|r| r.get("text")).and_then(Value::as_str));
    content.iter().filter_map(text_of).chain(embedded).collect::<Vec<_>>().join("\n")
}

fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn mime_or_default(v: &Value) -> &str {
    str_field(v, "mimeType").filter(|m| !m.is_empty()).unwrap_or("application/octet-stream")
}

/// The non-text content as upstream's parts: image and audio as themselves, a
/// `resource_link` as a `file` with its `url`, an embedded binary resource as a `file` with
/// its base64 `data`. Base64 is passed through unchanged.
fn collect_parts(content: &[Value]) -> Vec<Value> {
    let mut parts = Vec::new();
    for item in content {
        match str_field(item, "type") {
            Some(kind @ ("image" | "audio")) => {
                if let (Some(data), Some(mime)) = (str_field(item, "data"), str_field(item, "mimeType")) {
                    parts.push(json!({"type": kind, "mimeType": mime, "data": data}));
                }
            }
            Some("resource_link") => {
                if let Some(uri) = item.get("uri").filter(|u| !u.is_null()) {
                    let uri = uri.as_str().map_or_else(|| uri.to_string(), str::to_string);
                    let mut part = json!({"type": "file", "mimeType": mime_or_default(item), "url": uri});
                    if let Some(name) = str_field(item, "name").filter(|n| !n.is_empty()) {
                        part["name"] = Value::String(name.into());
                    }
                    parts.push(part);
                }
            }
            Some("resource") => {
                let Some(res) = item.get("resource") else { continue };
                if let Some(blob) = str_field(res, "blob") {
                    let mut part = json!({"type": "file", "mimeType": mime_or_default(res), "data": blob});
                    if let Some(uri) = res.get("uri").filter(|u| !u.is_null()) {
                        part["name"] = Value::String(uri.as_str().map_or_else(|| uri.to_string(), str::to_string));
                    }
                    parts.push(part);
                }
            }
            _ => {}
        }
    }
    parts
}

/// A listed tool's input schema as the model sees it: the server's schema, with `type`
/// forced to `object`, `properties` defaulted to `{}` and `additionalProperties: false`.
pub fn input_schema(schema: &Value) -> Value {
    let mut out = schema.as_object().cloned().unwrap_or_default();
    let properties = out.get("properties").filter(|p| p.is_object()).cloned().unwrap_or_else(|| json!({}));
    out.insert("type".into(), Value::String("object".into()));
    out.insert("properties".into(), properties);
    out.insert("additionalProperties".into(), Value::Bool(false));
    Value::Object(out)
}

/// Applies a server's `tools` filter to its listed tools, by their original names, with the
/// same rules as the built-in and skill filters: none or empty ⇒ all; at least one `true` ⇒
/// only the `true` names; only `false` ⇒ all but those. A filter name no tool has is a
/// warning, never an error.
pub fn filter_tools<T>(
    server: &str,
    defs: Vec<T>,
    name: impl Fn(&T) -> &str,
    filter: Option<&[(String, bool)]>,
) -> (Vec<T>, Vec<Warning>) {
    let Some(filter) = filter.filter(|f| !f.is_empty()) else { return (defs, Vec::new()) };
    let warnings = filter
        .iter()
        .filter(|(k, _)| !defs.iter().any(|d| name(d) == k))
        .map(|(k, _)| Warning {
            code: "mcp_tools_filter",
            message: format!("[toolnexus] server \"{server}\" tools filter name \"{k}\" matched no tool"),
        })
        .collect();
    let any_true = filter.iter().any(|(_, v)| *v);
    let setting = |n: &str| filter.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
    let kept = defs
        .into_iter()
        .filter(|d| if any_true { setting(name(d)) == Some(true) } else { setting(name(d)) != Some(false) })
        .collect();
    (kept, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOLDEN: &str =
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

    fn text(t: &str) -> Value {
        json!({"type": "text", "text": t})
    }

    fn meta() -> Option<JsonObject> {
        let mut m = Map::new();
        m.insert("server".into(), json!("s"));
        Some(m)
    }

    #[test]
    fn text_parts_join_with_newlines() {
        let r = call_result("s", &json!({"content": [text("a"), text("b")]}));
        assert_eq!(r, ToolResult { output: "a\nb".into(), is_error: false, metadata: meta(), parts: None });
        assert_eq!(call_result("s", &json!({})).output, "");
    }

    #[test]
    fn errors_join_non_blank_text_with_a_blank_line() {
        let r = call_result("s", &json!({"isError": true, "content": [text("bad"), text("  "), text("worse")]}));
        assert_eq!((r.output.as_str(), r.is_error), ("bad\n\nworse", true));
        let r = call_result("s", &json!({"isError": true, "content": []}));
        assert_eq!(r.output, NO_ERROR_TEXT);
        assert_eq!(call_result("s", &json!({"isError": true})).output, NO_ERROR_TEXT);
    }

    #[test]
    fn structured_content_wins_as_compact_json() {
        let r =
            call_result("s", &json!({"content": [text("ignored")], "structuredContent": {"a": 1, "b": [true, "é"]}}));
        assert_eq!(r.output, r#"{"a":1,"b":[true,"é"]}"#);
        // null counts as absent.
        assert_eq!(call_result("s", &json!({"content": [text("t")], "structuredContent": null})).output, "t");
        // An error wins over structured content.
        assert!(call_result("s", &json!({"isError": true, "structuredContent": {}})).is_error);
    }

    #[test]
    fn images_audio_and_resources_become_parts() {
        let content = json!([
            text("shot"),
            {"type": "image", "data": GOLDEN, "mimeType": "image/png"},
            {"type": "audio", "data": GOLDEN, "mimeType": "audio/mpeg"},
            {"type": "resource_link", "uri": "https://x/y.pdf", "name": "y", "mimeType": "application/pdf"},
            {"type": "resource", "resource": {"uri": "file:///a.pdf", "mimeType": "application/pdf", "blob": GOLDEN}},
            {"type": "resource", "resource": {"uri": "file:///a.md", "mimeType": "text/markdown", "text": "hi"}},
            {"type": "image", "data": GOLDEN}
        ]);
        let r = call_result("s", &json!({"content": content}));
        assert_eq!(r.output, "shot\nhi");
        let parts = json!([
            {"type": "image", "mimeType": "image/png", "data": GOLDEN},
            {"type": "audio", "mimeType": "audio/mpeg", "data": GOLDEN},
            {"type": "file", "mimeType": "application/pdf", "url": "https://x/y.pdf", "name": "y"},
            {"type": "file", "mimeType": "application/pdf", "data": GOLDEN, "name": "file:///a.pdf"},
        ]);
        assert_eq!((r.metadata, r.parts.map(Value::Array)), (meta(), Some(parts)));
    }

    #[test]
    fn a_result_without_text_describes_its_parts() {
        let r = call_result(
            "s",
            &json!({"content": [
                {"type": "image", "data": GOLDEN, "mimeType": "image/png"},
                {"type": "resource_link", "uri": "https://x/y.pdf"}
            ]}),
        );
        assert_eq!(r.output, "image (image/png, 70 bytes)\nfile (application/octet-stream, 0 bytes)");
    }

    #[test]
    fn base64_lengths_without_decoding() {
        use crate::content::decoded_len;
        assert_eq!((decoded_len(""), decoded_len("QQ=="), decoded_len("QUI="), decoded_len("QUJD")), (0, 1, 2, 3));
    }

    #[test]
    fn schemas_are_closed_objects() {
        let s = input_schema(&json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}));
        assert_eq!(
            s,
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false})
        );
        assert_eq!(
            input_schema(&json!({})),
            json!({"type": "object", "properties": {}, "additionalProperties": false})
        );
        assert_eq!(
            input_schema(&json!({"properties": null, "additionalProperties": true})),
            json!({"properties": {}, "additionalProperties": false, "type": "object"})
        );
    }

    #[test]
    fn the_tools_filter_has_the_builtin_rules() {
        let all = || vec!["a", "b", "c"];
        let run = |f: &[(&str, bool)]| {
            let f: Vec<(String, bool)> = f.iter().map(|(k, v)| (k.to_string(), *v)).collect();
            let (kept, w) = filter_tools("srv", all(), |d| d, Some(&f));
            (kept, w.into_iter().map(|w| w.message).collect::<Vec<_>>())
        };
        assert_eq!(run(&[("a", true), ("b", true)]).0, ["a", "b"]);
        assert_eq!(run(&[("c", false)]).0, ["a", "b"]);
        assert_eq!(run(&[]).0, ["a", "b", "c"]);
        assert_eq!(filter_tools("srv", all(), |d| d, None).0, ["a", "b", "c"]);
        let (kept, warnings) = run(&[("a", true), ("nope", true)]);
        assert_eq!(kept, ["a"]);
        assert_eq!(warnings, ["[toolnexus] server \"srv\" tools filter name \"nope\" matched no tool"]);
        // A true wins over the false beside it: only the true names are kept.
        assert_eq!(run(&[("a", true), ("b", false)]).0, ["a"]);
    }
}
