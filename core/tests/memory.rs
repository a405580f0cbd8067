//! Conversation memory: `ask` with an id, durable resumes by id, exactly-once, stores of the
//! host, and SQLite shared between processes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use toolnexus::memory::{
    ConversationStore, InMemoryConversationStore, SqliteConversationStore, StoreFuture, StoredRun,
};
use toolnexus::scripted::{ScriptedReply, ScriptedTransport};
use toolnexus::{
    answer_output, pending, Client, ClientOptions, Conversation, ErrorKind, PendingSpec, RunInput, RunStatus, Style,
    Tool, ToolResult, Toolkit,
};

fn client_with(store: Option<Arc<dyn ConversationStore>>, replies: Vec<ScriptedReply>) -> (Client, ScriptedTransport) {
    let t = ScriptedTransport::new(replies);
    let mut o = ClientOptions::new("http://model.invalid/v1", Style::OpenAi, "m");
    o.api_key = Some("k".into());
    o.transport = Some(Arc::new(t.clone()));
    o.store = store;
    (Client::new(o).unwrap(), t)
}

/// A tool that suspends on request `gate-1` until answered, then echoes the answer.
fn gated() -> Toolkit {
    Toolkit::new(vec![Tool::from_sync("gated", "", json!({"type": "object"}), |_, ctx| match &ctx.answer {
        Some(a) => Ok(ToolResult::ok(format!("approved: {}", toolnexus::answer_output_of(a).unwrap_or("")))),
        None => Ok(pending(PendingSpec {
            id: Some("gate-1".into()),
            kind: "approval".into(),
            prompt: "ok?".into(),
            ..Default::default()
        })),
    })])
    .unwrap()
}

fn user_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect()
}

#[tokio::test]
async fn ask_with_an_id_continues_the_stored_conversation() {
    let (client, t) = client_with(
        None,
        vec![ScriptedReply::openai_text("one"), ScriptedReply::openai_text("two"), ScriptedReply::openai_text("x")],
    );
    client.ask("first", None, Some("c1")).await.unwrap();
    let r = client.ask("second", None, Some("c1")).await.unwrap();
    assert_eq!(r.text, "two");
    assert_eq!(user_texts(&t.requests()[1].body), ["first", "second"]);
    // No id (or an empty one): nothing remembered, nothing loaded.
    client.ask("alone", None, Some("")).await.unwrap();
    assert_eq!(user_texts(&t.requests()[2].body), ["alone"]);
    let stored = client.conversation_store().get("c1").await.unwrap().unwrap();
    assert_eq!(stored, r.messages);
    let e = client.run_input(RunInput { id: Some("c1".into()), history: vec![json!({})], ..RunInput::prompt("x") });
    assert_eq!(e.await.unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[tokio::test]
async fn a_halted_conversation_resumes_by_id_exactly_once() {
    let tk = gated();
    let (client, t) = client_with(
        None,
        vec![ScriptedReply::openai_calls(&[("c1", "gated", "{}")]), ScriptedReply::openai_text("done")],
    );
    let halted = client.ask("go", Some(&tk), Some("run-1")).await.unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    let queue = client.conversation_store().pending_runs().await.unwrap();
    assert_eq!(queue.len(), 1);
    assert_eq!((queue[0].id.as_str(), queue[0].request.id.as_str()), ("run-1", "gate-1"));
    assert!(queue[0].since_ms > 0);

    // A new prompt cannot talk over the pending request.
    let e = client.ask("hello?", Some(&tk), Some("run-1")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict, "{}", e.message());

    let done = client.ask_with_answer(Some(&tk), "run-1", None, &answer_output("gate-1", "yes")).await.unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.tool_calls.last().unwrap().output, "approved: yes");
    assert!(client.conversation_store().pending_runs().await.unwrap().is_empty());

    // The same request again, with the same or another answer: it was answered.
    for again in [answer_output("gate-1", "yes"), answer_output("gate-1", "no")] {
        let e = client.ask_with_answer(Some(&tk), "run-1", None, &again).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Conflict, "{}", e.message());
    }
    assert_eq!(t.requests().len(), 2, "no resume after the first reached the model");
}

#[tokio::test]
async fn an_answer_is_checked_against_the_recorded_request() {
    let tk = gated();
    let (client, _t) = client_with(None, vec![ScriptedReply::openai_calls(&[("c1", "gated", "{}")])]);
    client.ask("go", Some(&tk), Some("r")).await.unwrap();
    let stale = client.ask_with_answer(Some(&tk), "r", None, &answer_output("other", "x")).await.unwrap_err();
    assert_eq!(stale.kind(), ErrorKind::Conflict);
    let never = client.ask_with_answer(Some(&tk), "nobody", None, &answer_output("gate-1", "x")).await.unwrap_err();
    assert_eq!(never.kind(), ErrorKind::Conflict, "{}", never.message());
}

