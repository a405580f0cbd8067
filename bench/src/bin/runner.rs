//! `runner`: the engine as one row of `make bench-peers`, from Rust, the host with no binding
//! between it and the engine. It speaks the runners' line protocol on stdin/stdout (see
//! `bench/peers/runners/py/harness.py`): `ready`, then `warmup K`, `run K`, `done` and one
//! result line, so the orchestrator interleaves it with every other row.
//!
//! ```text
//! runner --base-url http://127.0.0.1:PORT --scenario weather|chain-K|history-N|stream|concurrent-N|suspend
//!        [--control] [--runs 200] [--warmup 20] [--label NAME]
//! ```

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};
use toolnexus::{
    answer_output, pending, Answer, Client, ClientOptions, PendingSpec, Request, RunInput, StreamEvent, StreamTo,
    Style, Tool, ToolResult, Toolkit,
};

const SYSTEM_PROMPT: &str = "You are a helpful assistant.";
const FILLER: &str = "The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog.";

/// What one timed unit of a scenario is, as `harness.py`'s `Spec` has it.
struct Spec {
    name: String,
    suspend: bool,
    chain: usize,
    history: usize,
    concurrency: usize,
    stream: bool,
}

impl Spec {
    fn parse(name: &str) -> Result<Spec, String> {
        let num = |s: &str| s.parse::<usize>().map_err(|_| format!("bad scenario {name}"));
        let mut sp =
            Spec { name: name.into(), suspend: false, chain: 0, history: 0, concurrency: 1, stream: name == "stream" };
        if let Some(k) = name.strip_prefix("chain-") {
            sp.chain = num(k)?;
        } else if let Some(n) = name.strip_prefix("history-") {
            sp.history = num(n)?;
        } else if let Some(n) = name.strip_prefix("concurrent-") {
            sp.concurrency = num(n)?;
        } else if name == "suspend" {
            sp.suspend = true;
        } else if !matches!(name, "weather" | "stream") {
            return Err(format!("unknown scenario {name}"));
        }
        Ok(sp)
    }

    /// (model calls, tool executions) per unit.
    fn expected(&self) -> (usize, usize) {
        if self.suspend {
            (4, 4) // two runs; `approve` suspends, then re-runs with the answer, in each
        } else if self.chain > 0 {
            (self.chain + 1, self.chain)
        } else {
            (2 * self.concurrency, 2 * self.concurrency)
        }
    }

    fn prompt(&self) -> &'static str {
        if self.suspend {
            "Deploy the release once it is approved."
        } else if self.chain > 0 {
            "Add the numbers step by step using the add tool."
        } else {
            "What is the weather in Paris, and what is 2+2?"
        }
    }

    fn expected_text(&self) -> Vec<String> {
        if self.suspend {
            vec!["FINAL".into(), "approved: deploy".into()]
        } else if self.chain > 0 {
            std::iter::once("FINAL".to_string()).chain((0..self.chain).map(|i| (i + 2).to_string())).collect()
        } else {
            vec!["FINAL".into(), "Sunny, 22C in Paris".into(), "4".into()]
        }
    }

    fn history(&self) -> Vec<Value> {
        if self.history == 0 {
            return Vec::new();
        }
        // run_with_history does not re-add the system prompt (openai style): carry it.
        let mut out = vec![json!({"role": "system", "content": SYSTEM_PROMPT})];
        for i in 0..self.history {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            out.push(json!({"role": role, "content": format!("Earlier message {i}: {FILLER}")}));
        }
        out
    }
}

/// The scenario's tools; `calls` counts their executions, which every unit checks.
fn toolkit(sp: &Spec, calls: &Arc<AtomicUsize>) -> toolnexus::Result<Toolkit> {
    let counted = |n: &Arc<AtomicUsize>| {
        n.fetch_add(1, Ordering::Relaxed);
    };
    if sp.suspend {
        let n = calls.clone();
        let schema = json!({"type": "object", "properties": {"action": {"type": "string"}}, "required": ["action"]});
        let approve =
            Tool::from_sync("approve", "Carry out an action once a human approves it.", schema, move |args, ctx| {
                counted(&n);
                let action = args["action"].as_str().unwrap_or("?");
                Ok(match ctx.answer {
                    Some(_) => ToolResult::ok(format!("approved: {action}")),
                    None => pending(PendingSpec {
                        id: Some(format!("ap-{}", ctx.call_id)),
                        kind: "approval".into(),
                        prompt: format!("Approve {action}?"),
                        ..Default::default()
                    }),
                })
            });
        return Toolkit::new(vec![approve]);
    }
    let (n1, n2) = (calls.clone(), calls.clone());
    let weather = Tool::from_sync(
        "get_weather",
        "Get the current weather for a city.",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        move |args, _| {
            counted(&n1);
            Ok(ToolResult::ok(format!("Sunny, 22C in {}", args["city"].as_str().unwrap_or("?"))))
        },
    );
    let add = Tool::from_sync(
        "add",
        "Add two integers.",
        json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}),
        move |args, _| {
            counted(&n2);
            Ok(ToolResult::ok((args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0)).to_string()))
        },
    );
    Toolkit::new(vec![weather, add])
}

