//! Shared test support: the mock model, the parked runs, and a raw HTTP/1.1 client.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, dead_code, missing_docs)]

pub mod mock;
pub mod runs;

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// An HTTP answer.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Sends one request (`Connection: close`) and reads the whole answer. `headers` come as
/// given; a `Host` of `addr` is added unless one is given.
pub async fn send(addr: SocketAddr, method: &str, target: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let mut head = format!("{method} {target} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(body.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(std::time::Duration::from_secs(30), s.read_to_end(&mut raw)).await.unwrap().unwrap();
    let mut hs = [httparse::EMPTY_HEADER; 32];
    let mut resp = httparse::Response::new(&mut hs);
    let n = match resp.parse(&raw).unwrap() {
        httparse::Status::Complete(n) => n,
        httparse::Status::Partial => panic!("partial answer"),
    };
    Answer {
        status: resp.code.unwrap(),
        headers: resp
            .headers
            .iter()
            .map(|h| (h.name.to_string(), String::from_utf8_lossy(h.value).into_owned()))
            .collect(),
        body: String::from_utf8_lossy(&raw[n..]).into_owned(),
    }
}

/// The value of the hidden `csrf` field of a page.
pub fn csrf_of(page: &str) -> String {
    let at = page.find("name=\"csrf\" value=\"").unwrap() + "name=\"csrf\" value=\"".len();
    page[at..at + page[at..].find('"').unwrap()].to_string()
}

/// A form body from pairs.
pub fn form(pairs: &[(&str, &str)]) -> String {
    pairs.iter().map(|(k, v)| format!("{k}={}", encode(v))).collect::<Vec<_>>().join("&")
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A fresh directory under the system's temp dir.
pub fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("toolnexus-inbox-{name}-{}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
}
