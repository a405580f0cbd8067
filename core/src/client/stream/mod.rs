//! Streaming (SPEC §8): the same loop as a run, with the model's answers read as server-sent
//! events and the run's progress handed to the host as it happens: text deltas as they
//! arrive, each tool call, each tool result, a suspension before it is waited for (and the one
//! a durable halt stops on), the usage. The binding ends the stream with the run's result.

mod assemble;
mod sse;

use std::fmt;
use std::sync::Arc;

use serde_json::{json, Value};

use super::options::Style;
use crate::error::Result;
use crate::transport::BodySink;
use crate::types::{Request, Usage};
use assemble::Assembler;
use sse::SseReader;

/// One step of a streamed run.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamEvent {
    /// Assistant text, as it arrived.
    Text(String),
    /// A tool call the model made (after its turn finished streaming), before it runs.
    ToolCall {
        /// The provider's call id.
        id: String,
        /// The tool.
        name: String,
        /// Its arguments (`{}` when the model's were unusable).
        args: Value,
    },
    /// A call's result, in call order once the turn's calls are settled.
    ToolResult {
        /// The provider's call id.
        id: String,
        /// The tool.
        name: String,
        /// What the model is told.
        output: String,
        /// Whether it is an error result.
        is_error: bool,
    },
    /// A suspension: before `wait_for` is asked (inline), or the one the run halts on.
    Pending(Request),
    /// The run's tokens, just before it ends `done`.
    Usage(Usage),
}

impl StreamEvent {
    /// Upstream's event dict: `{"type": "text", "delta"}`, `{"type": "tool_call", "id",
    /// "name", "args"}`, `{"type": "tool_result", "id", "name", "output", "is_error"}`,
    /// `{"type": "pending", "request"}`, `{"type": "usage", "usage"}`.
    pub fn to_json(&self) -> Value {
        match self {
            StreamEvent::Text(d) => json!({"type": "text", "delta": d}),
            StreamEvent::ToolCall { id, name, args } => {
                json!({"type": "tool_call", "id": id, "name": name, "args": args})
            }
            StreamEvent::ToolResult { id, name, output, is_error } => {
                json!({"type": "tool_result", "id": id, "name": name, "output": output, "is_error": is_error})
            }
            StreamEvent::Pending(r) => json!({"type": "pending", "request": r.to_json()}),
            StreamEvent::Usage(u) => json!({"type": "usage", "usage": {
                "prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens, "total_tokens": u.total_tokens,
            }}),
        }
    }
}

impl StreamEvent {
    /// [`StreamEvent::to_json`] with the JS and Go ports' key names (`isError`, `usage`'s
    /// `promptTokens`, ...); a Request keeps its wire keys.
    pub fn to_json_camel(&self) -> Value {
        let mut v = self.to_json();
        if let Some(is_error) = v.as_object_mut().and_then(|o| o.remove("is_error")) {
            v["isError"] = is_error;
        }
        if let Some(Value::Object(u)) = v.get_mut("usage") {
            *u = std::mem::take(u).into_iter().map(|(k, n)| (crate::spec_json::camel_case(&k), n)).collect();
        }
        v
    }
}

/// The host's end of a stream. Called in order on the thread driving the run; keep it quick.
pub trait OnStreamEvent: Send + Sync {
    /// One event.
    fn on_event(&self, event: StreamEvent);
}

impl<F: Fn(StreamEvent) + Send + Sync> OnStreamEvent for F {
    fn on_event(&self, event: StreamEvent) {
        self(event)
    }
}

/// Where a run streams to ([`crate::RunInput::stream`]).
#[derive(Clone)]
pub struct StreamTo(pub Arc<dyn OnStreamEvent>);

impl fmt::Debug for StreamTo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StreamTo(..)")
    }
}

impl StreamTo {
    pub(crate) fn emit(&self, event: StreamEvent) {
        self.0.on_event(event);
    }
}

/// One streamed model call's body: events parsed as they arrive, text handed on.
pub(crate) struct StreamReader<'a> {
    sse: SseReader,
    turn: Assembler,
    to: &'a StreamTo,
    /// Some body arrived: from here on a failure cannot be retried (the host saw text).
    pub touched: bool,
}

impl<'a> StreamReader<'a> {
    pub fn new(style: Style, to: &'a StreamTo) -> StreamReader<'a> {
        StreamReader { sse: SseReader::default(), turn: Assembler::new(style), to, touched: false }
    }

    /// The reply the stream amounts to.
    pub fn finish(self) -> Result<Value> {
        let StreamReader { mut sse, mut turn, to, .. } = self;
        sse.finish(&mut |data| turn.event(data, &mut |t| to.emit(StreamEvent::Text(t.to_string()))))?;
        turn.finish()
    }
}

impl BodySink for StreamReader<'_> {
    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        self.touched = true;
        let StreamReader { sse, turn, to, .. } = self;
        sse.feed(bytes, &mut |data| turn.event(data, &mut |t| to.emit(StreamEvent::Text(t.to_string()))))
    }
}
