//! Relay tools: declared to the model, executed by the host. A relay call suspends the run
//! with a `tool_call` Request carrying it under `data.calls`: inline (`wait_for`) each call is
//! its own Request; on a durable halt every relay call of the assistant turn rides one. The
//! host's Answer supplies the outputs under `data.results` (or the single-call shorthand
//! `data.output` / `data.isError`). Relay is a use of the suspension primitive, not a second
//! mechanism.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::types::{Answer, JsonObject, Request, ToolResult};

/// The Request kind of a relayed call.
pub const RELAY_KIND: &str = "tool_call";

/// One relayed call, as it appears in `Request.data.calls`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RelayCall {
    /// The provider's tool-call id: the key the result must carry.
    pub id: String,
    /// The tool the model called.
    pub name: String,
    /// The parsed arguments.
    pub input: Value,
    /// The raw arguments JSON, so an OpenAI-shaped caller can echo it.
    pub arguments: String,
}

/// One host-executed result, as it appears in `Answer.data.results`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RelayResult {
    /// The relayed call's id.
    pub id: String,
    /// The output for the model.
    pub output: String,
    /// Whether the host's tool failed.
    #[serde(rename = "isError", default)]
    pub is_error: bool,
}

/// Whether `request` is a relayed tool call.
pub fn is_relay_request(request: &Request) -> bool {
    request.kind == RELAY_KIND
}

/// The relayed calls of a Request, in call order (empty when it is not a relay request).
pub fn relay_calls_of(request: &Request) -> Vec<RelayCall> {
    if !is_relay_request(request) {
        return Vec::new();
    }
    let Some(Value::Array(calls)) = request.data.as_ref().and_then(|d| d.get("calls")) else {
        return Vec::new();
    };
    calls.iter().filter_map(|c| serde_json::from_value(c.clone()).ok()).collect()
}

/// The Answer a durable host returns for a relay Request: one result per call, by id.
pub fn relay_answer(request_id: &str, results: &[RelayResult]) -> Answer {
    let arr = results.iter().map(|r| serde_json::to_value(r).unwrap_or(Value::Null)).collect::<Vec<_>>();
    let mut data = JsonObject::new();
    data.insert("results".into(), Value::Array(arr));
    Answer { id: request_id.into(), ok: true, data: Some(data), reason: None }
}

/// What a relay tool does when a host executes it directly, outside a run (the ports let a
/// caller call a tool object): without an answer, the suspension for this one call, carrying
/// the Request a run would relay it with; with one, the result the model would read for it
/// (the same reading as in a run: `data.results` by `call_id`, or the single-call shorthand).
/// A run knows the provider's call id; without one (`call_id` empty) the Request gets a
/// fresh id of its own, so two direct calls never share one.
pub fn relay_execute(name: &str, args: &Value, call_id: &str, answer: Option<&Answer>) -> ToolResult {
    if let Some(answer) = answer {
        return relay_result(answer, call_id, name, true);
    }
    let input = if args.is_null() { Value::Object(Map::new()) } else { args.clone() };
    let call = RelayCall { id: call_id.into(), name: name.into(), arguments: input.to_string(), input };
    let mut request = relay_request(&[call]);
    if call_id.is_empty() {
        request.id = crate::new_request_id();
    }
    crate::suspend(request)
}

/// The Request that carries `calls` (one inline, every relay call of the turn on a durable
/// halt). Its id is derived from the first call's provider id, so it is unique per turn and
/// the same every time the turn is replayed.
pub(crate) fn relay_request(calls: &[RelayCall]) -> Request {
    let names = calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>();
    let prompt = match names.as_slice() {
        [one] => format!("relay tool call {one} to the caller for execution"),
        many => format!("relay tool calls {} to the caller for execution", many.join(", ")),
    };
    let id = format!("relay-{}", calls.first().map(|c| c.id.as_str()).unwrap_or(""));
    let arr = calls.iter().map(|c| serde_json::to_value(c).unwrap_or(Value::Null)).collect();
    let mut data = Map::new();
    data.insert("calls".into(), Value::Array(arr));
    Request { id, kind: RELAY_KIND.into(), prompt, url: None, data: Some(data), expires_at: None }
}

