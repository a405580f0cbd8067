//! A toolkit: the uniform list of tools one run may call, the provider schema adapters, and
//! the `execute` router. First name wins; a relay tool may never take a built-in's name.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::tool::Tool;
use crate::types::{ToolContext, ToolResult};
use crate::warning::Warning;

/// The names of the built-in toolset. A relay tool may not use one, even with built-ins
/// off, so that a future built-in can never capture a declaration-only tool.
pub const BUILTIN_TOOL_NAMES: [&str; 10] =
    ["bash", "read", "write", "edit", "grep", "glob", "webfetch", "question", "apply_patch", "todowrite"];

/// The warning for a toolkit's `builtins` option (`null`: not given), when it asks for
/// built-in tools, which this build does not have yet: upstream's default is on, and a toolkit
/// silently missing them would surprise. Off is `false`, `{"disabled": true}` or
/// `{"enabled": false}`, as upstream reads it.
pub fn builtins_warning(builtins: &Value) -> Option<Warning> {
    let off = match builtins {
        Value::Bool(b) => !b,
        Value::Object(o) => {
            o.get("disabled").and_then(Value::as_bool) == Some(true)
                || o.get("enabled").and_then(Value::as_bool) == Some(false)
        }
        _ => false,
    };
    (!off).then(Warning::builtins_unavailable)
}

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

fn check_relay_collisions(tools: &[Tool]) -> Result<()> {
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
