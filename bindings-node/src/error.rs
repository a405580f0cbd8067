//! Errors, mapped once. Every engine failure becomes an instance of one of the JS classes in
//! `errors.js` (a `ToolnexusError` subclass per kind, `code` = the engine's stable kind name);
//! a failure that started as a JS throw or rejection in a host callback is handed back to JS
//! as the very object the host threw, whatever its kind (`host`, or `network` for `fetch`).
//!
//! The classes live in JS (so `instanceof` and subclassing work as JS users expect) and are
//! handed to the addon once, by `index.js`, through `__registerErrorClasses`.

use std::cell::RefCell;
use std::fmt;

use engine::{ErrorKind, HttpErrorDetail};
use napi::bindgen_prelude::{Function, JsObjectValue, Object, ObjectRef, Unknown};
use napi::{Env, JsValue, Status};
use napi_derive::napi;

thread_local! {
    /// The error classes of this thread's JS environment (a worker has its own).
    static CLASSES: RefCell<Option<ObjectRef<false>>> = const { RefCell::new(None) };
}

/// Receives the error classes from `index.js` (`{ToolnexusError, HttpError, ...}`).
#[napi(js_name = "__registerErrorClasses", skip_typescript)]
pub fn register_error_classes(classes: Object) -> napi::Result<()> {
    let r = classes.create_ref::<false>()?;
    CLASSES.with(|c| *c.borrow_mut() = Some(r));
    Ok(())
}

/// The JS class of each engine error kind. Exhaustive: a new kind is a compile error here
/// until it is given a class.
fn class_of(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidArgument => "InvalidArgumentError",
        ErrorKind::Config => "ConfigError",
        ErrorKind::Http => "HttpError",
        ErrorKind::Network => "NetworkError",
        ErrorKind::Timeout => "TimeoutError",
        ErrorKind::Cancelled => "AbortError",
        ErrorKind::Protocol => "ProtocolError",
        ErrorKind::AnswerMismatch => "AnswerMismatchError",
        ErrorKind::Host => "HostError",
        ErrorKind::Internal => "InternalError",
        ErrorKind::Reentrant => "ReentrantError",
        ErrorKind::Conflict => "ConflictError",
        ErrorKind::Store => "StoreError",
        ErrorKind::ContentPart => "ContentPartError",
        ErrorKind::UnsupportedPart => "UnsupportedPartError",
    }
}

/// A JS exception (thrown synchronously or a rejected promise) from a host callback,
/// carried through the engine as the source of an engine error (an [`ErrorKind::Host`] one,
/// or an [`ErrorKind::Network`] one for `fetch`). It holds a reference to the original JS
/// value, which napi hands back unchanged on the JS thread.
pub struct JsThrown(pub napi::Error);

impl fmt::Display for JsThrown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.reason)
    }
}

impl fmt::Debug for JsThrown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JsThrown({:?})", self.0.reason)
    }
}

impl std::error::Error for JsThrown {}

/// An engine error carrying a JS callback's failure.
pub fn host(e: napi::Error) -> engine::Error {
    engine::Error::host(Box::new(JsThrown(e)))
}

/// A network failure (retried by the engine's rules) carrying the JS error of a `fetch` that
/// threw or rejected; once the retries are spent the run rejects with that very object.
pub fn network(e: napi::Error) -> engine::Error {
    engine::Error::with_host_source(ErrorKind::Network, Box::new(JsThrown(e)))
}

/// An `invalid_argument` engine error.
pub fn invalid(message: impl Into<String>) -> engine::Error {
    engine::Error::invalid(message)
}

/// The JS error for an engine error. Must run on the JS thread. An error of any kind whose
/// source is a JS value the host threw is that value; otherwise a new instance of the kind's
/// class, with `cause` (the abort reason of a cancelled run) attached as its `cause`.
pub fn to_js(env: &Env, e: engine::Error, cause: Option<Unknown<'_>>) -> napi::Error {
    let kind = e.kind();
    let message = e.message().to_string();
    let http = e.http_detail().cloned();
    // Whatever the kind: `fetch`'s failures are `network` errors that carry the JS error.
    if let Some(source) = e.into_host_source() {
        if let Ok(thrown) = source.downcast::<JsThrown>() {
            return thrown.0;
        }
    }
    match build(env, kind, &message, http.as_ref(), cause) {
        Ok(obj) => napi::Error::from(obj),
        Err(err) => err,
    }
}

/// A `TypeError` whose `code` is `invalid_argument`: what the JS port's answer constructors
/// throw for a missing id or a non-string output, kept so code written against it still
/// catches them; the code matches every other bad argument's.
pub fn type_error(env: &Env, message: &str) -> napi::Error {
    let made = (|| {
        let ctor: Function<String, Unknown> = env.get_global()?.get_named_property("TypeError")?;
        let instance = ctor.new_instance(message.to_string())?;
        let mut obj = Object::from_raw(env.raw(), instance.raw());
        obj.set("code", ErrorKind::InvalidArgument.name())?;
        Ok::<_, napi::Error>(instance)
    })();
    match made {
        Ok(e) => napi::Error::from(e),
        Err(e) => e,
    }
}

/// An engine error thrown synchronously from a binding entry point.
pub fn throw(env: &Env, e: engine::Error) -> napi::Error {
    to_js(env, e, None)
}

/// A new instance of the kind's class with `code` (and the HTTP details for `http`).
fn build<'e>(
    env: &'e Env,
    kind: ErrorKind,
    message: &str,
    http: Option<&HttpErrorDetail>,
    cause: Option<Unknown<'_>>,
) -> napi::Result<Unknown<'e>> {
    let classes = CLASSES.with(|c| c.borrow().as_ref().map(|r| r.get_value(env)).transpose())?;
    let Some(classes) = classes else {
        return Err(napi::Error::new(Status::GenericFailure, format!("{}: {message}", kind.name())));
    };
    let ctor = match classes.get::<Function<String, Unknown>>(class_of(kind))? {
        Some(c) => c,
        None => classes
            .get::<Function<String, Unknown>>("ToolnexusError")?
            .ok_or_else(|| napi::Error::new(Status::GenericFailure, "toolnexus error classes missing"))?,
    };
    let instance = ctor.new_instance(message.to_string())?;
    let mut obj = Object::from_raw(env.raw(), instance.raw());
    obj.set("code", kind.name())?;
    if let Some(d) = http {
        obj.set("status", d.status)?;
        obj.set("body", d.body.as_str())?;
        if let Some(ra) = &d.retry_after {
            obj.set("retryAfter", ra.as_str())?;
        }
    }
    if let Some(c) = cause {
        obj.set("cause", c)?;
    }
    Ok(instance)
}