/// The result the model sees for relayed call `call_id` (named `name`) under `answer`.
/// `first` marks the first call of the Request, the one the single-call shorthand answers.
pub(crate) fn relay_result(answer: &Answer, call_id: &str, name: &str, first: bool) -> ToolResult {
    if !answer.ok {
        let reason = answer.reason.as_deref().filter(|r| !r.is_empty()).unwrap_or("declined");
        return ToolResult::error(format!("relay declined for {name}: {reason}"));
    }
    let data = answer.data.as_ref();
    if let Some(Value::Array(results)) = data.and_then(|d| d.get("results")) {
        let found = results.iter().find(|r| r.get("id").and_then(Value::as_str) == Some(call_id));
        return match found {
            Some(r) => read_result(r),
            None => missing(name),
        };
    }
    match data {
        Some(d) if first && d.contains_key("output") => read_result(&Value::Object(d.clone())),
        _ => missing(name),
    }
}

fn read_result(v: &Value) -> ToolResult {
    let is_error = v.get("isError").and_then(Value::as_bool).unwrap_or(false);
    match v.get("output") {
        Some(Value::String(s)) => ToolResult { output: s.clone(), is_error, metadata: None, parts: None },
        Some(Value::Null) | None => ToolResult { output: String::new(), is_error, metadata: None, parts: None },
        Some(other) => ToolResult { output: other.to_string(), is_error, metadata: None, parts: None },
    }
}

fn missing(name: &str) -> ToolResult {
    ToolResult::error(format!("no result supplied on resume for {name}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str, name: &str) -> RelayCall {
        RelayCall { id: id.into(), name: name.into(), input: json!({}), arguments: "{}".into() }
    }

    #[test]
    fn one_request_carries_every_call() {
        let req = relay_request(&[call("c1", "a"), call("c2", "b")]);
        assert_eq!(req.id, "relay-c1");
        assert_eq!(req.prompt, "relay tool calls a, b to the caller for execution");
        assert_eq!(relay_calls_of(&req).len(), 2);
        let single = relay_request(&[call("c9", "refund")]);
        assert_eq!(single.prompt, "relay tool call refund to the caller for execution");
    }

    #[test]
    fn results_are_read_by_id_with_single_call_shorthand() {
        let a = relay_answer("r", &[RelayResult { id: "c2".into(), output: "two".into(), is_error: true }]);
        assert_eq!(relay_result(&a, "c2", "b", false), ToolResult::error("two"));
        assert_eq!(relay_result(&a, "c1", "a", true).output, "no result supplied on resume for a");
        let short = Answer::from_json(&json!({"id":"r","ok":true,"data":{"output":"done"}})).unwrap();
        assert_eq!(relay_result(&short, "c1", "a", true), ToolResult::ok("done"));
        assert!(relay_result(&short, "c2", "b", false).is_error);
    }

    #[test]
    fn a_direct_execution_suspends_as_a_run_would_and_reads_the_answer_as_a_run_does() {
        let args = json!({"amount": 20});
        let first = relay_execute("refund", &args, "c7", None);
        let req = first.pending().unwrap();
        let expected = RelayCall { input: args.clone(), arguments: args.to_string(), ..call("c7", "refund") };
        assert_eq!(req, relay_request(&[expected]));
        assert_eq!(first.output, "relay tool call refund to the caller for execution");
        let bare = relay_execute("refund", &Value::Null, "", None).pending().unwrap();
        assert!(bare.id.starts_with("pnd-"), "a call without a provider id gets a fresh id: {}", bare.id);
        assert_eq!(relay_calls_of(&bare)[0].arguments, "{}");
        let a = relay_answer("r", &[RelayResult { id: "c7".into(), output: "done".into(), is_error: false }]);
        assert_eq!(relay_execute("refund", &args, "c7", Some(&a)), ToolResult::ok("done"));
        assert!(relay_execute("refund", &args, "", Some(&a)).is_error, "results are read by call id");
        let no = crate::answer_declined("r", "");
        assert_eq!(
            relay_execute("refund", &args, "", Some(&no)),
            ToolResult::error("relay declined for refund: declined")
        );
    }

    #[test]
    fn a_declined_relay_is_an_error_result_naming_the_tool() {
        let no = crate::answer_declined("r", "amount exceeds refund policy");
        assert_eq!(
            relay_result(&no, "c1", "refund", true),
            ToolResult::error("relay declined for refund: amount exceeds refund policy")
        );
    }
}
