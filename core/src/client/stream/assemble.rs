//! Each style's streamed events folded back into the reply the same call would have answered
//! unstreamed, so that the loop reads a streamed turn exactly as it reads any other; text
//! deltas go to the caller as they are folded in.

use std::borrow::Cow;

use serde_json::{json, Map, Value};

use super::super::options::Style;
use crate::client::lenient::{lenient_object, ErrorField, Loose, Present};
use crate::error::{Error, Result};

/// One call's events, folded.
pub(crate) enum Assembler {
    OpenAi(OpenAiTurn),
    Anthropic(AnthropicTurn),
}

impl Assembler {
    pub fn new(style: Style) -> Assembler {
        match style {
            Style::OpenAi => Assembler::OpenAi(OpenAiTurn::default()),
            Style::Anthropic => Assembler::Anthropic(AnthropicTurn::default()),
        }
    }

    /// Folds one event's data in; `text` gets each text delta.
    pub fn event(&mut self, data: &str, text: &mut dyn FnMut(&str)) -> Result<()> {
        match self {
            Assembler::OpenAi(t) => t.event(data, text),
            Assembler::Anthropic(t) => t.event(data, text),
        }
    }

    /// The reply, once the stream ended; an unfinished stream is an error.
    pub fn finish(self) -> Result<Value> {
        match self {
            Assembler::OpenAi(t) => t.finish(),
            Assembler::Anthropic(t) => t.finish(),
        }
    }
}

fn not_json(e: serde_json::Error) -> Error {
    Error::protocol(format!("a stream event is not JSON ({e})"))
}

fn streamed_error(message: Option<&str>) -> Error {
    Error::protocol(format!("provider streamed an error: {}", crate::client::wire::error_text(message)))
}

fn cut_short() -> Error {
    Error::new(crate::ErrorKind::Network, "the stream ended before the provider finished its answer")
}

lenient_object! {
    /// The parts of a `chat.completion.chunk` the turn is folded from.
    struct Chunk<'a> {
        error: Loose<ErrorField<'a>> = "error",
        usage: Loose<Map<String, Value>> = "usage",
        model: Loose<Cow<'a, str>> = "model",
        choices: Loose<Vec<Loose<Choice<'a>>>> = "choices",
    }
}

lenient_object! {
    struct Choice<'a> {
        finish_reason: Loose<Cow<'a, str>> = "finish_reason",
        delta: Loose<Delta<'a>> = "delta",
    }
}

lenient_object! {
    struct Delta<'a> {
        content: Loose<Cow<'a, str>> = "content",
        tool_calls: Loose<Vec<Loose<CallDelta<'a>>>> = "tool_calls",
    }
}

lenient_object! {
    /// A piece of a tool call: the call it belongs to is `index`.
    struct CallDelta<'a> {
        index: Loose<u64> = "index",
        id: Loose<Cow<'a, str>> = "id",
        function: Loose<FunctionDelta<'a>> = "function",
    }
}

lenient_object! {
    struct FunctionDelta<'a> {
        name: Loose<Cow<'a, str>> = "name",
        arguments: Loose<Cow<'a, str>> = "arguments",
    }
}

#[derive(Default)]
struct OpenAiCall {
    id: String,
    name: String,
    arguments: String,
}

/// `chat.completion.chunk` events: `choices[0].delta` text and tool calls (assembled by
/// `index`), `finish_reason`, `usage` (with `stream_options.include_usage`), then `[DONE]`.
#[derive(Default)]
pub(crate) struct OpenAiTurn {
    text: String,
    calls: Vec<(u64, OpenAiCall)>,
    finish_reason: Option<String>,
    usage: Option<Value>,
    model: Option<Value>,
    done: bool,
}

