//! The JS functions `index.js` hands the addon once, through `__registerHelpers`, for work that
//! costs less done in JS than through napi: awaiting a promise (`awaiter.rs`), V8's JSON codec
//! (`convert.rs`), giving a run's result its `messages` (`convert.rs`, `lazy.rs`), and a tool's
//! `(args, ctx)` (`tool.rs`). Each is held by a reference, so a call costs one
//! `napi_call_function` instead of the global lookups and the functions napi would make per
//! call (callgrind, the Node bench runner: a lazy `messages` defined through napi made its
//! getter and setter anew for every result).

use std::cell::Cell;
use std::ptr;

use napi::bindgen_prelude::{JsObjectValue, Object, Unknown};
use napi::{sys, Env, JsValue, ValueType};
use napi_derive::napi;

/// A helper, by its name in the object `index.js` registers (in the order of `NAMES`).
#[derive(Clone, Copy)]
pub enum Helper {
    /// `(promise, token)`: settles `token` through `__settle` when `promise` does.
    Await,
    /// `JSON.parse`.
    Parse,
    /// `JSON.stringify`.
    Stringify,
    /// `(text)`: the result `JSON.parse(text)` with the lazy `messages` of `lazy.rs`.
    LazyResult,
    /// `(text, history, kept)`: the result `JSON.parse(text)`, its `messages` following the
    /// first `kept` of the caller's `history`.
    GivenResult,
    /// `(argsText, callId, answer, timeout)`: a tool's `[args, ctx]`, `answer` and `timeout`
    /// left out of `ctx` when `undefined`.
    ToolCall,
}

const NAMES: [&str; 6] = ["await", "parse", "stringify", "lazyResult", "givenResult", "toolCall"];

type Table = (sys::napi_env, [sys::napi_ref; NAMES.len()]);

thread_local! {
    /// The helpers of this thread's JS environment (a worker has its own) and that environment.
    static HELPERS: Cell<Option<Table>> = const { Cell::new(None) };
}

/// Receives the helpers from `index.js`: an object with a function under every name of
/// [`Helper`].
#[napi(js_name = "__registerHelpers", skip_typescript)]
pub fn register_helpers(env: Env, helpers: Object<'_>) -> napi::Result<()> {
    let mut functions = [ptr::null_mut(); NAMES.len()];
    for (slot, name) in functions.iter_mut().zip(NAMES) {
        let f: Unknown = helpers.get_named_property(name)?;
        if f.get_type()? != ValueType::Function {
            return Err(napi::Error::from_reason(format!("toolnexus: helper `{name}` is not a function")));
        }
        *slot = f.raw();
    }
    let mut refs = [ptr::null_mut(); NAMES.len()];
    for (r, f) in refs.iter_mut().zip(functions) {
        // SAFETY: on the JS thread with a live function of `env`.
        napi::check_status!(unsafe { sys::napi_create_reference(env.raw(), f, 1, r) })?;
    }
    // A registration replacing an earlier one of the same environment (the entry loaded twice)
    // releases that one.
    if let Some((was_env, was)) = HELPERS.with(|h| h.replace(Some((env.raw(), refs)))) {
        if was_env == env.raw() {
            for r in was {
                // SAFETY: a reference this environment made, released once.
                unsafe { sys::napi_delete_reference(env.raw(), r) };
            }
        }
    }
    Ok(())
}

/// `helper(...args)` on the JS thread of `env`; a throw becomes an `Err` and leaves no
/// exception pending.
pub fn call(env: sys::napi_env, helper: Helper, args: &[sys::napi_value]) -> napi::Result<sys::napi_value> {
    let table = HELPERS.with(Cell::get).filter(|(e, _)| *e == env);
    let Some((_, refs)) = table else {
        return Err(napi::Error::from_reason("toolnexus: the package entry (index.js) registered no helpers"));
    };
    let (mut f, mut undefined, mut out) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
    // SAFETY: on the JS thread with live values of `env`; the reference is this env's.
    unsafe {
        napi::check_status!(sys::napi_get_reference_value(env, refs[helper as usize], &mut f))?;
        napi::check_status!(sys::napi_get_undefined(env, &mut undefined))?;
        let status = sys::napi_call_function(env, undefined, f, args.len(), args.as_ptr(), &mut out);
        napi::check_status!(status).map_err(|e| crate::call::take_exception(env, e))?;
    }
    Ok(out)
}
