//! The data that crosses into JS, in the JS port's shapes: results camelCase (`toolCalls`,
//! `isError`, `usage.promptTokens`), Request/Answer with their pinned wire keys (`expiresAt`).
//! Pure mapping between engine types and napi objects; no behaviour. A run's result crosses as
//! JSON text made into JS by one `JSON.parse` (`RunResult::to_js`), which costs less than
//! napi's object building, a call per property (callgrind, a weather run's result: 90k -> 73k
//! instructions). Its types derive `Serialize` with the names napi gives them, and leave out
//! a `None` field as napi does.

use engine::JsonObject;
use napi::bindgen_prelude::{FromNapiValue, JsObjectValue, Object, ToNapiValue, Unknown};
use napi::{sys, Env, JsValue, ValueType};
use napi_derive::napi;
use serde::Serialize;
use serde_json::Value;

use crate::error::invalid;
use crate::helpers::{self, Helper};

/// What a suspended tool is waiting for (wire keys, shared by every port).
#[napi(object)]
#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    pub id: String,
    /// Open vocabulary: `authorization`, `approval`, `input`, `tool_call`, ...
    pub kind: String,
    pub prompt: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[napi(ts_type = "Record<string, unknown>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<JsonObject>,
    /// RFC 3339 time after which the request is stale.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// The resolution of a Request (wire keys).
#[napi(object)]
#[derive(Clone)]
pub struct Answer {
    pub id: String,
    pub ok: bool,
    #[napi(ts_type = "Record<string, unknown>")]
    pub data: Option<JsonObject>,
    /// Why `ok` is false: `declined`, `cancelled` or `expired`.
    pub reason: Option<String>,
}

/// What a tool hands back to the model.
#[napi(object)]
#[derive(Clone)]
pub struct ToolResult {
    pub output: String,
    pub is_error: bool,
    #[napi(ts_type = "Record<string, unknown>")]
    pub metadata: Option<JsonObject>,
    /// Content parts beside the text (images, files, audio), in the canonical form.
    #[napi(ts_type = "ContentPart[]")]
    pub parts: Option<Json>,
}

/// One tool call made during a run, with its final result.
#[napi(object, object_from_js = false)]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallRecord {
    pub name: String,
    #[napi(ts_type = "Record<string, unknown>")]
    pub args: Value,
    pub output: String,
    pub is_error: bool,
    #[napi(ts_type = "Record<string, unknown>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
}

/// Token usage summed across the turns of a run.
#[napi(object, object_from_js = false)]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub total_tokens: i64,
}

/// The outcome of a run.
#[napi(object, object_from_js = false)]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunResult {
    /// The final assistant text (the pending prompt when the run halted).
    pub text: String,
    /// The whole transcript, in the provider's own message shape. Built on first access (then
    /// a plain data property): a caller that reads only `text` does not pay for the copy.
    #[napi(ts_type = "any[]")]
    pub messages: LaterMessages,
    /// Every tool call made, in call order.
    pub tool_calls: Vec<ToolCallRecord>,
    pub tool_call_count: u32,
    /// Model round trips made.
    pub turns: u32,
    pub usage: Usage,
    /// The model of the last turn.
    pub model: String,
    #[napi(ts_type = "'done' | 'pending' | 'incomplete'")]
    pub status: String,
    /// Which limit stopped the run (`maxTurns`), only when `status` is `incomplete`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
    /// The unresolved suspension, only when `status` is `pending`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<Request>,
}

impl From<engine::Request> for Request {
    fn from(r: engine::Request) -> Request {
        Request { id: r.id, kind: r.kind, prompt: r.prompt, url: r.url, data: r.data, expires_at: r.expires_at }
    }
}

impl From<Request> for engine::Request {
    fn from(r: Request) -> engine::Request {
        engine::Request { id: r.id, kind: r.kind, prompt: r.prompt, url: r.url, data: r.data, expires_at: r.expires_at }
    }
}

impl From<engine::Answer> for Answer {
    fn from(a: engine::Answer) -> Answer {
        Answer { id: a.id, ok: a.ok, data: a.data, reason: a.reason }
    }
}

impl From<engine::ToolResult> for ToolResult {
    fn from(r: engine::ToolResult) -> ToolResult {
        ToolResult {
            output: r.output,
            is_error: r.is_error,
            metadata: r.metadata,
            parts: r.parts.map(|p| Json(Value::Array(p))),
        }
    }
}

impl From<ToolResult> for engine::ToolResult {
    fn from(r: ToolResult) -> engine::ToolResult {
        let parts = match r.parts.map(|p| p.0) {
            Some(Value::Array(p)) => Some(p),
            _ => None,
        };
        engine::ToolResult { output: r.output, is_error: r.is_error, metadata: r.metadata, parts }
    }
}

