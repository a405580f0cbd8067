//! What a command runs against: the engine's client (model, store, `wait_for`) and toolkit,
//! built from the flags through the engine's own option readers; and the one way a halted
//! run is continued, by conversation id from its store, shared by `resume` and anything
//! else that answers stored runs (an approvals inbox).

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{json, Map, Value};
use toolnexus::memory::ConversationStore;
use toolnexus::{
    answer_approved, answer_declined, answer_output, builtin_tools, Answer, BuiltinsSpec, CancellationToken, Client,
    ClientOptions, Error, Request, RunInput, RunResult, StreamTo, Style, Toolkit, ToolkitHost, WaitFor,
    BUILTIN_TOOL_NAMES,
};

use crate::args::{ModelArgs, ToolArgs};
use crate::demo::{deploy_tool, DemoModel, DEMO_BASE_URL, DEMO_MODEL};
use crate::exit;
use crate::gate::gated;

/// Why a command failed, with its exit code.
#[derive(Debug)]
pub struct Failure {
    /// The exit code.
    pub code: u8,
    /// The engine's error kind name, or the CLI's own (`usage`, `store`).
    pub kind: &'static str,
    /// What went wrong (secrets already redacted by the engine).
    pub message: String,
}

impl Failure {
    /// A failure of the CLI's own.
    pub fn new(code: u8, kind: &'static str, message: impl Into<String>) -> Failure {
        Failure { code, kind, message: message.into() }
    }

    /// A bad command line.
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure::new(exit::USAGE, "usage", message)
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure { code: exit::for_error(&e), kind: e.kind().name(), message: e.to_string() }
    }
}

/// How a suspension is answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Yes.
    Approve,
    /// No, with a reason (empty: "declined").
    Decline(String),
    /// This text.
    Answer(String),
}

/// The Answer `decision` gives `request`: an approval is `ok` with no data, a typed reply
/// `ok` with `data.output`, a decline `ok: false` with its reason. A request that asks for a
/// form (`data.schema` with `properties`, an MCP server's elicitation) gets the form: the
/// typed JSON object, or the text as its one field's value.
pub fn answer_to(request: &Request, decision: &Decision) -> Answer {
    match decision {
        Decision::Approve => answer_approved(&request.id),
        Decision::Decline(reason) => answer_declined(&request.id, reason),
        Decision::Answer(text) => match form(request, text) {
            Some(data) => Answer { id: request.id.clone(), ok: true, data: Some(data), reason: None },
            None => answer_output(&request.id, text),
        },
    }
}

/// The fields a request's form asks for: name and JSON type.
pub fn form_fields(request: &Request) -> Vec<(String, String)> {
    let properties = request.data.as_ref().and_then(|d| d.get("schema")).and_then(|s| s.get("properties"));
    let Some(Value::Object(properties)) = properties else { return Vec::new() };
    properties
        .iter()
        .map(|(k, v)| (k.clone(), v.get("type").and_then(Value::as_str).unwrap_or("string").to_string()))
        .collect()
}

/// `text` as the content of `request`'s form, when it asks for one and `text` fills it.
fn form(request: &Request, text: &str) -> Option<Map<String, Value>> {
    let fields = form_fields(request);
    if fields.is_empty() {
        return None;
    }
    if let Ok(Value::Object(typed)) = serde_json::from_str(text) {
        return Some(typed);
    }
    let [(name, kind)] = fields.as_slice() else { return None };
    let value = match kind.as_str() {
        "number" | "integer" => serde_json::from_str::<serde_json::Number>(text.trim()).ok().map(Value::Number)?,
        "boolean" => Value::Bool(matches!(text.trim().to_ascii_lowercase().as_str(), "y" | "yes" | "true")),
        _ => Value::String(text.to_string()),
    };
    Some(Map::from_iter([(name.clone(), value)]))
}

/// Which model a session talks to.
pub enum Model<'a> {
    /// A provider, from the flags.
    Provider(&'a ModelArgs),
    /// The scripted demo model.
    Demo,
}

/// A client and its toolkit.
pub struct Session {
    /// The engine's client.
    pub client: Client,
    /// The tools.
    pub toolkit: Toolkit,
}

fn required<'v>(v: &'v Option<String>, flag: &str, env: &str) -> Result<&'v str, Failure> {
    v.as_deref().ok_or_else(|| Failure::usage(format!("{flag} is required (or set {env})")))
}

