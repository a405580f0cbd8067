//! A loopback mock model for the inbox's tests and demo (adapted from the core's
//! `tests/support/mock.rs`): an OpenAI-style `/chat/completions` that answers by content
//! instead of from a script, so runs can be resumed in any order.
//!
//! - last message a tool result `next:<json>`: another `gate` call with those arguments;
//! - last message a tool result holding `model-error`: HTTP 400 the first time that very
//!   request comes, as a model that fails once;
//! - last message another tool result: final text `Finished: <the tool's output>`;
//! - otherwise: a call of the `gate` tool whose arguments are the last user turn (a JSON
//!   object `{id?, kind, prompt, url?, data?}`: what the tool will suspend on).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, dead_code, missing_docs)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio::net::TcpListener;

/// A running mock; it stops when the runtime that started it ends.
#[derive(Clone)]
pub struct Mock {
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<Value>>>,
}

impl Mock {
    pub async fn start() -> Mock {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let calls = Arc::new(AtomicU64::new(1));
        let st = seen.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { return };
                let (st, calls) = (st.clone(), calls.clone());
                tokio::spawn(async move {
                    let svc = service_fn(move |req| handle(st.clone(), calls.clone(), req));
                    let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), svc).await;
                });
            }
        });
        Mock { addr, seen }
    }

    /// The base URL a client is given: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The request bodies received so far.
    pub fn seen(&self) -> Vec<Value> {
        self.seen.lock().unwrap().clone()
    }
}

/// The reply to one request body: its status and JSON.
pub fn reply_to(body: &Value, call_id: u64, first_time: bool) -> (u16, Value) {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    let usage = json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15});
    let tool_output = (last["role"] == "tool").then(|| last["content"].as_str().unwrap_or_default().to_string());
    let args = match tool_output {
        Some(out) if out.starts_with("next:") => out["next:".len()..].to_string(),
        Some(out) if out.contains("model-error") && first_time => {
            return (400, json!({"error": {"message": "mock: the model refuses"}}));
        }
        Some(out) => {
            let text = format!("Finished: {out}");
            let reply = json!({"choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}], "usage": usage});
            return (200, reply);
        }
        None => messages
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .and_then(|m| m["content"].as_str())
            .unwrap_or("{}")
            .to_string(),
    };
    let call =
        json!({"id": format!("call-{call_id}"), "type": "function", "function": {"name": "gate", "arguments": args}});
    (
        200,
        json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [call]}, "finish_reason": "tool_calls"}], "usage": usage}),
    )
}

async fn handle(
    seen: Arc<Mutex<Vec<Value>>>,
    calls: Arc<AtomicU64>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let bytes = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let first_time = {
        let mut seen = seen.lock().unwrap();
        let first = !seen.contains(&body);
        seen.push(body.clone());
        first
    };
    let (status, reply) = reply_to(&body, calls.fetch_add(1, Ordering::Relaxed), first_time);
    let resp = Response::builder().status(status).header("content-type", "application/json");
    Ok(resp.body(Full::new(Bytes::from(serde_json::to_vec(&reply).unwrap()))).unwrap())
}
