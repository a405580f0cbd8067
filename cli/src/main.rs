//! `toolnexus`: the engine from the terminal. `run` drives a model through the tool-calling
//! loop (one prompt, or a REPL), streaming text and tool calls as they happen; a tool that
//! suspends is asked about in the terminal, or with `--durable` the run halts in a store and
//! `resume` continues it later, from any process that reaches the store. `tools` lists a
//! toolkit, `demo` runs against a scripted model, `pending` lists a store's halted runs and
//! `inbox` serves them on a local page (the `toolnexus-inbox` crate) to be answered there.
//!
//! The CLI is a host of the engine like any binding: the loop, the suspension rules, the
//! option checks and the stores are the engine's.

mod args;
mod ask;
mod demo;
mod exit;
mod gate;
mod session;
mod term;

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use clap::Parser;
use serde_json::{json, Map, Value};
use toolnexus::{CancellationToken, RunResult, RunStatus, WaitFor};

use args::{
    Cli, Command, ConversationArgs, DemoArgs, InboxArgs, PendingArgs, ResumeArgs, RunArgs, ToolArgs, ToolsArgs,
};
use ask::TerminalAsk;
use session::{Decision, Failure, Model, Session};
use term::{start_ticker, Input, Ui};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let json = match &cli.command {
        Command::Run(a) => a.output.json,
        Command::Tools(a) => a.output.json,
        Command::Demo(a) => a.output.json,
        Command::Resume(a) => a.output.json,
        Command::Pending(a) => a.output.json,
        Command::Inbox(a) => a.output.json,
    };
    let ui = Ui::new(json);
    start_ticker(&ui);
    let runs = Runs::watch_interrupts(&ui);
    let outcome = match cli.command {
        Command::Run(a) => run(&ui, &runs, a).await,
        Command::Demo(a) => demo(&ui, &runs, a).await,
        Command::Resume(a) => resume(&ui, &runs, a).await,
        Command::Tools(a) => tools(&ui, a).await,
        Command::Pending(a) => pending(&ui, a).await,
        Command::Inbox(a) => inbox(&ui, &runs, a).await,
    };
    ExitCode::from(match outcome {
        Ok(code) => code,
        Err(f) => fail(&ui, &f),
    })
}

/// Shows `f` and gives its exit code.
fn fail(ui: &Ui, f: &Failure) -> u8 {
    ui.finish_text();
    if ui.is_json() {
        ui.json_line(&json!({"type": "error", "kind": f.kind, "message": f.message, "exit": f.code}));
    } else {
        ui.note(&format!("error: {}", f.message));
    }
    f.code
}

/// The run in progress, cancelled by Ctrl-C; without one, Ctrl-C ends the process.
#[derive(Clone, Default)]
struct Runs(Arc<Mutex<Option<CancellationToken>>>);

impl Runs {
    fn watch_interrupts(ui: &Arc<Ui>) -> Runs {
        let runs = Runs::default();
        let (current, ui) = (runs.0.clone(), ui.clone());
        tokio::spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                let token = current.lock().unwrap_or_else(|p| p.into_inner()).take();
                match token {
                    Some(t) => t.cancel(),
                    None => {
                        ui.finish_text();
                        std::process::exit(i32::from(exit::INTERRUPTED));
                    }
                }
            }
        });
        runs
    }

    /// A token for the next run.
    fn start(&self) -> CancellationToken {
        let t = CancellationToken::new();
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(t.clone());
        t
    }

    fn end(&self) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

/// A fresh conversation id.
fn new_id() -> String {
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    format!("run-{ms:x}-{}", std::process::id())
}

/// Where a halted run waits, for the resume hint.
struct Halt<'a> {
    store: Option<&'a str>,
    demo: bool,
}

