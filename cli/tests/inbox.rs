//! `toolnexus inbox`: the approvals page served for a store, a halted run approved from it
//! and resumed with the model flags the command was given, and Ctrl-C stopping the server.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};
use support::*;

/// One HTTP/1.1 request to `addr` (`host:port`), the whole response back.
fn http(addr: &str, method: &str, path: &str, body: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(30))).unwrap();
    let form =
        if body.is_empty() { String::new() } else { "Content-Type: application/x-www-form-urlencoded\r\n".into() };
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://{addr}\r\n{form}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// The `value` of the first input named `name` in `page`.
fn input(page: &str, name: &str) -> String {
    let at = page.find(&format!("name=\"{name}\" value=\"")).unwrap_or_else(|| panic!("no {name} in {page}"));
    let rest = &page[at + name.len() + 15..];
    rest[..rest.find('"').unwrap()].to_string()
}

/// `toolnexus ARGS` (an `inbox --json`) started in `dir`, and the line it prints once it listens.
fn spawn_inbox(args: &[&str], dir: &std::path::Path) -> (Child, Value) {
    let mut child = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .env("TEST_KEY", "sk-test-secret-123456")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    let line: Value = serde_json::from_str(&first).unwrap_or_else(|e| panic!("{first:?}: {e}"));
    assert_eq!(line["type"], "inbox");
    (child, line)
}

#[test]
fn a_halted_run_is_approved_from_the_inbox_page() {
    let dir = scratch("inbox");
    let db = dir.join("runs.db").to_string_lossy().into_owned();
    let mock = Mock::start(vec![openai_call("c1", "bash", json!({"command": "echo from-the-inbox"}))]);
    let mut args = vec!["run", "Do it.", "--durable", &db, "--id", "r1"];
    args.extend(model_flags(&mock, "openai"));
    assert_eq!(toolnexus(&args, "", &dir).status.code(), Some(3), "the run halts on bash's approval");

    // The inbox resumes without a stream: the model's answer comes back as one JSON body.
    let done = json!({"choices": [{"message": {"role": "assistant", "content": "It ran from the page."},
        "finish_reason": "stop"}], "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}});
    mock.push(vec![Reply { status: 200, body: done.to_string() }]);
    let mut args = vec!["inbox", "--store", &db, "--json"];
    args.extend(model_flags(&mock, "openai"));
    let (mut child, line) = spawn_inbox(&args, &dir);
    let addr = line["addr"].as_str().unwrap().to_string();
    assert!(addr.starts_with("127.0.0.1:"), "loopback by default: {addr}");

    let page = http(&addr, "GET", "/", "");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains("Run bash {&quot;command&quot;:&quot;echo from-the-inbox&quot;}?"), "{page}");
    assert!(!page.contains("sk-test-secret"));
    let body = format!(
        "action=approve&conversation={}&request={}&csrf={}",
        input(&page, "conversation"),
        input(&page, "request"),
        input(&page, "csrf")
    );
    let outcome = http(&addr, "POST", "/answer", &body);
    assert!(outcome.starts_with("HTTP/1.1 200"), "{outcome}");
    assert!(outcome.contains("It ran from the page."), "{outcome}");
    let seen = mock.seen();
    assert_eq!(seen.len(), 2, "the resume re-ran bash and called the model once");
    let tool = seen[1].body["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "tool").cloned();
    assert_eq!(tool.unwrap()["content"], "from-the-inbox\n");
    assert!(!http(&addr, "GET", "/", "").contains("echo from-the-inbox"), "the run is no longer listed");

    let killed = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "Ctrl-C stops the inbox cleanly");
}

#[test]
fn an_inbox_off_loopback_makes_up_a_token_and_refuses_requests_without_it() {
    let dir = scratch("inbox-token");
    let db = dir.join("runs.db").to_string_lossy().into_owned();
    let (mut child, line) = spawn_inbox(&["inbox", "--store", &db, "--demo", "--addr", "0.0.0.0:0", "--json"], &dir);
    let url = line["url"].as_str().unwrap();
    assert!(url.contains("?token="), "the made-up token is in the URL: {url}");
    let port = line["addr"].as_str().unwrap().rsplit(':').next().unwrap().to_string();
    let refused = http(&format!("127.0.0.1:{port}"), "GET", "/", "");
    assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
    child.kill().unwrap();
    child.wait().unwrap();
}
