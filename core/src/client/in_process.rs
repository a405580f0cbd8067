//! In-process models (SPEC §8): a client whose "provider" is a function of the host. The
//! host's [`InProcessModel`] sees the assembled request and returns one assistant message;
//! [`InProcessTransport`] builds the OpenAI envelope around it and answers the loop's request
//! before any network, so the loop, its hooks, metrics and suspensions behave as with a
//! real provider. What the model raises is final (no wire, so nothing transient to retry).

use std::sync::Arc;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};

use super::options::{ClientOptions, Style};
use crate::error::{Error, Result};
use crate::hooks::HookFuture;
use crate::spec_json::snake_case;
use crate::transport::{BodySink, HttpRequest, HttpResponse, Transport};
use crate::types::json_type;
use crate::warning::Parsed;

/// The base URL an in-process client carries: never dialled, and `.invalid` can never resolve.
pub const IN_PROCESS_BASE_URL: &str = "http://in-process.invalid/v1";

/// Options an in-process client refuses: the wire settings, each binding's own name for a
/// host transport (`http_transport`, `fetch`, `http_client`), and the retry settings (a
/// failed model ends the run at once). A binding reports a host function as given (`true`).
pub const IN_PROCESS_REFUSED: [&str; 11] = [
    "base_url",
    "api_key",
    "style",
    "http_transport",
    "fetch",
    "http_client",
    "retries",
    "retry_base_ms",
    "retryable_statuses",
    "max_retry_after_ms",
    "on_error",
];

/// The refused options that are about retrying.
const RETRY_OPTIONS: [&str; 5] = ["retries", "retry_base_ms", "retryable_statuses", "max_retry_after_ms", "on_error"];

/// A model running in the host. `request` is `{"messages", "tools" (or null), "model",
/// "body"}`; the answer is one assistant message: `{"content"}` ends the turn, `{"tool_calls":
/// [{"id"?, "name", "arguments"}]}` (or `toolCalls`) asks for tools, `arguments` an object or
/// a JSON string; `usage` (`prompt_tokens`/`promptTokens`, ...) is optional.
pub trait InProcessModel: Send + Sync {
    /// One model call.
    fn generate(&self, request: Value) -> HookFuture<Value>;
}

/// A [`Transport`] answering every request with its [`InProcessModel`].
pub struct InProcessTransport(pub Arc<dyn InProcessModel>);

impl Transport for InProcessTransport {
    fn post(&self, request: HttpRequest) -> BoxFuture<'static, Result<HttpResponse>> {
        let model = self.0.clone();
        Box::pin(async move {
            let body: Value = serde_json::from_slice(&request.body)
                .map_err(|e| Error::new(crate::ErrorKind::Internal, format!("in-process request body: {e}")))?;
            let asked = json!({
                "messages": body.get("messages").cloned().unwrap_or_else(|| json!([])),
                "tools": body.get("tools").cloned().unwrap_or(Value::Null),
                "model": body.get("model").cloned().unwrap_or(Value::Null),
                "body": body,
            });
            let reply = envelope(&model.generate(asked).await?)?;
            Ok(HttpResponse { status: 200, headers: Vec::new(), body: Bytes::from(reply.to_string()) })
        })
    }

    /// Refused: the model returns a whole answer, and one chunk passed off as a stream would
    /// fool anything that counts or times the deltas.
    fn post_streaming<'a>(&'a self, _: HttpRequest, _: &'a mut dyn BodySink) -> BoxFuture<'a, Result<HttpResponse>> {
        Box::pin(async {
            Err(Error::new(
                crate::ErrorKind::Config,
                "toolnexus: an in-process client does not support streaming — its model returns a complete \
                 answer. Run it without streaming.",
            ))
        })
    }
}

