//! The built `toolnexus` binary against a loopback mock model: runs with tool calls, the
//! JSON lines, durable halts resumed by a second process from a SQLite store (approve,
//! decline, answer), `tools`, `demo`, `pending`, the exit codes and bad input.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use serde_json::{json, Value};
use support::*;

fn last_tool_message(body: &Value) -> Value {
    body["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "tool").cloned().unwrap_or(Value::Null)
}

#[test]
fn a_run_streams_its_tool_calls_results_and_text() {
    let dir = scratch("run");
    let mock = Mock::start(vec![
        openai_call("c1", "bash", json!({"command": "echo hello-from-bash"})),
        openai_text("All done here."),
    ]);
    let mut args = vec!["run", "List things.", "--no-confirm", "--system", "Be brief."];
    args.extend(model_flags(&mock, "openai"));
    let o = toolnexus(&args, "", &dir);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(out.contains("-> bash {\"command\":\"echo hello-from-bash\"}"), "{out}");
    assert!(out.contains("<- bash: hello-from-bash"), "{out}");
    assert!(out.trim_end().ends_with("All done here."), "{out}");
    let seen = mock.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].path, "/v1/chat/completions");
    assert_eq!(seen[0].body["stream"], true);
    assert_eq!(seen[0].body["messages"][0], json!({"role": "system", "content": "Be brief."}));
    assert!(seen[0].headers.iter().any(|(k, v)| k == "authorization" && v == "Bearer sk-test-secret-123456"));
    assert!(last_tool_message(&seen[1].body)["content"].as_str().unwrap().contains("hello-from-bash"));
    assert!(!out.contains("sk-test-secret") && !stderr(&o).contains("sk-test-secret"));
}

#[test]
fn anthropic_style_runs_the_same_way() {
    let dir = scratch("anthropic");
    let mock = Mock::start(vec![
        anthropic_call("t1", "bash", json!({"command": "echo via-anthropic"})),
        anthropic_text("Finished."),
    ]);
    let mut args = vec!["run", "Go.", "--no-confirm"];
    args.extend(model_flags(&mock, "anthropic"));
    let o = toolnexus(&args, "", &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("<- bash: via-anthropic"));
    assert_eq!(mock.seen()[0].path, "/v1/messages");
}

#[test]
fn json_prints_one_event_per_line_then_the_result() {
    let dir = scratch("json");
    let mock = Mock::start(vec![openai_call("c1", "bash", json!({"command": "echo j"})), openai_text("Done now.")]);
    let mut args = vec!["run", "Go.", "--no-confirm", "--json", "--id", "conv-1"];
    args.extend(model_flags(&mock, "openai"));
    let o = toolnexus(&args, "", &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines = json_lines(&o);
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    let text: String = lines.iter().filter(|l| l["type"] == "text").map(|l| l["delta"].as_str().unwrap()).collect();
    assert_eq!(text, "Done now.");
    let mut distinct = kinds.clone();
    distinct.dedup();
    assert_eq!(distinct, ["tool_call", "tool_result", "text", "usage", "result"]);
    assert_eq!(lines[0], json!({"type": "tool_call", "id": "c1", "name": "bash", "args": {"command": "echo j"}}));
    assert_eq!(lines[1]["output"], "j\n");
    let result = lines.last().unwrap();
    assert_eq!((result["id"].as_str(), result["status"].as_str()), (Some("conv-1"), Some("done")));
    assert_eq!((result["text"].as_str(), result["turns"].as_u64()), (Some("Done now."), Some(2)));
    assert_eq!(result["tool_calls"][0]["name"], "bash");
    assert!(result.get("messages").is_none());
}

/// A run that halts on bash's approval in `db`, as conversation `id`.
fn halt_on_bash(mock: &Mock, db: &str, id: &str, command: &str, dir: &std::path::Path) {
    let mut args = vec!["run", "Do it.", "--durable", db, "--id", id];
    args.extend(model_flags(mock, "openai"));
    let o = toolnexus(&args, "", dir);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains(&format!("halted: [approval] Run bash {{\"command\":\"{command}\"}}?")), "{err}");
    assert!(err.contains(&format!("resume: toolnexus resume {id} --store {db} --approve")), "{err}");
}

