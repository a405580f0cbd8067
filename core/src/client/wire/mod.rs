//! The two wire formats as pure mapping: request bodies, reply parsing, tool-result
//! messages, and reading tool turns back out of a stored transcript. No I/O here. Each
//! style's shapes live in its own file; what both share is here and in `transcript.rs`.
//!
//! Where upstream's bytes would be refused by the real provider we send what it accepts:
//! no anthropic `system` key without system text, no empty text block or empty assistant
//! message recorded from a reply, and every tool call answered by exactly one result.

mod anthropic;
mod openai;
mod parts;
mod transcript;
pub(crate) mod translate;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::options::{ClientOptions, Style};
use crate::error::{Error, Result};
use crate::json_write;
use crate::toolkit::Declarations;
use crate::types::{json_type, JsonObject, Usage};

pub(crate) use parts::{wire_messages, PartPolicy};
pub(crate) use transcript::{
    append_results, balance, calls_of, check_history, last_assistant_text, results_after, Entry,
};

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

/// The request body of one turn, serialised once straight to bytes, content parts encoded as
/// `parts` says; `stream` asks for server-sent events.
pub(crate) fn build_body(
    opts: &ClientOptions,
    model: &str,
    system: Option<&str>,
    messages: &[Value],
    tools: &Declarations,
    stream: bool,
    parts: &PartPolicy<'_>,
) -> Result<Vec<u8>> {
    let messages = &*parts::wire_messages(messages, parts)?;
    // Anthropic refuses a system text that is empty or only whitespace: send none instead.
    let system = system.filter(|s| !s.trim().is_empty());
    let tools = ToolsField::of(tools);
    let params = opts.request_params.as_ref();
    let encoded = match opts.style {
        Style::OpenAi => {
            let tool_choice = tools.as_ref().map(|_| "auto");
            let stream_options = stream.then_some(openai::StreamOptions { include_usage: true });
            let tail = openai::Tail { tools, tool_choice, stream: stream.then_some(true), stream_options };
            encode(&openai::Head { model }, messages, &tail, params, openai::KEYS)
        }
        Style::Anthropic => {
            let head = anthropic::Head { model, max_tokens: opts.max_tokens, system };
            let tail = anthropic::Tail { tools, stream: stream.then_some(true) };
            encode(&head, messages, &tail, params, anthropic::KEYS)
        }
    };
    encoded.map_err(|e| Error::new(crate::ErrorKind::Internal, format!("cannot encode the request body: {e}")))
}

/// A body: `head`'s fields, `"messages"`, `tail`'s fields, then the caller's request params.
/// The messages, most of the bytes, are written by json_write; the rest by serde. A param
/// that names one of the body's `keys` takes that key's place, as inserting it into the
/// body's object would.
fn encode<H: Serialize, T: Serialize>(
    head: &H,
    messages: &[Value],
    tail: &T,
    params: Option<&JsonObject>,
    keys: &[&str],
) -> serde_json::Result<Vec<u8>> {
    let mut out = serde_json::to_vec(head)?;
    // head is an object with at least the model: its closing brace gives way to the rest.
    out.pop();
    out.extend_from_slice(b",\"messages\":");
    json_write::write_array(&mut out, messages);
    let tail = serde_json::to_vec(tail)?;
    if tail.len() > 2 {
        out.push(b',');
        out.extend_from_slice(&tail[1..tail.len() - 1]);
    }
    let Some(params) = params.filter(|p| !p.is_empty()) else {
        out.push(b'}');
        return Ok(out);
    };
    if params.keys().any(|k| keys.contains(&k.as_str())) {
        let mut v: Value = serde_json::from_slice(&[&out[..], b"}"].concat())?;
        if let Value::Object(m) = &mut v {
            for (k, val) in params {
                m.insert(k.clone(), val.clone());
            }
        }
        return serde_json::to_vec(&v);
    }
    for (k, val) in params {
        out.push(b',');
        json_write::write_str(&mut out, k);
        out.push(b':');
        json_write::write_value(&mut out, val);
    }
    out.push(b'}');
    Ok(out)
}

/// The first user message of a run: the system message (openai, fresh runs only) and the
/// prompt (a string, or canonical parts).
pub(crate) fn opening_messages(style: Style, system: Option<&str>, fresh: bool, prompt: Value) -> Vec<Value> {
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
        return Err(err);
    }
    match style {
        Style::OpenAi => openai::parse(body),
        Style::Anthropic => anthropic::parse(body),
    }
}

/// [`usage_of`] and [`parse_reply`] of a 2xx body still in its bytes, read without building a
/// `Value` of the whole body: the same usage and reply, or the same error. Only text that is
/// not JSON is the outer error (the usage of a reply that cannot be parsed still counts).
pub(crate) fn read_reply(style: Style, body: &[u8]) -> serde_json::Result<(Usage, Result<Reply>)> {
    match style {
        Style::OpenAi => openai::read(body),
        Style::Anthropic => anthropic::read(body),
    }
}

