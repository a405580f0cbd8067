//! `question`: asking the human is a suspension like any other. The first call suspends
//! with a `question` Request (prompt rendered byte-identically to upstream, the questions
//! in `data.questions`); the re-run that carries the host's answer returns `answer.data` as
//! JSON, as upstream prints it. So it works inline (`wait_for`) and across a durable halt
//! through the ordinary loop.

use std::sync::Arc;

use serde_json::{json, Value};

use super::{builtin, err, py, Env};
use crate::answer::{pending, PendingSpec};
use crate::tool::Tool;
use crate::types::{JsonObject, ToolContext, ToolResult};

pub(super) fn tool(env: &Arc<Env>) -> Tool {
    builtin(
        "question",
        "Ask the host one or more questions. Suspends via a kind:\"question\" Request (§10); the host's waitFor \
         resolves it and the answer is returned to the model.",
        json!({
            "type": "object",
            "properties": {
                "questions": {
                    "type": "array",
                    "description": "Questions to ask",
                    "items": {
                        "type": "object",
                        "properties": {
                            "question": {"type": "string"},
                            "header": {"type": "string"},
                            "options": {"type": "array", "items": {"type": "string"}},
                            "multiple": {"type": "boolean"}
                        },
                        "required": ["question"]
                    }
                }
            },
            "required": ["questions"],
            "additionalProperties": false
        }),
        env,
        |_, args, ctx| Box::pin(std::future::ready(run(&args, &ctx))),
    )
}

fn run(args: &Value, ctx: &ToolContext) -> ToolResult {
    let questions = match args.get("questions") {
        Some(Value::Array(q)) => q.clone(),
        _ => Vec::new(),
    };
    // The re-run after the host answered: the resolution is the answer, passed on verbatim.
    if let Some(answer) = &ctx.answer {
        let data = Value::Object(answer.data.clone().unwrap_or_default());
        return ToolResult::ok(py::dumps(&data));
    }
    let prompt = match render_prompt(&questions) {
        Ok(p) => p,
        Err(e) => return err("question", e),
    };
    let mut data = JsonObject::new();
    data.insert("questions".into(), Value::Array(questions));
    pending(PendingSpec { kind: "question".into(), prompt, data: Some(data), ..PendingSpec::default() })
}

/// Each question's text in order, `" (options: a, b)"` after one with options, joined by
/// `"\n"`; `header` is not rendered. Byte-identical to upstream; a non-string option is
/// upstream's `TypeError` text.
fn render_prompt(questions: &[Value]) -> Result<String, String> {
    let mut lines = Vec::with_capacity(questions.len());
    for q in questions {
        let mut line = q.get("question").and_then(Value::as_str).unwrap_or("").to_string();
        if let Some(Value::Array(options)) = q.get("options") {
            if !options.is_empty() {
                let mut texts = Vec::with_capacity(options.len());
                for (i, o) in options.iter().enumerate() {
                    match o.as_str() {
                        Some(s) => texts.push(s),
                        None => {
                            return Err(format!("sequence item {i}: expected str instance, {} found", py::type_name(o)))
                        }
                    }
                }
                line.push_str(&format!(" (options: {})", texts.join(", ")));
            }
        }
        lines.push(line);
    }
    Ok(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_renders_as_upstream() {
        let q = json!([
            {"question": "Pick a color?", "header": "Choice", "options": ["red", "green"], "multiple": false},
            {"question": "Confirm?"},
            "not an object",
            {"question": 3, "options": []}
        ]);
        let q = q.as_array().unwrap();
        assert_eq!(render_prompt(q).unwrap(), "Pick a color? (options: red, green)\nConfirm?\n\n");
        let bad = json!([{"question": "n?", "options": ["a", 2]}]);
        assert_eq!(
            render_prompt(bad.as_array().unwrap()).unwrap_err(),
            "sequence item 1: expected str instance, int found"
        );
    }
}