impl RunResult {
    /// The JS result of a run (on the JS thread). `given` is the caller's history array and
    /// how many of its messages the engine's transcript started with, left out of `r`
    /// (`engine::Client::run_eliding`): `messages` is then those same JS values followed by
    /// the run's own. Otherwise `messages` is a lazy property.
    pub fn to_js(
        env: &Env,
        mut r: engine::RunResult,
        given: Option<(Object<'_>, usize)>,
    ) -> napi::Result<crate::lazy::Raw> {
        let mut messages = std::mem::take(&mut r.messages);
        let mut result = RunResult::from(r);
        // The run's own messages after the caller's go in the result's JSON; a whole
        // transcript is left for first access.
        if given.is_some() {
            result.messages = LaterMessages(Some(std::mem::take(&mut messages)));
        }
        let raw = env.raw();
        // SAFETY: on the JS thread of `env`.
        let text = unsafe { <&str>::to_napi_value(raw, &to_json_text(&result)?) }?;
        let obj = match given {
            Some((history, kept)) => {
                // SAFETY: as above.
                let kept = unsafe { f64::to_napi_value(raw, kept as f64) }?;
                helpers::call(raw, Helper::GivenResult, &[text, history.raw(), kept])?
            }
            None => {
                let obj = helpers::call(raw, Helper::LazyResult, &[text])?;
                crate::lazy::hold(env, obj, Value::Array(messages))?;
                obj
            }
        };
        Ok(crate::lazy::Raw(obj))
    }
}

/// `value` as JSON text; serde_json's error (a map key that is not a string) as napi's.
pub(crate) fn to_json_text(value: &impl Serialize) -> napi::Result<String> {
    serde_json::to_string(value).map_err(|e| napi::Error::from_reason(e.to_string()))
}

/// The `messages` slot of a [`RunResult`] while it is being built: the messages to write into
/// its JSON, or `null` there for the lazy property [`RunResult::to_js`] then puts in its place.
pub struct LaterMessages(Option<Vec<Value>>);

impl napi::bindgen_prelude::TypeName for LaterMessages {
    fn type_name() -> &'static str {
        "Array<unknown>"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl Serialize for LaterMessages {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// Unused by [`RunResult::to_js`], which goes through the JSON text; there for napi's
/// object conversion, which then gives the messages held or `null`, as the JSON does.
impl napi::bindgen_prelude::ToNapiValue for LaterMessages {
    unsafe fn to_napi_value(env: sys::napi_env, v: Self) -> napi::Result<sys::napi_value> {
        match v.0 {
            // SAFETY: the caller's live `env`, on the JS thread.
            Some(messages) => unsafe { Json::to_napi_value(env, Json(Value::Array(messages))) },
            None => unsafe { <()>::to_napi_value(env, ()) },
        }
    }
}

impl From<engine::RunResult> for RunResult {
    fn from(r: engine::RunResult) -> RunResult {
        RunResult {
            text: r.text,
            messages: LaterMessages(None),
            tool_calls: r
                .tool_calls
                .into_iter()
                .map(|c| ToolCallRecord {
                    name: c.name,
                    args: c.args,
                    output: c.output,
                    is_error: c.is_error,
                    metadata: c.metadata,
                })
                .collect(),
            tool_call_count: r.tool_call_count as u32,
            turns: r.turns,
            usage: Usage {
                prompt_tokens: r.usage.prompt_tokens as i64,
                completion_tokens: r.usage.completion_tokens as i64,
                total_tokens: r.usage.total_tokens as i64,
            },
            model: r.model,
            status: r.status.as_str().to_string(),
            limit: r.limit,
            pending: r.pending.map(Request::from),
        }
    }
}

/// A ToolResult a host handed back as JSON (`{output, isError, metadata?, parts?}`): a hook's
/// short-circuit or replacement. A missing `isError` is `false`; a non-string `output` is
/// its JSON text.
pub fn tool_result_from_json(v: &Value) -> engine::Result<engine::ToolResult> {
    let Some(o) = v.as_object() else {
        return Err(invalid("a tool result must be an object {output, isError, metadata?}"));
    };
    let output = match o.get("output") {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => String::new(),
        Some(other) => other.to_string(),
    };
    let is_error = match o.get("isError") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(invalid("a tool result's isError must be a boolean")),
    };
    let metadata = match o.get("metadata") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(m.clone()),
        Some(_) => return Err(invalid("a tool result's metadata must be an object")),
    };
    let parts = match o.get("parts") {
        None | Some(Value::Null) => None,
        Some(Value::Array(p)) => Some(p.clone()),
        Some(_) => return Err(invalid("a tool result's parts must be an array of content parts")),
    };
    Ok(engine::ToolResult { output, is_error, metadata, parts })
}

/// What a JS tool's `run` returned, read on the JS thread: a string is the output; an object
/// with `output` and `isError` is a full ToolResult; `undefined` is an empty output; anything
/// else is its `JSON.stringify` text (as the JS port does).
pub struct ToolValue(pub engine::Result<engine::ToolResult>);

impl FromNapiValue for ToolValue {
    unsafe fn from_napi_value(env: sys::napi_env, v: sys::napi_value) -> napi::Result<Self> {
        // SAFETY: called by napi on the JS thread with a live value of this env.
        let unknown = unsafe { Unknown::from_raw_unchecked(env, v) };
        let out = match unknown.get_type()? {
            ValueType::String => engine::ToolResult::ok(unsafe { String::from_napi_value(env, v)? }),
            ValueType::Undefined => engine::ToolResult::ok(""),
            ValueType::Boolean => engine::ToolResult::ok(unsafe { bool::from_napi_value(env, v)? }.to_string()),
            ValueType::Number => {
                let n = unsafe { f64::from_napi_value(env, v)? };
                // Integers print the same in Rust and JS up to 2^53 (past it JS prints the
                // shortest digits that read back, then zeros); anything else is JS's own text.
                if n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_992.0 {
                    engine::ToolResult::ok(format!("{}", n as i128))
                } else {
                    engine::ToolResult::ok(json_stringify(env, v)?)
                }
            }
            ValueType::Object => {
                let obj = Object::from_raw(env, v);
                if obj.has_named_property("output")? && obj.has_named_property("isError")? {
                    let value = unsafe { Value::from_napi_value(env, v)? };
                    return Ok(ToolValue(tool_result_from_json(&value)));
                }
                engine::ToolResult::ok(json_stringify(env, v)?)
            }
            _ => engine::ToolResult::ok(json_stringify(env, v)?),
        };
        Ok(ToolValue(Ok(out)))
    }
}

/// `JSON.stringify(v)` (`undefined` for values JSON cannot show becomes an empty string).
fn json_stringify(env: sys::napi_env, v: sys::napi_value) -> napi::Result<String> {
    let out = helpers::call(env, Helper::Stringify, &[v])?;
    // SAFETY: a value of `env`, on its JS thread.
    Ok(unsafe { Option::<String>::from_napi_value(env, out) }?.unwrap_or_default())
}

/// A JSON value that crosses as JSON text: `JSON.stringify` on the way in, `JSON.parse` on
/// the way out. For transcripts (hundreds of messages) V8's own JSON codec is several times
/// faster than building or reading the value one property at a time through napi.
#[derive(Clone)]
pub struct Json(pub Value);

impl napi::bindgen_prelude::TypeName for Json {
    fn type_name() -> &'static str {
        "Json"
    }

    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

impl napi::bindgen_prelude::ValidateNapiValue for Json {}

impl FromNapiValue for Json {
    unsafe fn from_napi_value(env: sys::napi_env, v: sys::napi_value) -> napi::Result<Self> {
        // SAFETY: passed on from napi's own call, on the JS thread.
        Ok(Json(unsafe { JsonText::from_napi_value(env, v) }?.value))
    }
}

/// A [`Json`] that keeps the text it crossed as: a run's history, with which an eliding run
/// compares the result's messages (`Client::run_eliding_text`) instead of with a copy.
pub struct JsonText {
    pub value: Value,
    /// `JSON.stringify`'s text; empty for what it cannot show (the value is then `null`).
    pub text: String,
}

impl napi::bindgen_prelude::TypeName for JsonText {
    fn type_name() -> &'static str {
        "Json"
    }

    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

impl napi::bindgen_prelude::ValidateNapiValue for JsonText {}

impl FromNapiValue for JsonText {
    unsafe fn from_napi_value(env: sys::napi_env, v: sys::napi_value) -> napi::Result<Self> {
        let text = json_stringify(env, v)?;
        if text.is_empty() {
            return Ok(JsonText { value: Value::Null, text });
        }
        let value = engine::parse_json(&text).map_err(|e| napi::Error::from_reason(e.to_string()))?;
        Ok(JsonText { value, text })
    }
}

impl ToNapiValue for Json {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        // SAFETY: passed on from napi's own call, on the JS thread.
        let text = unsafe { <&str>::to_napi_value(env, &to_json_text(&val.0)?) }?;
        helpers::call(env, Helper::Parse, &[text])
    }
}