/// The OpenAI reply a provider would have sent for the model's `answer`.
pub fn envelope(answer: &Value) -> Result<Value> {
    let empty = Map::new();
    let a = match answer {
        Value::Null => &empty,
        Value::Object(o) => o,
        other => {
            return Err(Error::invalid(format!(
                "an in-process model must answer an object ({{content}} or {{tool_calls}}), got {}",
                json_type(other)
            )))
        }
    };
    let calls = match a.get("tool_calls").or_else(|| a.get("toolCalls")) {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(c)) => c.as_slice(),
        Some(other) => {
            return Err(Error::invalid(format!(
                "an in-process answer's tool_calls must be an array, got {}",
                json_type(other)
            )))
        }
    };
    let mut message = json!({"role": "assistant"});
    if calls.is_empty() {
        message["content"] = match a.get("content") {
            None | Some(Value::Null) => json!(""),
            Some(Value::String(s)) => json!(s),
            Some(other) => {
                return Err(Error::invalid(format!(
                    "an in-process answer's content must be a string, got {}",
                    json_type(other)
                )))
            }
        };
    } else {
        let tcs: Vec<Value> = calls.iter().enumerate().map(|(i, c)| wire_call(i, c)).collect::<Result<_>>()?;
        message["tool_calls"] = Value::Array(tcs);
    }
    let finish = if calls.is_empty() { "stop" } else { "tool_calls" };
    let u = a.get("usage").filter(|u| u.is_object());
    let count = |snake: &str, camel: &str| {
        u.and_then(|u| u.get(snake).or_else(|| u.get(camel))).and_then(Value::as_u64).unwrap_or(0)
    };
    let (p, c) = (count("prompt_tokens", "promptTokens"), count("completion_tokens", "completionTokens"));
    let t = match count("total_tokens", "totalTokens") {
        0 => p.saturating_add(c),
        t => t,
    };
    Ok(json!({
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": t},
    }))
}

/// One of the answer's tool calls on the wire: a missing id is `call_<i>`, arguments that are
/// not already a string are encoded.
fn wire_call(i: usize, c: &Value) -> Result<Value> {
    let name = c.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()).ok_or_else(|| {
        Error::invalid(format!("an in-process answer's tool call {i} needs a \"name\" (a non-empty string)"))
    })?;
    let id = match c.get("id").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => id.to_string(),
        _ => format!("call_{i}"),
    };
    let arguments = match c.get("arguments") {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => "{}".to_string(),
        Some(v) => v.to_string(),
    };
    Ok(json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}))
}

/// The error for a refused option (`option`, as its user wrote it) given to `func`, a
/// binding's in-process constructor.
pub fn in_process_refused(func: &str, option: &str) -> Error {
    if RETRY_OPTIONS.contains(&snake_case(option).as_str()) {
        return Error::invalid(format!(
            "toolnexus: {func} does not take `{option}` — a failed in-process model ends the run at once: \
             nothing is retried."
        ));
    }
    Error::invalid(format!(
        "toolnexus: {func} does not take `{option}` — an in-process model has no wire to configure. \
         Use the ordinary client constructor for a network-backed model."
    ))
}

impl ClientOptions {
    /// An in-process client of `model`: no URL, no key needed, no retries (a model that
    /// raised will raise again).
    pub fn in_process(model: impl Into<String>, generate: Arc<dyn InProcessModel>) -> ClientOptions {
        let mut o = ClientOptions::new(IN_PROCESS_BASE_URL, Style::OpenAi, model);
        o.require_api_key = false;
        o.retries = 0;
        o.transport = Some(Arc::new(InProcessTransport(generate)));
        o
    }

