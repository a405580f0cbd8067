//! Shared by the CLI's tests: a loopback mock model (std threads, one connection each, the
//! replies served in order as the provider would stream them) and a runner for the built
//! binary.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

/// A reply: a status and a body (events as `text/event-stream`, a JSON object as JSON).
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub body: String,
}

/// OpenAI: streamed text.
pub fn openai_text(text: &str) -> Reply {
    let mut body: String = text
        .split_inclusive(' ')
        .map(|w| format!("data: {}\n\n", json!({"choices": [{"delta": {"content": w}}]})))
        .collect();
    body.push_str(&format!("data: {}\n\n", json!({"choices": [{"delta": {}, "finish_reason": "stop"}]})));
    body.push_str(&format!(
        "data: {}\n\n",
        json!({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}})
    ));
    body.push_str("data: [DONE]\n\n");
    Reply { status: 200, body }
}

/// OpenAI: a streamed call of `name` with `args`.
pub fn openai_call(id: &str, name: &str, args: Value) -> Reply {
    let args = args.to_string();
    let (a, b) = args.split_at(args.len() / 2);
    let chunks = [
        json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": a}}]}}]}),
        json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": b}}]}}]}),
        json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}),
    ];
    let mut body: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    Reply { status: 200, body }
}

/// Anthropic: streamed text.
pub fn anthropic_text(text: &str) -> Reply {
    let events = [
        json!({"type": "message_start", "message": {"id": "m1", "role": "assistant", "usage": {"input_tokens": 4}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
        json!({"type": "message_stop"}),
    ];
    Reply { status: 200, body: events.iter().map(|e| format!("data: {e}\n\n")).collect() }
}

/// Anthropic: a streamed call of `name` with `input`.
pub fn anthropic_call(id: &str, name: &str, input: Value) -> Reply {
    let events = [
        json!({"type": "message_start", "message": {"id": "m1", "role": "assistant", "usage": {"input_tokens": 4}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 2}}),
        json!({"type": "message_stop"}),
    ];
    Reply { status: 200, body: events.iter().map(|e| format!("data: {e}\n\n")).collect() }
}

/// An error answer.
pub fn status(code: u16, message: &str) -> Reply {
    Reply { status: code, body: json!({"error": {"message": message}}).to_string() }
}

/// A request the mock received.
#[derive(Clone, Debug)]
pub struct Seen {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

/// A model on 127.0.0.1 serving `replies` in order (then 599s).
#[derive(Clone)]
pub struct Mock {
    pub base_url: String,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Mock {
    pub fn start(replies: Vec<Reply>) -> Mock {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let mock = Mock { base_url, replies: Arc::new(Mutex::new(replies.into())), seen: Arc::default() };
        let m = mock.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let m = m.clone();
                std::thread::spawn(move || m.serve(stream));
            }
        });
        mock
    }

    /// Queues more replies.
    pub fn push(&self, replies: Vec<Reply>) {
        self.replies.lock().unwrap().extend(replies);
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    pub fn remaining(&self) -> usize {
        self.replies.lock().unwrap().len()
    }

    /// Serves requests on one connection until the client closes it.
    fn serve(&self, stream: TcpStream) {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut out = stream;
        loop {
            let mut head = String::new();
            if reader.read_line(&mut head).unwrap_or(0) == 0 {
                return;
            }
            let path = head.split_whitespace().nth(1).unwrap_or_default().to_string();
            let mut headers = Vec::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some((k, v)) = line.split_once(':') {
                    headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
                }
            }
            let len = headers.iter().find(|(k, _)| k == "content-length").map_or(0, |(_, v)| v.parse().unwrap_or(0));
            let mut body = vec![0; len];
            if reader.read_exact(&mut body).is_err() {
                return;
            }
            let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
            self.seen.lock().unwrap().push(Seen { path, headers, body });
            let reply = self.replies.lock().unwrap().pop_front().unwrap_or_else(|| status(599, "mock: no reply left"));
            // A body of events streams; a JSON one (an error, or a reply to a run that did not
            // ask for a stream, as the inbox's resumes) is sent as JSON.
            let kind = if reply.body.starts_with('{') { "application/json" } else { "text/event-stream" };
            let response = format!(
                "HTTP/1.1 {} X\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n{}",
                reply.status,
                reply.body.len(),
                reply.body
            );
            if out.write_all(response.as_bytes()).is_err() {
                return;
            }
        }
    }
}

/// The built binary.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_toolnexus")
}

/// A scratch folder under the target directory, fresh for `name`.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-tests").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `toolnexus ARGS` with stdin from `stdin`, the key in TEST_KEY; waits for it to exit.
pub fn toolnexus(args: &[&str], stdin: &str, dir: &Path) -> Output {
    let mut child = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .env("TEST_KEY", "sk-test-secret-123456")
        .env_remove("TOOLNEXUS_BASE_URL")
        .env_remove("TOOLNEXUS_STYLE")
        .env_remove("TOOLNEXUS_MODEL")
        .env_remove("TOOLNEXUS_STORE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// The model flags for `mock`.
pub fn model_flags<'a>(mock: &'a Mock, style: &'a str) -> Vec<&'a str> {
    vec!["--base-url", &mock.base_url, "--style", style, "--model", "m", "--api-key-env", "TEST_KEY"]
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The JSON lines of stdout.
pub fn json_lines(o: &Output) -> Vec<Value> {
    stdout(o).lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}"))).collect()
}