/// The client options for `model`, read by the engine's option reader.
fn client_options(model: &ModelArgs, store: Option<&str>) -> Result<ClientOptions, Failure> {
    let mut o = Map::new();
    o.insert("base_url".into(), json!(required(&model.base_url, "--base-url", "TOOLNEXUS_BASE_URL")?));
    o.insert("style".into(), json!(required(&model.style, "--style", "TOOLNEXUS_STYLE")?));
    o.insert("model".into(), json!(required(&model.model, "--model", "TOOLNEXUS_MODEL")?));
    if let Some(system) = &model.system {
        o.insert("system_prompt".into(), json!(system));
    }
    if let Some(n) = model.max_turns {
        o.insert("max_turns".into(), json!(n));
    }
    if let Some(name) = &model.api_key_env {
        // The value is never shown: the error names the variable only.
        let key = std::env::var(name)
            .ok()
            .filter(|k| !k.is_empty())
            .ok_or_else(|| Failure::usage(format!("--api-key-env: the environment variable {name} is not set")))?;
        o.insert("api_key".into(), json!(key));
    }
    if let Some(store) = store {
        o.insert("store".into(), json!(store));
    }
    let parsed = ClientOptions::from_json(&Value::Object(o))?;
    for w in &parsed.warnings {
        crate::term::err(&format!("warning: {}\n", crate::term::printable(&w.message)));
    }
    Ok(parsed.value)
}

/// The demo's client options.
fn demo_options(store: Option<&str>) -> Result<ClientOptions, Failure> {
    let mut opts = ClientOptions::new(DEMO_BASE_URL, Style::OpenAi, DEMO_MODEL);
    opts.api_key = Some("not-needed".into());
    opts.system_prompt = Some("You are a careful release assistant.".into());
    opts.transport = Some(Arc::new(DemoModel));
    opts.retries = 0;
    if let Some(store) = store {
        opts.store = Some(toolnexus::memory::open(store)?);
    }
    Ok(opts)
}

/// The `builtins` toolkit option the flags describe.
fn builtins_option(tools: &ToolArgs) -> Value {
    match (&tools.root, tools.no_builtins) {
        (_, true) => json!(false),
        (Some(root), false) => json!({"root": root}),
        (None, false) => json!(true),
    }
}

/// The built-in tools that ask first (`--confirm`, none with `--no-confirm`).
pub fn confirmed(tools: &ToolArgs) -> Result<BTreeSet<String>, Failure> {
    if tools.no_confirm {
        return Ok(BTreeSet::new());
    }
    let names: BTreeSet<String> =
        tools.confirm.iter().map(|n| n.trim().to_string()).filter(|n| !n.is_empty() && n != "none").collect();
    if let Some(bad) = names.iter().find(|n| !BUILTIN_TOOL_NAMES.contains(&n.as_str())) {
        return Err(Failure::usage(format!(
            "--confirm: {bad:?} is no built-in tool (one of {})",
            BUILTIN_TOOL_NAMES.join(", ")
        )));
    }
    Ok(names)
}

/// The toolkit the flags describe: MCP servers, skills, built-ins (those named by
/// `--confirm` asking first), built by the engine's toolkit factory.
pub async fn toolkit(tools: &ToolArgs, wait_for: Option<Arc<dyn WaitFor>>) -> Result<Toolkit, Failure> {
    let confirm = confirmed(tools)?;
    let spec = BuiltinsSpec::from_json(&builtins_option(tools))?.value;
    // The built-ins are handed over as the host's tools, the gated ones in their original's
    // place, so the factory's order (MCP, skill, built-ins) stays.
    let extra_tools = builtin_tools(&spec)?
        .into_iter()
        .map(|t| if confirm.contains(t.name()) { gated(t) } else { t })
        .collect::<Vec<_>>();
    let mut options = Map::new();
    options.insert("builtins".into(), json!(false));
    if let Some(mcp) = &tools.mcp {
        options.insert("mcp_config".into(), json!(mcp));
    }
    if let Some(skills) = &tools.skills {
        options.insert("skills_dir".into(), json!(skills));
    }
    let host = ToolkitHost { extra_tools, wait_for, ..ToolkitHost::default() };
    Ok(Toolkit::create_from_json(&Value::Object(options), host).await?)
}

impl Session {
    /// A session on `model` with `tools`, keeping conversations in `store` (a SQLite path or
    /// a postgres:// URL; else in memory) and asking `wait_for` when a tool suspends (without
    /// one a suspension halts the run).
    pub async fn open(
        model: Model<'_>,
        tools: &ToolArgs,
        store: Option<&str>,
        wait_for: Option<Arc<dyn WaitFor>>,
    ) -> Result<Session, Failure> {
        let (mut opts, toolkit) = match model {
            Model::Provider(m) => (client_options(m, store)?, toolkit(tools, wait_for.clone()).await?),
            Model::Demo => (demo_options(store)?, Toolkit::new(vec![gated(deploy_tool())])?),
        };
        for w in toolkit.warnings() {
            crate::term::err(&format!("warning: {}\n", crate::term::printable(&w.message)));
        }
        opts.wait_for = wait_for;
        Ok(Session { client: Client::new(opts)?, toolkit })
    }