struct Bench {
    spec: Spec,
    client: Arc<Client>,
    /// The suspend scenario's client with `wait_for`, for the inline half.
    inline: Arc<Client>,
    toolkit: Arc<Toolkit>,
    history: Arc<Vec<Value>>,
    calls: Arc<AtomicUsize>,
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

impl Bench {
    fn new(base_url: &str, spec: Spec) -> Result<Bench, String> {
        let options = || {
            let mut o =
                ClientOptions::new(format!("{base_url}/s/{}/v1", spec.name), Style::OpenAi, "gpt-4o-mini".to_string());
            o.api_key = Some("sk-mock".into());
            o.system_prompt = Some(SYSTEM_PROMPT.into());
            o.max_turns = 20;
            o
        };
        let mut inline = options();
        inline.wait_for = Some(Arc::new(|req: Request| async move { Ok(Some(answer_output(&req.id, "yes"))) }));
        let calls = Arc::new(AtomicUsize::new(0));
        Ok(Bench {
            toolkit: Arc::new(toolkit(&spec, &calls).map_err(err)?),
            client: Arc::new(Client::new(options()).map_err(err)?),
            inline: Arc::new(Client::new(inline).map_err(err)?),
            history: Arc::new(spec.history()),
            calls,
            spec,
        })
    }

    /// One run of the scenario's kind; its final text.
    async fn run(client: &Client, tk: &Toolkit, sp: &Spec, history: &[Value]) -> Result<String, String> {
        let mut input = RunInput::prompt(sp.prompt()).toolkit(tk).history(history.to_vec());
        if sp.stream {
            // A host's stream sink that keeps the text deltas, as a UI would show them.
            let text = Arc::new(std::sync::Mutex::new(String::new()));
            let sink = text.clone();
            input.stream = Some(StreamTo(Arc::new(move |ev: StreamEvent| {
                if let (StreamEvent::Text(delta), Ok(mut t)) = (ev, sink.lock()) {
                    t.push_str(&delta);
                }
            })));
        }
        Ok(client.run_input(input).await.map_err(err)?.text)
    }

    /// An inline suspension, then a durable halt and its resume.
    async fn suspend(&self) -> Result<String, String> {
        let (tk, prompt) = (&*self.toolkit, self.spec.prompt());
        let a = self.inline.run(prompt, Some(tk)).await.map_err(err)?;
        let halted = self.client.run(prompt, Some(tk)).await.map_err(err)?;
        let req = halted.pending.ok_or("the durable run did not halt")?;
        let answer: Answer = answer_output(&req.id, "yes");
        let b = self.client.run_with_answer(Some(tk), halted.messages, &req, &answer).await.map_err(err)?;
        Ok(format!("{} | {}", a.text, b.text))
    }

    async fn unit(&self) -> Result<Vec<String>, String> {
        if self.spec.suspend {
            return Ok(vec![self.suspend().await?]);
        }
        if self.spec.concurrency == 1 {
            return Ok(vec![Bench::run(&self.client, &self.toolkit, &self.spec, &self.history).await?]);
        }
        // Tasks of the runtime (on its one thread, or its workers with TN_BENCH_RUNTIME=multi).
        let mut set = tokio::task::JoinSet::new();
        let spec = Arc::new(Spec::parse("weather")?);
        for _ in 0..self.spec.concurrency {
            let (c, tk, sp, h) = (self.client.clone(), self.toolkit.clone(), spec.clone(), self.history.clone());
            set.spawn(async move { Bench::run(&c, &tk, &sp, &h).await });
        }
        let mut texts = Vec::with_capacity(self.spec.concurrency);
        while let Some(t) = set.join_next().await {
            texts.push(t.map_err(err)??);
        }
        Ok(texts)
    }

    /// One timed unit, checked; its time in ms.
    async fn one(&self) -> Result<f64, String> {
        let before = self.calls.load(Ordering::Relaxed);
        let t = Instant::now();
        let texts = self.unit().await?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let got = self.calls.load(Ordering::Relaxed) - before;
        let want = self.spec.expected_text();
        let bad = texts.iter().find(|t| want.iter().any(|w| !t.contains(w.as_str())));
        if got != self.spec.expected().1 || bad.is_some() {
            return Err(format!("bad run: tool calls {got} (want {}), text {bad:?}", self.spec.expected().1));
        }
        Ok(ms)
    }
}

/// CPU time of every thread of this process, from schedstat (ns precise; the runtime's
/// threads live as long as the process, so none is missed).
fn cpu_ms() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return 0.0 };
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .sum::<f64>()
        / 1e6
}

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = status.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.split_whitespace().next());
    kb.and_then(|k| k.parse::<f64>().ok()).unwrap_or(0.0) / 1024.0
}

