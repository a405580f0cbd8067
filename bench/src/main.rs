//! `toolnexus-bench`: the engine's own cost per agent run, measured against the shared mock
//! model (`../shared/bench/mock`, `mockllm`) beside the bare keep-alive client it ships (the
//! floor), in interleaved batches so drift on the machine hits both alike.
//!
//! ```text
//! toolnexus-bench --mockllm PATH [--scenario weather] [--style openai|anthropic]
//!                 [--runs 2000] [--warmup 200] [--batch 50] [--transport engine|reqwest]
//! ```
//!
//! `--transport reqwest` (built with `--features reqwest`) runs the engine over a pooled
//! reqwest client instead of its own HTTP/1.1 transport.
//!
//! It prints one JSON line per side and a summary: the p50 per run of each, the engine's
//! overhead over the floor, and that overhead as a fraction of the floor.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};
use toolnexus::{Client, ClientOptions, Style, Tool, ToolResult, Toolkit, Transport};

#[cfg(feature = "reqwest")]
mod reqwest_transport;

struct Opts {
    mockllm: String,
    scenario: String,
    style: String,
    runs: usize,
    warmup: usize,
    batch: usize,
    transport: String,
}

fn parse_opts() -> Result<Opts, String> {
    let mut o = Opts {
        mockllm: String::new(),
        scenario: "weather".into(),
        style: "openai".into(),
        runs: 2000,
        warmup: 200,
        batch: 50,
        transport: "engine".into(),
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let val = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let num = || val.parse::<usize>().map_err(|_| format!("{flag}: not a number: {val}"));
        match flag.as_str() {
            "--mockllm" => o.mockllm = val.clone(),
            "--scenario" => o.scenario = val.clone(),
            "--style" => o.style = val.clone(),
            "--runs" => o.runs = num()?,
            "--warmup" => o.warmup = num()?,
            "--batch" => o.batch = num()?.max(1),
            "--transport" => o.transport = val.clone(),
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if o.mockllm.is_empty() {
        return Err("--mockllm PATH is required (build it from ../shared/bench/mock)".into());
    }
    Ok(o)
}

/// The transport the engine runs over: `None` is its own.
fn transport(name: &str) -> Result<Option<Arc<dyn Transport>>, String> {
    match name {
        "engine" => Ok(None),
        #[cfg(feature = "reqwest")]
        "reqwest" => Ok(Some(Arc::new(reqwest_transport::ReqwestTransport::new()?))),
        other => Err(format!("unknown transport {other} (reqwest needs --features reqwest)")),
    }
}

/// The same trivial tools the shared runners implement.
fn toolkit() -> toolnexus::Result<Toolkit> {
    let weather = Tool::from_sync(
        "get_weather",
        "Get the current weather for a city.",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        |args, _| Ok(ToolResult::ok(format!("Sunny, 22C in {}", args["city"].as_str().unwrap_or("?")))),
    );
    let add = Tool::from_sync(
        "add",
        "Add two integers.",
        json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}),
        |args, _| Ok(ToolResult::ok((args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0)).to_string())),
    );
    Toolkit::new(vec![weather, add])
}

fn prompt(scenario: &str) -> &'static str {
    if scenario.starts_with("chain-") {
        "Add the numbers step by step using the add tool."
    } else {
        "What is the weather in Paris, and what is 2+2?"
    }
}