#[tokio::test]
async fn a_resume_that_failed_midway_is_picked_up_with_its_answer_only() {
    let tk = gated();
    let (client, t) = client_with(
        None,
        vec![
            ScriptedReply::openai_calls(&[("c1", "gated", "{}")]),
            ScriptedReply { status: 400, headers: Vec::new(), body: json!({"error": "bad"}) },
        ],
    );
    client.ask("go", Some(&tk), Some("r")).await.unwrap();
    let e = client.ask_with_answer(Some(&tk), "r", None, &answer_output("gate-1", "yes")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Http);
    let rec = client.conversation_store().load("r").await.unwrap().unwrap();
    assert_eq!(rec.answer.unwrap().id, "gate-1", "the accepted answer is on record");
    let other = client.ask_with_answer(Some(&tk), "r", None, &answer_output("gate-1", "no")).await.unwrap_err();
    assert_eq!(other.kind(), ErrorKind::Conflict, "{}", other.message());
    t.push(ScriptedReply::openai_text("done"));
    let done = client.ask_with_answer(Some(&tk), "r", None, &answer_output("gate-1", "yes")).await.unwrap();
    assert_eq!(done.status, RunStatus::Done);
}

#[tokio::test]
async fn a_conversation_in_use_is_a_conflict_not_a_lost_update() {
    let (release, wait) = (Arc::new(tokio::sync::Notify::new()), Arc::new(tokio::sync::Notify::new()));
    let (r2, w2) = (release.clone(), wait.clone());
    let tk = Toolkit::new(vec![Tool::from_fn("slow", "", json!({"type": "object"}), move |_, _| {
        let (r, w) = (r2.clone(), w2.clone());
        async move {
            w.notify_one();
            r.notified().await;
            Ok(ToolResult::ok("slow done"))
        }
    })])
    .unwrap();
    let (client, _t) = client_with(
        None,
        vec![ScriptedReply::openai_calls(&[("c1", "slow", "{}")]), ScriptedReply::openai_text("first")],
    );
    let client = Arc::new(client);
    let c2 = client.clone();
    let tk2 = tk.clone();
    let first = tokio::spawn(async move { c2.ask("one", Some(&tk2), Some("c")).await });
    wait.notified().await;
    let e = client.ask("two", Some(&tk), Some("c")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict);
    release.notify_one();
    assert_eq!(first.await.unwrap().unwrap().text, "first");
}

/// A store of the host's: upstream's two methods, nothing else.
#[derive(Default)]
struct HostStore {
    map: Mutex<std::collections::HashMap<String, Vec<Value>>>,
    calls: Mutex<Vec<String>>,
}