#[test]
fn a_durable_halt_is_approved_by_another_process() {
    let dir = scratch("approve");
    let db = dir.join("runs.db").to_string_lossy().into_owned();
    let mock = Mock::start(vec![openai_call("c1", "bash", json!({"command": "echo approved-run"}))]);
    halt_on_bash(&mock, &db, "r1", "echo approved-run", &dir);

    let o = toolnexus(&["pending", "--store", &db, "--json"], "", &dir);
    let listed = json_lines(&o);
    assert_eq!(listed[0]["pending"][0]["id"], "r1");
    assert_eq!(listed[0]["pending"][0]["request"]["id"], "approve-c1");

    mock.push(vec![openai_text("It ran.")]);
    let mut args = vec!["resume", "r1", "--store", &db, "--approve"];
    args.extend(model_flags(&mock, "openai"));
    let o = toolnexus(&args, "", &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("<- bash: approved-run"), "{}", stdout(&o));
    assert!(stdout(&o).contains("It ran."));
    let seen = mock.seen();
    assert_eq!(seen.len(), 2, "the resume re-ran the tool and made one model call");
    assert_eq!(last_tool_message(&seen[1].body)["content"], "approved-run\n");

    // Exactly once: the run is no longer waiting.
    let mut again = vec!["resume", "r1", "--store", &db, "--approve"];
    again.extend(model_flags(&mock, "openai"));
    let o = toolnexus(&again, "", &dir);
    assert_eq!(o.status.code(), Some(7), "{}", stderr(&o));
    assert!(stderr(&o).contains("not waiting on an answer"));
    let o = toolnexus(&["pending", "--store", &db], "", &dir);
    assert_eq!(stdout(&o), "");
}

#[test]
fn a_durable_halt_is_declined_with_a_reason_and_the_tool_never_runs() {
    let dir = scratch("decline");
    let db = dir.join("runs.db").to_string_lossy().into_owned();
    let marker = dir.join("marker");
    let command = format!("touch {}", marker.display());
    let mock = Mock::start(vec![openai_call("c1", "bash", json!({"command": command}))]);
    halt_on_bash(&mock, &db, "r2", &command, &dir);

    mock.push(vec![openai_text("Skipped it.")]);
    let mut args = vec!["resume", "r2", "--store", &db, "--decline", "not today", "--json"];
    args.extend(model_flags(&mock, "openai"));
    let o = toolnexus(&args, "", &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines = json_lines(&o);
    let answer = lines.iter().find(|l| l["type"] == "answer").unwrap();
    assert_eq!(answer["answer"], json!({"id": "approve-c1", "ok": false, "reason": "not today"}));
    let result = lines.iter().find(|l| l["type"] == "tool_result").unwrap();
    assert_eq!(result["is_error"], true);
    assert!(result["output"].as_str().unwrap().starts_with("declined/expired: Run bash"));
    assert_eq!(lines.last().unwrap()["status"], "done");
    assert!(!marker.exists(), "a declined tool must not run");
}

#[test]
fn a_question_is_answered_with_text_on_resume() {
    let dir = scratch("answer");
    let db = dir.join("runs.db").to_string_lossy().into_owned();
    let mock = Mock::start(vec![openai_call("c1", "question", json!({"questions": [{"question": "Colour?"}]}))]);
    let mut args = vec!["run", "Ask me.", "--durable", &db, "--id", "r3"];
    args.extend(model_flags(&mock, "openai"));
    let o = toolnexus(&args, "", &dir);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("halted: [question] Colour?"));

    mock.push(vec![openai_text("Teal it is.")]);
    let mut args = vec!["resume", "r3", "--store", &db, "--answer", "teal"];
    args.extend(model_flags(&mock, "openai"));
    let o = toolnexus(&args, "", &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("<- question: {\"output\": \"teal\"}"), "{}", stdout(&o));
    assert_eq!(last_tool_message(&mock.seen()[1].body)["content"], "{\"output\": \"teal\"}");
}

#[test]
fn a_suspension_without_a_terminal_or_a_store_fails_at_once() {
    let dir = scratch("no-terminal");
    let mock = Mock::start(vec![openai_call("c1", "bash", json!({"command": "echo x"}))]);
    let mut args = vec!["run", "Do it."];
    args.extend(model_flags(&mock, "openai"));
    let o = toolnexus(&args, "", &dir);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert!(stderr(&o).contains("stdin is not a terminal"), "{}", stderr(&o));
    assert_eq!(mock.seen().len(), 1);
}

