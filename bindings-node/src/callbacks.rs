//! Host callbacks as engine traits: `waitFor`, `onError` and the four lifecycle hooks, each
//! a JS function behind a weak `ThreadsafeFunction` (it never keeps the process alive).
//! A callback may return its value or a Promise of it; a throw or a rejection travels through
//! the engine as the host's own error object (see `error.rs`).

use std::sync::Arc;

use engine::{
    AfterLlmEvent, AfterToolEvent, BeforeLlmEvent, BeforeToolEvent, BodyTransform, ErrorInfo, HookFuture, HookSet,
    Hooks, LlmOverride, OnError, Tier, ToolOverride, WaitFor,
};
use napi::bindgen_prelude::JsValuesTupleIntoVec;
use napi::bindgen_prelude::{FromNapiValue, Function, Object, Promise, Unknown};
use napi::threadsafe_function::ThreadsafeFunction;
use napi::JsValue;
use napi::{sys, Status};
use napi_derive::napi;
use serde_json::Value;

use crate::convert::{tool_result_from_json, Json, Request, ToolResult};
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

/// Calls `f` with `value` and waits for its answer (awaiting a returned Promise).
pub async fn call<T, R>(f: &Callback<T, R>, value: T) -> engine::Result<R>
where
    T: 'static + JsValuesTupleIntoVec,
    R: 'static + FromNapiValue + Send,
{
    match f.call_async_catch(value).await.map_err(host)? {
        MaybePromise::Later(promise) => promise.await.map_err(host),
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

/// Passed to `hooks.beforeLLM`.
#[napi(object, object_from_js = false)]
pub struct BeforeLlmEv {
    #[napi(ts_type = "any[]")]
    pub messages: Json,
    #[napi(ts_type = "any[]")]
    pub tools: Vec<Value>,
    pub model: String,
    pub turn: u32,
}

/// Passed to `hooks.afterLLM`.
#[napi(object, object_from_js = false)]
pub struct AfterLlmEv {
    pub response: Value,
    pub model: String,
    pub turn: u32,
}

/// Passed to `hooks.beforeTool`.
#[napi(object, object_from_js = false)]
pub struct BeforeToolEv {
    pub name: String,
    #[napi(ts_type = "Record<string, unknown>")]
    pub args: Value,
    /// The provider's tool-call id.
    pub id: String,
    pub turn: u32,
}

/// Passed to `hooks.afterTool`.
#[napi(object, object_from_js = false)]
pub struct AfterToolEv {
    pub name: String,
    #[napi(ts_type = "Record<string, unknown>")]
    pub args: Value,
    pub result: ToolResult,
    pub id: String,
    pub turn: u32,
}

type HookFn<E> = Option<Arc<Callback<E, Option<Value>>>>;

/// The host's `hooks` object; only the methods it has are called.
pub struct JsHooks {
    pub before_llm: HookFn<BeforeLlmEv>,
    pub after_llm: HookFn<AfterLlmEv>,
    pub before_tool: HookFn<BeforeToolEv>,
    pub after_tool: HookFn<AfterToolEv>,
}

impl JsHooks {
    /// Reads `beforeLLM`, `afterLLM`, `beforeTool`, `afterTool` off `obj`. Must run on the JS thread.
    pub fn from_object(obj: &Object<'_>) -> napi::Result<JsHooks> {
        fn get<E: 'static + JsValuesTupleIntoVec>(obj: &Object<'_>, name: &str) -> napi::Result<HookFn<E>> {
            method::<E, MaybePromise<Option<Value>>>(obj, name)?.map(callback).transpose()
        }
        Ok(JsHooks {
            before_llm: get(obj, "beforeLLM")?,
            after_llm: get(obj, "afterLLM")?,
            before_tool: get(obj, "beforeTool")?,
            after_tool: get(obj, "afterTool")?,
        })
    }
}

/// A hook's answer as an object (`undefined`/`null` = no change).
fn answer_object(v: Option<Value>, hook: &str) -> engine::Result<Option<serde_json::Map<String, Value>>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(_) => Err(invalid(format!("{hook} must return an object or nothing"))),
    }
}

fn array_field(m: &mut serde_json::Map<String, Value>, key: &str, hook: &str) -> engine::Result<Option<Vec<Value>>> {
    match m.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => Ok(Some(a)),
        Some(_) => Err(invalid(format!("{hook}: \"{key}\" must be an array"))),
    }
}

impl Hooks for JsHooks {
    fn enabled(&self) -> HookSet {
        HookSet {
            before_llm: self.before_llm.is_some(),
            after_llm: self.after_llm.is_some(),
            before_tool: self.before_tool.is_some(),
            after_tool: self.after_tool.is_some(),
        }
    }

    fn before_llm(&self, ev: BeforeLlmEvent) -> HookFuture<Option<LlmOverride>> {
        let Some(f) = self.before_llm.clone() else { return Box::pin(std::future::ready(Ok(None))) };
        let ev =
            BeforeLlmEv { messages: Json(Value::Array(ev.messages)), tools: ev.tools, model: ev.model, turn: ev.turn };
        Box::pin(async move {
            let Some(mut m) = answer_object(call(&f, ev).await?, "beforeLLM")? else { return Ok(None) };
            let model = match m.remove("model") {
                Some(Value::String(s)) => Some(s),
                None | Some(Value::Null) => None,
                Some(_) => return Err(invalid("beforeLLM: \"model\" must be a string")),
            };
            Ok(Some(LlmOverride {
                messages: array_field(&mut m, "messages", "beforeLLM")?,
                tools: array_field(&mut m, "tools", "beforeLLM")?,
                model,
            }))
        })
    }

    fn after_llm(&self, ev: AfterLlmEvent) -> HookFuture<()> {
        let Some(f) = self.after_llm.clone() else { return Box::pin(std::future::ready(Ok(()))) };
        let ev = AfterLlmEv { response: ev.response, model: ev.model, turn: ev.turn };
        Box::pin(async move { call(&f, ev).await.map(|_| ()) })
    }

    fn before_tool(&self, ev: BeforeToolEvent) -> HookFuture<Option<ToolOverride>> {
        let Some(f) = self.before_tool.clone() else { return Box::pin(std::future::ready(Ok(None))) };
        let ev = BeforeToolEv { name: ev.name, args: ev.args, id: ev.id, turn: ev.turn };
        Box::pin(async move {
            let Some(mut m) = answer_object(call(&f, ev).await?, "beforeTool")? else { return Ok(None) };
            let result = match m.remove("result") {
                None | Some(Value::Null) => None,
                Some(v) => Some(tool_result_from_json(&v)?),
            };
            let args = match m.remove("args") {
                None | Some(Value::Null) => None,
                Some(v @ Value::Object(_)) => Some(v),
                Some(_) => return Err(invalid("beforeTool: \"args\" must be an object")),
            };
            Ok(Some(ToolOverride { result, args }))
        })
    }

    fn after_tool(&self, ev: AfterToolEvent) -> HookFuture<Option<engine::ToolResult>> {
        let Some(f) = self.after_tool.clone() else { return Box::pin(std::future::ready(Ok(None))) };
        let ev = AfterToolEv { name: ev.name, args: ev.args, result: ev.result.into(), id: ev.id, turn: ev.turn };
        Box::pin(async move {
            let Some(mut m) = answer_object(call(&f, ev).await?, "afterTool")? else { return Ok(None) };
            match m.remove("result") {
                None | Some(Value::Null) => Ok(None),
                Some(v) => tool_result_from_json(&v).map(Some),
            }
        })
    }
}