impl ConversationStore for HostStore {
    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<Vec<Value>>> {
        self.calls.lock().unwrap().push(format!("get {id}"));
        let v = self.map.lock().unwrap().get(id).cloned();
        Box::pin(async move { Ok(v) })
    }
    fn save<'a>(&'a self, id: &'a str, messages: Vec<Value>) -> StoreFuture<'a, ()> {
        self.calls.lock().unwrap().push(format!("save {id}"));
        self.map.lock().unwrap().insert(id.into(), messages);
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test]
async fn a_host_store_is_used_and_resumes_need_the_pending_request() {
    let store = Arc::new(HostStore::default());
    let tk = gated();
    let (client, _t) = client_with(
        Some(store.clone()),
        vec![ScriptedReply::openai_calls(&[("c1", "gated", "{}")]), ScriptedReply::openai_text("done")],
    );
    let halted = client.ask("go", Some(&tk), Some("h")).await.unwrap();
    assert_eq!(*store.calls.lock().unwrap(), ["get h", "save h"]);
    let e = client.ask_with_answer(Some(&tk), "h", None, &answer_output("gate-1", "yes")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{}", e.message());
    let pending = halted.pending.unwrap();
    let done = client.ask_with_answer(Some(&tk), "h", Some(&pending), &answer_output("gate-1", "yes")).await.unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(store.map.lock().unwrap()["h"], done.messages);
    assert_eq!(client.conversation_store().pending_runs().await.unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[tokio::test]
async fn a_conversation_object_keeps_its_own_transcript() {
    let (client, t) = client_with(
        None,
        vec![ScriptedReply::openai_text("a"), ScriptedReply::openai_text("b"), ScriptedReply::openai_text("c")],
    );
    let conv = Conversation::new();
    conv.send(&client, RunInput::prompt("one")).await.unwrap();
    conv.send(&client, RunInput::prompt("two")).await.unwrap();
    assert_eq!(user_texts(&t.requests()[1].body), ["one", "two"]);
    assert_eq!(conv.messages().len(), 4);
    conv.reset();
    conv.send(&client, RunInput::prompt("three")).await.unwrap();
    assert_eq!(user_texts(&t.requests()[2].body), ["three"]);
}

fn scratch_db(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolnexus-memory-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("runs.db")
}

#[tokio::test]
async fn sqlite_keeps_conversations_across_store_instances() {
    let path = scratch_db("reopen");
    let tk = gated();
    {
        let store = Arc::new(SqliteConversationStore::open(&path).unwrap());
        let (client, _t) = client_with(Some(store), vec![ScriptedReply::openai_calls(&[("c1", "gated", "{}")])]);
        client.ask("go", Some(&tk), Some("s1")).await.unwrap();
    }
    let store = Arc::new(SqliteConversationStore::open(&path).unwrap());
    assert_eq!(store.pending_runs().await.unwrap()[0].request.id, "gate-1");
    let (client, t) = client_with(Some(store.clone()), vec![ScriptedReply::openai_text("done")]);
    let done = client.ask_with_answer(Some(&tk), "s1", None, &answer_output("gate-1", "yes")).await.unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(user_texts(&t.requests()[0].body), ["go"], "the resumed request carries the stored transcript");
    assert_eq!(store.load("s1").await.unwrap().unwrap(), StoredRun::transcript(done.messages));
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

/// The child side of the cross-process tests: `TN_MEMORY_CHILD=<db>:<role>`.
#[tokio::test]
#[ignore = "run by the cross-process tests in a child process"]
async fn memory_child() {
    let Ok(spec) = std::env::var("TN_MEMORY_CHILD") else { return };
    let (path, role) = spec.rsplit_once(':').unwrap();
    let store = Arc::new(SqliteConversationStore::open(path).unwrap());
    match role {
        "hold" => {
            let _lock = store.lock("held").await.unwrap();
            println!("locked");
            std::io::stdout().flush().unwrap();
            std::thread::sleep(std::time::Duration::from_secs(60));
        }
        "resume" => {
            let (client, _t) = client_with(Some(store), vec![ScriptedReply::openai_text("resumed elsewhere")]);
            let r = client.ask_with_answer(Some(&gated()), "d1", None, &answer_output("gate-1", "yes")).await;
            println!("{}", r.map(|r| r.text).unwrap_or_else(|e| format!("error {}", e.kind())));
        }
        other => panic!("unknown role {other}"),
    }
}

fn child(path: &std::path::Path, role: &str) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["memory_child", "--exact", "--ignored", "--nocapture", "--test-threads=1", "-q"])
        .env("TN_MEMORY_CHILD", format!("{}:{role}", path.display()))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

fn lines_of(c: &mut std::process::Child) -> impl Iterator<Item = String> + '_ {
    BufReader::new(c.stdout.as_mut().unwrap()).lines().map_while(|l| l.ok())
}

#[tokio::test]
async fn a_halt_in_one_process_resumes_in_another_by_id_alone() {
    let path = scratch_db("two-processes");
    let store = Arc::new(SqliteConversationStore::open(&path).unwrap());
    let (client, _t) = client_with(Some(store.clone()), vec![ScriptedReply::openai_calls(&[("c1", "gated", "{}")])]);
    assert_eq!(client.ask("go", Some(&gated()), Some("d1")).await.unwrap().status, RunStatus::Pending);
    let mut c = child(&path, "resume");
    let said: Vec<String> = lines_of(&mut c).collect();
    assert!(c.wait().unwrap().success());
    assert!(said.iter().any(|l| l == "resumed elsewhere"), "child said {said:?}");
    let rec = store.load("d1").await.unwrap().unwrap();
    assert_eq!(rec.pending, None);
    // The other process resumed it: here it is answered already.
    let again = client.ask_with_answer(Some(&gated()), "d1", None, &answer_output("gate-1", "yes")).await;
    assert_eq!(again.unwrap_err().kind(), ErrorKind::Conflict);
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[tokio::test]
async fn a_lock_held_by_another_process_is_a_conflict_until_that_process_dies() {
    let path = scratch_db("lock");
    let store = SqliteConversationStore::open(&path).unwrap();
    let mut c = child(&path, "hold");
    assert!(lines_of(&mut c).any(|l| l == "locked"), "the child never took its lock");
    let e = store.lock("held").await.err().expect("held by the child");
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert!(store.lock("free").await.is_ok(), "other conversations are not held");
    c.kill().unwrap(); // a crash: no unlock ever runs in the child
    c.wait().unwrap();
    assert!(store.lock("held").await.is_ok(), "the kernel released the dead process's lock");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[tokio::test]
async fn the_in_memory_store_hands_out_copies() {
    let store = InMemoryConversationStore::new();
    store.save("a", vec![json!(1)]).await.unwrap();
    let mut got = store.get("a").await.unwrap().unwrap();
    got.push(json!(2));
    assert_eq!(store.get("a").await.unwrap().unwrap(), vec![json!(1)]);
    assert_eq!(store.get("b").await.unwrap(), None);
}
