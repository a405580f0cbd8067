//! The three metric events, their JSON form (upstream Python's snake_case dicts, which the
//! bindings rename into their language's casing) and reading one back from that form.

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::spec_json::{camel_case, Fields};

/// One model call, retries included: `ok` when it returned a reply, else an error.
#[derive(Clone, Debug, PartialEq)]
pub struct LlmMetric {
    /// The model the call sent (after any `before_llm` override).
    pub model: String,
    /// Whether the call got a reply.
    pub ok: bool,
    /// Wall time in milliseconds.
    pub ms: f64,
    /// This call's prompt tokens (0 on an error).
    pub prompt_tokens: u64,
    /// This call's completion tokens (0 on an error).
    pub completion_tokens: u64,
    /// The content parts the request carried, as `{type, mimeType, bytes}` (never their data);
    /// empty when it had none, and on an error. Only an `on_metric` sink is given them.
    pub parts: Vec<Value>,
}

/// One tool execution: `before_tool` through `after_tool`.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolMetric {
    /// The tool's name as the model called it.
    pub tool: String,
    /// Its source's wire string (`native`, `mcp`, ...; `custom` for a tool the toolkit lacks).
    pub source: String,
    /// Whether the result is an error (never for a suspension).
    pub is_error: bool,
    /// Wall time in milliseconds.
    pub ms: f64,
    /// The result is a suspension (a Request), not an answer.
    pub pending: bool,
}

/// One run, however it ended: `error` is set when it failed.
#[derive(Clone, Debug, PartialEq)]
pub struct RunMetric {
    /// The model of the run's last request.
    pub model: String,
    /// Model round trips.
    pub turns: u32,
    /// Tool calls recorded.
    pub tool_calls: u64,
    /// Tokens summed over the run.
    pub total_tokens: u64,
    /// Wall time in milliseconds.
    pub ms: f64,
    /// The failure's message (already scrubbed of secrets).
    pub error: Option<String>,
}

/// A metric event.
#[derive(Clone, Debug, PartialEq)]
pub enum MetricEvent {
    /// `event: "llm"`.
    Llm(LlmMetric),
    /// `event: "tool"`.
    Tool(ToolMetric),
    /// `event: "run"`.
    Run(RunMetric),
}