#[test]
fn a_repl_reads_prompts_line_by_line_and_keeps_the_conversation() {
    let dir = scratch("repl");
    let mock = Mock::start(vec![openai_text("First answer."), openai_text("Second answer.")]);
    let mut args = vec!["run"];
    args.extend(model_flags(&mock, "openai"));
    let o = toolnexus(&args, "one\n\ntwo\n", &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "First answer.\nSecond answer.\n");
    let second = &mock.seen()[1].body["messages"];
    let contents: Vec<&str> = second.as_array().unwrap().iter().filter_map(|m| m["content"].as_str()).collect();
    assert_eq!(contents, ["one", "First answer.", "two"]);
}

#[test]
fn tools_lists_the_toolkit() {
    let dir = scratch("tools");
    let o = toolnexus(&["tools"], "", &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let names: Vec<&str> = out.lines().map(|l| l.split_whitespace().next().unwrap()).collect();
    assert_eq!(
        names,
        ["bash", "read", "write", "edit", "grep", "glob", "webfetch", "question", "apply_patch", "todowrite"]
    );
    assert!(out.lines().next().unwrap().ends_with("(asks first)"), "{out}");

    let o = toolnexus(&["tools", "--json", "--confirm", "read"], "", &dir);
    let doc = &json_lines(&o)[0];
    let tools = doc["tools"].as_array().unwrap();
    let asking: Vec<&str> =
        tools.iter().filter(|t| t["confirm"] == true).map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(asking, ["read"]);
    assert_eq!(tools[1]["source"], "builtin");
    assert!(tools[1]["input_schema"].is_object());

    let o = toolnexus(&["tools", "--no-builtins"], "", &dir);
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(0), ""));
}

#[test]
fn tools_of_skills_and_an_mcp_config_that_fails() {
    let dir = scratch("tools-sources");
    let skill = dir.join("skills/greet");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(skill.join("SKILL.md"), "---\nname: greet\ndescription: Say hello.\n---\nSay hello.\n").unwrap();
    let config = dir.join("mcp.json");
    std::fs::write(&config, json!({"mcpServers": {"broken": {"command": "/nonexistent/server"}}}).to_string()).unwrap();
    let o = toolnexus(
        &["tools", "--no-builtins", "--skills", "skills", "--mcp", config.to_str().unwrap(), "--json"],
        "",
        &dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = &json_lines(&o)[0];
    assert_eq!(doc["tools"][0]["name"], "skill");
    let warnings = doc["warnings"].to_string();
    assert!(warnings.contains("broken"), "{warnings}");
}

#[test]
fn the_demo_halts_durably_and_resumes_in_another_process() {
    let dir = scratch("demo");
    let db = dir.join("demo.db").to_string_lossy().into_owned();
    let o = toolnexus(&["demo"], "", &dir);
    assert_eq!(o.status.code(), Some(5), "without a terminal the demo cannot ask");

    let o = toolnexus(&["demo", "--durable", &db, "--id", "d1"], "", &dir);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stdout(&o).contains("-> deploy {\"env\":\"prod\"}"));
    let o = toolnexus(&["resume", "d1", "--store", &db, "--demo", "--approve"], "", &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("<- deploy: deployed build 42 to prod"), "{out}");
    assert!(out.contains("Build 42 is live in prod."), "{out}");

    let o = toolnexus(&["demo", "--durable", &db, "--id", "d2", "--json"], "", &dir);
    assert_eq!(json_lines(&o).last().unwrap()["pending"]["kind"], "approval");
    let o = toolnexus(&["resume", "d2", "--store", &db, "--demo", "--decline"], "", &dir);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("I did not deploy"), "{}", stdout(&o));
}