    /// [`ClientOptions::from_json`] for an in-process client (`func` names the binding's
    /// constructor in errors): an option of [`IN_PROCESS_REFUSED`] given (anything but `null`
    /// or `false`) is an [`crate::ErrorKind::InvalidArgument`] error. The binding sets the
    /// transport with [`InProcessTransport`].
    pub fn in_process_from_json(json: &Value, func: &str) -> Result<Parsed<ClientOptions>> {
        let o = json.as_object().ok_or_else(|| Error::invalid(format!("{func} options must be an object")))?;
        let given = |v: &Value| !matches!(v, Value::Null | Value::Bool(false));
        if let Some((k, _)) = o.iter().find(|(k, v)| IN_PROCESS_REFUSED.contains(&snake_case(k).as_str()) && given(v)) {
            return Err(in_process_refused(func, k));
        }
        let camel = o.keys().any(|k| k.bytes().any(|b| b.is_ascii_uppercase()));
        let name = |snake: &str| if camel { crate::spec_json::camel_case(snake) } else { snake.to_string() };
        let mut full: serde_json::Map<String, Value> = o
            .iter()
            .filter(|(k, _)| !IN_PROCESS_REFUSED.contains(&snake_case(k).as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        full.insert(name("base_url"), json!(IN_PROCESS_BASE_URL));
        full.insert("style".into(), json!("openai"));
        full.insert(name("require_api_key"), json!(false));
        full.insert("retries".into(), json!(0));
        ClientOptions::from_json(&Value::Object(full))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_become_openai_replies() {
        let r = envelope(&json!({"content": "hi"})).unwrap();
        assert_eq!(r["choices"][0]["message"], json!({"role": "assistant", "content": "hi"}));
        assert_eq!(
            (r["choices"][0]["finish_reason"].as_str(), r["usage"]["total_tokens"].as_u64()),
            (Some("stop"), Some(0))
        );
        let r = envelope(
            &json!({"toolCalls": [{"name": "add", "arguments": {"a": 2}}, {"id": "x", "name": "b", "arguments": "{}"}],
            "usage": {"promptTokens": 11, "completion_tokens": 4}}),
        )
        .unwrap();
        let tcs = &r["choices"][0]["message"]["tool_calls"];
        assert_eq!(
            tcs[0],
            json!({"id": "call_0", "type": "function", "function": {"name": "add", "arguments": "{\"a\":2}"}})
        );
        assert_eq!(tcs[1]["id"], "x");
        assert_eq!(
            (r["usage"]["total_tokens"].as_u64(), r["choices"][0]["finish_reason"].as_str()),
            (Some(15), Some("tool_calls"))
        );
        assert_eq!(envelope(&Value::Null).unwrap()["choices"][0]["message"]["content"], "");
        for bad in
            [json!(5), json!({"content": 3}), json!({"tool_calls": {}}), json!({"tool_calls": [{"arguments": {}}]})]
        {
            assert_eq!(envelope(&bad).unwrap_err().kind(), crate::ErrorKind::InvalidArgument, "{bad}");
        }
    }

    #[test]
    fn wire_and_retry_options_are_refused() {
        let f = "create_in_process_client";
        let p = ClientOptions::in_process_from_json(&json!({"model": "m", "system_prompt": "s"}), f).unwrap().value;
        assert_eq!((p.base_url.as_str(), p.retries, p.require_api_key), (IN_PROCESS_BASE_URL, 0, false));
        let given_as_absent = json!({"model": "m", "maxTurns": 3, "fetch": null, "onError": false});
        assert_eq!(ClientOptions::in_process_from_json(&given_as_absent, f).unwrap().value.max_turns, 3);
        for (k, why) in [
            ("base_url", "no wire"),
            ("apiKey", "no wire"),
            ("style", "no wire"),
            ("http_transport", "no wire"),
            ("fetch", "no wire"),
            ("retries", "nothing is retried"),
            ("onError", "nothing is retried"),
            ("retry_base_ms", "nothing is retried"),
        ] {
            let e = ClientOptions::in_process_from_json(&json!({"model": "m", k: 2}), f).unwrap_err();
            let m = e.message();
            assert!(m.contains(&format!("does not take `{k}`")) && m.contains(why), "{m}");
        }
    }
}