    /// The store conversations are kept in.
    pub fn store(&self) -> &Arc<dyn ConversationStore> {
        self.client.conversation_store()
    }

    /// Runs `prompt` as the next turn of conversation `id`.
    pub async fn ask(
        &self,
        id: &str,
        prompt: &str,
        stream: StreamTo,
        cancel: CancellationToken,
    ) -> Result<RunResult, Failure> {
        let input = RunInput {
            toolkit: Some(&self.toolkit),
            id: Some(id.to_string()),
            stream: Some(stream),
            cancel: Some(cancel),
            ..RunInput::prompt(prompt)
        };
        Ok(self.client.run_input(input).await?)
    }

    /// The request conversation `id` waits on.
    pub async fn waiting_on(&self, id: &str) -> Result<Request, Failure> {
        let record = self.store().load(id).await?;
        let record =
            record.ok_or_else(|| Failure::new(exit::STORE, "store", format!("no conversation {id:?} in the store")))?;
        record.pending.ok_or_else(|| {
            Failure::new(exit::STORE, "conflict", format!("conversation {id:?} is not waiting on an answer"))
        })
    }

    /// Continues conversation `id`, halted in the store, with `decision` on what it asked.
    /// Exactly once: the engine's store refuses a second resume of the same request.
    pub async fn resume(
        &self,
        id: &str,
        decision: &Decision,
        stream: StreamTo,
        cancel: CancellationToken,
    ) -> Result<(Answer, RunResult), Failure> {
        let request = self.waiting_on(id).await?;
        let answer = answer_to(&request, decision);
        let input = RunInput {
            toolkit: Some(&self.toolkit),
            id: Some(id.to_string()),
            answer: Some(answer.clone()),
            stream: Some(stream),
            cancel: Some(cancel),
            ..RunInput::default()
        };
        Ok((answer, self.client.run_input(input).await?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_are_the_vocabularys_answers() {
        let r = Request::from_json(&json!({"id": "p1", "kind": "approval", "prompt": "ok?"})).unwrap();
        assert_eq!(
            answer_to(&r, &Decision::Approve).to_json(),
            json!({"id": "p1", "ok": true, "data": {"output": "approved"}})
        );
        assert_eq!(
            answer_to(&r, &Decision::Decline(String::new())).to_json(),
            json!({"id": "p1", "ok": false, "reason": "declined"})
        );
        assert_eq!(
            answer_to(&r, &Decision::Answer("teal".into())).to_json(),
            json!({"id": "p1", "ok": true, "data": {"output": "teal"}})
        );
    }

    #[test]
    fn a_typed_reply_fills_a_form() {
        let schema = |props: Value| {
            Request::from_json(
                &json!({"id": "e", "kind": "input", "prompt": "?", "data": {"schema": {"properties": props}}}),
            )
            .unwrap()
        };
        let one = schema(json!({"name": {"type": "string"}}));
        assert_eq!(answer_to(&one, &Decision::Answer("Ada".into())).data, json!({"name": "Ada"}).as_object().cloned());
        let n = schema(json!({"age": {"type": "integer"}}));
        assert_eq!(answer_to(&n, &Decision::Answer(" 36 ".into())).data, json!({"age": 36}).as_object().cloned());
        let two = schema(json!({"a": {"type": "string"}, "b": {"type": "boolean"}}));
        let typed = answer_to(&two, &Decision::Answer(r#"{"a": "x", "b": true}"#.into()));
        assert_eq!(typed.data, json!({"a": "x", "b": true}).as_object().cloned());
        // Not a form's content: the text as the output.
        let plain = answer_to(&two, &Decision::Answer("hello".into()));
        assert_eq!(plain.data, json!({"output": "hello"}).as_object().cloned());
        assert_eq!(form_fields(&two), [("a".to_string(), "string".to_string()), ("b".into(), "boolean".into())]);
    }

    #[test]
    fn confirm_names_only_built_ins() {
        let tools = |confirm: &[&str], no_confirm| ToolArgs {
            confirm: confirm.iter().map(|s| s.to_string()).collect(),
            no_confirm,
            ..ToolArgs::default()
        };
        assert_eq!(confirmed(&tools(&["bash", " write", ""], false)).unwrap().len(), 2);
        assert!(confirmed(&tools(&["none"], false)).unwrap().is_empty());
        assert!(confirmed(&tools(&["bash"], true)).unwrap().is_empty());
        assert_eq!(confirmed(&tools(&["rm"], false)).unwrap_err().code, exit::USAGE);
    }
}
