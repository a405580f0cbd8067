//! The terminal: prompts read from stdin by one thread (so the REPL and a tool's question
//! never race for a line), the run's steps printed as they stream (or as JSON lines), and a
//! status line with the elapsed time while tools run, drawn only when stderr is a terminal.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::sync::mpsc;
use toolnexus::{Answer, Request, StreamEvent, StreamTo};

/// Lines of stdin, read on a thread of their own.
pub struct Input {
    lines: tokio::sync::Mutex<mpsc::UnboundedReceiver<String>>,
}

impl Input {
    /// Starts reading stdin.
    pub fn stdin() -> Arc<Input> {
        let (tx, rx) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Arc::new(Input { lines: tokio::sync::Mutex::new(rx) })
    }

    /// The next line, `None` at the end of input.
    pub async fn line(&self) -> Option<String> {
        self.lines.lock().await.recv().await
    }
}

/// At most this many lines of a tool's output are shown (all of it goes to the model).
const SHOWN_LINES: usize = 8;
const SPINNER: [char; 4] = ['|', '/', '-', '\\'];

#[derive(Default)]
struct State {
    /// Tools between their call and their result: id, name, since.
    running: Vec<(String, String, Instant)>,
    /// A question is on screen: no status line.
    asking: bool,
    /// The status line is drawn on the current line.
    drawn: bool,
    /// Text was printed without its line's end.
    mid_line: bool,
    /// A prompt waits for its line on stderr.
    prompted: bool,
    frame: usize,
}

/// Where a run's steps and results are shown.
pub struct Ui {
    json: bool,
    /// stderr is a terminal: the status line may be drawn.
    live: bool,
    state: Mutex<State>,
}

impl Ui {
    /// Human-readable output, or JSON lines with `json`.
    pub fn new(json: bool) -> Arc<Ui> {
        Arc::new(Ui { json, live: !json && std::io::stderr().is_terminal(), state: Mutex::default() })
    }

    /// Whether output is JSON lines.
    pub fn is_json(&self) -> bool {
        self.json
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes the status line off the screen.
    fn clear(&self, st: &mut State) {
        if st.drawn {
            eprint!("\r\x1b[2K");
            st.drawn = false;
        }
    }

    /// Ends a line of streamed text, if one is open.
    fn end_line(&self, st: &mut State) {
        if st.mid_line {
            println!();
            st.mid_line = false;
        }
    }

    /// A JSON line on stdout.
    pub fn json_line(&self, v: &Value) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{v}");
        let _ = out.flush();
    }

    /// Where the engine streams the run's steps.
    pub fn stream_to(self: &Arc<Ui>) -> StreamTo {
        let ui = self.clone();
        StreamTo(Arc::new(move |e: StreamEvent| ui.event(e)))
    }

    /// One step of the run.
    pub fn event(&self, e: StreamEvent) {
        if self.json {
            return self.json_line(&e.to_json());
        }
        let mut st = self.state();
        self.clear(&mut st);
        let mut out = std::io::stdout().lock();
        match e {
            StreamEvent::Text(delta) => {
                let _ = write!(out, "{delta}");
                st.mid_line = !delta.ends_with('\n');
            }
            StreamEvent::ToolCall { id, name, args } => {
                drop(out);
                self.end_line(&mut st);
                println!("-> {name} {args}");
                st.running.push((id, name, Instant::now()));
                return;
            }
            StreamEvent::ToolResult { id, name, output, is_error } => {
                st.running.retain(|(i, _, _)| *i != id);
                drop(out);
                self.end_line(&mut st);
                println!("<- {name}{}: {}", if is_error { " (error)" } else { "" }, excerpt(&output));
                return;
            }
            StreamEvent::Pending(_) | StreamEvent::Usage(_) => {}
        }
        let _ = out.flush();
    }

    /// Redraws the status line while tools run (called every tick).
    pub fn tick(&self) {
        if !self.live {
            return;
        }
        let mut st = self.state();
        if st.asking || st.running.is_empty() {
            return;
        }
        st.frame = st.frame.wrapping_add(1);
        let since = st.running.iter().map(|(_, _, t)| *t).min().unwrap_or_else(Instant::now);
        let names: Vec<&str> = st.running.iter().map(|(_, n, _)| n.as_str()).collect();
        let line = format!("{} running {} ({:.1}s)", SPINNER[st.frame % SPINNER.len()], names.join(", "), secs(since));
        eprint!("\r\x1b[2K{line}");
        let _ = std::io::stderr().flush();
        st.drawn = true;
    }

    /// A question is shown (`true`) or answered (`false`): the status line stays off meanwhile.
    pub fn asking(&self, on: bool) {
        let mut st = self.state();
        self.clear(&mut st);
        if on {
            let _ = std::io::stdout().flush();
            self.end_line(&mut st);
        } else {
            // The tools' time counts again from here, not from before the question.
            let now = Instant::now();
            st.running.iter_mut().for_each(|(_, _, t)| *t = now);
        }
        st.asking = on;
    }

    /// A line for the person at the terminal, on stderr (kept out of the JSON on stdout).
    pub fn note(&self, text: &str) {
        let mut st = self.state();
        self.clear(&mut st);
        if std::mem::take(&mut st.prompted) {
            // Something (an interrupt, an error) came before the prompt's line.
            eprintln!();
        }
        if !self.json {
            self.end_line(&mut st);
        }
        eprintln!("{text}");
    }

    /// A prompt for a line of input, on stderr, the cursor left after it.
    pub fn prompt(&self, text: &str) {
        let mut st = self.state();
        self.clear(&mut st);
        if !self.json {
            self.end_line(&mut st);
        }
        eprint!("{text}");
        let _ = std::io::stderr().flush();
        st.prompted = true;
    }

    /// The line a prompt asked for was read (its Enter ended the prompt's line).
    pub fn got_line(&self) {
        self.state().prompted = false;
    }

    /// The answer a question got, in JSON mode a line of its own.
    pub fn answered(&self, answer: &Answer) {
        if self.json {
            self.json_line(&json!({"type": "answer", "answer": answer.to_json()}));
        }
    }

    /// Ends the streamed text of a finished run.
    pub fn finish_text(&self) {
        let mut st = self.state();
        self.clear(&mut st);
        st.running.clear();
        self.end_line(&mut st);
    }
}

/// Seconds since `t`.
fn secs(t: Instant) -> f64 {
    t.elapsed().as_secs_f64()
}

/// The first lines of a tool's output.
fn excerpt(output: &str) -> String {
    let lines: Vec<&str> = output.lines().collect();
    if lines.len() <= 1 {
        return output.trim_end().to_string();
    }
    let shown = lines.iter().take(SHOWN_LINES).map(|l| format!("\n   {l}")).collect::<String>();
    match lines.len().saturating_sub(SHOWN_LINES) {
        0 => shown,
        more => format!("{shown}\n   ... ({more} more lines)"),
    }
}

/// How a question is put: yes/no, or a typed reply.
pub fn is_yes_no(request: &Request) -> bool {
    matches!(request.kind.as_str(), "approval" | "authorization")
}

/// Redraws the status line every tick until the process ends.
pub fn start_ticker(ui: &Arc<Ui>) {
    if !ui.live {
        return;
    }
    let ui = ui.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_millis(120));
        loop {
            every.tick().await;
            ui.tick();
        }
    });
}
