//! The floor: a minimal agent loop in Rust over one raw keep-alive TCP connection.
//!
//! It sends the same request/response pairs a framework would (system + optional
//! history + user prompt + tool schemas; assistant turns and tool results appended),
//! so `framework per-run time − floor` is the framework's own overhead.
//! It speaks the same stdin control protocol as the Python/Node runners.
//!
//! One timed unit is what a runner times for the scenario: one run; for `stream` one run read
//! as server-sent events; for `concurrent-N` N runs at once, each on its own connection from
//! a thread kept for the whole bench (spawning them per unit would be timed too); for
//! `suspend` two runs, the same requests a library's inline run plus its halt and resume send.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::thread;
use std::time::Instant;

use serde_json::{json, Value};

use crate::scenario::{self, Scenario};

const MAX_TURNS: usize = 64;

pub struct Conn {
    addr: String,
    host_header: String,
    stream: Option<BufReader<TcpStream>>,
    pub reconnects: u64,
}

impl Conn {
    pub fn new(base_url: &str) -> io::Result<Conn> {
        let hostport = base_url
            .strip_prefix("http://")
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "base url must be http://host:port"))?
            .trim_end_matches('/');
        let host = hostport.rsplit_once(':').map_or(hostport, |(h, _)| h);
        if !matches!(host, "127.0.0.1" | "localhost" | "[::1]") && !host.starts_with("127.") {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "loopback only"));
        }
        Ok(Conn { addr: hostport.to_string(), host_header: hostport.to_string(), stream: None, reconnects: 0 })
    }

    fn connect(&mut self) -> io::Result<()> {
        let s = TcpStream::connect(&self.addr)?;
        s.set_nodelay(true)?;
        self.stream = Some(BufReader::with_capacity(64 * 1024, s));
        self.reconnects += 1;
        Ok(())
    }

    fn try_post(&mut self, req: &[u8]) -> io::Result<(u16, Vec<u8>)> {
        if self.stream.is_none() {
            self.connect()?;
        }
        let r = self.stream.as_mut().expect("connected");
        r.get_mut().write_all(req)?;
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "closed"));
        }
        let status: u16 = line.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        let mut len: Option<usize> = None;
        loop {
            line.clear();
            if r.read_line(&mut line)? == 0 {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "closed in headers"));
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    len = v.trim().parse().ok();
                }
            }
        }
        let len = len.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no content-length"))?;
        let mut body = vec![0u8; len];
        r.read_exact(&mut body)?;
        Ok((status, body))
    }

    pub fn post(&mut self, path: &str, extra_headers: &str, body: &[u8]) -> io::Result<(u16, Vec<u8>)> {
        let mut req = Vec::with_capacity(body.len() + 256);
        write!(
            req,
            "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n{extra_headers}Content-Length: {}\r\n\r\n",
            self.host_header,
            body.len()
        )?;
        req.extend_from_slice(body);
        match self.try_post(&req) {
            Ok(r) => Ok(r),
            Err(_) => {
                // stale keep-alive connection: reconnect once
                self.stream = None;
                self.try_post(&req)
            }
        }
    }
}

pub struct RunOutcome {
    pub turns: usize,
    pub tool_calls: usize,
    pub text: String,
}

fn fail(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::Other, msg)
}

/// The prior messages of history-N, then the user's prompt: how every run opens.
fn push_opening(messages: &mut Vec<Value>, sc: &Scenario) {
    for i in 0..sc.history {
        messages.push(json!({"role": scenario::history_role(i), "content": scenario::history_text(i)}));
    }
    messages.push(json!({"role": "user", "content": sc.prompt()}));
}

pub fn run_openai(conn: &mut Conn, sc: &Scenario) -> io::Result<RunOutcome> {
    let path = format!("/s/{}/v1/chat/completions", sc.name);
    let mut messages = vec![json!({"role": "system", "content": scenario::SYSTEM_PROMPT})];
    push_opening(&mut messages, sc);
    let tools = scenario::openai_tools(sc.kind);
    let mut n_tools = 0;
    for turn in 1..=MAX_TURNS {
        let mut req = json!({"model": "gpt-4o-mini", "messages": messages, "tools": tools, "tool_choice": "auto"});
        if sc.stream {
            req["stream"] = json!(true);
        }
        let body = serde_json::to_vec(&req)?;
        let (status, resp) = conn.post(&path, "Authorization: Bearer sk-mock\r\n", &body)?;
        if status != 200 {
            return Err(fail(format!("HTTP {status}: {}", String::from_utf8_lossy(&resp))));
        }
        let msg = if sc.stream {
            fold_openai_sse(&resp)?
        } else {
            let mut v: Value = serde_json::from_slice(&resp)?;
            v["choices"][0]["message"].take()
        };
        let calls = msg.get("tool_calls").and_then(Value::as_array).cloned().unwrap_or_default();
        if calls.is_empty() {
            let text = msg.get("content").and_then(Value::as_str).unwrap_or("").to_string();
            return Ok(RunOutcome { turns: turn, tool_calls: n_tools, text });
        }
        messages.push(msg);
        for c in calls {
            let name = c["function"]["name"].as_str().unwrap_or("");
            let args: Value = serde_json::from_str(c["function"]["arguments"].as_str().unwrap_or("{}"))?;
            let out = scenario::run_tool(name, &args);
            n_tools += 1;
            messages.push(json!({"role": "tool", "tool_call_id": c["id"], "content": out}));
        }
    }
    Err(fail("max turns".into()))
}

