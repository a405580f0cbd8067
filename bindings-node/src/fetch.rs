//! The `fetch` option: the LLM requests go through a fetch-compatible host function
//! (`fetch(url, {method, headers, body, signal})` answering a `Response`), as in the JS port.
//! It is the engine's `Transport`: any HTTP status is an answer (the engine retries and maps
//! it). A throw or a rejection, of `fetch` or of reading the body, is a network failure that
//! carries the host's own error: the engine retries it like any network error, and once the
//! retries are spent the run rejects with that very object. A `fetch` that answers something
//! that is not a Response is a host bug, not retried.

use std::sync::Arc;

use bytes::Bytes;
use engine::{ErrorKind, HttpRequest, HttpResponse, Transport};
use futures_util::future::BoxFuture;
use napi::bindgen_prelude::{FromNapiValue, Function, JsObjectValue, JsValuesTupleIntoVec, Object, Promise, Unknown};
use napi::{sys, Env, JsValue, ValueType};

use crate::callbacks::{apply_caught, call_as, Callback, MaybePromise};
use crate::error::{host, network};

/// One POST, converted to `(url, init)` on the JS thread.
pub struct FetchCall(HttpRequest);

impl JsValuesTupleIntoVec for FetchCall {
    fn into_vec(self, raw: sys::napi_env) -> napi::Result<Vec<sys::napi_value>> {
        let env = Env::from_raw(raw);
        let req = self.0;
        let mut headers = Object::new(&env)?;
        for (k, v) in &req.headers {
            headers.set(k.as_str(), v.as_str())?;
        }
        let mut init = Object::new(&env)?;
        init.set("method", "POST")?;
        init.set("headers", headers)?;
        init.set("body", String::from_utf8_lossy(&req.body).as_ref())?;
        // The per-request deadline, as fetch expects it (AbortSignal.timeout's timer is unref'd).
        // A failure here must not throw: napi would report it as an uncaught exception.
        if let Ok(signal) = timeout_signal(&env, req.timeout.as_millis() as f64) {
            init.set("signal", signal)?;
        }
        let url = env.create_string(&req.url)?;
        Ok(vec![url.raw(), init.raw()])
    }
}

/// `AbortSignal.timeout(ms)`.
fn timeout_signal(env: &Env, ms: f64) -> napi::Result<Unknown<'_>> {
    let class: Function<Unknown, Unknown> = env.get_global()?.get_named_property("AbortSignal")?;
    let timeout: Function<f64, Unknown> = class.get_named_property("timeout")?;
    timeout.apply(class, ms)
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
pub struct JsFetch(pub Arc<Callback<FetchCall, FetchReply>>);

impl JsFetch {
    /// Wraps the host's fetch. Must run on the JS thread.
    pub fn new(f: Function<'_, FetchCall, MaybePromise<FetchReply>>) -> napi::Result<JsFetch> {
        Ok(JsFetch(crate::callbacks::callback(f)?))
    }
}

impl Transport for JsFetch {
    fn post(&self, request: HttpRequest) -> BoxFuture<'static, engine::Result<HttpResponse>> {
        let f = self.0.clone();
        Box::pin(async move {
            let reply = call_as(&f, FetchCall(request), network).await?.0?;
            let body = reply.body.await.map_err(network)?;
            let headers = reply.retry_after.map(|v| vec![("retry-after".to_string(), v)]).unwrap_or_default();
            Ok(HttpResponse { status: reply.status, headers, body: Bytes::from(body) })
        })
    }
}
