//! The inbox over two parked runs, for trying it and for the browser test: starts the
//! loopback mock model, parks two runs in a fresh SQLite store (an approval with a URL and
//! data, and a deletion to decline), serves the inbox with a random token on 127.0.0.1 and
//! prints `INBOX_URL <url>`. It stops when its standard input closes.
//!
//! `cargo run -p toolnexus-inbox --example inbox_demo`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

#[path = "../tests/support/mock.rs"]
mod mock;
#[path = "../tests/support/runs.rs"]
mod runs;

use std::io::Read;

use serde_json::json;
use toolnexus_inbox::{random_token, serve, InboxOptions};

#[tokio::main]
async fn main() {
    let model = mock::Mock::start().await;
    let dir = std::env::temp_dir().join(format!("toolnexus-inbox-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("runs.db");
    let tk = runs::toolkit();
    let parker = runs::client(&model.base_url(), &db);
    runs::park(
        &parker,
        &tk,
        "deploy-42",
        json!({"id": "req-deploy", "kind": "approval", "prompt": "Deploy build 42 to production?",
               "url": "https://ci.example/builds/42", "data": {"build": 42, "env": "production"}}),
    )
    .await;
    runs::park(
        &parker,
        &tk,
        "cleanup-7",
        json!({"id": "req-cleanup", "kind": "approval", "prompt": "Delete the 1,204 stale branches?",
               "data": {"branches": 1204}}),
    )
    .await;
    let opts = InboxOptions { token: Some(random_token().unwrap()), ..InboxOptions::default() };
    let inbox = serve(runs::client(&model.base_url(), &db), Some(tk), opts).await.unwrap();
    println!("INBOX_URL {}", inbox.url());

    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        let _ = tx.send(());
    });
    let _ = rx.await;
    inbox.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
