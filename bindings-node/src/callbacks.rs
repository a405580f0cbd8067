//! Host callbacks as engine traits: `waitFor`, `onError`, `bodyTransform` and the four
//! lifecycle hooks, each a JS function behind a weak `ThreadsafeFunction` (it never keeps the
//! process alive). A callback may return its value or a Promise of it; a throw or a rejection
//! travels through the engine as the host's own error object (see `error.rs`).

use std::sync::Arc;

use engine::{BodyTransform, ErrorInfo, HookFuture, HookName, HookSet, JsonHooks, OnError, Tier, WaitFor};
use napi::bindgen_prelude::JsValuesTupleIntoVec;
use napi::bindgen_prelude::{FromNapiValue, Function, Object, Promise, Unknown};
use napi::threadsafe_function::ThreadsafeFunction;
use napi::JsValue;
use napi::{sys, Status};
use napi_derive::napi;
use serde_json::Value;

use crate::convert::{tool_result_from_json, Json, Request};
use crate::error::{host, invalid};

/// A JS callback taking `T` and answering `R` or `Promise<R>`; weak (unref'd).
pub type Callback<T, R> = ThreadsafeFunction<T, MaybePromise<R>, T, Status, false, true>;

/// What a callback returned: its value, or a Promise of it (read on the JS thread).
pub enum MaybePromise<R: 'static + FromNapiValue> {
    Now(R),
    Later(Promise<R>),
}

impl<R: 'static + FromNapiValue + Send> FromNapiValue for MaybePromise<R> {
    unsafe fn from_napi_value(env: sys::napi_env, v: sys::napi_value) -> napi::Result<Self> {
        let mut is_promise = false;
        // SAFETY: called by napi on the JS thread with a live value of `env`.
        napi::check_status!(unsafe { sys::napi_is_promise(env, v, &mut is_promise) })?;
        if is_promise {
            Ok(MaybePromise::Later(unsafe { Promise::from_napi_value(env, v)? }))
        } else {
            Ok(MaybePromise::Now(unsafe { R::from_napi_value(env, v)? }))
        }
    }
}

