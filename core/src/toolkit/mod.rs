//! A toolkit: the uniform list of tools one run may call, the provider schema adapters, and
//! the `execute` router. First name wins; a relay tool may never take a built-in's name.
//! [`Toolkit::create`] (`create.rs`) assembles one from its sources.

mod create;

pub use create::{ToolkitHost, ToolkitSpec, TOOLKIT_SPEC_KEYS};

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::skill::SkillCatalog;
use crate::tool::Tool;
use crate::types::{ToolContext, ToolResult};
use crate::warning::Warning;

/// The names of the built-in toolset. A relay tool may not use one, even with built-ins
/// off, so that a future built-in can never capture a declaration-only tool.
pub const BUILTIN_TOOL_NAMES: [&str; 10] =
    ["bash", "read", "write", "edit", "grep", "glob", "webfetch", "question", "apply_patch", "todowrite"];

/// Which tool of a name a toolkit keeps when several share it (after sanitising).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DuplicateNames {
    /// The first one, as upstream's Python, JS and Go ports do.
    #[default]
    KeepFirst,
    /// The last one, in the place of the first (the Clojure port's rule).
    KeepLast,
}

impl DuplicateNames {
    /// Parses `keep_first` or `keep_last`.
    pub fn parse(s: &str) -> Result<DuplicateNames> {
        match s {
            "keep_first" => Ok(DuplicateNames::KeepFirst),
            "keep_last" => Ok(DuplicateNames::KeepLast),
            other => Err(Error::invalid(format!("duplicates must be \"keep_first\" or \"keep_last\", got {other:?}"))),
        }
    }
}

/// An ordered set of uniquely named tools.
#[derive(Clone, Debug, Default)]
pub struct Toolkit {
    tools: Vec<Tool>,
    by_name: HashMap<String, usize>,
    duplicates: DuplicateNames,
    /// What the last change (construction or `register`) warned about.
    warnings: Vec<Warning>,
    /// The declarations per wire style, built on first use: a toolkit is declared on every
    /// turn of every run, so its schemas are converted and serialised once.
    openai: OnceLock<Declarations>,
    anthropic: OnceLock<Declarations>,
    /// The skills it exposes (empty and unconfigured unless built by [`Toolkit::create`]).
    skills: Arc<SkillCatalog>,
    /// `skills.prompt()`, made once: every run's system prompt carries it.
    skills_prompt: Arc<str>,
    /// The MCP servers it holds open, shared by every copy.
    #[cfg(feature = "mcp")]
    mcp: Option<Arc<McpHandle>>,
    /// The `mcpServer` profile it was built with.
    #[cfg(feature = "mcp")]
    mcp_serve: Option<Arc<crate::mcp::McpServeOptions>>,
}

/// A toolkit's MCP servers: their status as loaded, and the live connections until closed.
#[cfg(feature = "mcp")]
#[derive(Debug)]
pub(crate) struct McpHandle {
    status: std::collections::BTreeMap<String, crate::mcp::McpStatus>,
    source: tokio::sync::Mutex<crate::mcp::McpSource>,
}

#[cfg(feature = "mcp")]
impl McpHandle {
    pub(crate) fn new(source: crate::mcp::McpSource) -> McpHandle {
        McpHandle { status: source.status.clone(), source: tokio::sync::Mutex::new(source) }
    }
}

/// A toolkit's tool declarations in one wire style, as values and as their JSON text.
#[derive(Clone, Debug)]
pub struct Declarations {
    /// The declarations.
    pub values: Arc<Vec<Value>>,
    /// `values` serialised as a JSON array.
    pub json: Option<Arc<RawValue>>,
}

impl Declarations {
    /// Declarations from values (serialised once here).
    pub fn new(values: Vec<Value>) -> Declarations {
        let json = serde_json::value::to_raw_value(&values).ok().map(Arc::from);
        Declarations { values: Arc::new(values), json }
    }