impl OpenAiTurn {
    fn event(&mut self, data: &str, text: &mut dyn FnMut(&str)) -> Result<()> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let Loose(Some(chunk)) = serde_json::from_str::<Loose<Chunk>>(data).map_err(not_json)? else { return Ok(()) };
        if let Some(err) = chunk.error.0 {
            return Err(streamed_error(err.message.0.as_deref()));
        }
        if let Some(u) = chunk.usage.0 {
            self.usage = Some(Value::Object(u));
        }
        if let Some(m) = chunk.model.0 {
            self.model = Some(Value::String(m.into_owned()));
        }
        let Some(Loose(Some(choice))) = chunk.choices.0.and_then(|c| c.into_iter().next()) else { return Ok(()) };
        if let Some(f) = choice.finish_reason.0 {
            self.finish_reason = Some(f.into_owned());
        }
        let Some(delta) = choice.delta.0 else { return Ok(()) };
        if let Some(t) = delta.content.0.filter(|t| !t.is_empty()) {
            self.text.push_str(&t);
            text(&t);
        }
        for Loose(tc) in delta.tool_calls.0.into_iter().flatten() {
            // A call that is not an object still counts, as call 0 with nothing in it.
            let tc = tc.unwrap_or_default();
            let index = tc.index.0.unwrap_or(0);
            let at = match self.calls.iter().position(|(i, _)| *i == index) {
                Some(p) => p,
                None => {
                    self.calls.push((index, OpenAiCall::default()));
                    self.calls.len() - 1
                }
            };
            let slot = &mut self.calls[at].1;
            if let Some(id) = tc.id.0.filter(|s| !s.is_empty()) {
                slot.id = id.into_owned();
            }
            if let Some(f) = tc.function.0 {
                if let Some(n) = f.name.0 {
                    slot.name.push_str(&n);
                }
                if let Some(a) = f.arguments.0 {
                    slot.arguments.push_str(&a);
                }
            }
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Value> {
        if !self.done && self.finish_reason.is_none() {
            return Err(cut_short());
        }
        self.calls.sort_by_key(|(i, _)| *i);
        let mut message =
            json!({"role": "assistant", "content": if self.text.is_empty() { Value::Null } else { json!(self.text) }});
        if !self.calls.is_empty() {
            let calls: Vec<Value> = self
                .calls
                .into_iter()
                .map(|(_, c)| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                .collect();
            message["tool_calls"] = Value::Array(calls);
        }
        let mut reply = json!({"choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}]});
        if let Some(u) = self.usage {
            reply["usage"] = u;
        }
        if let Some(m) = self.model {
            reply["model"] = m;
        }
        Ok(reply)
    }
}

lenient_object! {
    /// The parts of a Messages-API event the turn is folded from.
    struct Event<'a> {
        kind: Loose<Cow<'a, str>> = "type",
        error: Loose<ErrorField<'a>> = "error",
        message: Loose<Map<String, Value>> = "message",
        index: Loose<u64> = "index",
        content_block: Loose<Map<String, Value>> = "content_block",
        delta: Loose<EventDelta<'a>> = "delta",
        usage: Loose<Map<String, Value>> = "usage",
    }
}

lenient_object! {
    /// A block's delta, or (in `message_delta`) the message's.
    struct EventDelta<'a> {
        kind: Loose<Cow<'a, str>> = "type",
        text: Loose<Cow<'a, str>> = "text",
        partial_json: Loose<Cow<'a, str>> = "partial_json",
        thinking: Loose<Cow<'a, str>> = "thinking",
        signature: Present = "signature",
        stop_reason: Present = "stop_reason",
    }
}

/// A content block being streamed: its start, its deltas applied, `input` JSON text aside.
struct Block {
    index: u64,
    block: Map<String, Value>,
    input_json: String,
}

/// Messages-API events: `message_start`, `content_block_start`/`_delta`/`_stop`,
/// `message_delta` (`stop_reason`, output `usage`), `message_stop`; `ping` is ignored.
#[derive(Default)]
pub(crate) struct AnthropicTurn {
    message: Map<String, Value>,
    blocks: Vec<Block>,
    usage: Map<String, Value>,
    stop_reason: Option<Value>,
    done: bool,
}

impl AnthropicTurn {
    fn event(&mut self, data: &str, text: &mut dyn FnMut(&str)) -> Result<()> {
        let Loose(Some(event)) = serde_json::from_str::<Loose<Event>>(data).map_err(not_json)? else { return Ok(()) };
        if let Some(err) = event.error.0 {
            return Err(streamed_error(err.message.0.as_deref()));
        }
        match event.kind.0.as_deref() {
            Some("message_start") => {
                if let Some(m) = event.message.0 {
                    if let Some(Value::Object(u)) = m.get("usage") {
                        self.usage.extend(u.clone());
                    }
                    self.message = m;
                }
            }
            Some("content_block_start") => {
                let index = event.index.0.unwrap_or(self.blocks.len() as u64);
                let Some(block) = event.content_block.0 else {
                    return Err(Error::protocol("a content_block_start without a content_block"));
                };
                self.blocks.push(Block { index, block, input_json: String::new() });
            }
            Some("content_block_delta") => {
                let index = event.index.0.unwrap_or(0);
                let Some(b) = self.blocks.iter_mut().find(|b| b.index == index) else {
                    return Err(Error::protocol(format!(
                        "a content_block_delta for block {index}, which never started"
                    )));
                };
                let delta = event.delta.0.unwrap_or_default();
                let append = |b: &mut Block, key: &str, piece: &str| match b.block.get_mut(key) {
                    Some(Value::String(old)) => old.push_str(piece),
                    _ => {
                        b.block.insert(key.into(), Value::String(piece.to_string()));
                    }
                };
                match delta.kind.0.as_deref() {
                    Some("text_delta") => {
                        let t = delta.text.0.unwrap_or_default();
                        append(b, "text", &t);
                        if !t.is_empty() {
                            text(&t);
                        }
                    }
                    Some("input_json_delta") => b.input_json.push_str(&delta.partial_json.0.unwrap_or_default()),
                    Some("thinking_delta") => append(b, "thinking", &delta.thinking.0.unwrap_or_default()),
                    Some("signature_delta") => {
                        b.block.insert("signature".into(), delta.signature.0.unwrap_or(Value::Null));
                    }
                    _ => {}
                }
            }
            Some("message_delta") => {
                if let Some(r) = event.delta.0.and_then(|d| d.stop_reason.0) {
                    self.stop_reason = Some(r);
                }
                if let Some(u) = event.usage.0 {
                    self.usage.extend(u);
                }
            }
            Some("message_stop") => self.done = true,
            _ => {}
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Value> {
        // A stop reason says the model finished, even when `message_stop` never came.
        if !self.done && self.stop_reason.as_ref().is_none_or(Value::is_null) {
            return Err(cut_short());
        }
        self.blocks.sort_by_key(|b| b.index);
        let content: Vec<Value> = self
            .blocks
            .into_iter()
            .map(|mut b| {
                if b.block.get("type").and_then(Value::as_str) == Some("tool_use") {
                    let input = match b.input_json.trim() {
                        "" => b.block.get("input").cloned().unwrap_or_else(|| json!({})),
                        // Unparseable arguments stay text: the loop then refuses to run the call.
                        raw => serde_json::from_str(raw).unwrap_or_else(|_| json!(raw)),
                    };
                    b.block.insert("input".into(), input);
                }
                Value::Object(b.block)
            })
            .collect();
        let mut reply = self.message;
        reply.insert("content".into(), Value::Array(content));
        reply.insert("stop_reason".into(), self.stop_reason.unwrap_or(Value::Null));
        reply.insert("usage".into(), Value::Object(self.usage));
        Ok(Value::Object(reply))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fold(style: Style, events: &[&str]) -> (Result<Value>, Vec<String>) {
        let mut a = Assembler::new(style);
        let mut deltas = Vec::new();
        for e in events {
            if let Err(err) = a.event(e, &mut |t| deltas.push(t.to_string())) {
                return (Err(err), deltas);
            }
        }
        (a.finish(), deltas)
    }

    #[test]
    fn openai_tool_calls_assemble_by_index() {
        let (r, deltas) = fold(
            Style::OpenAi,
            &[
                r#"{"choices":[{"delta":{"role":"assistant","content":"Hel"}}]}"#,
                r#"{"choices":[{"delta":{"content":"lo"}}]}"#,
                r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"g","arguments":"{\"y\""}}]}}]}"#,
                r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":""}}]}}]}"#,
                r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":":2}"}}]}}]}"#,
                r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
                r#"{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}"#,
                "[DONE]",
            ],
        );
        let r = r.unwrap();
        assert_eq!(deltas, ["Hel", "lo"]);
        let m = &r["choices"][0]["message"];
        assert_eq!(m["content"], "Hello");
        assert_eq!(m["tool_calls"][0]["id"], "a");
        assert_eq!(m["tool_calls"][1]["function"], json!({"name": "g", "arguments": "{\"y\":2}"}));
        assert_eq!(r["usage"]["total_tokens"], 7);
    }

    #[test]
    fn openai_fields_of_another_type_read_as_absent() {
        let (r, deltas) = fold(
            Style::OpenAi,
            &[
                "[1, 2]",
                r#"{"error": null, "model": 7, "usage": "none", "choices": {"delta": {"content": "x"}}}"#,
                r#"{"choices": [7, {"delta": {"content": "not the first"}}]}"#,
                r#"{"choices": [{"delta": "text", "finish_reason": 3}]}"#,
                r#"{"choices": [{"delta": {"content": 5, "tool_calls": {"index": 1}}, "finish_reason": "length"}]}"#,
                r#"{"choices": [{"delta": {"tool_calls": ["odd", {"index": 1.0, "id": 9, "function": "f"}]}}]}"#,
                r#"{"choices": [{"delta": {"tool_calls": [{"index": 2, "id": "", "function": {"name": "g", "arguments": null}}]}}]}"#,
                r#"{"choices": [{"delta": {"tool_calls": [{"index": 2, "id": "c2", "function": {"name": 1, "arguments": "{}"}}]}}]}"#,
                r#"{"choices": [{"delta": {"content": "a", "content": "b", "\u0063ontent": "c"}}], "model": "m"}"#,
                r#"{"choices": [{"delta": {"content": "\u00e9t\u00e9"}, "finish_reason": "stop", "finish_reason": null}]}"#,
                r#"{"usage": {"total_tokens": 3}, "usage": 4}"#,
                "[DONE]",
            ],
        );
        let r = r.unwrap();
        assert_eq!(deltas, ["c", "\u{e9}t\u{e9}"], "the last duplicate wins, escapes are read");
        let m = &r["choices"][0]["message"];
        assert_eq!(m["content"], "c\u{e9}t\u{e9}");
        // The non-object call and the float index both land on call 0; call 2 is assembled.
        assert_eq!(
            m["tool_calls"][0],
            json!({"id": "", "type": "function", "function": {"name": "", "arguments": ""}})
        );
        assert_eq!(
            m["tool_calls"][1],
            json!({"id": "c2", "type": "function", "function": {"name": "g", "arguments": "{}"}})
        );
        assert_eq!(r["choices"][0]["finish_reason"], "length", "a null finish reason keeps the one before");
        assert_eq!(r["model"], "m");
        assert!(r.get("usage").is_none(), "usage that is not an object is not kept");
        for bad in [r#"{"choices": [}"#, r#"{"a": 1} x"#, r#"{"choices": [{"delta": {"content": "\ud800"}}]}"#] {
            let (r, _) = fold(Style::OpenAi, &[bad]);
            assert!(r.unwrap_err().message().starts_with("a stream event is not JSON"), "{bad}");
        }
        for (streamed, message) in [
            (r#"{"error": {"message": "busy", "message": "quota"}}"#, "quota"),
            (r#"{"error": "boom"}"#, "(no message)"),
            (r#"{"error": {"message": 5}}"#, "(no message)"),
            (r#"{"error": false}"#, "(no message)"),
        ] {
            let (r, _) = fold(Style::OpenAi, &[streamed]);
            assert_eq!(r.unwrap_err().message(), format!("provider streamed an error: {message}"));
        }
    }

    #[test]
    fn anthropic_blocks_assemble_with_their_input() {
        let (r, deltas) = fold(
            Style::Anthropic,
            &[
                r#"{"type":"message_start","message":{"id":"m","role":"assistant","model":"c","usage":{"input_tokens":9}}}"#,
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
                r#"{"type":"ping"}"#,
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}"#,
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}"#,
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"1}"}}"#,
                r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}"#,
                r#"{"type":"message_stop"}"#,
            ],
        );
        let r = r.unwrap();
        assert_eq!(deltas, ["Hi"]);
        assert_eq!(r["content"][0], json!({"type": "text", "text": "Hi"}));
        assert_eq!(r["content"][1]["input"], json!({"a": 1}));
        assert_eq!((r["usage"]["input_tokens"].as_u64(), r["usage"]["output_tokens"].as_u64()), (Some(9), Some(5)));
        assert_eq!(r["stop_reason"], "tool_use");
    }

    #[test]
    fn anthropic_fields_of_another_type_read_as_absent() {
        let (r, deltas) = fold(
            Style::Anthropic,
            &[
                r#"[{"type": "message_stop"}]"#,
                r#"{"type": "message_start", "message": "m"}"#,
                r#"{"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 2}}}"#,
                r#"{"type": "content_block_start", "content_block": {"type": "text", "text": 5}}"#,
                r#"{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a"}}"#,
                r#"{"type": "content_block_delta", "index": 0, "delta": "text_delta"}"#,
                r#"{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": 7}}"#,
                r#"{"type": "content_block_start", "index": 2.0, "content_block": {"type": "thinking"}}"#,
                r#"{"type": "content_block_delta", "index": 1, "delta": {"type": "thinking_delta", "thinking": "t"}}"#,
                r#"{"type": "content_block_delta", "index": 1, "delta": {"type": "signature_delta", "signature": [1]}}"#,
                r#"{"type": "content_block_delta", "index": 1, "delta": {"type": "signature_delta"}}"#,
                r#"{"type": 3, "delta": {"stop_reason": "x"}}"#,
                r#"{"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": [1]}"#,
                r#"{"type": "message_delta", "delta": {"stop_reason": null}, "usage": {"output_tokens": 4}}"#,
                r#"{"type": "message_delta", "delta": "end_turn", "\u0074ype": "message_stop"}"#,
            ],
        );
        let r = r.unwrap();
        assert_eq!(deltas, ["a"]);
        assert_eq!(r["id"], "m");
        assert_eq!(
            r["content"],
            json!([{"type": "text", "text": "a"}, {"type": "thinking", "thinking": "t", "signature": null}])
        );
        assert_eq!(r["usage"], json!({"input_tokens": 2, "output_tokens": 4}));
        assert_eq!(r["stop_reason"], Value::Null, "a present null stop reason replaces the one before");
        let (r, _) = fold(Style::Anthropic, &[r#"{"type": "content_block_start", "content_block": []}"#]);
        assert!(r.unwrap_err().message().contains("without a content_block"));
    }

    #[test]
    fn cut_garbled_and_error_streams_are_errors() {
        let (r, _) = fold(Style::OpenAi, &[r#"{"choices":[{"delta":{"content":"x"}}]}"#]);
        assert_eq!(r.unwrap_err().kind(), crate::ErrorKind::Network);
        let (r, _) = fold(Style::OpenAi, &["{not json"]);
        assert_eq!(r.unwrap_err().kind(), crate::ErrorKind::Protocol);
        let (r, _) =
            fold(Style::Anthropic, &[r#"{"type":"error","error":{"type":"overloaded_error","message":"busy"}}"#]);
        assert!(r.unwrap_err().message().contains("busy"));
        let (r, _) = fold(
            Style::Anthropic,
            &[r#"{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}"#],
        );
        assert!(r.is_err());
        let (r, _) = fold(Style::Anthropic, &[r#"{"type":"message_start","message":{}}"#]);
        assert_eq!(r.unwrap_err().kind(), crate::ErrorKind::Network);
    }
}