/// Nearest-rank percentile, as every harness has it.
fn pct(sorted: &[f64], q: f64) -> f64 {
    let k = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[k - 1]
}

fn stats(xs: &[f64]) -> Value {
    if xs.is_empty() {
        return json!({});
    }
    let mut s = xs.to_vec();
    s.sort_by(f64::total_cmp);
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64;
    json!({"mean": mean, "p50": pct(&s, 0.5), "p95": pct(&s, 0.95), "min": s[0], "max": s[s.len() - 1], "stdev": var.sqrt()})
}

fn emit(v: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{v}");
    let _ = out.flush();
}

fn flag(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}

async fn main_loop(args: Vec<String>) -> Result<(), String> {
    let base = flag(&args, "--base-url").ok_or("--base-url is required")?;
    let spec = Spec::parse(&flag(&args, "--scenario").unwrap_or_else(|| "weather".into()))?;
    let label = flag(&args, "--label").unwrap_or_else(|| "toolnexus (rust)".into());
    let number = |name: &str, d: usize| flag(&args, name).and_then(|v| v.parse().ok()).unwrap_or(d);
    let t0 = Instant::now();
    let bench = Bench::new(base.trim_end_matches('/'), spec)?;
    let init_ms = t0.elapsed().as_secs_f64() * 1e3;
    let (mut samples, mut cpu, mut first) = (Vec::new(), 0.0, None::<f64>);
    let mut timed = async |k: usize, samples: &mut Vec<f64>| -> Result<(), String> {
        let c0 = cpu_ms();
        for _ in 0..k {
            let ms = bench.one().await?;
            first.get_or_insert(ms);
            samples.push(ms);
        }
        cpu += cpu_ms() - c0;
        Ok(())
    };
    if args.iter().any(|a| a == "--control") {
        emit(&json!({"event": "ready", "init_ms": init_ms, "import_ms": 0.0, "version": env!("CARGO_PKG_VERSION")}));
        for line in std::io::stdin().lock().lines() {
            let line = line.map_err(err)?;
            let mut it = line.split_whitespace();
            match (it.next(), it.next().and_then(|k| k.parse::<usize>().ok())) {
                (Some("warmup"), Some(k)) => {
                    for _ in 0..k {
                        bench.one().await?;
                    }
                    emit(&json!({"event": "ok"}));
                }
                (Some("run"), Some(k)) => {
                    timed(k, &mut samples).await?;
                    emit(&json!({"event": "ok", "n": samples.len()}));
                }
                (Some("done"), _) => break,
                _ => emit(&json!({"event": "error", "error": format!("bad command {line:?}")})),
            }
        }
    } else {
        for _ in 0..number("--warmup", 20) {
            bench.one().await?;
        }
        timed(number("--runs", 200), &mut samples).await?;
    }
    let (turns, tools) = bench.spec.expected();
    emit(&json!({
        "event": "result", "framework": label, "version": env!("CARGO_PKG_VERSION"), "lang": "rust",
        "kind": "framework", "style": "openai", "scenario": bench.spec.name, "runs": samples.len(),
        "init_ms": init_ms, "import_ms": 0.0, "first_run_ms": first, "per_run_ms": stats(&samples),
        "cpu_ms_per_run": cpu / samples.len().max(1) as f64, "peak_rss_mb": peak_rss_mb(),
        "turns_per_run": turns, "tool_calls_per_run": tools,
    }));
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // A current-thread runtime, as `make bench` has it. A multi-thread one driven from
    // block_on (what #[tokio::main] does) hops threads on every I/O event, and after an idle
    // gap those hops are slow on this VM: in batches of 10 runs 50 ms apart, weather took
    // 0.15-0.24 ms per run (CPU 0.11-0.13 ms) against 0.058-0.063 ms (CPU 0.044-0.053 ms) on
    // a current-thread runtime, which matched the floor. TN_BENCH_RUNTIME=multi measures that.
    let rt = if std::env::var("TN_BENCH_RUNTIME").as_deref() == Ok("multi") {
        tokio::runtime::Builder::new_multi_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    };
    let outcome = rt.map_err(err).and_then(|rt| rt.block_on(main_loop(args)));
    if let Err(e) = outcome {
        emit(&json!({"event": "error", "error": e}));
        std::process::exit(1);
    }
}
