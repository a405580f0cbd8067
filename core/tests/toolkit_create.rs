//! `Toolkit::create`: the sources assembled as upstream's `create_toolkit` does (MCP, then the
//! skill tool, then the built-ins, then the host's tools; a host tool shadows a built-in;
//! `disable_tools` by final name), the options read strictly, the skill catalog in the
//! system prompt, and one agent run through an MCP tool, a skill, a built-in and a durable
//! `question` suspension.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod mcp_env;

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{json, Value};
use toolnexus::scripted::{ScriptedReply, ScriptedTransport};
use toolnexus::{
    answer_output, Client, ClientOptions, RunStatus, Style, Tool, ToolResult, ToolSource, Toolkit, ToolkitHost,
    ToolkitSpec, BUILTIN_TOOL_NAMES,
};

fn skills_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/skills/hello-world")
}

async fn create(options: Value, extra: Vec<Tool>) -> Toolkit {
    let spec = ToolkitSpec::from_json(&options).unwrap().value;
    Toolkit::create(spec, ToolkitHost { extra_tools: extra, ..ToolkitHost::default() }).await.unwrap()
}

fn names(tk: &Toolkit) -> Vec<&str> {
    tk.tools().iter().map(Tool::name).collect()
}

fn echo(name: &str) -> Tool {
    Tool::from_sync(name, "host", json!({"type": "object"}), |_, _| Ok(ToolResult::ok("host")))
}

#[tokio::test]
async fn builtins_are_on_by_default_and_follow_their_switches() {
    let tk = create(json!({}), vec![]).await;
    assert_eq!(names(&tk), BUILTIN_TOOL_NAMES);
    assert!(tk.warnings().is_empty(), "{:?}", tk.warnings());
    assert!(tk.tools().iter().all(|t| t.source() == ToolSource::Builtin));
    assert_eq!(tk.skills_prompt(), "");
    assert!(names(&create(json!({"builtins": false}), vec![]).await).is_empty());
    assert!(names(&create(json!({"builtins": {"enabled": false}}), vec![]).await).is_empty());
    let some = create(json!({"builtins": {"tools": {"bash": false, "webfetch": false}}}), vec![]).await;
    assert_eq!(names(&some), ["read", "write", "edit", "grep", "glob", "question", "apply_patch", "todowrite"]);
    // A `builtins` key of an MCP config object counts when the option is absent, not over it.
    let from_config = create(json!({"mcp_config": {"mcpServers": {}, "builtins": false}}), vec![]).await;
    assert!(names(&from_config).is_empty());
    let over = create(json!({"mcp_config": {"mcpServers": {}, "builtins": false}, "builtins": true}), vec![]).await;
    assert_eq!(names(&over).len(), 10);
}

#[tokio::test]
async fn host_tools_shadow_builtins_and_disable_tools_drops_by_final_name() {
    let tk = create(json!({"disableTools": ["bash", "mine"]}), vec![echo("read"), echo("mine"), echo("other")]).await;
    assert_eq!(
        names(&tk),
        ["write", "edit", "grep", "glob", "webfetch", "question", "apply_patch", "todowrite", "read", "other"]
    );
    assert_eq!(tk.get("read").unwrap().source(), ToolSource::Native);
    // Shadowing a built-in is no duplicate; two host tools of one name are.
    assert!(tk.warnings().is_empty(), "{:?}", tk.warnings());
    let dup = create(json!({"builtins": false}), vec![echo("x"), echo("x")]).await;
    assert_eq!(dup.warnings()[0].code, "duplicate_tool");
    let last = create(json!({"builtins": false, "duplicates": "keep_last"}), vec![echo("x"), echo("x")]).await;
    assert_eq!(last.warnings()[0].message, "[toolnexus] duplicate tool name \"x\" — keeping last");
}