    /// Declarations a hook supplied: sent as they are, serialised with the body.
    pub fn replaced(values: Vec<Value>) -> Declarations {
        Declarations { values: Arc::new(values), json: None }
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl Toolkit {
    /// A toolkit of `tools`. Of tools sharing a name the first is kept, and each dropped one
    /// is a [`Warning`] ([`Toolkit::take_warnings`]); a relay tool named like a built-in tool
    /// is an [`crate::ErrorKind::InvalidArgument`] error.
    pub fn new(tools: Vec<Tool>) -> Result<Toolkit> {
        Toolkit::with_duplicates(tools, DuplicateNames::KeepFirst)
    }

    /// [`Toolkit::new`] with the rule for tools that share a name.
    pub fn with_duplicates(tools: Vec<Tool>, duplicates: DuplicateNames) -> Result<Toolkit> {
        check_relay_collisions(&tools)?;
        let mut tk = Toolkit { duplicates, ..Toolkit::default() };
        tk.add(tools);
        Ok(tk)
    }

    /// Adds tools at runtime (same rules as [`Toolkit::new`]); the warnings are this call's.
    pub fn register(&mut self, tools: Vec<Tool>) -> Result<()> {
        check_relay_collisions(&tools)?;
        self.warnings.clear();
        self.add(tools);
        Ok(())
    }

    /// What the last change (construction or [`Toolkit::register`]) warned about.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// What the last change (construction or [`Toolkit::register`]) warned about, taken out.
    pub fn take_warnings(&mut self) -> Vec<Warning> {
        std::mem::take(&mut self.warnings)
    }

    fn add(&mut self, tools: Vec<Tool>) {
        self.openai = OnceLock::new();
        self.anthropic = OnceLock::new();
        for t in tools {
            match (self.by_name.get(t.name()).copied(), self.duplicates) {
                (None, _) => {
                    self.by_name.insert(t.name().to_string(), self.tools.len());
                    self.tools.push(t);
                }
                (Some(_), DuplicateNames::KeepFirst) => self.warnings.push(Warning::duplicate_tool(t.name(), "first")),
                (Some(at), DuplicateNames::KeepLast) => {
                    self.warnings.push(Warning::duplicate_tool(t.name(), "last"));
                    self.tools[at] = t;
                }
            }
        }
    }

    /// The tools, in registration order.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// Whether the toolkit has no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Runs the tool `name` with `args` (an object). An unknown tool, or a relay tool (which
    /// only the loop can route to its host), is an error result naming it. Only a failure that
    /// [aborts the run](Error::aborting) is an error.
    pub async fn execute(&self, name: &str, args: Value, ctx: ToolContext) -> Result<ToolResult> {
        match self.get(name) {
            Some(tool) => tool.execute(args, ctx).await,
            None => Ok(unknown_tool(name)),
        }
    }

    /// The skills the toolkit exposes (none unless built by [`Toolkit::create`] with a skill
    /// source).
    pub fn skills(&self) -> &SkillCatalog {
        &self.skills
    }

    /// The skill catalog for the system prompt (empty without a skill source); a run appends
    /// it to the client's system prompt, after a blank line.
    pub fn skills_prompt(&self) -> &str {
        &self.skills_prompt
    }

    /// Every configured MCP server's status by name (`connected`, `disabled`, `failed`),
    /// as it was when the toolkit was built; empty without MCP servers.
    #[cfg(feature = "mcp")]
    pub fn mcp_status(&self) -> std::collections::BTreeMap<String, crate::mcp::McpStatus> {
        self.mcp.as_ref().map(|m| m.status.clone()).unwrap_or_default()
    }

    /// The MCP serve options of the `mcpServer` block of the `mcp_config` object the toolkit
    /// was built from: what serving it without options of its own uses.
    #[cfg(feature = "mcp")]
    pub fn mcp_serve_options(&self) -> Option<&crate::mcp::McpServeOptions> {
        self.mcp_serve.as_deref()
    }

    /// The pids of the MCP server processes the toolkit still runs (group leaders).
    #[cfg(feature = "mcp")]
    pub async fn mcp_child_pids(&self) -> Vec<u32> {
        match &self.mcp {
            Some(m) => m.source.lock().await.child_pids(),
            None => Vec::new(),
        }
    }

    /// Stops every MCP server the toolkit started (a moment to exit, then its process group
    /// is killed); their tools answer with an error from then on. Every copy of the toolkit
    /// shares the servers; closing again does nothing.
    pub async fn close(&self) {
        #[cfg(feature = "mcp")]
        if let Some(m) = &self.mcp {
            m.source.lock().await.close().await;
        }
    }

    /// The OpenAI declarations, cached.
    pub fn openai_declarations(&self) -> &Declarations {
        self.openai.get_or_init(|| Declarations::new(self.to_openai()))
    }

    /// The Anthropic declarations, cached.
    pub fn anthropic_declarations(&self) -> &Declarations {
        self.anthropic.get_or_init(|| Declarations::new(self.to_anthropic()))
    }

    /// The OpenAI tool declarations: `{type:"function", function:{name, description, parameters}}`.
    pub fn to_openai(&self) -> Vec<Value> {
        self.tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name(), "description": t.description(), "parameters": t.input_schema()}})
            })
            .collect()
    }

    /// The Anthropic tool declarations: `{name, description, input_schema}`.
    pub fn to_anthropic(&self) -> Vec<Value> {
        self.tools
            .iter()
            .map(|t| json!({"name": t.name(), "description": t.description(), "input_schema": t.input_schema()}))
            .collect()
    }

    /// The Gemini declarations: `[{functionDeclarations: [{name, description, parameters}]}]`.
    pub fn to_gemini(&self) -> Vec<Value> {
        let decls = self
            .tools
            .iter()
            .map(|t| json!({"name": t.name(), "description": t.description(), "parameters": t.input_schema()}))
            .collect::<Vec<_>>();
        vec![json!({ "functionDeclarations": decls })]
    }
}

