//! `load-mock`: the model the load runs talk to. Stateless, so any number of concurrent
//! conversations can share it: a transcript whose last message is the user's gets two tool
//! calls (`add` and `approve`); one that ends with tool results gets `done: <first prompt>`.
//! OpenAI style, keep-alive, on 127.0.0.1; prints its port on the first line of stdout and
//! exits when stdin closes, so a load run that dies leaves no server behind.

use std::convert::Infallible;
use std::io::{Read, Write};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio::net::TcpListener;

fn reply(body: &Value) -> Value {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let prompt = messages.iter().find(|m| m["role"] == "user").and_then(|m| m["content"].as_str()).unwrap_or("");
    let message = if messages.last().is_some_and(|m| m["role"] == "tool") {
        json!({"role": "assistant", "content": format!("done: {prompt}")})
    } else {
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{\"a\":1,\"b\":2}"}},
            {"id": "c2", "type": "function", "function": {"name": "approve", "arguments": "{}"}}]})
    };
    json!({"choices": [{"index": 0, "message": message}], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
}

async fn handle(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let bytes = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let out = serde_json::to_vec(&reply(&body)).unwrap_or_default();
    let mut resp = Response::new(Full::new(Bytes::from(out)));
    resp.headers_mut().insert("content-type", hyper::header::HeaderValue::from_static("application/json"));
    Ok(resp)
}

fn main() -> std::io::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    rt.block_on(async {
        // A deep backlog: a thousand runs connect at once, and a dropped SYN costs a second.
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.bind(([127, 0, 0, 1], 0).into())?;
        let listener: TcpListener = socket.listen(8192)?;
        println!("{}", listener.local_addr()?.port());
        std::io::stdout().flush()?;
        // Stdin closing (the driver gone) ends the server.
        std::thread::spawn(|| {
            let _ = std::io::stdin().read_to_end(&mut Vec::new());
            std::process::exit(0);
        });
        loop {
            let (stream, _) = listener.accept().await?;
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service_fn(handle)).await;
            });
        }
    })
}