/// Wraps a JS function as a [`Callback`]. Must run on the JS thread.
pub fn callback<T, R>(f: Function<'_, T, MaybePromise<R>>) -> napi::Result<Arc<Callback<T, R>>>
where
    T: 'static + JsValuesTupleIntoVec,
    R: 'static + FromNapiValue + Send,
{
    Ok(Arc::new(f.build_threadsafe_function::<T>().weak::<true>().callee_handled::<false>().build()?))
}

/// Calls `f` with `value` and waits for its answer (awaiting a returned Promise); a throw or
/// a rejection is a `host` error carrying the JS value.
pub async fn call<T, R>(f: &Callback<T, R>, value: T) -> engine::Result<R>
where
    T: 'static + JsValuesTupleIntoVec,
    R: 'static + FromNapiValue + Send,
{
    call_as(f, value, host).await
}

/// [`call`] with the engine error a throw or a rejection becomes (`fetch`'s are `network`).
pub async fn call_as<T, R>(f: &Callback<T, R>, value: T, fail: fn(napi::Error) -> engine::Error) -> engine::Result<R>
where
    T: 'static + JsValuesTupleIntoVec,
    R: 'static + FromNapiValue + Send,
{
    match f.call_async_catch(value).await.map_err(fail)? {
        MaybePromise::Later(promise) => promise.await.map_err(fail),
        MaybePromise::Now(v) => Ok(v),
    }
}

/// `f.apply(this, args)` where a JS throw becomes an `Err` holding the thrown value and
/// leaves no exception pending (napi would later report a pending one as uncaught).
pub fn apply_caught<T, R, This>(f: &Function<'_, T, R>, this: This, args: T) -> napi::Result<R>
where
    T: JsValuesTupleIntoVec,
    R: FromNapiValue,
    This: napi::bindgen_prelude::ToNapiValue,
{
    let env = f.value().env;
    f.apply(this, args).map_err(|e| {
        let mut pending = false;
        // SAFETY: `env` is the live env of `f`, on its JS thread.
        unsafe { sys::napi_is_exception_pending(env, &mut pending) };
        if !pending {
            return e;
        }
        let mut thrown = std::ptr::null_mut();
        unsafe { sys::napi_get_and_clear_last_exception(env, &mut thrown) };
        napi::Error::from_unknown_without_coercion(unsafe { Unknown::from_raw_unchecked(env, thrown) })
    })
}

/// Reads `obj[name]` as a function bound to `obj` (so a class instance's methods keep `this`).
pub fn method<'e, T, R>(obj: &Object<'e>, name: &str) -> napi::Result<Option<Function<'e, T, R>>>
where
    T: 'static + JsValuesTupleIntoVec,
    R: FromNapiValue,
{
    let Some(f) = obj.get::<Unknown>(name)? else { return Ok(None) };
    if f.get_type()? != napi::ValueType::Function {
        return Ok(None);
    }
    let env = f.value().env;
    let f: Function<'e, T, R> = unsafe { Function::from_napi_value(env, f.raw())? };
    let bound = f.bind(obj)?;
    Ok(Some(unsafe { Function::from_napi_value(env, bound.raw())? }))
}

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
        let default = if info.retryable { Tier::Retry } else { Tier::Fail };
        let ev = ErrorInfoEvent {
            status: info.status.map(u32::from),
            error: info.error,
            attempt: info.attempt,
            retryable: info.retryable,
        };
        Box::pin(async move {
            match call(&f, ev).await?.as_deref() {
                None => Ok(default),
                Some("retry") => Ok(Tier::Retry),
                Some("fail") => Ok(Tier::Fail),
                Some(other) => Err(invalid(format!("onError must return \"retry\" or \"fail\", got {other:?}"))),
            }
        })
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

// ---- hooks --------------------------------------------------------------------------------

/// A hook: takes its event, answers an override object or nothing.
type HookFn = Option<Arc<Callback<Json, Option<Json>>>>;

/// The host's `hooks` object; only the methods it has are called. The engine's
/// `JsonHooksAdapter` makes it the loop's `Hooks`: the engine decides the events' fields and
/// how an answer overrides; this side only converts a ToolResult between the engine's JSON
/// (`is_error`) and the JS port's (`isError`). Events cross as JSON text (transcripts are big).
pub struct JsHooks {
    before_llm: HookFn,
    after_llm: HookFn,
    before_tool: HookFn,
    after_tool: HookFn,
}

impl JsHooks {
    /// Reads `beforeLLM`, `afterLLM`, `beforeTool`, `afterTool` off `obj`. Must run on the JS thread.
    pub fn from_object(obj: &Object<'_>) -> napi::Result<JsHooks> {
        fn get(obj: &Object<'_>, name: &str) -> napi::Result<HookFn> {
            method::<Json, MaybePromise<Option<Json>>>(obj, name)?.map(callback).transpose()
        }
        Ok(JsHooks {
            before_llm: get(obj, "beforeLLM")?,
            after_llm: get(obj, "afterLLM")?,
            before_tool: get(obj, "beforeTool")?,
            after_tool: get(obj, "afterTool")?,
        })
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
        HookSet {
            before_llm: self.before_llm.is_some(),
            after_llm: self.after_llm.is_some(),
            before_tool: self.before_tool.is_some(),
            after_tool: self.after_tool.is_some(),
        }
    }

    fn call(&self, hook: HookName, mut event: Value) -> HookFuture<Value> {
        let f = match hook {
            HookName::BeforeLlm => &self.before_llm,
            HookName::AfterLlm => &self.after_llm,
            HookName::BeforeTool => &self.before_tool,
            HookName::AfterTool => &self.after_tool,
        }
        .clone();
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
