//! A scripted model: a [`Transport`] that answers from a fixed list of replies and records
//! every request it was sent. It drives the demo and any test that needs a model without a
//! network, in either wire style.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::transport::{HttpRequest, HttpResponse, Transport};

/// One scripted reply.
#[derive(Clone, Debug)]
pub struct ScriptedReply {
    /// The HTTP status.
    pub status: u16,
    /// Response headers.
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub body: Value,
}

impl ScriptedReply {
    /// A 200 reply with `body`.
    pub fn ok(body: Value) -> ScriptedReply {
        ScriptedReply { status: 200, headers: Vec::new(), body }
    }

    /// An OpenAI reply calling `calls` (`(id, name, arguments JSON)`).
    pub fn openai_calls(calls: &[(&str, &str, &str)]) -> ScriptedReply {
        let tcs: Vec<Value> = calls
            .iter()
            .map(
                |(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}}),
            )
            .collect();
        ScriptedReply::ok(json!({
            "choices": [{"message": {"role": "assistant", "content": null, "tool_calls": tcs}, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        }))
    }

    /// An OpenAI reply with final `text`.
    pub fn openai_text(text: &str) -> ScriptedReply {
        ScriptedReply::ok(json!({
            "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        }))
    }

    /// An Anthropic reply calling `calls` (`(id, name, input)`).
    pub fn anthropic_calls(calls: &[(&str, &str, Value)]) -> ScriptedReply {
        let blocks: Vec<Value> = calls
            .iter()
            .map(|(id, name, input)| json!({"type": "tool_use", "id": id, "name": name, "input": input}))
            .collect();
        ScriptedReply::ok(json!({
            "role": "assistant", "content": blocks, "stop_reason": "tool_use",
            "usage": {"input_tokens": 10, "output_tokens": 5}
        }))
    }

    /// An Anthropic reply with final `text`.
    pub fn anthropic_text(text: &str) -> ScriptedReply {
        ScriptedReply::ok(json!({
            "role": "assistant", "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 5}
        }))
    }
}

/// A request the scripted model received.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    /// The URL.
    pub url: String,
    /// The headers.
    pub headers: Vec<(String, String)>,
    /// The decoded JSON body.
    pub body: Value,
}

#[derive(Default)]
struct Inner {
    replies: VecDeque<ScriptedReply>,
    requests: Vec<RecordedRequest>,
}

/// A transport that replays a script. Running out of replies is a [`ErrorKind::Protocol`] error.
#[derive(Clone, Default)]
pub struct ScriptedTransport {
    inner: Arc<Mutex<Inner>>,
}

impl ScriptedTransport {
    /// A model that will answer with `replies`, in order.
    pub fn new(replies: Vec<ScriptedReply>) -> ScriptedTransport {
        let inner = Inner { replies: replies.into(), requests: Vec::new() };
        ScriptedTransport { inner: Arc::new(Mutex::new(inner)) }
    }

    /// Queues more replies.
    pub fn push(&self, reply: ScriptedReply) {
        if let Ok(mut g) = self.inner.lock() {
            g.replies.push_back(reply);
        }
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.inner.lock().map(|g| g.requests.clone()).unwrap_or_default()
    }

    /// How many replies are left.
    pub fn remaining(&self) -> usize {
        self.inner.lock().map(|g| g.replies.len()).unwrap_or(0)
    }
}

impl Transport for ScriptedTransport {
    fn post(&self, request: HttpRequest) -> BoxFuture<'static, Result<HttpResponse>> {
        let outcome = (|| {
            let mut g =
                self.inner.lock().map_err(|_| Error::new(ErrorKind::Internal, "scripted model lock poisoned"))?;
            let body = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
            g.requests.push(RecordedRequest { url: request.url.clone(), headers: request.headers.clone(), body });
            let reply = g
                .replies
                .pop_front()
                .ok_or_else(|| Error::protocol("the scripted model has no reply left for this request"))?;
            let body = serde_json::to_vec(&reply.body).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
            Ok(HttpResponse { status: reply.status, headers: reply.headers, body: Bytes::from(body) })
        })();
        Box::pin(std::future::ready(outcome))
    }
}