#[tokio::test]
async fn skills_come_before_builtins_and_their_catalog_joins_the_system_prompt() {
    let options = json!({"skills_dir": skills_dir(), "builtins": {"tools": {"bash": false}}});
    let tk = create(options, vec![]).await;
    assert_eq!(names(&tk)[0], "skill");
    assert_eq!(tk.skills().skills()[0].name, "hello-world");
    assert!(tk.skills_prompt().contains("hello-world"), "{}", tk.skills_prompt());

    let t = ScriptedTransport::new(vec![ScriptedReply::openai_text("hi"), ScriptedReply::openai_text("hi")]);
    let mut o = ClientOptions::new("http://model.invalid/v1", Style::OpenAi, "m");
    o.api_key = Some("k".into());
    o.transport = Some(Arc::new(t.clone()));
    o.system_prompt = Some("Be brief.".into());
    let client = Client::new(o.clone()).unwrap();
    client.run("hello", Some(&tk)).await.unwrap();
    let system = t.requests()[0].body["messages"][0].clone();
    assert_eq!(system["role"], "system");
    assert_eq!(system["content"], format!("Be brief.\n\n{}", tk.skills_prompt()));
    // Without a prompt of its own the catalog is the whole system message.
    o.system_prompt = None;
    Client::new(o).unwrap().run("hello", Some(&tk)).await.unwrap();
    assert_eq!(t.requests()[1].body["messages"][0]["content"], tk.skills_prompt());
}

#[tokio::test]
async fn a_config_file_is_read_and_a_server_that_cannot_start_is_isolated() {
    let dir = tempdir();
    let path = dir.join("mcp.json");
    let config = json!({"servers": {"gone": {"command": ["/nonexistent/mcp-server"]}}, "builtins": false});
    std::fs::write(&path, config.to_string()).unwrap();
    let tk = create(json!({"mcpConfig": path, "builtins": {"tools": {"bash": false}}}), vec![]).await;
    assert_eq!(tk.mcp_status()["gone"].as_str(), "failed");
    assert!(tk.warnings().iter().any(|w| w.message.contains("gone")), "{:?}", tk.warnings());
    // A file's `builtins` key is not read (as upstream): the option alone decides.
    assert_eq!(names(&tk).len(), 9);
    tk.close().await;
}

#[test]
fn server_entries_unwrap_as_upstream_and_the_serve_profile_is_kept() {
    use toolnexus::mcp::McpConfig;
    let servers = json!({"foo": {"command": ["x"]}});
    for wrapped in
        [json!({"mcpServers": servers}), json!({"servers": servers}), json!({"mcp": servers}), servers.clone()]
    {
        assert_eq!(Value::Object(McpConfig::server_entries(&wrapped).unwrap()), servers);
    }
    let raw = json!({"foo": {"command": ["x"]}, "builtins": false, "mcpServer": {"name": "n"}});
    assert_eq!(Value::Object(McpConfig::server_entries(&raw).unwrap()), servers);
    let spec = ToolkitSpec::from_json(&json!({"mcp_config": {"mcpServer": {"name": "from-config"}}})).unwrap();
    assert_eq!(spec.value.mcp_serve.unwrap().name, "from-config");
    let e = ToolkitSpec::from_json(&json!({"mcp_config": {"mcpServer": {"nme": "x"}}})).unwrap_err();
    assert!(e.message().contains("nme"), "{}", e.message());
}

#[tokio::test]
async fn a_serve_call_uses_its_options_else_the_toolkits_profile() {
    use toolnexus::mcp::McpServeOptions;
    let with = create(json!({"builtins": false, "mcp_config": {"mcpServer": {"name": "from-config"}}}), vec![]).await;
    let opts = McpServeOptions::for_toolkit(&with, None, Some("localhost:0")).unwrap();
    assert_eq!((opts.name.as_str(), opts.addr.to_string().as_str()), ("from-config", "127.0.0.1:0"));
    let own = McpServeOptions::for_toolkit(&with, Some(&json!({"name": "own"})), None).unwrap();
    assert_eq!(own.name, "own");
    let without = create(json!({"builtins": false}), vec![]).await;
    let e = McpServeOptions::for_toolkit(&without, None, None).unwrap_err();
    assert!(e.message().contains("mcpServer"), "{}", e.message());
    assert!(McpServeOptions::for_toolkit(&without, Some(&json!({})), Some("nowhere")).is_err());
}