/// The assistant message an OpenAI event stream spells out: its text, and its tool calls
/// with their argument pieces joined.
fn fold_openai_sse(body: &[u8]) -> io::Result<Value> {
    let mut text = String::new();
    let mut calls: Vec<Value> = Vec::new();
    for line in String::from_utf8_lossy(body).lines() {
        let Some(data) = line.strip_prefix("data: ") else { continue };
        if data == "[DONE]" {
            break;
        }
        let ev: Value = serde_json::from_str(data)?;
        let delta = &ev["choices"][0]["delta"];
        if let Some(t) = delta["content"].as_str() {
            text.push_str(t);
        }
        for tc in delta["tool_calls"].as_array().into_iter().flatten() {
            let i = tc["index"].as_u64().unwrap_or(0) as usize;
            if calls.len() <= i {
                calls.resize(i + 1, json!({"type": "function", "function": {"name": "", "arguments": ""}}));
            }
            let call = &mut calls[i];
            if let Some(id) = tc["id"].as_str() {
                call["id"] = json!(id);
            }
            for key in ["name", "arguments"] {
                if let Some(piece) = tc["function"][key].as_str() {
                    let joined = format!("{}{piece}", call["function"][key].as_str().unwrap_or(""));
                    call["function"][key] = json!(joined);
                }
            }
        }
    }
    let mut msg = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
    if !calls.is_empty() {
        msg["tool_calls"] = json!(calls);
    }
    Ok(msg)
}

pub fn run_anthropic(conn: &mut Conn, sc: &Scenario) -> io::Result<RunOutcome> {
    let path = format!("/s/{}/v1/messages", sc.name);
    let mut messages = Vec::with_capacity(sc.history + 8);
    push_opening(&mut messages, sc);
    let tools = scenario::anthropic_tools(sc.kind);
    let mut n_tools = 0;
    for turn in 1..=MAX_TURNS {
        let body = serde_json::to_vec(&json!({
            "model": "claude-mock", "max_tokens": 1024, "system": scenario::SYSTEM_PROMPT,
            "messages": messages, "tools": tools
        }))?;
        let (status, resp) = conn.post(&path, "x-api-key: sk-mock\r\nanthropic-version: 2023-06-01\r\n", &body)?;
        if status != 200 {
            return Err(fail(format!("HTTP {status}: {}", String::from_utf8_lossy(&resp))));
        }
        let mut v: Value = serde_json::from_slice(&resp)?;
        let content = v["content"].take();
        let blocks = content.as_array().cloned().unwrap_or_default();
        let uses: Vec<&Value> = blocks.iter().filter(|b| b["type"] == "tool_use").collect();
        if uses.is_empty() {
            let text = blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("");
            return Ok(RunOutcome { turns: turn, tool_calls: n_tools, text });
        }
        let results: Vec<Value> = uses
            .iter()
            .map(|b| {
                n_tools += 1;
                let out = scenario::run_tool(b["name"].as_str().unwrap_or(""), &b["input"]);
                json!({"type": "tool_result", "tool_use_id": b["id"], "content": out})
            })
            .collect();
        messages.push(json!({"role": "assistant", "content": content}));
        messages.push(json!({"role": "user", "content": results}));
    }
    Err(fail("max turns".into()))
}

pub fn cpu_ms() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

pub fn peak_rss_mb() -> f64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    ru.ru_maxrss as f64 / 1024.0
}

/// Nearest-rank percentile (same definition in every harness).
pub fn pct(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    let k = ((q * n as f64).ceil() as usize).clamp(1, n);
    sorted[k - 1]
}

pub struct Opts {
    pub base_url: String,
    pub scenario: String,
    pub style: String,
    pub runs: usize,
    pub warmup: usize,
    pub control: bool,
    pub label: String,
}

fn check_run(conn: &mut Conn, sc: &Scenario, anthropic: bool) -> io::Result<()> {
    let (exp_turns, exp_tools) = sc.expected();
    let r = if anthropic { run_anthropic(conn, sc)? } else { run_openai(conn, sc)? };
    if r.turns != exp_turns || r.tool_calls != exp_tools || !r.text.starts_with("FINAL") {
        return Err(fail(format!(
            "bad run: turns={} tools={} text={:?} (want {exp_turns}/{exp_tools})",
            r.turns, r.tool_calls, r.text
        )));
    }
    Ok(())
}

/// Threads, each with its own connection, that do one run whenever they are told to.
struct Workers {
    go: Vec<mpsc::Sender<()>>,
    done: mpsc::Receiver<io::Result<()>>,
}