/// The whole of `body`, read as `T` leniently (`None`: it was not of a kind `T` is read from).
fn read_lenient<'a, T: crate::client::lenient::Lenient<'a>>(body: &'a [u8]) -> serde_json::Result<Option<T>> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let read = <crate::client::lenient::Loose<T> as serde::Deserialize>::deserialize(&mut de)?;
    de.end()?;
    Ok(read.0)
}

/// The token counts of one reply, as the style reports them.
pub(crate) fn usage_of(style: Style, body: &Value) -> Usage {
    match (style, body.get("usage")) {
        (_, None) => Usage::default(),
        (Style::OpenAi, Some(u)) => openai::usage(u),
        (Style::Anthropic, Some(u)) => anthropic::usage(u),
    }
}

/// The error of a 2xx body's `error` object, when it carries one.
pub(crate) fn provider_error(body: &Value) -> Option<Error> {
    let e = body.get("error")?;
    if e.is_null() {
        return None;
    }
    Some(error_object(e.get("message").and_then(Value::as_str)))
}

/// The error of a 2xx body that carried an `error` (with `message` when it was text).
fn error_object(message: Option<&str>) -> Error {
    Error::protocol(format!("provider returned an error object: {}", error_text(message)))
}

/// A provider's error message as errors show it: at most 200 characters.
pub(crate) fn error_text(message: Option<&str>) -> String {
    match message {
        Some(m) => m.chars().take(200).collect(),
        None => "(no message)".into(),
    }
}

/// `v[key]` when `v` is an object holding it, as `Value::get` answers. The walks over a
/// transcript ask every message for a key or two: a message has a few keys, compared in turn
/// here, where the map's own lookup first hashes the key (SipHash, most of such a walk's cost).
pub(crate) fn field<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    let map = v.as_object()?;
    if map.len() > 8 {
        return map.get(key);
    }
    map.iter().find_map(|(k, item)| (k == key).then_some(item))
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

