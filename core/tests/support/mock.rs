//! A loopback mock model for tests: serves scripted replies in order and records every
//! request (path, headers, JSON body). hyper on 127.0.0.1, keep-alive, one task per connection.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio::net::TcpListener;

/// A reply the mock will serve.
#[derive(Clone, Debug)]
pub struct MockReply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// Holds the reply back this long (to test timeouts and cancellation).
    pub delay: Duration,
}

impl MockReply {
    pub fn json(body: Value) -> MockReply {
        MockReply { status: 200, headers: Vec::new(), body, delay: Duration::ZERO }
    }

    /// Reads `{"status", "headers", "body", "delay_ms"}` as the conformance files write it.
    pub fn from_spec(spec: &Value) -> MockReply {
        let headers = spec
            .get("headers")
            .and_then(Value::as_object)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect())
            .unwrap_or_default();
        MockReply {
            status: spec.get("status").and_then(Value::as_u64).unwrap_or(200) as u16,
            headers,
            body: spec.get("body").cloned().unwrap_or(Value::Null),
            delay: Duration::from_millis(spec.get("delay_ms").and_then(Value::as_u64).unwrap_or(0)),
        }
    }
}

/// A request the mock received.
#[derive(Clone, Debug)]
pub struct Seen {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct State {
    replies: VecDeque<MockReply>,
    seen: Vec<Seen>,
}

/// A running mock; it stops when the test's runtime ends.
#[derive(Clone)]
pub struct Mock {
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
}

impl Mock {
    pub async fn start() -> Mock {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State::default()));
        let st = state.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { return };
                let _ = stream.set_nodelay(true);
                let st = st.clone();
                tokio::spawn(async move {
                    let svc = service_fn(move |req| handle(st.clone(), req));
                    let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), svc).await;
                });
            }
        });
        Mock { addr, state }
    }

    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// Replaces the queued replies and forgets the requests seen so far.
    pub fn script(&self, replies: Vec<MockReply>) {
        let mut g = self.state.lock().unwrap();
        g.replies = replies.into();
        g.seen.clear();
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.state.lock().unwrap().seen.clone()
    }

    pub fn remaining(&self) -> usize {
        self.state.lock().unwrap().replies.len()
    }
}

async fn handle(state: Arc<Mutex<State>>, req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = req.uri().path().to_string();
    let headers = req
        .headers()
        .iter()
        .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or_default().to_string()))
        .collect();
    let bytes = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let body = serde_json::from_slice(&bytes).unwrap_or_else(|_| json!({"unparsed": String::from_utf8_lossy(&bytes)}));
    let reply = {
        let mut g = state.lock().unwrap();
        g.seen.push(Seen { path, headers, body });
        g.replies.pop_front()
    };
    let reply = reply.unwrap_or(MockReply {
        status: 599,
        headers: Vec::new(),
        body: json!({"error": {"message": "mock: no reply left for this request"}}),
        delay: Duration::ZERO,
    });
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let mut resp = Response::builder().status(reply.status).header("content-type", "application/json");
    for (k, v) in &reply.headers {
        resp = resp.header(k.as_str(), v.as_str());
    }
    Ok(resp.body(Full::new(Bytes::from(serde_json::to_vec(&reply.body).unwrap()))).unwrap())
}
