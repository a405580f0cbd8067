//! `todowrite`: replaces the session's todo list and renders it. Stateless across calls, as
//! upstream's v1 is: the list comes back in the output and in `metadata.todos`.

use std::sync::Arc;

use serde_json::{json, Value};

use super::{builtin, err, ok_with, py, Env};
use crate::tool::Tool;
use crate::types::ToolResult;

pub(super) fn tool(env: &Arc<Env>) -> Tool {
    builtin(
        "todowrite",
        "Replace the session todo list. Returns the rendered list.",
        json!({
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "description": "The full todo list to store",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string"},
                            "text": {"type": "string"},
                            "completed": {"type": "boolean"}
                        },
                        "required": ["id", "text", "completed"]
                    }
                }
            },
            "required": ["todos"],
            "additionalProperties": false
        }),
        env,
        |_, args, _| Box::pin(std::future::ready(run(&args))),
    )
}

fn run(args: &Value) -> ToolResult {
    let todos = match args.get("todos") {
        Some(Value::Array(t)) => t.clone(),
        _ => Vec::new(),
    };
    let mut lines = Vec::with_capacity(todos.len());
    for t in &todos {
        let Some(item) = t.as_object() else {
            return err("todowrite", format!("'{}' object has no attribute 'get'", py::type_name(t)));
        };
        let done = item.get("completed").is_some_and(py::truthy);
        lines.push(format!("[{}] {}", if done { 'x' } else { ' ' }, py::coerce_str(item.get("text"))));
    }
    let rendered = if lines.is_empty() { "(no todos)".to_string() } else { lines.join("\n") };
    ok_with(rendered, json!({"todos": todos}))
}