#[cfg(test)]
mod tests {
    use super::transcript::NO_RESULT;
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
    fn an_openai_reply_is_recorded_as_the_assistant_whatever_role_it_names() {
        for role in [json!("tool"), json!(null), json!(7)] {
            let mut msg = json!({"content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{}"}}]});
            if !role.is_null() {
                msg["role"] = role;
            }
            let r = parse_reply(Style::OpenAi, json!({"choices": [{"message": msg}]})).unwrap();
            assert_eq!(r.message.unwrap()["role"], "assistant");
        }
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
        let body = build_body(
            &opts,
            "m",
            Some("  \n"),
            &[json!({"role":"user","content":"hi"})],
            &Declarations::new(vec![]),
            false,
            &PartPolicy { style: Style::Anthropic, limit: None, mode: None, warn: &|_, _| {} },
        )
        .unwrap();
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert!(v.get("system").is_none(), "{v}");
    }

    /// The bytes a body had when serde wrote it whole: keys in order, params inserted into
    /// the object (a new key last, a body key replaced where it stands).
    fn serde_body(style: Style, messages: &[Value], tools: bool, stream: bool, params: &JsonObject) -> Vec<u8> {
        let mut v = match style {
            Style::OpenAi => json!({"model": "m", "messages": messages}),
            Style::Anthropic => json!({"model": "m", "max_tokens": 99, "system": "sys", "messages": messages}),
        };
        if tools {
            v["tools"] = json!([{"type": "function", "function": {"name": "t"}}]);
            if style == Style::OpenAi {
                v["tool_choice"] = json!("auto");
            }
        }
        if stream {
            v["stream"] = json!(true);
            if style == Style::OpenAi {
                v["stream_options"] = json!({"include_usage": true});
            }
        }
        for (k, val) in params {
            v[k] = val.clone();
        }
        serde_json::to_vec(&v).unwrap()
    }

    #[test]
    fn bodies_are_the_bytes_serde_wrote_with_every_option() {
        let messages = [
            json!({"role": "user", "content": "quote \" backslash \\ newline \n \u{1} é 🎉"}),
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c", "n": 1.5}]}),
        ];
        let tool = json!({"type": "function", "function": {"name": "t"}});
        for style in [Style::OpenAi, Style::Anthropic] {
            for (tools, stream) in [(false, false), (true, false), (false, true), (true, true)] {
                for params in [json!({}), json!({"temperature": 0.2, "top_p": 1}), json!({"stream": false, "x": [1]})] {
                    let params = params.as_object().unwrap().clone();
                    let mut opts = ClientOptions::new("http://x/v1", style, "m");
                    opts.max_tokens = 99;
                    opts.request_params = Some(params.clone());
                    let decls = Declarations::new(if tools { vec![tool.clone()] } else { vec![] });
                    let body = build_body(
                        &opts,
                        "m",
                        Some("sys"),
                        &messages,
                        &decls,
                        stream,
                        &PartPolicy { style, limit: None, mode: None, warn: &|_, _| {} },
                    )
                    .unwrap();
                    let want = serde_body(style, &messages, tools, stream, &params);
                    assert_eq!(String::from_utf8(body).unwrap(), String::from_utf8(want).unwrap());
                }
            }
        }
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

    #[test]
    fn field_answers_as_get_does() {
        let big: serde_json::Map<String, Value> = (0..12).map(|i| (format!("k{i}"), json!(i))).collect();
        let values =
            [json!({"role": "user", "content": "a"}), Value::Object(big), json!([1]), json!("role"), json!(null)];
        for v in &values {
            for key in ["role", "content", "k0", "k11", "k12", "", "0"] {
                assert_eq!(field(v, key), v.get(key), "{v} {key}");
            }
        }
    }

    /// A reply as both readers give it: the usage, then the message, text and calls or the error.
    fn outcome(usage: Usage, reply: Result<Reply>) -> String {
        match reply {
            Ok(r) => {
                let calls: Vec<_> = r.calls.iter().map(|c| (&c.id, &c.name, &c.args, &c.raw_args)).collect();
                format!("{usage:?} {:?} {:?} {calls:?}", r.message, r.text)
            }
            Err(e) => format!("{usage:?} {e}"),
        }
    }

    #[test]
    fn reading_a_body_from_its_bytes_agrees_with_parsing_its_value() {
        let openai = [
            r#"{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"hi","refusal":null}}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}"#,
            r#"{"choices":[{"message":{"content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},{"id":"c2","function":{"name":"g","arguments":{"b":2}}}]}},{"message":{"content":"second choice"}}]}"#,
            r#"{"choices":[{"message":{"content":"a"}}],"choices":[{"message":{"content":"last wins"}}],"usage":[1]}"#,
            r#"{"choices":[{"message":"text"}],"usage":{"prompt_tokens":-1,"completion_tokens":2.5,"total_tokens":"9"}}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":1}}"#,
            r#"{"choices":{"0":{"message":{}}}}"#,
            r#"{"error":{"message":"overloaded","type":"x"},"usage":{"total_tokens":7}}"#,
            r#"{"error":"plain","choices":[{"message":{"content":"x"}}]}"#,
            r#"{"error":null,"choices":[{"message":{"content":"","tool_calls":[]}}]}"#,
            r#"{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"text":"b"}],"tool_calls":{}}}]}"#,
            r#"{"choices":[{"message":{"content":7}}]}"#,
            r#"[]"#,
            r#"null"#,
            r#""text""#,
        ];
        let anthropic = [
            r#"{"id":"m","type":"message","content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"t","name":"f","input":{"a":1}}],"usage":{"input_tokens":3,"output_tokens":4}}"#,
            r#"{"content":[{"type":"text","text":"  "},{"type":"thinking","thinking":"x"}],"usage":{"input_tokens":1.0}}"#,
            r#"{"content":null}"#,
            r#"{"content":"hi"}"#,
            r#"{"usage":{"input_tokens":2}}"#,
            r#"{"error":{"message":"overloaded"},"usage":{"output_tokens":1}}"#,
            r#"{"content":[{"type":"text","text":7}]}"#,
            r#"{"content":[],"content":[{"type":"text","text":"last"}]}"#,
        ];
        let styles = openai.iter().map(|b| (Style::OpenAi, b)).chain(anthropic.iter().map(|b| (Style::Anthropic, b)));
        for (style, body) in styles {
            let value: Value = serde_json::from_str(body).unwrap();
            let parsed = outcome(usage_of(style, &value), parse_reply(style, value));
            let (usage, reply) = read_reply(style, body.as_bytes()).unwrap();
            assert_eq!(outcome(usage, reply), parsed, "{body}");
        }
        for bad in
            ["", "{", r#"{"choices":[]} x"#, r#"{"id":tru}"#, r#"{"choices":[{"message":{"content":"\ud800"}}]}"#]
        {
            let expected = serde_json::from_str::<Value>(bad).unwrap_err().to_string();
            assert_eq!(read_reply(Style::OpenAi, bad.as_bytes()).err().map(|e| e.to_string()), Some(expected), "{bad}");
        }
        // A field the loop skips is held to JSON's grammar only (lenient.rs).
        let skipped = r#"{"id":"\ud800","created":1e400,"choices":[{"message":{"content":"hi"}}]}"#;
        assert!(serde_json::from_str::<Value>(skipped).is_err());
        let (_, reply) = read_reply(Style::OpenAi, skipped.as_bytes()).unwrap();
        assert_eq!(reply.unwrap().text, "hi");
    }
}