#[test]
fn options_are_read_strictly() {
    let err = |v: Value| ToolkitSpec::from_json(&v).unwrap_err().message().to_string();
    assert_eq!(err(json!({"skils_dir": "x"})), "unknown toolkit option key \"skils_dir\"");
    assert!(err(json!({"disable_tools": "bash"})).contains("\"disable_tools\" must be an array of strings"));
    assert!(err(json!({"builtins": {"rooot": "/"}})).contains("rooot"));
    assert!(err(json!({"mcp_config": 3})).contains("\"mcp_config\" must be a config object or the path"));
    assert!(
        err(json!({"mcp_config": "/nonexistent/mcp.json"})).contains("cannot read MCP config /nonexistent/mcp.json")
    );
    assert!(err(json!({"agents": [{"card": "http://x"}]})).contains("not available in this build"));
    assert!(err(json!({"duplicates": "newest"})).contains("keep_first"));
    assert!(ToolkitSpec::from_json(&json!({"agents": [], "skillSampleLimit": 3})).is_ok());
}

/// The agent run of the issue: the scripted model calls an MCP tool, the skill and a
/// built-in in one turn, then asks the human through `question`; the run halts, and resumes
/// from its saved state with the answer.
#[tokio::test]
async fn one_run_through_mcp_a_skill_a_builtin_and_a_durable_question() {
    let Some(python) = mcp_env::python() else { return };
    let dir = tempdir();
    std::fs::write(dir.join("notes.txt"), "from the file").unwrap();
    let options = json!({
        "mcp_config": {"mcpServers": {"py": {"command": [python, mcp_env::script("py_server.py"), "stdio"]}}},
        "skills_dir": skills_dir(),
        "builtins": {"root": dir},
    });
    let spec = ToolkitSpec::from_json(&options).unwrap().value;
    let tk = Toolkit::create(spec, ToolkitHost::default()).await.unwrap();
    assert_eq!(tk.mcp_status()["py"].as_str(), "connected");
    assert_eq!(tk.tools()[0].source(), ToolSource::Mcp);

    let t = ScriptedTransport::new(vec![
        ScriptedReply::openai_calls(&[
            ("c1", "py_echo", r#"{"text":"over mcp"}"#),
            ("c2", "skill", r#"{"name":"hello-world"}"#),
            ("c3", "read", r#"{"path":"notes.txt"}"#),
        ]),
        ScriptedReply::openai_calls(&[("c4", "question", r#"{"questions":[{"question":"Which name?"}]}"#)]),
        ScriptedReply::openai_text("done"),
    ]);
    let mut o = ClientOptions::new("http://model.invalid/v1", Style::OpenAi, "m");
    o.api_key = Some("k".into());
    o.transport = Some(Arc::new(t.clone()));
    let client = Client::new(o).unwrap();
    let halted = client.run("go", Some(&tk)).await.unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    let outputs: Vec<&str> = halted.tool_calls.iter().map(|c| c.output.as_str()).collect();
    assert_eq!(outputs[0], "over mcp");
    assert!(outputs[1].contains("# Hello World"), "{}", outputs[1]);
    assert!(outputs[2].contains("from the file"), "{}", outputs[2]);
    let request = halted.pending.clone().unwrap();
    assert_eq!(request.kind, "question");

    // Saved and restored as a host would between processes.
    let saved = serde_json::to_string(&halted.messages).unwrap();
    let history: Vec<Value> = serde_json::from_str(&saved).unwrap();
    let answer = answer_output(&request.id, "Ada");
    let done = client.run_with_answer(Some(&tk), history, &request, &answer).await.unwrap();
    assert_eq!((done.status, done.text.as_str()), (RunStatus::Done, "done"));
    let sent = &t.requests()[2].body["messages"];
    let last = sent.as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "tool");
    assert!(last["content"].as_str().unwrap().contains("Ada"), "{last}");

    let pids = tk.mcp_child_pids().await;
    assert_eq!(pids.len(), 1);
    tk.close().await;
    assert!(mcp_env::eventually(|| !mcp_env::alive(pids[0])), "the MCP server outlived close()");
    let after = tk.execute("py_echo", json!({"text": "x"}), Default::default()).await.unwrap();
    assert!(after.is_error, "{after:?}");
}

fn tempdir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tn-create-{}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
}