impl Workers {
    fn start(n: usize, base_url: &str, sc: &Scenario, anthropic: bool) -> io::Result<Workers> {
        let (done_tx, done) = mpsc::channel();
        let mut go = Vec::with_capacity(n);
        for _ in 0..n {
            let (tx, rx) = mpsc::channel::<()>();
            let mut conn = Conn::new(base_url)?;
            let (sc, done_tx) = (sc.clone(), done_tx.clone());
            thread::spawn(move || {
                while rx.recv().is_ok() {
                    if done_tx.send(check_run(&mut conn, &sc, anthropic)).is_err() {
                        break;
                    }
                }
            });
            go.push(tx);
        }
        Ok(Workers { go, done })
    }

    /// One run on every thread at once; returns when all have finished.
    fn unit(&self) -> io::Result<()> {
        for g in &self.go {
            g.send(()).map_err(|_| fail("worker gone".into()))?;
        }
        let mut first_err = None;
        for _ in &self.go {
            if let Err(e) = self.done.recv().map_err(|_| fail("worker gone".into()))? {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

pub fn main(o: Opts) -> io::Result<()> {
    let t0 = Instant::now();
    let sc = Scenario::parse(&o.scenario).ok_or_else(|| fail(format!("unknown scenario {}", o.scenario)))?;
    let mut conn = Conn::new(&o.base_url)?;
    let anthropic = o.style == "anthropic";
    let workers =
        if sc.concurrency > 1 { Some(Workers::start(sc.concurrency, &o.base_url, &sc, anthropic)?) } else { None };
    let init_ms = t0.elapsed().as_secs_f64() * 1e3;
    let (turns, tools) = sc.expected();
    let per_unit = sc.runs_per_unit * sc.concurrency;
    let (exp_turns, exp_tools) = (turns * per_unit, tools * per_unit);
    let one = |conn: &mut Conn| match &workers {
        Some(w) => w.unit(),
        None => (0..sc.runs_per_unit).try_for_each(|_| check_run(conn, &sc, anthropic)),
    };
    let mut samples: Vec<f64> = Vec::new();
    let mut cpu_total = 0.0;
    let timed = |n: usize, conn: &mut Conn, samples: &mut Vec<f64>, cpu_total: &mut f64| -> io::Result<()> {
        let c0 = cpu_ms();
        for _ in 0..n {
            let t = Instant::now();
            one(conn)?;
            samples.push(t.elapsed().as_secs_f64() * 1e3);
        }
        *cpu_total += cpu_ms() - c0;
        Ok(())
    };
    let stdout = io::stdout();
    let emit = |v: Value| {
        let mut out = stdout.lock();
        let _ = writeln!(out, "{v}");
        let _ = out.flush();
    };
    if o.control {
        emit(json!({"event": "ready", "init_ms": init_ms, "import_ms": 0.0}));
        let stdin = io::stdin();
        for line in stdin.lock().lines() {
            let line = line?;
            let mut it = line.split_whitespace();
            match (it.next(), it.next().and_then(|s| s.parse::<usize>().ok())) {
                (Some("warmup"), Some(k)) => {
                    for _ in 0..k {
                        one(&mut conn)?;
                    }
                    emit(json!({"event": "ok"}));
                }
                (Some("run"), Some(k)) => {
                    timed(k, &mut conn, &mut samples, &mut cpu_total)?;
                    emit(json!({"event": "ok", "n": samples.len()}));
                }
                (Some("done"), _) => break,
                _ => emit(json!({"event": "error", "error": format!("bad command {line:?}")})),
            }
        }
    } else {
        for _ in 0..o.warmup {
            one(&mut conn)?;
        }
        timed(o.runs, &mut conn, &mut samples, &mut cpu_total)?;
    }
    let n = samples.len().max(1);
    let mut sorted = samples.clone();
    sorted.sort_by(|a, b| a.partial_cmp(b).expect("finite"));
    let mean = samples.iter().sum::<f64>() / n as f64;
    let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
    let per_run = if sorted.is_empty() {
        json!(null)
    } else {
        json!({"mean": mean, "p50": pct(&sorted, 0.5), "p95": pct(&sorted, 0.95), "min": sorted[0],
               "max": sorted[sorted.len() - 1], "stdev": var.sqrt()})
    };
    emit(json!({
        "event": "result",
        "framework": o.label,
        "version": format!("mockllm {}", env!("CARGO_PKG_VERSION")),
        "lang": "rust",
        "kind": "floor",
        "style": o.style,
        "scenario": sc.name,
        "runs": samples.len(),
        "init_ms": init_ms,
        "import_ms": 0.0,
        "per_run_ms": per_run,
        "cpu_ms_per_run": cpu_total / n as f64,
        "peak_rss_mb": peak_rss_mb(),
        "turns_per_run": exp_turns,
        "tool_calls_per_run": exp_tools,
        "reconnects": conn.reconnects,
    }));
    Ok(())
}