/// The error result for a call to a tool nobody declared.
pub(crate) fn unknown_tool(name: &str) -> ToolResult {
    ToolResult::error(format!("Unknown tool: {name}"))
}

pub(super) fn check_relay_collisions(tools: &[Tool]) -> Result<()> {
    let mut bad: Vec<&str> =
        tools.iter().filter(|t| t.is_relay() && BUILTIN_TOOL_NAMES.contains(&t.name())).map(Tool::name).collect();
    if bad.is_empty() {
        return Ok(());
    }
    bad.sort_unstable();
    Err(Error::invalid(format!(
        "relay tool name collides with a built-in tool: {} — rename the relay tool (the guard \
         applies even with built-ins disabled, so a future built-in cannot capture a declaration-only tool)",
        bad.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::empty_schema;

    fn echo(name: &str) -> Tool {
        Tool::from_sync(name, "echo", empty_schema(), |args, _| Ok(ToolResult::ok(args.to_string())))
    }

    #[test]
    fn adapters_have_the_upstream_shapes() {
        let tk = Toolkit::new(vec![echo("e")]).unwrap();
        let schema = empty_schema();
        assert_eq!(
            tk.to_openai(),
            vec![json!({"type":"function","function":{"name":"e","description":"echo","parameters":schema}})]
        );
        assert_eq!(tk.to_anthropic(), vec![json!({"name":"e","description":"echo","input_schema":schema})]);
        assert_eq!(
            tk.to_gemini(),
            vec![json!({"functionDeclarations":[{"name":"e","description":"echo","parameters":schema}]})]
        );
    }

    #[test]
    fn first_name_wins_with_a_warning_unless_told_last() {
        let mut tk = Toolkit::new(vec![echo("e"), Tool::relay("e", "second", None)]).unwrap();
        assert_eq!(tk.tools().len(), 1);
        assert!(!tk.get("e").unwrap().is_relay());
        let w = tk.take_warnings();
        assert_eq!((w.len(), w[0].code), (1, "duplicate_tool"));
        assert_eq!(w[0].message, "[toolnexus] duplicate tool name \"e\" — keeping first");
        assert!(tk.take_warnings().is_empty());
        let last = Toolkit::with_duplicates(
            vec![echo("e"), echo("f"), Tool::relay("e", "second", None)],
            DuplicateNames::KeepLast,
        )
        .unwrap();
        let names: Vec<&str> = last.tools().iter().map(Tool::name).collect();
        assert_eq!(names, ["e", "f"]);
        assert!(last.get("e").unwrap().is_relay());
    }

    #[test]
    fn relay_named_like_a_builtin_fails_construction() {
        let e = Toolkit::new(vec![Tool::relay("bash", "", None)]).unwrap_err();
        assert!(e.message().contains("collides with a built-in tool: bash"));
        // A native tool may shadow a built-in name.
        assert!(Toolkit::new(vec![echo("bash")]).is_ok());
    }

    #[tokio::test]
    async fn execute_routes_and_names_unknown_tools() {
        let tk = Toolkit::new(vec![echo("e")]).unwrap();
        let r = tk.execute("e", json!({"a":1}), ToolContext::default()).await.unwrap();
        assert_eq!(r, ToolResult::ok("{\"a\":1}"));
        let r = tk.execute("nope", json!({}), ToolContext::default()).await.unwrap();
        assert_eq!(r, ToolResult::error("Unknown tool: nope"));
    }
}
