//! The REPL as a person uses it, in a real terminal: tmux runs `toolnexus run` against the
//! loopback mock, keys are typed with `send-keys`, and the screen is read with
//! `capture-pane`. A tool's approval is answered yes, another's no with a reason, a question
//! with typed text, an MCP server's form with its field's value; a long tool's status line
//! counts while it runs; a line typed ahead never answers a question; Ctrl-C cancels a run,
//! then ends the REPL. Every wait is a bounded poll of the screen.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

#[path = "../../core/tests/mcp_env/mod.rs"]
mod mcp_env;
mod support;

use std::process::{Command, Output};
use std::time::Duration;

use serde_json::json;
use support::*;

/// A tmux server of this test's own (its own socket), killed when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn new(name: &str) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            assert!(std::env::var_os("CI").is_none(), "tmux is required in CI");
            eprintln!("SKIPPED: tmux is not installed");
            return None;
        }
        Some(Tmux { socket: format!("toolnexus-{name}-{}", std::process::id()) })
    }

    fn tmux(&self, args: &[&str]) -> Output {
        let o = Command::new("tmux").args(["-L", &self.socket, "-f", "/dev/null"]).args(args).output().unwrap();
        assert!(o.status.success(), "tmux {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        o
    }

    /// Starts `command` in a detached 160x50 session called `main`.
    fn start(&self, command: &str) {
        self.tmux(&["new-session", "-d", "-s", "main", "-x", "160", "-y", "50", command]);
    }

    /// Starts `toolnexus run ARGS` in `dir` against `mock`; `EXITED=<code>` shows when it ends.
    fn start_run(&self, dir: &std::path::Path, mock: &Mock, args: &str) {
        self.start(&format!(
            "cd {} && env TEST_KEY=sk-test-secret {} run {args} --base-url {} --style openai --model m \
             --api-key-env TEST_KEY; echo EXITED=$?; sleep 600",
            dir.display(),
            bin(),
            mock.base_url
        ));
    }

    /// Types `text`, then Enter.
    fn type_line(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "main", "-l", text]);
        self.tmux(&["send-keys", "-t", "main", "Enter"]);
    }

    /// The whole screen and its history, wrapped lines joined.
    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-J", "-S", "-", "-t", "main"]).stdout).into_owned()
    }

    /// Waits until `text` is on screen `times` times (at most about 30 s); the screen then.
    fn wait_for(&self, text: &str, times: usize) -> String {
        for _ in 0..600 {
            let screen = self.screen();
            if screen.matches(text).count() >= times {
                return screen;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("{text:?} (x{times}) never showed; the screen:\n{}", self.screen());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux").args(["-L", &self.socket, "kill-server"]).output();
    }
}

#[test]
fn approve_decline_and_answer_in_a_terminal() {
    let Some(tmux) = Tmux::new("repl") else { return };
    let dir = scratch("tmux");
    let marker = dir.join("marker");
    let touch = format!("touch {}", marker.display());
    let mock = Mock::start(vec![
        openai_call("c1", "bash", json!({"command": "echo approved-output"})),
        openai_text("Listed them."),
        openai_call("c2", "bash", json!({"command": touch})),
        openai_text("Skipped it."),
        openai_call("c3", "question", json!({"questions": [{"question": "Favourite colour?"}]})),
        openai_text("Teal it is."),
        openai_call("c4", "bash", json!({"command": "while [ ! -f release ]; do sleep 0.05; done; echo released"})),
        openai_text("Waited."),
    ]);
    tmux.start_run(&dir, &mock, "");
    tmux.wait_for("type a prompt", 1);

    // Approve.
    tmux.type_line("list the files");
    tmux.wait_for("? [approval] Run bash {\"command\":\"echo approved-output\"}?", 1);
    tmux.wait_for("approve? [y]es / [n]o: ", 1);
    tmux.type_line("y");
    let screen = tmux.wait_for("Listed them.", 1);
    assert!(screen.contains("<- bash: approved-output"), "{screen}");

    // Decline, with a reason.
    tmux.type_line("touch the marker");
    tmux.wait_for("approve? [y]es / [n]o: ", 2);
    tmux.type_line("n");
    tmux.wait_for("reason (optional): ", 1);
    tmux.type_line("not now");
    let screen = tmux.wait_for("Skipped it.", 1);
    assert!(screen.contains("<- bash (error): declined/expired: Run bash"), "{screen}");
    assert!(!marker.exists(), "a declined tool must not run");

    // Type the input.
    tmux.type_line("ask me something");
    tmux.wait_for("? [question] Favourite colour?", 1);
    tmux.wait_for("your answer (an empty line declines): ", 1);
    tmux.type_line("teal");
    let screen = tmux.wait_for("Teal it is.", 1);
    assert!(screen.contains("<- question: {\"output\": \"teal\"}"), "{screen}");

    // A long tool: its status line counts while it runs (it runs until the test releases it).
    tmux.type_line("wait for it");
    tmux.wait_for("approve? [y]es / [n]o: ", 3);
    tmux.type_line("y");
    tmux.wait_for("running bash (", 1);
    std::fs::write(dir.join("release"), "").unwrap();
    let screen = tmux.wait_for("Waited.", 1);
    assert!(screen.contains("<- bash: released"), "{screen}");

    tmux.type_line("/exit");
    let screen = tmux.wait_for("EXITED=0", 1);
    assert!(!screen.contains("sk-test-secret"), "{screen}");
    let seen = mock.seen();
    assert_eq!(seen.len(), 8, "one model call per reply");
    let last = &seen[5].body["messages"];
    assert_eq!(last.as_array().unwrap().last().unwrap()["content"], "{\"output\": \"teal\"}");
}

#[test]
fn the_demo_in_a_terminal() {
    let Some(tmux) = Tmux::new("demo") else { return };
    let dir = scratch("tmux-demo");
    tmux.start(&format!("cd {} && {} demo; echo EXITED=$?; sleep 600", dir.display(), bin()));
    tmux.wait_for("approve? [y]es / [n]o: ", 1);
    tmux.type_line("maybe");
    tmux.wait_for("please answer y or n", 1);
    tmux.type_line("yes");
    let screen = tmux.wait_for("EXITED=0", 1);
    assert!(screen.contains("<- deploy: deployed build 42 to prod"), "{screen}");
    assert!(screen.contains("Build 42 is live in prod."), "{screen}");
}

#[test]
fn an_mcp_servers_form_is_filled_in_a_terminal() {
    let Some(python) = mcp_env::python() else { return };
    let Some(tmux) = Tmux::new("mcp") else { return };
    let dir = scratch("tmux-mcp");
    let config = dir.join("mcp.json");
    let server = json!({"command": python, "args": [mcp_env::script("py_server.py"), "stdio"]});
    std::fs::write(&config, json!({"mcpServers": {"py": server}}).to_string()).unwrap();
    let mock = Mock::start(vec![openai_call("c1", "py_ask_name", json!({})), openai_text("Hi Ada.")]);
    tmux.start_run(&dir, &mock, &format!("'who am I' --no-builtins --mcp {}", config.display()));
    tmux.wait_for("? [input] Your name?", 1);
    tmux.wait_for("form: name (string); type its value", 1);
    tmux.wait_for("your answer (an empty line declines): ", 1);
    tmux.type_line("Ada");
    let screen = tmux.wait_for("EXITED=0", 1);
    assert!(screen.contains("<- py_ask_name: Hello Ada"), "{screen}");
    assert!(screen.contains("Hi Ada."), "{screen}");
}

#[test]
fn ctrl_c_cancels_the_run_then_ends_the_repl() {
    let Some(tmux) = Tmux::new("interrupt") else { return };
    let dir = scratch("tmux-interrupt");
    let mock = Mock::start(vec![
        openai_call("c1", "bash", json!({"command": "while [ ! -f never ]; do sleep 0.05; done"})),
        openai_text("Still here."),
    ]);
    tmux.start_run(&dir, &mock, "--no-confirm");
    tmux.wait_for("type a prompt", 1);
    tmux.type_line("run forever");
    tmux.wait_for("running bash (", 1);
    tmux.tmux(&["send-keys", "-t", "main", "C-c"]);
    tmux.wait_for("error: run cancelled", 1);
    // The REPL goes on (a cancelled run leaves the conversation as it was).
    tmux.type_line("are you there");
    tmux.wait_for("Still here.", 1);
    let second = &mock.seen()[1].body["messages"];
    assert_eq!(second.as_array().unwrap().len(), 1, "{second}");
    tmux.tmux(&["send-keys", "-t", "main", "C-c"]);
    tmux.wait_for("EXITED=130", 1);
}

#[test]
fn a_line_typed_before_a_question_does_not_answer_it() {
    let Some(tmux) = Tmux::new("type-ahead") else { return };
    let dir = scratch("tmux-type-ahead");
    let mock = Mock::start(vec![
        openai_call("c1", "bash", json!({"command": "while [ ! -f release ]; do sleep 0.05; done; echo released"})),
        openai_call("c2", "write", json!({"path": "f.txt", "content": "x"})),
        openai_text("Not written."),
    ]);
    tmux.start_run(&dir, &mock, "'go' --confirm write");
    tmux.wait_for("running bash (", 1);
    // Typed while the first tool runs, before anything asks.
    tmux.type_line("y");
    std::fs::write(dir.join("release"), "").unwrap();
    tmux.wait_for("? [approval] Run write", 1);
    tmux.wait_for("approve? [y]es / [n]o: ", 1);
    tmux.type_line("n");
    tmux.wait_for("reason (optional): ", 1);
    tmux.type_line("");
    let screen = tmux.wait_for("EXITED=0", 1);
    assert!(screen.contains("<- write (error): declined/expired: Run write"), "{screen}");
    assert!(!dir.join("f.txt").exists());
}
