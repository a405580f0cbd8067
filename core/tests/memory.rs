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
    let empty = client.ask_with_answer(Some(&tk), "", None, &answer_output("gate-1", "x")).await.unwrap_err();
    assert_eq!(empty.message(), "a resume by conversation id needs the id (it is empty)");
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

/// The child side of the cross-process tests: `TN_MEMORY_CHILD=<role> <id> <store spec>`.
#[tokio::test]
#[ignore = "run by the cross-process tests in a child process"]
async fn memory_child() {
    let Ok(spec) = std::env::var("TN_MEMORY_CHILD") else { return };
    let mut parts = spec.splitn(3, ' ');
    let (role, id, store) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
    let store = toolnexus::memory::open(store).unwrap();
    let say = |line: &str| {
        println!("{line}");
        std::io::stdout().flush().unwrap();
    };
    match role {
        "hold" => {
            let _lock = store.lock(id).await.unwrap();
            say("locked");
            std::thread::sleep(std::time::Duration::from_secs(60));
        }
        "resume" => {
            let (client, _t) = client_with(Some(store), vec![ScriptedReply::openai_text("resumed elsewhere")]);
            let r = client.ask_with_answer(Some(&gated()), id, None, &answer_output("gate-1", "yes")).await;
            say(&r.map(|r| r.text).unwrap_or_else(|e| format!("error {}", e.kind())));
        }
        "resume-and-hang" => {
            // The answer is accepted, then the process dies inside the resumed tool.
            let tk = Toolkit::new(vec![Tool::from_sync("gated", "", json!({"type": "object"}), |_, _| {
                println!("started");
                std::io::stdout().flush().unwrap();
                std::thread::sleep(std::time::Duration::from_secs(60));
                Ok(ToolResult::ok("never"))
            })])
            .unwrap();
            let (client, _t) = client_with(Some(store), vec![]);
            let _ = client.ask_with_answer(Some(&tk), id, None, &answer_output("gate-1", "yes")).await;
        }
        other => panic!("unknown role {other}"),
    }
}

