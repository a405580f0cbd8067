//! The terminal: prompts read from stdin by one thread (so the REPL and a tool's question
//! never race for a line), the run's steps printed as they stream (or as JSON lines), and a
//! status line with the elapsed time while tools run, drawn only when stderr is a terminal.

use std::borrow::Cow;
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

    /// Drops the lines typed before now: a question is answered only by what is typed after
    /// it is asked, never by an Enter pressed while the model was still streaming.
    pub async fn discard_typed_ahead(&self) {
        let mut lines = self.lines.lock().await;
        while lines.try_recv().is_ok() {}
    }
}

/// Writes `text` to stdout. A reader that went away (`| head`) is not the run's failure.
pub fn out(text: &str) {
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(text.as_bytes());
    let _ = o.flush();
}

/// Writes `text` to stderr, come what may.
pub fn err(text: &str) {
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(text.as_bytes());
    let _ = e.flush();
}

/// `text` safe to show on a terminal: control characters other than newline and tab (an
/// escape sequence in a file a tool read, in a model's reply) become U+FFFD.
pub fn printable(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.chars().map(|c| if unsafe_char(c) { '\u{fffd}' } else { c }).collect())
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
            err("\r\x1b[2K");
            st.drawn = false;
        }
    }

    /// Ends a line of streamed text, if one is open.
    fn end_line(&self, st: &mut State) {
        if st.mid_line {
            out("\n");
            st.mid_line = false;
        }
    }

    /// A JSON line on stdout.
    pub fn json_line(&self, v: &Value) {
        out(&format!("{v}\n"));
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
        match e {
            StreamEvent::Text(delta) => {
                out(&printable(&delta));
                st.mid_line = !delta.ends_with('\n');
            }
            StreamEvent::ToolCall { id, name, args } => {
                self.end_line(&mut st);
                out(&format!("-> {name} {args}\n"));
                st.running.push((id, name, Instant::now()));
            }
            StreamEvent::ToolResult { id, name, output, is_error } => {
                st.running.retain(|(i, _, _)| *i != id);
                self.end_line(&mut st);
                let error = if is_error { " (error)" } else { "" };
                out(&format!("<- {name}{error}: {}\n", printable(&excerpt(&output))));
            }
            StreamEvent::Pending(_) | StreamEvent::Usage(_) => {}
        }
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
        err(&format!("\r\x1b[2K{line}"));
        st.drawn = true;
    }

    /// A question is shown (`true`) or answered (`false`): the status line stays off meanwhile.
    pub fn asking(&self, on: bool) {
        let mut st = self.state();
        self.clear(&mut st);
        if on {
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
            err("\n");
        }
        if !self.json {
            self.end_line(&mut st);
        }
        err(&format!("{}\n", printable(text)));
    }

    /// A prompt for a line of input, on stderr, the cursor left after it.
    pub fn prompt(&self, text: &str) {
        let mut st = self.state();
        self.clear(&mut st);
        if !self.json {
            self.end_line(&mut st);
        }
        err(text);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_never_reach_the_terminal() {
        assert_eq!(printable("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(printable("a\x1b[2Jb\rc\x07"), "a\u{fffd}[2Jb\u{fffd}c\u{fffd}");
    }

    #[test]
    fn long_outputs_show_their_first_lines() {
        assert_eq!(excerpt("one line\n"), "one line");
        let many: String = (1..=10).map(|i| format!("l{i}\n")).collect();
        let shown = excerpt(&many);
        assert!(shown.starts_with("\n   l1\n   l2"));
        assert!(shown.ends_with("\n   l8\n   ... (2 more lines)"), "{shown}");
    }
}
