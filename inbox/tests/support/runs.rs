//! The runs the inbox's tests and demo park in a store: a `gate` tool that suspends on the
//! request its arguments describe, and a client of the mock model over a SQLite store.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, dead_code, missing_docs)]

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};
use toolnexus::memory::SqliteConversationStore;
use toolnexus::{
    answer_output_of, pending, Client, ClientOptions, PendingSpec, RunStatus, Style, Tool, ToolResult, Toolkit,
};

/// The API key the client is given: no page may show it.
pub const SECRET_KEY: &str = "sk-inbox-test-SECRET-0123456789";

/// `gate` suspends on `{id?, kind, prompt, url?, data?}`; answered, it reports the answer
/// (an answer `next:<json>` is passed on as is: the mock then asks the gate again).
pub fn toolkit() -> Toolkit {
    Toolkit::new(vec![Tool::from_sync(
        "gate",
        "Waits for a person.",
        json!({"type": "object"}),
        |args, ctx| match &ctx.answer {
            Some(a) => match answer_output_of(a).unwrap_or("") {
                next if next.starts_with("next:") => Ok(ToolResult::ok(next)),
                out => Ok(ToolResult::ok(format!("gate passed with {out:?}"))),
            },
            None => Ok(pending(PendingSpec {
                id: args["id"].as_str().map(str::to_string),
                kind: args["kind"].as_str().unwrap_or("approval").to_string(),
                prompt: args["prompt"].as_str().unwrap_or_default().to_string(),
                url: args["url"].as_str().map(str::to_string),
                data: args["data"].as_object().cloned(),
                ..PendingSpec::default()
            })),
        },
    )])
    .unwrap()
}

/// A client of the mock at `base_url`, remembering conversations in the SQLite file `db`.
pub fn client(base_url: &str, db: &Path) -> Client {
    let mut o = ClientOptions::new(base_url, Style::OpenAi, "mock-model");
    o.api_key = Some(SECRET_KEY.into());
    o.store = Some(Arc::new(SqliteConversationStore::open(db).unwrap()));
    Client::new(o).unwrap()
}

/// Runs conversation `id` until `gate` suspends on `request`.
pub async fn park(client: &Client, toolkit: &Toolkit, id: &str, request: Value) {
    let r = client.ask(&request.to_string(), Some(toolkit), Some(id)).await.unwrap();
    assert_eq!(r.status, RunStatus::Pending, "{id} halted");
}
