//! A property built on first access. A run's transcript can be hundreds of messages: turning
//! it into JS objects costs about 0.25 ms at 200 messages, which a caller that reads only
//! `text` should not pay. The property is an accessor until first read or write, then a plain
//! data property (enumerable, writable), so spreading, `JSON.stringify` and assignment behave
//! as on any object.
//!
//! The accessor is made by one `napi_define_properties` with C callbacks, and the value waits
//! in the object's native wrap, which the object's collection frees: measured, a fraction of
//! the cost of two closure functions and an `Object.defineProperty` call made through napi.
//! The callbacks' only data is the property's static name, so a getter kept past its object
//! has nothing to dangle.

use std::ffi::{c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use napi::bindgen_prelude::ToNapiValue;
use napi::{sys, Env};
use serde_json::Value;

use crate::convert::Json;

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

/// Makes `obj[key]` the JS form of `value`, converted when first read. `obj` must not be
/// wrapped already (a fresh plain object): the value waits in its wrap.
pub fn define_lazy_json(env: &Env, obj: sys::napi_value, key: &'static CStr, value: Value) -> napi::Result<()> {
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
    let prop = sys::napi_property_descriptor {
        utf8name: key.as_ptr(),
        name: ptr::null_mut(),
        method: None,
        getter: Some(get_lazy),
        setter: Some(set_lazy),
        value: ptr::null_mut(),
        attributes: sys::PropertyAttributes::enumerable | sys::PropertyAttributes::configurable,
        data: key.as_ptr().cast_mut().cast(),
    };
    // SAFETY: on the JS thread with live values of `env`; `key` is static.
    napi::check_status!(unsafe { sys::napi_define_properties(env.raw(), obj, 1, &prop) })
}

unsafe extern "C" fn free_value(_: sys::napi_env, data: *mut c_void, _: *mut c_void) {
    // SAFETY: `data` is the box `define_lazy_json` wrapped; the wrap's finalizer runs once, and
    // never after `take_wrapped` removed the wrap.
    drop(unsafe { Box::from_raw(data.cast::<Value>()) });
}

/// The value waiting in `obj`'s wrap, taken out of it; `None` when `obj` holds none.
unsafe fn take_wrapped(env: sys::napi_env, obj: sys::napi_value) -> Option<Value> {
    let mut data = ptr::null_mut();
    // SAFETY: the caller's live `env` and `obj`. Not wrapped (or not an object), the call
    // fails without throwing.
    let status = unsafe { sys::napi_remove_wrap(env, obj, &mut data) };
    // SAFETY: only `define_lazy_json` wraps these objects, always with a boxed `Value`.
    (status == sys::Status::napi_ok && !data.is_null()).then(|| *unsafe { Box::from_raw(data.cast::<Value>()) })
}

/// The getter: converts the value, makes it a data property of the object that held it, and
/// returns it. Read through an heir (`Object.create(result)`), the result itself is filled;
/// called on an object that holds nothing, it gives `undefined`.
unsafe extern "C" fn get_lazy(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    // SAFETY (all of this callback): called by Node on the JS thread with live values.
    let got = catch_unwind(AssertUnwindSafe(|| unsafe {
        let (mut holder, key, _) = callback_info(env, info)?;
        loop {
            if let Some(value) = take_wrapped(env, holder) {
                let made = Json::to_napi_value(env, Json(value))?;
                define_data(env, holder, key, made)?;
                return Ok(made);
            }
            let mut up = ptr::null_mut();
            if sys::napi_get_prototype(env, holder, &mut up) != sys::Status::napi_ok || is_null(env, up)? {
                return <()>::to_napi_value(env, ());
            }
            holder = up;
        }
    }));
    unsafe { returned(env, got) }
}

/// The setter: makes the assigned value a data property of `this`, as assigning over a data
/// property does; the unread value of `this`, if any, is dropped.
unsafe extern "C" fn set_lazy(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    // SAFETY: as in `get_lazy`.
    let got = catch_unwind(AssertUnwindSafe(|| unsafe {
        let (this, key, assigned) = callback_info(env, info)?;
        drop(take_wrapped(env, this));
        define_data(env, this, key, assigned)?;
        <()>::to_napi_value(env, ())
    }));
    unsafe { returned(env, got) }
}

/// `this`, the property's name and the first argument of a call (napi fills a missing one
/// with `undefined`).
unsafe fn callback_info(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> napi::Result<(sys::napi_value, &'static CStr, sys::napi_value)> {
    let (mut argc, mut argv, mut this, mut data) = (1usize, [ptr::null_mut(); 1], ptr::null_mut(), ptr::null_mut());
    // SAFETY: the caller's `env` and `info`; the out pointers are live locals.
    napi::check_status!(unsafe {
        sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), &mut this, &mut data)
    })?;
    // SAFETY: `data` is the static name `define_lazy_json` gave the property.
    Ok((this, unsafe { CStr::from_ptr(data.cast()) }, argv[0]))
}

/// Whether `v` is `null` (the end of a prototype chain).
unsafe fn is_null(env: sys::napi_env, v: sys::napi_value) -> napi::Result<bool> {
    let mut kind = 0;
    // SAFETY: the caller's live `env` and `v`.
    napi::check_status!(unsafe { sys::napi_typeof(env, v, &mut kind) })?;
    Ok(kind == sys::ValueType::napi_null)
}

/// The callback's return value; an error or a panic becomes a thrown JS error, never unwinds
/// into Node.
unsafe fn returned(env: sys::napi_env, got: std::thread::Result<napi::Result<sys::napi_value>>) -> sys::napi_value {
    let err = match got {
        Ok(Ok(v)) => return v,
        Ok(Err(e)) => e,
        Err(_) => napi::Error::from_reason("toolnexus: the lazy property's conversion panicked"),
    };
    // SAFETY: the caller's live `env`, on the JS thread.
    unsafe { napi::JsError::from(err).throw_into(env) };
    ptr::null_mut()
}

/// `obj[key] = value` as an own enumerable, writable, configurable data property.
unsafe fn define_data(
    env: sys::napi_env,
    obj: sys::napi_value,
    key: &CStr,
    value: sys::napi_value,
) -> napi::Result<()> {
    let prop = sys::napi_property_descriptor {
        utf8name: key.as_ptr(),
        name: ptr::null_mut(),
        method: None,
        getter: None,
        setter: None,
        value,
        attributes: sys::PropertyAttributes::writable
            | sys::PropertyAttributes::enumerable
            | sys::PropertyAttributes::configurable,
        data: ptr::null_mut(),
    };
    // SAFETY: on the JS thread with live values of `env`; `key` outlives the call.
    napi::check_status!(unsafe { sys::napi_define_properties(env, obj, 1, &prop) })
}
