//! Host callbacks as engine traits: `waitFor`, `onError`, `bodyTransform` and the four
//! lifecycle hooks, each a JS function behind a weak `ThreadsafeFunction` (`call.rs`: it never
//! keeps the process alive). A callback may return its value or a Promise of it; a throw or a
//! rejection travels through the engine as the host's own error object (see `error.rs`).

use std::sync::Arc;

use engine::{BodyTransform, ErrorInfo, HookFuture, HookName, HookSet, HookTable, JsonHooks, OnError, Tier, WaitFor};
use napi::bindgen_prelude::Object;
use napi_derive::napi;
use serde_json::Value;

use crate::call::{call, callback, method, Callback, MaybePromise};
use crate::convert::{tool_result_from_json, Json, Request};
use crate::error::invalid;

// ---- waitFor ------------------------------------------------------------------------------

/// `waitFor(request)`: the host's Answer, or `null`/`undefined` for none (a decline).
pub struct JsWaitFor(pub Arc<Callback<Request, Option<Value>>>);

impl WaitFor for JsWaitFor {
    fn wait_for(&self, request: engine::Request) -> HookFuture<Option<engine::Answer>> {
        let f = self.0.clone();
        Box::pin(async move {
            match call(&f, Request::from(request)).await? {
                None | Some(Value::Null) => Ok(None),
                Some(v) => engine::Answer::from_json(&v).map(Some),
            }
        })
    }
}

// ---- onError ------------------------------------------------------------------------------

/// One failed model call, as `onError` sees it.
#[napi(object, object_from_js = false)]
pub struct ErrorInfoEvent {
    /// The HTTP status, when the provider answered.
    pub status: Option<u32>,
    /// The network error's message, when it did not.
    pub error: Option<String>,
    /// Zero-based attempt index.
    pub attempt: u32,
    /// Whether the default policy would retry it.
    pub retryable: bool,
}

/// `onError(info)`: `"retry"` or `"fail"`; `undefined` keeps the default decision.
pub struct JsOnError(pub Arc<Callback<ErrorInfoEvent, Option<String>>>);

impl OnError for JsOnError {
    fn classify(&self, info: ErrorInfo) -> HookFuture<Tier> {
        let f = self.0.clone();
        let ev = ErrorInfoEvent {
            status: info.status.map(u32::from),
            error: info.error,
            attempt: info.attempt,
            retryable: info.retryable,
        };
        // `undefined` keeps the default, as in the JS port.
        Box::pin(async move { Tier::from_answer(call(&f, ev).await?.as_deref()) })
    }
}

// ---- bodyTransform -----------------------------------------------------------------------

/// `bodyTransform(body)`: the body to send, or `undefined` to send it unchanged.
pub struct JsBodyTransform(pub Arc<Callback<Json, Option<Json>>>);

impl BodyTransform for JsBodyTransform {
    fn transform(&self, body: Value) -> HookFuture<Option<Value>> {
        let f = self.0.clone();
        Box::pin(async move { Ok(call(&f, Json(body)).await?.map(|j| j.0)) })
    }
}

// ---- generate ---------------------------------------------------------------------------

/// `createInProcessClient`'s `generate(request)`: one assistant message (or a Promise of one).
pub struct JsGenerate(pub Arc<Callback<Json, Json>>);

impl engine::InProcessModel for JsGenerate {
    fn generate(&self, request: Value) -> HookFuture<Value> {
        let f = self.0.clone();
        Box::pin(async move { Ok(call(&f, Json(request)).await?.0) })
    }
}

// ---- hooks --------------------------------------------------------------------------------

/// A hook: takes its event, answers an override object or nothing.
type HookFn = Arc<Callback<Json, Option<Json>>>;

/// The host's `hooks` object; only the methods it has are called. The engine's
/// `JsonHooksAdapter` makes it the loop's `Hooks`: the engine decides the events' fields and
/// how an answer overrides; this side only converts a ToolResult between the engine's JSON
/// (`is_error`) and the JS port's (`isError`). Events cross as JSON text (transcripts are big).
pub struct JsHooks(HookTable<HookFn>);

impl JsHooks {
    /// Reads `beforeLLM`, `afterLLM`, `beforeTool`, `afterTool` off `obj`. Must run on the JS thread.
    pub fn from_object(obj: &Object<'_>) -> napi::Result<JsHooks> {
        let table = HookTable::build(|hook| {
            let name = match hook {
                HookName::BeforeLlm => "beforeLLM",
                HookName::AfterLlm => "afterLLM",
                HookName::BeforeTool => "beforeTool",
                HookName::AfterTool => "afterTool",
            };
            method::<Json, MaybePromise<Option<Json>>>(obj, name)?.map(callback).transpose()
        })?;
        Ok(JsHooks(table))
    }
}

/// An engine ToolResult (`{output, is_error, metadata?}`) in the JS port's shape, in place.
fn result_to_js(v: &mut Value) {
    if let Some(m) = v.as_object_mut() {
        if let Some(e) = m.remove("is_error") {
            m.insert("isError".to_string(), e);
        }
    }
}

/// A JS ToolResult (`{output, isError?, metadata?}`, as a tool may return it) as the engine's
/// JSON, in place.
fn result_from_js(v: &mut Value) -> engine::Result<()> {
    let r = tool_result_from_json(v)?;
    *v = serde_json::to_value(r).map_err(|e| invalid(e.to_string()))?;
    Ok(())
}

impl JsonHooks for JsHooks {
    fn enabled(&self) -> HookSet {
        self.0.enabled()
    }

    fn call(&self, hook: HookName, mut event: Value) -> HookFuture<Value> {
        let f = self.0.get(hook).cloned();
        Box::pin(async move {
            let Some(f) = f else { return Ok(Value::Null) };
            if let Some(r) = event.get_mut("result") {
                result_to_js(r);
            }
            let mut answer = call(&f, Json(event)).await?.map_or(Value::Null, |j| j.0);
            if matches!(hook, HookName::BeforeTool | HookName::AfterTool) {
                if let Some(r) = answer.get_mut("result").filter(|r| !r.is_null()) {
                    result_from_js(r)?;
                }
            }
            Ok(answer)
        })
    }
}