/// Shows how a run ended and gives its exit code.
fn report(ui: &Ui, id: &str, r: &RunResult, halt: &Halt<'_>) -> u8 {
    ui.finish_text();
    if ui.is_json() {
        let mut line = Map::new();
        line.insert("type".into(), json!("result"));
        line.insert("id".into(), json!(id));
        if let Ok(Value::Object(fields)) = serde_json::to_value(r) {
            line.extend(fields.into_iter().filter(|(k, _)| k != "messages"));
        }
        ui.json_line(&Value::Object(line));
    }
    match r.status {
        RunStatus::Done => exit::OK,
        RunStatus::Incomplete => {
            ui.note(&format!("stopped: the run reached --max-turns ({} model calls)", r.turns));
            exit::INCOMPLETE
        }
        RunStatus::Pending => {
            let (kind, prompt) = r.pending.as_ref().map(|p| (p.kind.as_str(), p.prompt.as_str())).unwrap_or_default();
            match halt.store {
                Some(store) => {
                    ui.note(&format!("halted: [{kind}] {prompt}"));
                    let demo = if halt.demo { " --demo" } else { "" };
                    ui.note(&format!(
                        "resume: toolnexus resume {id} --store {store}{demo} --approve | --decline [REASON] | --answer TEXT"
                    ));
                    exit::PENDING
                }
                None => {
                    let f = Failure::new(
                        exit::NO_TERMINAL,
                        "no_terminal",
                        format!(
                            "a tool asked \"[{kind}] {prompt}\" but stdin is not a terminal to answer on: \
                             run in a terminal, or with --durable STORE to halt and resume later"
                        ),
                    );
                    fail(ui, &f)
                }
            }
        }
    }
}

/// The terminal's `wait_for`, when there is a terminal and the run is not durable.
fn asker(ui: &Arc<Ui>, input: &Arc<Input>, durable: Option<&str>) -> Option<Arc<dyn WaitFor>> {
    if durable.is_some() || !std::io::stdin().is_terminal() {
        return None;
    }
    Some(Arc::new(TerminalAsk::new(ui.clone(), input.clone())))
}

/// One prompt, or a REPL over stdin's lines: each line the next turn of conversation `id`.
/// A REPL stops at the end of input, `/exit`, or a run that halted; its code is the last
/// turn's.
async fn turns(
    ui: &Arc<Ui>,
    runs: &Runs,
    session: &Session,
    input: &Input,
    id: &str,
    prompt: Option<String>,
    halt: &Halt<'_>,
) -> u8 {
    let turn = |prompt: String| async move {
        let cancel = runs.start();
        let outcome = session.ask(id, &prompt, ui.stream_to(), cancel).await;
        runs.end();
        match outcome {
            Ok(r) => report(ui, id, &r, halt),
            Err(f) => fail(ui, &f),
        }
    };
    if let Some(p) = prompt {
        return turn(p).await;
    }
    let interactive = std::io::stdin().is_terminal();
    if interactive {
        ui.note(&format!(
            "toolnexus {}: {} tools; type a prompt, /exit or Ctrl-D to quit",
            toolnexus::VERSION,
            session.toolkit.tools().len()
        ));
    }
    let mut code = exit::OK;
    loop {
        if interactive {
            ui.prompt("> ");
        }
        let Some(line) = input.line().await else { break };
        ui.got_line();
        let line = line.trim();
        match line {
            "" => continue,
            "/exit" | "/quit" => break,
            _ => {}
        }
        code = turn(line.to_string()).await;
        if matches!(code, exit::PENDING | exit::NO_TERMINAL) {
            break;
        }
    }
    code
}

/// `run` and `demo`: a session on `model`, then one prompt or a REPL.
async fn agent(
    ui: &Arc<Ui>,
    runs: &Runs,
    model: Model<'_>,
    tools: &ToolArgs,
    conversation: &ConversationArgs,
    prompt: Option<String>,
) -> Result<u8, Failure> {
    let input = Input::stdin();
    let durable = conversation.durable.as_deref();
    let demo = matches!(model, Model::Demo);
    let session = Session::open(model, tools, durable, asker(ui, &input, durable)).await?;
    let id = conversation.id.clone().unwrap_or_else(new_id);
    let code = turns(ui, runs, &session, &input, &id, prompt, &Halt { store: durable, demo }).await;
    session.toolkit.close().await;
    Ok(code)
}

async fn run(ui: &Arc<Ui>, runs: &Runs, a: RunArgs) -> Result<u8, Failure> {
    agent(ui, runs, Model::Provider(&a.model), &a.tools, &a.conversation, a.prompt).await
}

async fn demo(ui: &Arc<Ui>, runs: &Runs, a: DemoArgs) -> Result<u8, Failure> {
    let prompt = a.prompt.unwrap_or_else(|| demo::DEMO_PROMPT.to_string());
    if !ui.is_json() {
        ui.note(&format!("toolnexus {} demo (scripted model, no network)", toolnexus::VERSION));
        ui.note(&format!("> {prompt}"));
    }
    agent(ui, runs, Model::Demo, &ToolArgs::default(), &a.conversation, Some(prompt)).await
}