#[test]
fn exit_codes_for_model_errors_limits_and_bad_input() {
    let dir = scratch("codes");
    // A provider error: 4, its message shown without the key.
    let mock = Mock::start(vec![status(401, "bad key sk-test-secret-123456")]);
    let mut args = vec!["run", "Hi."];
    args.extend(model_flags(&mock, "openai"));
    let o = toolnexus(&args, "", &dir);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(stderr(&o).contains("401") && !stderr(&o).contains("sk-test-secret"), "{}", stderr(&o));
    let mut args = vec!["run", "Hi.", "--json"];
    args.extend(model_flags(&mock, "openai"));
    let o = toolnexus(&args, "", &dir);
    let line = &json_lines(&o)[0];
    assert_eq!((line["type"].as_str(), line["exit"].as_u64()), (Some("error"), Some(4)));

    // --max-turns reached while the model still calls tools: 6.
    let mock = Mock::start(vec![openai_call("c1", "bash", json!({"command": "true"}))]);
    let mut args = vec!["run", "Loop.", "--no-confirm", "--max-turns", "1"];
    args.extend(model_flags(&mock, "openai"));
    assert_eq!(toolnexus(&args, "", &dir).status.code(), Some(6));

    // Usage: 2, before any request.
    let mock = Mock::start(vec![]);
    let url = mock.base_url.clone();
    for bad in [
        vec!["run", "Hi.", "--style", "openai", "--model", "m"],
        vec!["run", "Hi.", "--base-url", &url, "--style", "gemini", "--model", "m", "--api-key-env", "TEST_KEY"],
        vec!["run", "Hi.", "--base-url", &url, "--style", "openai", "--model", "m", "--api-key-env", "NO_SUCH_KEY_VAR"],
        vec!["run", "Hi.", "--base-url", &url, "--style", "openai", "--model", "m", "--confirm", "rm"],
        vec!["run", "--bogus-flag"],
        vec!["frobnicate"],
        vec!["resume", "x", "--store", "s.db"],
        vec!["resume", "x", "--store", "s.db", "--approve", "--answer", "y"],
    ] {
        let o = toolnexus(&bad, "", &dir);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
    }
    assert_eq!(mock.seen().len(), 0);

    // An unknown conversation: 7.
    let db = dir.join("empty.db").to_string_lossy().into_owned();
    let o = toolnexus(&["resume", "nobody", "--store", &db, "--demo", "--approve"], "", &dir);
    assert_eq!(o.status.code(), Some(7), "{}", stderr(&o));
    assert!(stderr(&o).contains("no conversation \"nobody\""));

    let o = toolnexus(&["--help"], "", &dir);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("Exit codes:"));
}

#[test]
fn a_postgres_store_carries_a_halt_to_another_process() {
    let url = match std::env::var("TN_POSTGRES_URL") {
        Ok(url) => url,
        Err(_) if std::env::var_os("CI").is_some() => {
            panic!("TN_POSTGRES_URL is not set (run under tests/postgres/with-postgres.sh)")
        }
        Err(_) => return eprintln!("skipped: no TN_POSTGRES_URL (tests/postgres/with-postgres.sh starts a server)"),
    };
    let dir = scratch("postgres");
    let id = format!("cli-pg-{}", std::process::id());
    let o = toolnexus(&["demo", "--durable", &url, "--id", &id], "", &dir);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let o = toolnexus(&["pending", "--store", &url], "", &dir);
    assert!(stdout(&o).contains(&format!("{id}  [approval] Run deploy")), "{}", stdout(&o));
    let o = toolnexus(&["resume", &id, "--store", &url, "--demo", "--answer", "ship it"], "", &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("Build 42 is live in prod."), "{}", stdout(&o));
}

#[test]
fn root_confines_the_file_tools_and_skills_reach_the_model() {
    let dir = scratch("root");
    std::fs::create_dir_all(dir.join("inside")).unwrap();
    std::fs::write(dir.join("inside/a.txt"), "kept inside").unwrap();
    std::fs::write(dir.join("outside.txt"), "secret outside").unwrap();
    let skill = dir.join("skills/greet");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(skill.join("SKILL.md"), "---\nname: greet\ndescription: Say hello.\n---\nSay hello.\n").unwrap();
    let mock = Mock::start(vec![
        openai_call("c1", "read", json!({"path": "a.txt"})),
        openai_call("c2", "read", json!({"path": dir.join("outside.txt").to_str().unwrap()})),
        openai_text("Read."),
    ]);
    let root = dir.join("inside").to_string_lossy().into_owned();
    let mut args = vec!["run", "Read.", "--root", &root, "--skills", "skills", "--json"];
    args.extend(model_flags(&mock, "openai"));
    let o = toolnexus(&args, "", &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let results: Vec<Value> = json_lines(&o).into_iter().filter(|l| l["type"] == "tool_result").collect();
    assert!(results[0]["output"].as_str().unwrap().contains("kept inside"), "{results:?}");
    assert_eq!(results[1]["is_error"], true);
    assert!(results[1]["output"].as_str().unwrap().contains("resolves outside"), "{results:?}");
    let first = &mock.seen()[0].body;
    assert!(
        first["messages"][0]["content"].as_str().unwrap().contains("greet"),
        "the skill catalog joins the system prompt"
    );
    let names: Vec<&str> =
        first["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert_eq!(names[0], "skill");
}
