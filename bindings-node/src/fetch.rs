//! The `fetch` option: the LLM requests go through a fetch-compatible host function
//! (`fetch(url, {method, headers, body, signal})` answering a `Response`), as in the JS port.
//! It is the engine's `Transport`: any HTTP status is an answer (the engine retries and maps
//! it). A throw or a rejection, of `fetch` or of reading the body, is a network failure that
//! carries the host's own error: the engine retries it like any network error, and once the
//! retries are spent the run rejects with that very object. A `fetch` that answers something
//! that is not a Response is a host bug, not retried.
//!
//! The engine cancels a run (its signal, its `timeoutMs`) by dropping the run's future, this
//! transport's included; a host fetch would not notice and would keep its socket (and the
//! process) busy until the provider answered. So each request carries its own
//! AbortController, aborted when the request's future is dropped before it completed. The
//! request's own deadline is kept on the engine's clock, as the default transport keeps it: a
//! JS timer racing the run's `timeoutMs` would sometimes end the run with the host's abort
//! error instead of the run's `TimeoutError`.

use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use engine::{ErrorKind, HttpRequest, HttpResponse, Transport};
use futures_util::future::BoxFuture;
use napi::bindgen_prelude::{
    FromNapiValue, Function, FunctionCallContext, JsObjectValue, JsValuesTupleIntoVec, Object, ObjectRef, Promise,
    Unknown,
};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{sys, Env, JsValue, Status, ValueType};

use crate::call::{apply_caught, call_as, Callback, MaybePromise};
use crate::error::{host, network};

/// Where one request's AbortController stands. The controller is made on the JS thread when
/// `fetch` is called, which may come after the engine already dropped the request.
enum Slot {
    /// `fetch` has not been called yet.
    Waiting,
    /// `fetch` was called with this controller's signal.
    Armed(ObjectRef<false>),
    /// The request's future is gone: a late `fetch` call gets an aborted signal.
    Dropped,
}

type Shared = Arc<Mutex<Slot>>;

fn lock(slot: &Shared) -> MutexGuard<'_, Slot> {
    slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One POST, converted to `(url, init)` on the JS thread.
pub struct FetchCall {
    request: HttpRequest,
    slot: Shared,
}

impl JsValuesTupleIntoVec for FetchCall {
    fn into_vec(self, raw: sys::napi_env) -> napi::Result<Vec<sys::napi_value>> {
        let env = Env::from_raw(raw);
        let req = self.request;
        let mut headers = Object::new(&env)?;
        for (k, v) in &req.headers {
            headers.set(k.as_str(), v.as_str())?;
        }
        let mut init = Object::new(&env)?;
        init.set("method", "POST")?;
        init.set("headers", headers)?;
        init.set("body", String::from_utf8_lossy(&req.body).as_ref())?;
        // A failure here must not throw: napi would report it as an uncaught exception. The
        // worst case is a request that is not aborted when the run drops it.
        if let Ok(signal) = request_signal(&env, &self.slot) {
            init.set("signal", signal)?;
        }
        let url = env.create_string(&req.url)?;
        Ok(vec![url.raw(), init.raw()])
    }
}

/// The request's signal: aborted when the run drops the request before it completed.
fn request_signal<'e>(env: &'e Env, slot: &Shared) -> napi::Result<Unknown<'e>> {
    let controller = new_controller(env)?;
    let signal: Unknown = controller.get_named_property("signal")?;
    let mut slot = lock(slot);
    match *slot {
        Slot::Dropped => abort(&controller),
        _ => *slot = Slot::Armed(controller.create_ref()?),
    }
    Ok(signal)
}

fn new_controller<'e>(env: &'e Env) -> napi::Result<Object<'e>> {
    let class: Function<(), Unknown> = env.get_global()?.get_named_property("AbortController")?;
    let made = class.new_instance(())?;
    Ok(Object::from_raw(env.raw(), made.raw()))
}

/// `controller.abort()`; never throws (it runs where a throw would be an uncaught exception).
fn abort(controller: &Object<'_>) {
    if let Ok(f) = controller.get_named_property::<Function<(), Unknown>>("abort") {
        let _ = apply_caught(&f, *controller, ());
    }
}

/// A request's controller handed back to the JS thread once its future is gone: released,
/// and aborted first when the request had not completed.
pub struct Release {
    controller: ObjectRef<false>,
    abort: bool,
}

impl JsValuesTupleIntoVec for Release {
    fn into_vec(self, raw: sys::napi_env) -> napi::Result<Vec<sys::napi_value>> {
        let env = Env::from_raw(raw);
        let value = self.controller.get_value(&env);
        let _ = self.controller.unref(&env);
        // The handle scope of this call keeps the controller alive past `unref`.
        match value {
            Ok(c) if self.abort => Ok(vec![c.raw()]),
            _ => Ok(Vec::new()),
        }
    }
}

