//! A property built on first access. A run's transcript can be hundreds of messages: turning
//! it into JS objects costs about 0.25 ms at 200 messages, which a caller that reads only
//! `text` should not pay. The property is an accessor until first read or write, then a plain
//! data property (enumerable, writable), so spreading, `JSON.stringify` and assignment behave
//! as on any object.

use std::cell::RefCell;

use napi::bindgen_prelude::{FnArgs, Function, FunctionCallContext, JsObjectValue, Object, ToNapiValue, Unknown};
use napi::{sys, Env, JsValue};
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

/// Makes `obj[key]` the JS form of `value`, converted when first read.
pub fn define_lazy_json(env: &Env, obj: sys::napi_value, key: &'static str, value: Value) -> napi::Result<()> {
    let pending = RefCell::new(Some(value));
    let getter = env.create_function_from_closure::<(), Raw, _>(key, move |ctx: FunctionCallContext| {
        let this = ctx.this::<Object>()?;
        let Some(value) = pending.borrow_mut().take() else {
            return Ok(Raw(unsafe { <()>::to_napi_value(ctx.env.raw(), ())? }));
        };
        // SAFETY: on the JS thread, inside the getter call.
        let made = unsafe { Json::to_napi_value(ctx.env.raw(), Json(value))? };
        define_data(ctx.env.raw(), this.raw(), key, made)?;
        Ok(Raw(made))
    })?;
    let setter = env.create_function_from_closure::<(), (), _>(key, move |ctx: FunctionCallContext| {
        let this = ctx.this::<Object>()?;
        let v = ctx.get::<Unknown>(0)?;
        define_data(ctx.env.raw(), this.raw(), key, v.raw())
    })?;
    let object_ctor: Function<Unknown, Unknown> = env.get_global()?.get_named_property("Object")?;
    let define: Function<FnArgs<(Raw, &str, Object)>, Unknown> = object_ctor.get_named_property("defineProperty")?;
    let mut descriptor = Object::new(env)?;
    descriptor.set("get", getter)?;
    descriptor.set("set", setter)?;
    descriptor.set("enumerable", true)?;
    descriptor.set("configurable", true)?;
    crate::call::apply_caught(&define, object_ctor, FnArgs::from((Raw(obj), key, descriptor)))?;
    Ok(())
}

/// `obj[key] = value` as an own enumerable, writable, configurable data property.
fn define_data(
    env: sys::napi_env,
    obj: sys::napi_value,
    key: &'static str,
    value: sys::napi_value,
) -> napi::Result<()> {
    let name = std::ffi::CString::new(key).map_err(|e| napi::Error::from_reason(e.to_string()))?;
    let prop = sys::napi_property_descriptor {
        utf8name: name.as_ptr(),
        name: std::ptr::null_mut(),
        method: None,
        getter: None,
        setter: None,
        value,
        attributes: sys::PropertyAttributes::writable
            | sys::PropertyAttributes::enumerable
            | sys::PropertyAttributes::configurable,
        data: std::ptr::null_mut(),
    };
    // SAFETY: on the JS thread with live values of `env`; `name` outlives the call.
    napi::check_status!(unsafe { sys::napi_define_properties(env, obj, 1, &prop) })
}
