//! What a tool is to the engine: a declaration (name, description, input schema, source)
//! plus something that runs it. Host tools implement [`ToolHandler`]; Rust code can pass a
//! closure with [`Tool::from_fn`] or [`Tool::from_sync`]. Relay tools have no handler at all.

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use futures_util::FutureExt;
use serde_json::{json, Value};

use crate::error::Result;
use crate::types::{ToolContext, ToolResult};

/// Where a tool comes from. Bindings show it as the lowercase wire string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ToolSource {
    /// A Model Context Protocol server.
    Mcp,
    /// The skill loader.
    Skill,
    /// A host-language function.
    Native,
    /// An HTTP endpoint.
    Http,
    /// A built-in tool.
    Builtin,
    /// A remote A2A agent.
    A2a,
    /// Anything else a host registers.
    Custom,
    /// A declaration-only tool the host executes (see [`crate::relay`]).
    Relay,
}

impl ToolSource {
    /// Every source.
    pub const ALL: [ToolSource; 8] = [
        ToolSource::Mcp,
        ToolSource::Skill,
        ToolSource::Native,
        ToolSource::Http,
        ToolSource::Builtin,
        ToolSource::A2a,
        ToolSource::Custom,
        ToolSource::Relay,
    ];

    /// The wire string.
    pub const fn as_str(self) -> &'static str {
        match self {
            ToolSource::Mcp => "mcp",
            ToolSource::Skill => "skill",
            ToolSource::Native => "native",
            ToolSource::Http => "http",
            ToolSource::Builtin => "builtin",
            ToolSource::A2a => "a2a",
            ToolSource::Custom => "custom",
            ToolSource::Relay => "relay",
        }
    }

    /// The source with this wire string.
    pub fn parse(s: &str) -> Option<ToolSource> {
        ToolSource::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// Replaces every character outside `[a-zA-Z0-9_-]` with `_`, as providers require of tool names.
pub fn sanitize(value: &str) -> String {
    value.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

/// The schema used when a tool declares none: an object with no properties.
pub fn empty_schema() -> Value {
    json!({"type": "object", "properties": {}})
}

/// Runs a tool. Implemented by each binding around its host callable. A returned `Err`
/// becomes an error result with the error's message; it never aborts the run.
pub trait ToolHandler: Send + Sync {
    /// Executes the tool with its parsed arguments (always a JSON object).
    fn execute(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, Result<ToolResult>>;
}

struct AsyncFn<F>(F);

impl<F, Fut> ToolHandler for AsyncFn<F>
where
    F: Fn(Value, ToolContext) -> Fut + Send + Sync,
    Fut: Future<Output = Result<ToolResult>> + Send + 'static,
{
    fn execute(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, Result<ToolResult>> {
        Box::pin((self.0)(args, ctx))
    }
}

struct SyncFn<F>(F);

impl<F> ToolHandler for SyncFn<F>
where
    F: Fn(Value, ToolContext) -> Result<ToolResult> + Send + Sync,
{
    fn execute(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, Result<ToolResult>> {
        Box::pin(std::future::ready((self.0)(args, ctx)))
    }
}

/// A tool: its declaration and, unless it is a relay tool, its handler.
#[derive(Clone)]
pub struct Tool {
    name: String,
    description: String,
    input_schema: Value,
    source: ToolSource,
    handler: Option<Arc<dyn ToolHandler>>,
    host_ref: Option<u64>,
}

impl Tool {
    /// A tool run by `handler`. The name is sanitised to `[a-zA-Z0-9_-]`; a schema that is
    /// not a JSON object is replaced by the empty object schema.
    pub fn new(
        name: &str,
        description: &str,
        input_schema: Value,
        source: ToolSource,
        handler: Arc<dyn ToolHandler>,
    ) -> Tool {
        Tool::build(name, description, input_schema, source, Some(handler))
    }

    /// A native tool from an async closure.
    pub fn from_fn<F, Fut>(name: &str, description: &str, input_schema: Value, f: F) -> Tool
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolResult>> + Send + 'static,
    {
        Tool::new(name, description, input_schema, ToolSource::Native, Arc::new(AsyncFn(f)))
    }

    /// A native tool from a synchronous closure (it runs on the engine's task: keep it quick).
    pub fn from_sync<F>(name: &str, description: &str, input_schema: Value, f: F) -> Tool
    where
        F: Fn(Value, ToolContext) -> Result<ToolResult> + Send + Sync + 'static,
    {
        Tool::new(name, description, input_schema, ToolSource::Native, Arc::new(SyncFn(f)))
    }

    /// A declaration-only tool: calling it suspends the run with a `tool_call` Request and
    /// the host supplies the result (see [`crate::relay`]).
    pub fn relay(name: &str, description: &str, input_schema: Option<Value>) -> Tool {
        Tool::build(name, description, input_schema.unwrap_or_else(empty_schema), ToolSource::Relay, None)
    }

    fn build(
        name: &str,
        description: &str,
        input_schema: Value,
        source: ToolSource,
        handler: Option<Arc<dyn ToolHandler>>,
    ) -> Tool {
        let input_schema = if input_schema.is_object() { input_schema } else { empty_schema() };
        let source = if handler.is_none() { ToolSource::Relay } else { source };
        Tool { name: sanitize(name), description: description.into(), input_schema, source, handler, host_ref: None }
    }

    /// This tool carrying `host_ref`, the host's own number for it: a binding finds its tool
    /// object by it after the toolkit kept or dropped tools (see [`crate::Toolkit`]).
    pub fn with_host_ref(mut self, host_ref: u64) -> Tool {
        self.host_ref = Some(host_ref);
        self
    }

    /// The host's number for this tool, if it gave one.
    pub fn host_ref(&self) -> Option<u64> {
        self.host_ref
    }

    /// The (sanitised) name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The JSON-Schema object of the arguments.
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    /// Where the tool comes from.
    pub fn source(&self) -> ToolSource {
        self.source
    }

    /// Whether this is a declaration-only relay tool.
    pub fn is_relay(&self) -> bool {
        self.handler.is_none()
    }

    /// Runs this tool alone, as [`crate::Toolkit::execute`] would: a failure or a panic is an
    /// error result, and a relay tool answers with an error result (only a run can relay it).
    /// Only a failure that [aborts the run](crate::Error::aborting) is an error.
    pub async fn execute(&self, args: Value, ctx: ToolContext) -> crate::Result<ToolResult> {
        let Some(handler) = &self.handler else {
            return Ok(ToolResult::error(format!("relay tool {} is executed by the host, not the toolkit", self.name)));
        };
        let args = if args.is_null() { json!({}) } else { args };
        run_handler(handler.clone(), &self.name, args, ctx).await
    }
}

/// Runs a handler; a failure or a panic becomes an error result, never a crash. Only a
/// failure that [aborts the run](Error::aborting) comes back as an error.
async fn run_handler(handler: Arc<dyn ToolHandler>, name: &str, args: Value, ctx: ToolContext) -> Result<ToolResult> {
    // The handler is called inside the guarded future so a synchronous panic is caught too.
    match AssertUnwindSafe(async move { handler.execute(args, ctx).await }).catch_unwind().await {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(e)) if e.aborts_run() => Err(e),
        Ok(Err(e)) => Ok(ToolResult::error(e.message().to_string())),
        Err(_) => Ok(ToolResult::error(format!("tool {name} panicked"))),
    }
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_replaces_everything_outside_the_allowed_set() {
        assert_eq!(sanitize("my tool.v2/é"), "my_tool_v2__");
        assert_eq!(sanitize("ok_name-1"), "ok_name-1");
    }

    #[test]
    fn tools_sanitise_names_and_default_schemas() {
        let t = Tool::from_sync("a b", "d", json!(null), |_, _| Ok(ToolResult::ok("x")));
        assert_eq!(t.name(), "a_b");
        assert_eq!(t.input_schema(), &empty_schema());
        assert_eq!(t.source(), ToolSource::Native);
        let r = Tool::relay("refund", "", None);
        assert!(r.is_relay());
        assert_eq!(r.source(), ToolSource::Relay);
    }

    #[test]
    fn sources_round_trip() {
        for s in ToolSource::ALL {
            assert_eq!(ToolSource::parse(s.as_str()), Some(s));
        }
    }
}