type Releaser = ThreadsafeFunction<Release, (), Release, Status, false, true>;

/// Owned by a request's future: on drop, releases (and, unless completed, aborts) the
/// controller the request's `fetch` got.
struct InFlight {
    slot: Shared,
    releaser: Arc<Releaser>,
    completed: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let previous = std::mem::replace(&mut *lock(&self.slot), Slot::Dropped);
        if let Slot::Armed(controller) = previous {
            let release = Release { controller, abort: !self.completed };
            // Closing (the environment is going away): nothing left to abort.
            let _ = self.releaser.call(release, ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

/// What `fetch` answered, read on the JS thread: a `Response` (its status, `Retry-After`, and
/// the promise of its text), or why it is not one. Reading never fails the callback itself, so
/// a bad answer is told apart from a throw or a rejection of `fetch` (a network failure).
pub struct FetchReply(engine::Result<Reply>);

struct Reply {
    status: u16,
    retry_after: Option<String>,
    body: Promise<String>,
}

impl FromNapiValue for FetchReply {
    unsafe fn from_napi_value(env: sys::napi_env, v: sys::napi_value) -> napi::Result<Self> {
        // SAFETY: called by napi on the JS thread with a live value of `env`.
        let unknown = unsafe { Unknown::from_raw_unchecked(env, v) };
        if !matches!(unknown.get_type(), Ok(ValueType::Object)) {
            let e = engine::Error::new(ErrorKind::Host, "fetch must answer a Response (or a Promise of one)");
            return Ok(FetchReply(Err(e)));
        }
        Ok(FetchReply(read_response(&Object::from_raw(env, v)).map_err(host)))
    }
}

fn read_response(obj: &Object<'_>) -> napi::Result<Reply> {
    let status: u32 = obj.get("status")?.unwrap_or(0);
    let retry_after = match obj.get::<Object>("headers")? {
        Some(h) => {
            let get: Function<&str, Option<String>> = h.get_named_property("get")?;
            apply_caught(&get, h, "retry-after")?
        }
        None => None,
    };
    let text: Function<(), Promise<String>> = obj.get_named_property("text")?;
    let body = apply_caught(&text, *obj, ())?;
    Ok(Reply { status: status.min(u32::from(u16::MAX)) as u16, retry_after, body })
}

/// The host's fetch as the engine's transport.
pub struct JsFetch {
    fetch: Arc<Callback<FetchCall, FetchReply>>,
    releaser: Arc<Releaser>,
}

impl JsFetch {
    /// Wraps the host's fetch. Must run on the JS thread.
    pub fn new(f: Function<'_, FetchCall, MaybePromise<FetchReply>>) -> napi::Result<JsFetch> {
        let env = Env::from_raw(f.value().env);
        let release =
            env.create_function_from_closure::<Release, (), _>("releaseFetch", |ctx: FunctionCallContext| {
                if ctx.length() > 0 {
                    if let Ok(controller) = ctx.get::<Object>(0) {
                        abort(&controller);
                    }
                }
                Ok(())
            })?;
        let releaser =
            release.build_threadsafe_function::<Release>().weak::<true>().callee_handled::<false>().build()?;
        Ok(JsFetch { fetch: crate::call::callback(f)?, releaser: Arc::new(releaser) })
    }
}

impl Transport for JsFetch {
    fn post(&self, request: HttpRequest) -> BoxFuture<'static, engine::Result<HttpResponse>> {
        let f = self.fetch.clone();
        let slot = Arc::new(Mutex::new(Slot::Waiting));
        let in_flight = InFlight { slot: slot.clone(), releaser: self.releaser.clone(), completed: false };
        Box::pin(async move {
            // Moved whole (not just the field this block writes), so that dropping the future
            // drops it.
            let mut in_flight = in_flight;
            let timeout = request.timeout;
            let exchange = async {
                match call_as(&f, FetchCall { request, slot }, network).await {
                    Ok(FetchReply(Ok(r))) => r.body.await.map(|b| (r.status, r.retry_after, b)).map_err(network),
                    Ok(FetchReply(Err(e))) => Err(e),
                    Err(e) => Err(e),
                }
            };
            let Ok(body) = tokio::time::timeout(timeout, exchange).await else {
                // Past its deadline: dropping `in_flight` aborts the host's fetch.
                let ms = timeout.as_millis();
                return Err(engine::Error::new(ErrorKind::Network, format!("request timed out after {ms} ms")));
            };
            // Settled either way: nothing left for an abort to stop.
            in_flight.completed = true;
            let (status, retry_after, body) = body?;
            let headers = retry_after.map(|v| vec![("retry-after".to_string(), v)]).unwrap_or_default();
            Ok(HttpResponse { status, headers, body: Bytes::from(body) })
        })
    }
}
