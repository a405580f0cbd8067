//! `--confirm`: a tool that asks before it acts. The first call suspends with an `approval`
//! Request whose id is derived from the provider's call id, so the inline re-run and a
//! durable resume (in another process) answer the same request; the re-run with an approving
//! answer runs the tool itself. Declines never reach the tool: the engine feeds the model
//! `declined/expired: <prompt>` and does not re-run it. Only the tool changes; the loop's
//! suspension rules are the engine's.

use std::sync::Arc;

use serde_json::{json, Value};
use toolnexus::{pending, HookFuture, JsonObject, PendingSpec, Tool, ToolContext, ToolHandler, ToolResult};

/// The prefix of a gate's request ids (`approve-<call id>`).
pub const APPROVAL_PREFIX: &str = "approve-";

struct Gate(Tool);

impl ToolHandler for Gate {
    fn execute(&self, args: Value, ctx: ToolContext) -> HookFuture<ToolResult> {
        let tool = self.0.clone();
        Box::pin(async move {
            if ctx.answer.as_ref().is_some_and(|a| a.ok) {
                // Approved: the tool runs as if never gated (the answer was the gate's, not its own).
                return tool.execute(args, ToolContext { answer: None, ..ctx }).await;
            }
            let mut data = JsonObject::new();
            data.insert("tool".into(), json!(tool.name()));
            data.insert("args".into(), args.clone());
            Ok(pending(PendingSpec {
                id: Some(format!("{APPROVAL_PREFIX}{}", ctx.call_id)),
                kind: "approval".into(),
                prompt: format!("Run {} {}?", tool.name(), args),
                data: Some(data),
                ..PendingSpec::default()
            }))
        })
    }
}

/// `tool`, asking for approval before every call.
pub fn gated(tool: Tool) -> Tool {
    let (name, description, schema, source) =
        (tool.name().to_string(), tool.description().to_string(), tool.input_schema().clone(), tool.source());
    Tool::new(&name, &description, schema, source, Arc::new(Gate(tool)))
}
