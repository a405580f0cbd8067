//! The data that crosses every boundary: suspension requests and their answers, tool
//! results, and the outcome of a run.
//!
//! `Request` and `Answer` keys are pinned wire keys shared by every port and language
//! (`expiresAt` stays camelCase everywhere); absent optionals are omitted, never `null`.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};

/// A JSON object.
pub type JsonObject = Map<String, Value>;

/// What a suspended tool is waiting for: a login, an approval, a typed reply, a relayed call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Unique per suspension; the Answer must echo it.
    pub id: String,
    /// Open vocabulary: `authorization`, `approval`, `input`, `tool_call`, ...
    pub kind: String,
    /// What is being asked, in human words.
    pub prompt: String,
    /// Present when the action happens at a link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Kind-specific extra data (relay calls ride `data.calls`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<JsonObject>,
    /// RFC 3339 time after which the request is stale.
    #[serde(default, rename = "expiresAt", skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// The resolution of a [`Request`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// Echoes [`Request::id`].
    pub id: String,
    /// Satisfied (`true`) or declined / cancelled / expired (`false`). The loop branches on this alone.
    pub ok: bool,
    /// Kind-specific payload; [`crate::answer_output`] puts the reply under `output`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<JsonObject>,
    /// Why `ok` is false (advisory; see [`crate::Reason`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

fn field_str(obj: &JsonObject, what: &str, key: &str, required: bool) -> Result<Option<String>> {
    match obj.get(key) {
        None | Some(Value::Null) if !required => Ok(None),
        None | Some(Value::Null) => Err(Error::invalid(format!("{what}: missing \"{key}\" (a string)"))),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(Error::invalid(format!("{what}: \"{key}\" must be a string, got {}", json_type(other)))),
    }
}

fn field_obj(obj: &JsonObject, what: &str, key: &str) -> Result<Option<JsonObject>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m.clone())),
        Some(other) => Err(Error::invalid(format!("{what}: \"{key}\" must be an object, got {}", json_type(other)))),
    }
}

/// The JSON type name of a value, for error messages.
pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn as_object<'a>(v: &'a Value, what: &str) -> Result<&'a JsonObject> {
    v.as_object().ok_or_else(|| Error::invalid(format!("{what} must be a JSON object, got {}", json_type(v))))
}

impl Request {
    /// Reads a Request from any JSON a host may hand back; `null` optionals count as absent.
    /// A missing or mistyped key is an [`crate::ErrorKind::InvalidArgument`] error naming it.
    pub fn from_json(v: &Value) -> Result<Request> {
        const WHAT: &str = "Request";
        let o = as_object(v, WHAT)?;
        Ok(Request {
            id: field_str(o, WHAT, "id", true)?.unwrap_or_default(),
            kind: field_str(o, WHAT, "kind", true)?.unwrap_or_default(),
            prompt: field_str(o, WHAT, "prompt", true)?.unwrap_or_default(),
            url: field_str(o, WHAT, "url", false)?,
            data: field_obj(o, WHAT, "data")?,
            expires_at: field_str(o, WHAT, "expiresAt", false)?,
        })
    }

    /// The Request as a JSON value with the pinned keys.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl Answer {
    /// Reads an Answer from any JSON a host may hand back; `null` optionals count as absent.
    /// A malformed answer is an error naming what is wrong, never a silent decline.
    pub fn from_json(v: &Value) -> Result<Answer> {
        const WHAT: &str = "Answer";
        let o = as_object(v, WHAT)?;
        let ok = match o.get("ok") {
            Some(Value::Bool(b)) => *b,
            None | Some(Value::Null) => {
                return Err(Error::invalid("Answer: missing \"ok\" (a boolean)"));
            }
            Some(other) => {
                return Err(Error::invalid(format!("Answer: \"ok\" must be a boolean, got {}", json_type(other))));
            }
        };
        Ok(Answer {
            id: field_str(o, WHAT, "id", true)?.unwrap_or_default(),
            ok,
            data: field_obj(o, WHAT, "data")?,
            reason: field_str(o, WHAT, "reason", false)?,
        })
    }

    /// The Answer as a JSON value with the pinned keys.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// What a tool hands back to the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The text the model sees.
    pub output: String,
    /// Whether the tool failed (the model sees the output either way).
    pub is_error: bool,
    /// Free-form metadata; `metadata.pending` holding a [`Request`] makes the result a suspension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Content parts beside the text (images, files, audio; [`crate::content`]), in the
    /// canonical form. The model sees `output` and, where its style can carry them, the parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<Vec<Value>>,
}

impl ToolResult {
    /// A successful result.
    pub fn ok(output: impl Into<String>) -> ToolResult {
        ToolResult { output: output.into(), is_error: false, metadata: None, parts: None }
    }

    /// An error result.
    pub fn error(output: impl Into<String>) -> ToolResult {
        ToolResult { output: output.into(), is_error: true, metadata: None, parts: None }
    }

    /// The suspension this result carries, if `metadata.pending` is a well-formed Request.
    pub fn pending(&self) -> Option<Request> {
        let p = self.metadata.as_ref()?.get("pending")?;
        Request::from_json(p).ok()
    }
}