fn child(store: &str, role: &str, id: &str) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["memory_child", "--exact", "--ignored", "--nocapture", "--test-threads=1", "-q"])
        .env("TN_MEMORY_CHILD", format!("{role} {id} {store}"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

fn lines_of(c: &mut std::process::Child) -> impl Iterator<Item = String> + '_ {
    BufReader::new(c.stdout.as_mut().unwrap()).lines().map_while(|l| l.ok())
}

/// A conversation id no other test run uses (the PostgreSQL database is shared).
fn fresh(name: &str) -> String {
    format!("{name}-{}-{}", std::process::id(), toolnexus::new_request_id())
}

/// Halts a run in this process; another process resumes it by id alone.
async fn resumed_elsewhere(spec: &str) {
    let store = toolnexus::memory::open(spec).unwrap();
    let id = fresh("d");
    let (client, _t) = client_with(Some(store.clone()), vec![ScriptedReply::openai_calls(&[("c1", "gated", "{}")])]);
    assert_eq!(client.ask("go", Some(&gated()), Some(&id)).await.unwrap().status, RunStatus::Pending);
    assert!(store.pending_runs().await.unwrap().iter().any(|p| p.id == id));
    let mut c = child(spec, "resume", &id);
    let said: Vec<String> = lines_of(&mut c).collect();
    assert!(c.wait().unwrap().success());
    assert!(said.iter().any(|l| l == "resumed elsewhere"), "child said {said:?}");
    assert_eq!(store.load(&id).await.unwrap().unwrap().pending, None);
    // The other process resumed it: here it is answered already.
    let again = client.ask_with_answer(Some(&gated()), &id, None, &answer_output("gate-1", "yes")).await;
    assert_eq!(again.unwrap_err().kind(), ErrorKind::Conflict);
}

/// Another process holds a conversation: a conflict here until that process dies.
async fn held_elsewhere(spec: &str) {
    let store = toolnexus::memory::open(spec).unwrap();
    let id = fresh("held");
    let mut c = child(spec, "hold", &id);
    assert!(lines_of(&mut c).any(|l| l == "locked"), "the child never took its lock");
    let e = store.lock(&id).await.err().expect("held by the child");
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert!(store.lock(&fresh("free")).await.is_ok(), "other conversations are not held");
    c.kill().unwrap(); // a crash: no unlock ever runs in the child
    c.wait().unwrap();
    // The kernel (SQLite) or the server (PostgreSQL) lets go of a dead process's lock.
    let mut taken = false;
    for _ in 0..100 {
        if store.lock(&id).await.is_ok() {
            taken = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(taken, "the dead process's lock was never released");
}

/// A process dies after accepting an answer: nothing is lost, and the answer stays the answer.
async fn crashed_mid_resume(spec: &str) {
    let store = toolnexus::memory::open(spec).unwrap();
    let id = fresh("crash");
    let (client, t) = client_with(Some(store.clone()), vec![ScriptedReply::openai_calls(&[("c1", "gated", "{}")])]);
    client.ask("go", Some(&gated()), Some(&id)).await.unwrap();
    let mut c = child(spec, "resume-and-hang", &id);
    assert!(lines_of(&mut c).any(|l| l == "started"), "the child never reached the tool");
    c.kill().unwrap();
    c.wait().unwrap();
    let rec = store.load(&id).await.unwrap().unwrap();
    assert_eq!(rec.answer.map(|a| a.id).as_deref(), Some("gate-1"), "the accepted answer is on record");
    assert!(rec.pending.is_some(), "still waiting: the resume never finished");
    let mut other = Err(toolnexus::Error::invalid(""));
    for _ in 0..100 {
        other = client.ask_with_answer(Some(&gated()), &id, None, &answer_output("gate-1", "no")).await;
        if !matches!(&other, Err(e) if e.message().contains("in use")) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let e = other.unwrap_err();
    assert!(e.kind() == ErrorKind::Conflict && e.message().contains("answered differently"), "{}", e.message());
    t.push(ScriptedReply::openai_text("done"));
    let done = client.ask_with_answer(Some(&gated()), &id, None, &answer_output("gate-1", "yes")).await.unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.tool_calls.last().unwrap().output, "approved: yes");
}

fn sqlite_spec(name: &str) -> String {
    scratch_db(name).display().to_string()
}

#[tokio::test]
async fn sqlite_a_halt_in_one_process_resumes_in_another_by_id_alone() {
    resumed_elsewhere(&sqlite_spec("two-processes")).await;
}

#[tokio::test]
async fn sqlite_a_lock_held_by_another_process_is_a_conflict_until_that_process_dies() {
    held_elsewhere(&sqlite_spec("lock")).await;
}

#[tokio::test]
async fn sqlite_a_crash_mid_resume_loses_nothing() {
    crashed_mid_resume(&sqlite_spec("crash")).await;
}

/// The PostgreSQL server `tests/postgres/with-postgres.sh` started; under CI it must be there.
fn postgres() -> Option<String> {
    match std::env::var("TN_POSTGRES_URL") {
        Ok(url) => Some(url),
        Err(_) if std::env::var_os("CI").is_some() => {
            panic!("TN_POSTGRES_URL is not set (run under tests/postgres/with-postgres.sh)")
        }
        Err(_) => {
            eprintln!("skipped: no TN_POSTGRES_URL (tests/postgres/with-postgres.sh starts a server)");
            None
        }
    }
}

#[tokio::test]
async fn postgres_a_halt_in_one_process_resumes_in_another_by_id_alone() {
    if let Some(url) = postgres() {
        resumed_elsewhere(&url).await;
    }
}

#[tokio::test]
async fn postgres_a_lock_held_by_another_process_is_a_conflict_until_that_process_dies() {
    if let Some(url) = postgres() {
        held_elsewhere(&url).await;
    }
}

#[tokio::test]
async fn postgres_a_crash_mid_resume_loses_nothing() {
    if let Some(url) = postgres() {
        crashed_mid_resume(&url).await;
    }
}

#[tokio::test]
async fn postgres_keeps_a_conversation_and_lists_what_waits() {
    let Some(url) = postgres() else { return };
    let store = toolnexus::memory::open(&url).unwrap();
    let id = fresh("pg");
    let (client, t) = client_with(
        Some(store.clone()),
        vec![ScriptedReply::openai_text("one"), ScriptedReply::openai_calls(&[("c1", "gated", "{}")])],
    );
    client.ask("first", Some(&gated()), Some(&id)).await.unwrap();
    assert_eq!(client.ask("second", Some(&gated()), Some(&id)).await.unwrap().status, RunStatus::Pending);
    assert_eq!(user_texts(&t.requests()[1].body), ["first", "second"]);
    let waiting = store.pending_runs().await.unwrap();
    let mine = waiting.iter().find(|p| p.id == id).expect("listed");
    assert_eq!(mine.request.id, "gate-1");
    // The test server has no TLS: requiring it is refused, never silently plain.
    let tls = toolnexus::memory::open(&format!("{url}?sslmode=require")).unwrap();
    let e = tls.get("x").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Store, "{}", e.message());
    let bad = toolnexus::memory::open("postgres://nobody:pw@127.0.0.1:1/none").unwrap();
    let e = bad.get("x").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Store);
    assert!(!e.message().contains("pw"), "{}", e.message());
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
