//! `resumes`: durable halts and resumes per second through a conversation store, the
//! model in-process so that what is measured is the store (its lock, its reads, its writes).
//!
//! ```text
//! resumes --store memory|<sqlite path>|<postgres:// URL> [--runs 2000] [--concurrency 8]
//! ```
//!
//! One cycle is `ask(id)` halting on a suspension, then `ask_with_answer(id)` resuming it by id
//! alone (two runs, each taking the conversation's lock, loading and saving it; the resume also
//! records its accepted answer first). Prints one JSON line: cycles per second and the p50 and
//! p99 of one cycle.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};
use toolnexus::memory::{open, ConversationStore, InMemoryConversationStore};
use toolnexus::{
    answer_output, pending, Client, ClientOptions, HookFuture, InProcessModel, PendingSpec, Tool, ToolResult, Toolkit,
};

/// Calls the gate once, then answers with what it returned.
struct Model;

impl InProcessModel for Model {
    fn generate(&self, request: Value) -> HookFuture<Value> {
        let last_is_tool = request["messages"].as_array().and_then(|m| m.last()).is_some_and(|m| m["role"] == "tool");
        Box::pin(async move {
            Ok(if last_is_tool {
                json!({"content": "done"})
            } else {
                json!({"tool_calls": [{"id": "c1", "name": "gate", "arguments": {}}]})
            })
        })
    }
}

fn gate() -> Toolkit {
    let tool = Tool::from_sync("gate", "", json!({"type": "object"}), |_, ctx| {
        Ok(match ctx.answer {
            Some(_) => ToolResult::ok("approved"),
            None => pending(PendingSpec {
                id: Some("gate-1".into()),
                kind: "approval".into(),
                prompt: "ok?".into(),
                ..Default::default()
            }),
        })
    });
    Toolkit::new(vec![tool]).unwrap_or_else(|e| fail(e.message()))
}

fn fail(why: &str) -> ! {
    eprintln!("resumes: {why}");
    std::process::exit(2)
}

struct Opts {
    store: String,
    runs: usize,
    concurrency: usize,
}

fn parse_opts() -> Opts {
    let mut o = Opts { store: "memory".into(), runs: 2000, concurrency: 8 };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let val = it.next().unwrap_or_else(|| fail(&format!("{flag} needs a value")));
        let num = || val.parse::<usize>().unwrap_or_else(|_| fail(&format!("{flag}: not a number: {val}")));
        match flag.as_str() {
            "--store" => o.store = val.clone(),
            "--runs" => o.runs = num(),
            "--concurrency" => o.concurrency = num().max(1),
            other => fail(&format!("unknown flag {other}")),
        }
    }
    o
}

async fn cycle(client: &Client, tk: &Toolkit, id: &str) -> f64 {
    let start = Instant::now();
    let halted = client.ask("go", Some(tk), Some(id)).await.unwrap_or_else(|e| fail(e.message()));
    assert!(halted.pending.is_some(), "the run halts");
    let done = client
        .ask_with_answer(Some(tk), id, None, &answer_output("gate-1", "yes"))
        .await
        .unwrap_or_else(|e| fail(e.message()));
    assert_eq!(done.text, "done");
    start.elapsed().as_secs_f64() * 1e3
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let o = parse_opts();
    let store: Arc<dyn ConversationStore> = match o.store.as_str() {
        "memory" => Arc::new(InMemoryConversationStore::new()),
        spec => open(spec).unwrap_or_else(|e| fail(e.message())),
    };
    let mut opts = ClientOptions::in_process("bench", Arc::new(Model));
    opts.store = Some(store.clone());
    let client = Arc::new(Client::new(opts).unwrap_or_else(|e| fail(e.message())));
    let tk = Arc::new(gate());
    let tag = format!("{}-{}", std::process::id(), toolnexus::new_request_id());
    // Warm: connections opened, the table made.
    cycle(&client, &tk, &format!("warm-{tag}")).await;

    let start = Instant::now();
    let per_worker = o.runs.div_ceil(o.concurrency);
    let workers: Vec<_> = (0..o.concurrency)
        .map(|w| {
            let (client, tk, tag) = (client.clone(), tk.clone(), tag.clone());
            tokio::spawn(async move {
                let mut times = Vec::with_capacity(per_worker);
                for i in 0..per_worker {
                    times.push(cycle(&client, &tk, &format!("{tag}-{w}-{i}")).await);
                }
                times
            })
        })
        .collect();
    let mut times = Vec::with_capacity(o.runs);
    for w in workers {
        times.extend(w.await.unwrap_or_else(|_| fail("a worker failed")));
    }
    let secs = start.elapsed().as_secs_f64();
    times.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| times[((times.len() as f64 - 1.0) * q).round() as usize];
    let kind = store.kind();
    println!(
        "{}",
        json!({
            "store": kind, "cycles": times.len(), "concurrency": o.concurrency,
            "cycles_per_s": (times.len() as f64 / secs).round(),
            "cycle_p50_ms": (at(0.5) * 1000.0).round() / 1000.0, "cycle_p99_ms": (at(0.99) * 1000.0).round() / 1000.0,
        })
    );
}