/// What a tool is told about the call it is serving.
#[derive(Clone, Debug, Default)]
pub struct ToolContext {
    /// Present only when the tool is re-run to consume the resolution of its own suspension.
    pub answer: Option<Answer>,
    /// Fires when the run is cancelled or its deadline passes.
    pub cancel: CancellationToken,
    /// Time left before the run's deadline, when it has one.
    pub timeout: Option<Duration>,
    /// The provider's tool-call id: the same on the first run, the inline re-run and a
    /// durable resume, so a tool with side effects can use it as an idempotency key.
    pub call_id: String,
    /// Every other call of its turn has started (or needs no run): nothing the run does next
    /// waits on this call's being handed off, so a host may run it on the thread that asked
    /// without holding a sibling back.
    pub last_to_start: bool,
}

/// Token usage summed across the turns of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt (input) tokens.
    pub prompt_tokens: u64,
    /// Completion (output) tokens.
    pub completion_tokens: u64,
    /// Total tokens.
    pub total_tokens: u64,
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// The model answered without calling tools.
    Done,
    /// A tool suspended and no `wait_for` was configured; see [`RunResult::pending`].
    Pending,
    /// A limit stopped the run while the model was still calling tools; see [`RunResult::limit`].
    Incomplete,
}

impl RunStatus {
    /// Every status, in the order upstream lists them.
    pub const ALL: [RunStatus; 3] = [RunStatus::Done, RunStatus::Pending, RunStatus::Incomplete];

    /// The wire name: `done`, `pending` or `incomplete`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Done => "done",
            RunStatus::Pending => "pending",
            RunStatus::Incomplete => "incomplete",
        }
    }
}

/// The `limit` value when `max_turns` stopped a run.
pub const LIMIT_MAX_TURNS: &str = "maxTurns";

/// One tool call made during a run, with its final result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    /// The tool name the model called.
    pub name: String,
    /// The arguments the tool ran with (after any `before_tool` rewrite).
    pub args: Value,
    /// The output fed back to the model.
    pub output: String,
    /// Whether that output is an error.
    pub is_error: bool,
    /// The result's metadata.
    pub metadata: Option<JsonObject>,
}

/// The outcome of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The final assistant text (the pending prompt when the run halted).
    pub text: String,
    /// The whole transcript, in the provider's own message shape.
    pub messages: Vec<Value>,
    /// Every tool call made, in call order.
    pub tool_calls: Vec<ToolCallRecord>,
    /// `tool_calls.len()`.
    pub tool_call_count: usize,
    /// Model round trips made.
    pub turns: u32,
    /// Token usage summed across turns.
    pub usage: Usage,
    /// The model of the last turn.
    pub model: String,
    /// How the run ended.
    pub status: RunStatus,
    /// Which limit stopped the run (only when `status` is `incomplete`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
    /// The unresolved suspension (only when `status` is `pending`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Request>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn request_omits_absent_optionals_and_keeps_expires_at_key() {
        let r = Request {
            id: "p1".into(),
            kind: "approval".into(),
            prompt: "ok?".into(),
            url: None,
            data: None,
            expires_at: Some("2030-01-01T00:00:00Z".into()),
        };
        assert_eq!(r.to_json(), json!({"id":"p1","kind":"approval","prompt":"ok?","expiresAt":"2030-01-01T00:00:00Z"}));
    }

    #[test]
    fn answer_normaliser_reads_nulls_as_absent() {
        let a = Answer::from_json(&json!({"id":"x","ok":false,"reason":"no","data":null})).unwrap();
        assert_eq!(a, Answer { id: "x".into(), ok: false, data: None, reason: Some("no".into()) });
    }

    #[test]
    fn answer_normaliser_rejects_malformed_answers_loudly() {
        for (bad, needle) in [
            (json!("yes"), "JSON object"),
            (json!({"id":"x"}), "missing \"ok\""),
            (json!({"id":"x","ok":"true"}), "\"ok\" must be a boolean"),
            (json!({"ok":true}), "missing \"id\""),
            (json!({"id":1,"ok":true}), "\"id\" must be a string"),
            (json!({"id":"x","ok":true,"data":[1]}), "\"data\" must be an object"),
            (json!({"id":"x","ok":false,"reason":3}), "\"reason\" must be a string"),
        ] {
            let e = Answer::from_json(&bad).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
            assert!(e.message().contains(needle), "{} !~ {needle}", e.message());
        }
    }

    #[test]
    fn answer_normal_form_reads_back_from_its_text_unchanged() {
        // Found by fuzz/ (target `answer`): without serde_json's `float_roundtrip`, a number
        // the library wrote could read back as a neighbouring float.
        for text in [
            r#"{"id":"x","ok":true,"data":{"score":0.118446744073709551615}}"#,
            r#"{"id":"x","ok":true,"data":{"v":2.2250738585072011e-308}}"#,
        ] {
            let once = Answer::from_json(&serde_json::from_str(text).unwrap()).unwrap().to_json().to_string();
            let twice = Answer::from_json(&serde_json::from_str(&once).unwrap()).unwrap().to_json().to_string();
            assert_eq!(once, twice);
        }
    }

    #[test]
    fn tool_result_pending_requires_a_well_formed_request() {
        let mut meta = JsonObject::new();
        meta.insert("pending".into(), json!({"id":"p","kind":"input","prompt":"name?"}));
        let r = ToolResult { output: "name?".into(), is_error: true, metadata: Some(meta), parts: None };
        assert_eq!(r.pending().map(|p| p.id), Some("p".to_string()));
        let mut bad = JsonObject::new();
        bad.insert("pending".into(), json!({"id":"p"}));
        let r = ToolResult { output: String::new(), is_error: true, metadata: Some(bad), parts: None };
        assert!(r.pending().is_none());
    }
}