async fn resume(ui: &Arc<Ui>, runs: &Runs, a: ResumeArgs) -> Result<u8, Failure> {
    let decision = match (&a.decline, &a.answer) {
        _ if a.approve => Decision::Approve,
        (Some(reason), _) => Decision::Decline(reason.clone()),
        (None, Some(text)) => Decision::Answer(text.clone()),
        (None, None) => return Err(Failure::usage("give --approve, --decline [REASON] or --answer TEXT")),
    };
    let model = if a.demo { Model::Demo } else { Model::Provider(&a.model) };
    let session = Session::open(model, &a.tools, Some(&a.store), None).await?;
    let cancel = runs.start();
    let outcome = session.resume(&a.id, &decision, ui.stream_to(), cancel).await;
    runs.end();
    session.toolkit.close().await;
    let (answer, result) = outcome?;
    ui.answered(&answer);
    Ok(report(ui, &a.id, &result, &Halt { store: Some(&a.store), demo: a.demo }))
}

async fn tools(ui: &Arc<Ui>, a: ToolsArgs) -> Result<u8, Failure> {
    let toolkit = session::toolkit(&a.tools, None).await?;
    let confirm = session::confirmed(&a.tools)?;
    let asks = |t: &toolnexus::Tool| confirm.contains(t.name()) && t.source() == toolnexus::ToolSource::Builtin;
    if ui.is_json() {
        let tools: Vec<Value> = toolkit
            .tools()
            .iter()
            .map(|t| {
                json!({"name": t.name(), "source": t.source().as_str(), "description": t.description(),
                       "input_schema": t.input_schema(), "confirm": asks(t)})
            })
            .collect();
        let warnings: Vec<Value> =
            toolkit.warnings().iter().map(|w| json!({"code": w.code, "message": w.message})).collect();
        ui.json_line(&json!({"tools": tools, "warnings": warnings}));
    } else {
        for w in toolkit.warnings() {
            ui.note(&format!("warning: {}", w.message));
        }
        let width = toolkit.tools().iter().map(|t| t.name().len()).max().unwrap_or(0);
        for t in toolkit.tools() {
            let summary = t.description().lines().next().unwrap_or_default();
            let confirm = if asks(t) { " (asks first)" } else { "" };
            term::out(&format!(
                "{:width$}  {:8} {}{confirm}\n",
                t.name(),
                t.source().as_str(),
                term::printable(summary)
            ));
        }
    }
    toolkit.close().await;
    Ok(exit::OK)
}

/// Serves the approvals inbox until Ctrl-C, which lets a resume in flight finish first.
async fn inbox(ui: &Arc<Ui>, runs: &Runs, a: InboxArgs) -> Result<u8, Failure> {
    let model = if a.demo { Model::Demo } else { Model::Provider(&a.model) };
    let session = Session::open(model, &a.tools, Some(&a.store), None).await?;
    let token = match a.token {
        None if !a.addr.ip().is_loopback() => Some(toolnexus_inbox::random_token()?),
        t => t,
    };
    let opts = toolnexus_inbox::InboxOptions { addr: a.addr, token };
    let Session { client, toolkit } = session;
    let inbox = toolnexus_inbox::serve(client, Some(toolkit.clone()), opts).await?;
    if ui.is_json() {
        ui.json_line(&json!({"type": "inbox", "url": inbox.url(), "addr": inbox.addr().to_string()}));
    } else {
        ui.note(&format!("inbox: {} (Ctrl-C to stop)", inbox.url()));
    }
    // Ctrl-C cancels this token rather than ending the process, so the server stops cleanly.
    let stop = runs.start();
    stop.cancelled().await;
    runs.end();
    inbox.shutdown().await;
    toolkit.close().await;
    Ok(exit::OK)
}

async fn pending(ui: &Arc<Ui>, a: PendingArgs) -> Result<u8, Failure> {
    let store = toolnexus::memory::open(&a.store)?;
    let runs = store.pending_runs().await?;
    if ui.is_json() {
        let list: Vec<Value> =
            runs.iter().map(|r| json!({"id": r.id, "request": r.request.to_json(), "since_ms": r.since_ms})).collect();
        ui.json_line(&json!({"pending": list}));
    } else {
        for r in &runs {
            term::out(&format!(
                "{}\n",
                term::printable(&format!("{}  [{}] {}", r.id, r.request.kind, r.request.prompt))
            ));
        }
    }
    Ok(exit::OK)
}