struct Floor {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Floor {
    fn command(&mut self, cmd: &str) -> Result<Value, String> {
        writeln!(self.stdin, "{cmd}").map_err(|e| e.to_string())?;
        self.stdin.flush().map_err(|e| e.to_string())?;
        let mut line = String::new();
        self.stdout.read_line(&mut line).map_err(|e| e.to_string())?;
        serde_json::from_str(&line).map_err(|e| format!("floor said {line:?}: {e}"))
    }
}

/// Kills the mock when the bench ends, however it ends.
struct Reaper(Child);

impl Drop for Reaper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_mock(o: &Opts) -> Result<(Reaper, u16), String> {
    let mut child = Command::new(&o.mockllm)
        .args(["serve", "--port", "0"])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", o.mockllm))?;
    let out = child.stdout.take().ok_or("no mock stdout")?;
    let mut line = String::new();
    BufReader::new(out).read_line(&mut line).map_err(|e| e.to_string())?;
    let port = line.trim().strip_prefix("LISTENING ").and_then(|p| p.parse().ok());
    let reaper = Reaper(child);
    port.map(|p| (reaper, p)).ok_or_else(|| format!("unexpected mock banner {line:?}"))
}

fn start_floor(o: &Opts, base: &str) -> Result<Floor, String> {
    let mut child = Command::new(&o.mockllm)
        .args(["floor", "--base-url", base, "--scenario", &o.scenario, "--style", &o.style, "--control"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let stdin = child.stdin.take().ok_or("no floor stdin")?;
    let stdout = BufReader::new(child.stdout.take().ok_or("no floor stdout")?);
    let mut f = Floor { child, stdin, stdout };
    let mut line = String::new();
    f.stdout.read_line(&mut line).map_err(|e| e.to_string())?;
    Ok(f)
}

fn p50(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples.get(samples.len().saturating_sub(1) / 2).copied().unwrap_or(f64::NAN)
}

/// The prior transcript of `history-N`, as the shared runners build it.
fn history(scenario: &str, style: Style) -> Vec<Value> {
    const FILLER: &str = "The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog.";
    let n: usize = scenario.strip_prefix("history-").and_then(|n| n.parse().ok()).unwrap_or(0);
    let mut out = Vec::with_capacity(n + 1);
    if n > 0 && style == Style::OpenAi {
        out.push(json!({"role": "system", "content": "You are a helpful assistant."}));
    }
    for i in 0..n {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        out.push(json!({"role": role, "content": format!("Earlier message {i}: {FILLER}")}));
    }
    out
}

async fn one_run(client: &Client, tk: &Toolkit, prompt: &str, history: &[Value]) -> Result<(), String> {
    let r = client.run_with_history(prompt, Some(tk), history.to_vec()).await.map_err(|e| e.to_string())?;
    if !r.text.starts_with("FINAL") {
        return Err(format!("bad run: {:?}", r.text));
    }
    Ok(())
}

async fn bench(o: Opts) -> Result<(), String> {
    let (_mock, port) = start_mock(&o)?;
    let origin = format!("http://127.0.0.1:{port}");
    let base = format!("{origin}/s/{}", o.scenario);
    let style = Style::parse(&o.style).map_err(|e| e.to_string())?;
    let mut opts = ClientOptions::new(format!("{base}/v1"), style, "gpt-4o-mini");
    opts.api_key = Some("sk-mock".into());
    opts.system_prompt = Some("You are a helpful assistant.".into());
    opts.transport = transport(&o.transport)?;

    let client = Arc::new(Client::new(opts).map_err(|e| e.to_string())?);
    let tk = toolkit().map_err(|e| e.to_string())?;
    let prompt = prompt(&o.scenario);
    let history = history(&o.scenario, style);
    let mut floor = start_floor(&o, &origin)?;

    for _ in 0..o.warmup {
        one_run(&client, &tk, prompt, &history).await?;
    }
    floor.command(&format!("warmup {}", o.warmup))?;
    let mut ours = Vec::with_capacity(o.runs);
    let mut done = 0;
    while done < o.runs {
        let n = o.batch.min(o.runs - done);
        floor.command(&format!("run {n}"))?;
        for _ in 0..n {
            let t = Instant::now();
            one_run(&client, &tk, prompt, &history).await?;
            ours.push(t.elapsed().as_secs_f64() * 1e3);
        }
        done += n;
    }
    writeln!(floor.stdin, "done").map_err(|e| e.to_string())?;
    let mut line = String::new();
    floor.stdout.read_line(&mut line).map_err(|e| e.to_string())?;
    let floor_result: Value = serde_json::from_str(&line).map_err(|e| e.to_string())?;
    let _ = floor.child.wait();

    let floor_p50 = floor_result["per_run_ms"]["p50"].as_f64().ok_or("floor gave no p50")?;
    let ours_p50 = p50(&mut ours);
    let overhead = ours_p50 - floor_p50;
    println!(
        "{}",
        json!({"side": "floor", "scenario": o.scenario, "style": o.style, "runs": floor_result["runs"], "p50_ms": floor_p50})
    );
    println!(
        "{}",
        json!({"side": "toolnexus-core", "transport": o.transport, "scenario": o.scenario, "style": o.style, "runs": ours.len(), "p50_ms": ours_p50})
    );
    println!(
        "{} {} ({} transport): floor {floor_p50:.4} ms, engine {ours_p50:.4} ms, overhead {overhead:.4} ms = {:.2}x the floor (target <= 0.50x)",
        o.scenario,
        o.style,
        o.transport,
        overhead / floor_p50
    );
    Ok(())
}

fn main() {
    let result = parse_opts().and_then(|o| {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
        rt.block_on(bench(o))
    });
    if let Err(e) = result {
        eprintln!("toolnexus-bench: {e}");
        std::process::exit(1);
    }
}