impl MetricEvent {
    /// `llm`, `tool` or `run`.
    pub fn kind(&self) -> &'static str {
        match self {
            MetricEvent::Llm(_) => "llm",
            MetricEvent::Tool(_) => "tool",
            MetricEvent::Run(_) => "run",
        }
    }

    /// Upstream Python's event dict: `pending` only when true, `error` only when set.
    pub fn to_json(&self) -> Value {
        match self {
            MetricEvent::Llm(e) => {
                let mut v = json!({
                    "event": "llm", "model": e.model, "status": if e.ok { "ok" } else { "error" }, "ms": e.ms,
                    "prompt_tokens": e.prompt_tokens, "completion_tokens": e.completion_tokens,
                });
                if !e.parts.is_empty() {
                    v["parts"] = Value::Array(e.parts.clone());
                }
                v
            }
            MetricEvent::Tool(e) => {
                let mut v =
                    json!({"event": "tool", "tool": e.tool, "source": e.source, "is_error": e.is_error, "ms": e.ms});
                if e.pending {
                    v["pending"] = Value::Bool(true);
                }
                v
            }
            MetricEvent::Run(e) => {
                let mut v = json!({
                    "event": "run", "model": e.model, "turns": e.turns, "tool_calls": e.tool_calls,
                    "total_tokens": e.total_tokens, "ms": e.ms,
                });
                if let Some(err) = &e.error {
                    v["error"] = Value::String(err.clone());
                }
                v
            }
        }
    }

    /// Reads an event in the form [`MetricEvent::to_json`] writes (a host feeding a registry
    /// by hand). Keys may be snake_case or camelCase; a missing or mistyped field is an
    /// [`crate::ErrorKind::InvalidArgument`] error naming it.
    pub fn from_json(v: &Value) -> Result<MetricEvent> {
        let f = Fields::new("metric event", v, &EVENT_KEYS, false)?;
        let kind = f.required("event")?;
        if !matches!(kind.as_str(), "llm" | "tool" | "run") {
            return Err(Error::invalid(format!("metric event must be \"llm\", \"tool\" or \"run\", got {kind:?}")));
        }
        let ms = f.number("ms")?.ok_or_else(|| Error::invalid("metric event key \"ms\" is required"))?;
        Ok(match kind.as_str() {
            "llm" => MetricEvent::Llm(LlmMetric {
                model: f.required("model")?,
                ok: match f.required("status")?.as_str() {
                    "ok" => true,
                    "error" => false,
                    other => {
                        return Err(Error::invalid(format!(
                            "metric event status must be \"ok\" or \"error\", got {other:?}"
                        )))
                    }
                },
                ms,
                prompt_tokens: f.count("prompt_tokens")?.unwrap_or(0),
                completion_tokens: f.count("completion_tokens")?.unwrap_or(0),
                parts: match f.get("parts") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(p)) => p.clone(),
                    Some(other) => return Err(f.wrong("parts", "an array", other)),
                },
            }),
            "tool" => MetricEvent::Tool(ToolMetric {
                tool: f.required("tool")?,
                source: f.required("source")?,
                is_error: f.flag("is_error")?.unwrap_or(false),
                ms,
                pending: f.flag("pending")?.unwrap_or(false),
            }),
            _ => MetricEvent::Run(RunMetric {
                model: f.required("model")?,
                turns: f.count("turns")?.unwrap_or(0).min(u64::from(u32::MAX)) as u32,
                tool_calls: f.count("tool_calls")?.unwrap_or(0),
                total_tokens: f.count("total_tokens")?.unwrap_or(0),
                ms,
                error: f.string("error")?.filter(|e| !e.is_empty()),
            }),
        })
    }

    /// [`MetricEvent::to_json`] with the JS and Go ports' key names (`promptTokens`, `isError`, ...).
    pub fn to_json_camel(&self) -> Value {
        match self.to_json() {
            Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (camel_case(&k), v)).collect()),
            other => other,
        }
    }
}

/// Every key an event may have.
const EVENT_KEYS: [&str; 15] = [
    "event",
    "model",
    "status",
    "ms",
    "prompt_tokens",
    "completion_tokens",
    "tool",
    "source",
    "is_error",
    "pending",
    "turns",
    "tool_calls",
    "total_tokens",
    "error",
    "parts",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_reads_camel_case() {
        let ev = MetricEvent::Tool(ToolMetric {
            tool: "add".into(),
            source: "native".into(),
            is_error: false,
            ms: 1.5,
            pending: true,
        });
        assert_eq!(MetricEvent::from_json(&ev.to_json()).unwrap(), ev);
        let camel = json!({"event": "run", "model": "m", "turns": 2, "toolCalls": 1, "totalTokens": 5, "ms": 4});
        let MetricEvent::Run(r) = MetricEvent::from_json(&camel).unwrap() else { panic!() };
        assert_eq!((r.tool_calls, r.total_tokens, r.error), (1, 5, None));
    }

    #[test]
    fn bad_events_name_the_field() {
        for (v, needle) in [
            (json!([]), "object"),
            (json!({"event": "nope"}), "\"nope\""),
            (json!({"event": "llm", "model": "m", "status": "meh", "ms": 1}), "status"),
            (json!({"event": "tool", "tool": "t", "source": "native", "ms": "1"}), "\"ms\""),
            (json!({"event": "run", "model": "m", "ms": 1, "turns": -1}), "\"turns\""),
        ] {
            let e = MetricEvent::from_json(&v).unwrap_err();
            assert!(e.message().contains(needle), "{}", e.message());
        }
    }
}
