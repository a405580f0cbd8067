//! Calling a JS function from the engine's threads. Every host callback (a tool's `run` or
//! `execute`, `waitFor`, a hook, `onError`, `bodyTransform`, `fetch`) sits behind a weak
//! `ThreadsafeFunction`; its answer, a value or a Promise of one, is read on the JS thread.
//!
//! A returned Promise is awaited through handlers of our own rather than napi's `Promise`, so
//! that the run it belongs to counts as waiting on the host while it is pending (see
//! `keepalive.rs`), and so that a promise garbage-collected unsettled waits for ever (as the
//! JS port's `await` on it would) instead of failing the call. A throw or a rejection becomes a
//! napi error holding the very JS value, whose reason is what the JS port shows for it: an
//! Error's `message`, or `String(value)`.

use std::sync::Arc;

use napi::bindgen_prelude::{
    FromNapiValue, Function, JsObjectValue, JsValuesTupleIntoVec, Object, ToNapiValue, Unknown,
};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{sys, Env, JsValue, Status};
use tokio::sync::oneshot;

use crate::awaiter::{Settle, Settled};
use crate::keepalive;

/// A JS callback taking `T` and answering `R` or `Promise<R>`; weak (unref'd).
pub type Callback<T, R> = ThreadsafeFunction<T, MaybePromise<R>, T, Status, false, true>;

/// What a callback returned, read on the JS thread: its value, or a Promise of it (a value of
/// the call's own handle scope, awaited before the scope ends).
pub enum MaybePromise<R: 'static + FromNapiValue> {
    Now(R),
    Later(sys::napi_value),
}

impl<R: 'static + FromNapiValue> FromNapiValue for MaybePromise<R> {
    unsafe fn from_napi_value(env: sys::napi_env, v: sys::napi_value) -> napi::Result<Self> {
        let mut is_promise = false;
        // SAFETY: called by napi on the JS thread with a live value of `env`.
        napi::check_status!(unsafe { sys::napi_is_promise(env, v, &mut is_promise) })?;
        if is_promise {
            Ok(MaybePromise::Later(v))
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
    call_as(f, value, crate::error::host).await
}

/// [`call`] with the engine error a throw or a rejection becomes (`fetch`'s are `network`).
pub async fn call_as<T, R>(f: &Callback<T, R>, value: T, fail: fn(napi::Error) -> engine::Error) -> engine::Result<R>
where
    T: 'static + JsValuesTupleIntoVec,
    R: 'static + FromNapiValue + Send,
{
    let run = keepalive::current();
    let (tx, rx) = oneshot::channel::<napi::Result<R>>();
    let status = f.call_with_return_value(value, ThreadsafeFunctionCallMode::NonBlocking, move |answer, env| {
        match answer {
            Ok(MaybePromise::Now(v)) => {
                let _ = tx.send(Ok(v));
            }
            Ok(MaybePromise::Later(promise)) => await_promise(&env, promise, run, tx),
            Err(e) if e.status == Status::PendingException => {
                // SAFETY: on the JS thread; napi hands back the value the callback threw.
                let answer = match unsafe { napi::Error::to_napi_value(env.raw(), e) } {
                    Ok(v) => thrown(&env, unsafe { Unknown::from_raw_unchecked(env.raw(), v) }),
                    Err(e) => e,
                };
                let _ = tx.send(Err(answer));
            }
            Err(e) => {
                let _ = tx.send(Err(e));
            }
        }
        Ok(())
    });
    if status != Status::Ok {
        return Err(fail(napi::Error::new(status, "the JS environment is closing")));
    }
    match rx.await {
        Ok(answer) => answer.map_err(fail),
        // Nothing can answer any more: the callback's Promise was garbage-collected unsettled,
        // or the environment closed. The call waits for ever, as an `await` on it would in JS.
        Err(_) => std::future::pending().await,
    }
}

/// Sends the settlement of `promise` (a callback's answer) to `tx`, counting `run` as waiting
/// on the host meanwhile. Never throws: it runs inside napi's callback of the call.
fn await_promise<R>(env: &Env, promise: sys::napi_value, run: Option<u64>, tx: oneshot::Sender<napi::Result<R>>)
where
    R: 'static + FromNapiValue,
{
    let settle: Settle = Box::new(move |env, settled| {
        let answer = match settled {
            Settled::Fulfilled(v) => {
                keepalive::resumed(env, run);
                // SAFETY: a live value of the settling call's scope, on the JS thread.
                unsafe { R::from_napi_value(env.raw(), v) }.map_err(|e| take_exception(env.raw(), e))
            }
            Settled::Rejected(v) => {
                keepalive::resumed(env, run);
                // SAFETY: as above.
                Err(thrown(env, unsafe { Unknown::from_raw_unchecked(env.raw(), v) }))
            }
            Settled::Unawaitable(e) => Err(take_exception(env.raw(), e)),
        };
        let _ = tx.send(answer);
    });
    if crate::awaiter::attach(env, promise, settle) {
        keepalive::waiting(env, run);
    }
}

/// A thrown or rejected JS value as a napi error that holds it (the engine hands it back to JS
/// unchanged). Its reason, which a tool's error result shows, is what the JS port shows: the
/// `message` of an Error, `String(value)` of anything else.
pub fn thrown(env: &Env, value: Unknown<'_>) -> napi::Error {
    let mut e = napi::Error::from_unknown_without_coercion(value);
    match shown(env, value) {
        Ok(text) => e.reason = text,
        // A `message` getter or a `toString` that throws: keep napi's reading of the value.
        Err(err) => drop(take_exception(env.raw(), err)),
    }
    e
}

/// `value instanceof Error ? String(value.message) : String(value)`.
fn shown(env: &Env, value: Unknown<'_>) -> napi::Result<String> {
    let mut is_error = false;
    // SAFETY: a live value of `env`, on its JS thread.
    napi::check_status!(unsafe { sys::napi_is_error(env.raw(), value.raw(), &mut is_error) })?;
    let shown = if is_error { Object::from_raw(env.raw(), value.raw()).get_named_property("message")? } else { value };
    let string: Function<Unknown, String> = env.get_global()?.get_named_property("String")?;
    apply_caught(&string, (), shown)
}

/// `f.apply(this, args)` where a JS throw becomes an `Err` holding the thrown value and
/// leaves no exception pending (napi would later report a pending one as uncaught).
pub fn apply_caught<T, R, This>(f: &Function<'_, T, R>, this: This, args: T) -> napi::Result<R>
where
    T: JsValuesTupleIntoVec,
    R: FromNapiValue,
    This: ToNapiValue,
{
    let env = f.value().env;
    f.apply(this, args).map_err(|e| take_exception(env, e))
}

/// `e`, or the JS exception pending on `env` (then cleared) when there is one.
pub(crate) fn take_exception(env: sys::napi_env, e: napi::Error) -> napi::Error {
    let mut pending = false;
    // SAFETY: `env` is a live env, on its JS thread.
    unsafe { sys::napi_is_exception_pending(env, &mut pending) };
    if !pending {
        return e;
    }
    let mut thrown = std::ptr::null_mut();
    unsafe { sys::napi_get_and_clear_last_exception(env, &mut thrown) };
    napi::Error::from_unknown_without_coercion(unsafe { Unknown::from_raw_unchecked(env, thrown) })
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
