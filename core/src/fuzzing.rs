//! Entry points for the fuzz targets in `fuzz/`, built only with the non-default `fuzzing`
//! feature: thin wrappers that let raw bytes reach parsers the public API keeps private (the
//! reply parsers, the transcript readers, the HTTP/1.1 response reader). Not an API: it
//! follows the code it wraps and may change with it.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::FutureExt;
use serde_json::Value;
use tokio::io::{AsyncRead, ReadBuf};

use crate::client::wire;
use crate::error::{Error, ErrorKind, Result};
use crate::{HttpResponse, Style, ToolResult, Usage};

/// One tool call as the loop reads it from a reply or a transcript.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedCall {
    /// The provider's call id.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The argument object, or why the arguments are unusable.
    pub args: std::result::Result<Value, String>,
    /// The arguments as the model sent them.
    pub raw_args: String,
}

/// A reply as the loop reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedReply {
    /// The assistant message the loop records, if any.
    pub message: Option<Value>,
    /// The reply's text.
    pub text: String,
    /// The tool calls.
    pub calls: Vec<ParsedCall>,
    /// The token counts.
    pub usage: Usage,
}

fn call_of(c: wire::Call) -> ParsedCall {
    ParsedCall { id: c.id, name: c.name, args: c.args, raw_args: c.raw_args }
}

/// A 2xx response body as the loop reads it: decoded as JSON, then parsed for `style`.
pub fn parse_reply(style: Style, body: &[u8]) -> Result<ParsedReply> {
    let value: Value = serde_json::from_slice(body).map_err(|e| crate::client::not_json(200, e))?;
    let usage = wire::usage_of(style, &value);
    Ok(parsed(usage, wire::parse_reply(style, value)?))
}

/// A 2xx response body as the loop reads it when nothing needs the whole body as a value
/// (no `after_llm` hook): straight from its bytes. Reads as [`parse_reply`] does, except that
/// a field the loop skips is held to JSON's grammar only (`client/lenient.rs`).
pub fn read_reply(style: Style, body: &[u8]) -> Result<ParsedReply> {
    let (usage, r) = wire::read_reply(style, body).map_err(|e| crate::client::not_json(200, e))?;
    Ok(parsed(usage, r?))
}

fn parsed(usage: Usage, r: wire::Reply) -> ParsedReply {
    ParsedReply { message: r.message, text: r.text, calls: r.calls.into_iter().map(call_of).collect(), usage }
}

/// The tool calls a recorded assistant message carries (how a resume reads a transcript).
pub fn calls_of(message: &Value) -> Option<Vec<ParsedCall>> {
    wire::calls_of(message).map(|cs| cs.into_iter().map(call_of).collect())
}

/// Appends one turn's fresh results (call id, result) in the provider's shape.
pub fn append_results(style: Style, messages: &mut Vec<Value>, results: Vec<(String, ToolResult)>) {
    let entries = results.into_iter().map(|(id, r)| wire::Entry::Fresh(id, String::new(), r)).collect();
    wire::append_results(style, messages, entries);
}

/// Refuses a caller's transcript whose entries are not messages.
pub fn check_history(messages: &[Value]) -> Result<()> {
    wire::check_history(messages)
}

/// Gives every tool call of a transcript exactly one result.
pub fn balance(style: Style, messages: Vec<Value>) -> Vec<Value> {
    wire::balance(style, messages)
}

/// A streamed 2xx body, arriving in `pieces`, read as a streamed model call reads it: the
/// reply it amounts to (which the loop then parses as any reply), and the text deltas the
/// host was handed on the way.
pub fn fold_stream(style: Style, pieces: &[&[u8]]) -> Result<(Value, Vec<String>)> {
    let deltas = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = deltas.clone();
    let to = crate::StreamTo(std::sync::Arc::new(move |e: crate::StreamEvent| {
        if let crate::StreamEvent::Text(t) = e {
            kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(t);
        }
    }));
    let mut reader = crate::client::StreamReader::new(style, &to);
    for piece in pieces {
        crate::BodySink::write(&mut reader, piece)?;
    }
    let reply = reader.finish()?;
    let deltas = std::mem::take(&mut *deltas.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    Ok((reply, deltas))
}

/// `value` as a request body writes it (the transcript's messages are most of a body).
pub fn write_json(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    crate::json_write::write_value(&mut out, value);
    out
}

/// How many of `messages`, from the first, the JSON array `array` holds (what an eliding run
/// keeps of its caller's history, `Client::run_eliding_text`).
pub fn same_prefix(array: &str, messages: &[Value]) -> usize {
    crate::json_same::same_prefix(array, messages)
}

/// Feeds `bytes` to the transport's HTTP/1.1 response reader, at most `max_read` bytes per
/// read (so a response arrives split the way the network may split it), and returns the
/// response and whether the connection would be reused. The source never blocks, so a reader
/// that still waits is a hang: an [`ErrorKind::Internal`] error saying so.
pub fn read_response(bytes: &[u8], max_read: usize) -> Result<(HttpResponse, bool)> {
    let source = Trickle { rest: bytes, max_read: max_read.max(1) };
    crate::transport::read_response_from(source).now_or_never().unwrap_or_else(|| {
        Err(Error::new(ErrorKind::Internal, "the response reader waits on a source that is at its end"))
    })
}

/// An in-memory byte source that hands out at most `max_read` bytes per read.
struct Trickle<'a> {
    rest: &'a [u8],
    max_read: usize,
}

impl AsyncRead for Trickle<'_> {
    fn poll_read(self: Pin<&mut Self>, _: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let n = this.rest.len().min(this.max_read).min(buf.remaining());
        let (now, later) = this.rest.split_at(n);
        buf.put_slice(now);
        this.rest = later;
        Poll::Ready(Ok(()))
    }
}
