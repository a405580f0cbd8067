//! A property built on first access. A run's transcript can be hundreds of messages: turning
//! it into JS objects costs about 0.25 ms at 200 messages, which a caller that reads only
//! `text` should not pay. The property is an accessor until first read or write, then a plain
//! data property (enumerable, writable), so spreading, `JSON.stringify` and assignment behave
//! as on any object.
//!
//! The accessor is one getter and setter pair `index.js` defines for every result (its
//! `lazyResult` helper, `helpers.rs`), and the value waits in the object's native wrap, which
//! the object's collection frees. The getter asks `__takeHeld` for the value, converted, and
//! the setter has `__dropHeld` free it. Measured (callgrind, the Node bench runner's weather):
//! defining the accessor through `napi_define_properties` made its two functions anew for
//! every result, about 19.5k instructions.

use std::cell::RefCell;
use std::collections::HashSet;
use std::ffi::c_void;
use std::ptr;

use napi::bindgen_prelude::{ToNapiValue, Unknown};
use napi::{sys, Env, JsValue};
use napi_derive::napi;
use serde_json::Value;

use crate::convert::Json;

thread_local! {
    /// The values held on this thread: a wrap is read only when it is one of these (any other
    /// would be a class instance's, of this addon or another).
    static HELD: RefCell<HashSet<usize>> = RefCell::new(HashSet::new());
}

/// A JS value already made, handed back as is.
pub struct Raw(pub sys::napi_value);

impl ToNapiValue for Raw {
    unsafe fn to_napi_value(_: sys::napi_env, v: Self) -> napi::Result<sys::napi_value> {
        Ok(v.0)
    }
}

impl napi::bindgen_prelude::TypeName for Raw {
    fn type_name() -> &'static str {
        "unknown"
    }

    fn value_type() -> napi::ValueType {
        napi::ValueType::Unknown
    }
}

/// Puts `value` in the wrap of `obj`, for `__takeHeld`. `obj` must not be wrapped already (a
/// fresh result).
pub fn hold(env: &Env, obj: sys::napi_value, value: Value) -> napi::Result<()> {
    let boxed = Box::into_raw(Box::new(value));
    // SAFETY: on the JS thread with a live `obj`. From here the wrap owns `boxed`; if wrapping
    // fails, nothing else holds the box and it is freed here.
    unsafe {
        let status = sys::napi_wrap(env.raw(), obj, boxed.cast(), Some(free_value), ptr::null_mut(), ptr::null_mut());
        if status != sys::Status::napi_ok {
            drop(Box::from_raw(boxed));
            return napi::check_status!(status);
        }
    }
    HELD.with(|h| h.borrow_mut().insert(boxed as usize));
    Ok(())
}

unsafe extern "C" fn free_value(_: sys::napi_env, data: *mut c_void, _: *mut c_void) {
    // A finalizer run as the thread ends may find its locals gone: the value is freed anyway.
    let _ = HELD.try_with(|h| h.borrow_mut().remove(&(data as usize)));
    // SAFETY: `data` is the box `hold` wrapped; the wrap's finalizer runs once, and never
    // after `take_wrapped` removed the wrap.
    drop(unsafe { Box::from_raw(data.cast::<Value>()) });
}

/// The value waiting in `obj`'s wrap, taken out of it; `None` when `obj` holds none.
unsafe fn take_wrapped(env: sys::napi_env, obj: sys::napi_value) -> Option<Value> {
    let mut data = ptr::null_mut();
    // SAFETY: the caller's live `env` and `obj`. Not wrapped (or not an object), the call
    // fails without throwing.
    let status = unsafe { sys::napi_unwrap(env, obj, &mut data) };
    if status != sys::Status::napi_ok || !HELD.with(|h| h.borrow_mut().remove(&(data as usize))) {
        return None;
    }
    // SAFETY: as above; `data` is a box `hold` wrapped, whose finalizer has not run (it would
    // have left HELD), and removing the wrap makes it ours.
    if unsafe { sys::napi_remove_wrap(env, obj, &mut data) } != sys::Status::napi_ok {
        // Still the wrap's, for its finalizer to free.
        HELD.with(|h| h.borrow_mut().insert(data as usize));
        return None;
    }
    Some(*unsafe { Box::from_raw(data.cast::<Value>()) })
}

/// The JS form of the value `obj` holds, which it then no longer holds; `null` when it holds
/// none (or is no object).
#[napi(js_name = "__takeHeld", skip_typescript)]
pub fn take_held(env: Env, obj: Unknown<'_>) -> Option<Json> {
    // SAFETY: napi's own call, on the JS thread.
    unsafe { take_wrapped(env.raw(), obj.raw()) }.map(Json)
}

/// Frees the value `obj` holds, if any.
#[napi(js_name = "__dropHeld", skip_typescript)]
pub fn drop_held(env: Env, obj: Unknown<'_>) {
    // SAFETY: as in `take_held`.
    drop(unsafe { take_wrapped(env.raw(), obj.raw()) });
}
