//! Arguments converted by hand. napi converts a `#[napi]` function's typed parameters before
//! any code of ours runs, and reports a value of the wrong type as a plain `Error` (code
//! `InvalidArg`, `StringExpected`, ...), not the `InvalidArgumentError` the API promises. So
//! the entry points take `Unknown` and convert here: success costs exactly napi's own
//! conversion; only a failure pays for building a message that names the argument.

use napi::bindgen_prelude::{FromNapiValue, Unknown};
use napi::{sys, Env, JsValue, Status, ValueType};

use crate::error::{invalid, throw};

/// `value` as a `T`, or an `InvalidArgumentError` naming argument `name` of `func`.
/// `expected` says what the argument should be ("a string", "an object", ...).
pub fn arg<T: FromNapiValue>(env: &Env, value: Unknown<'_>, func: &str, name: &str, expected: &str) -> napi::Result<T> {
    // SAFETY: `value` is a live value of `env`, on its JS thread.
    unsafe { T::from_napi_value(env.raw(), value.raw()) }.map_err(|e| bad(env, e, value, func, name, expected))
}

/// An options object as a `T`. Checked to be an object first: napi would read the fields of
/// a primitive (reporting the first required one as missing) or throw a bare `TypeError` on
/// `undefined`.
pub fn object_arg<T: FromNapiValue>(env: &Env, value: Unknown<'_>, func: &str, name: &str) -> napi::Result<T> {
    if value.get_type()? != ValueType::Object {
        let message = format!("{func}: {name} must be an object, got {}", type_of(value));
        return Err(throw(env, invalid(message)));
    }
    arg(env, value, func, name, "an object")
}

/// [`object_arg`] for an optional argument: `undefined` or `null` is `None`.
pub fn optional_object_arg<T: FromNapiValue>(
    env: &Env,
    value: Unknown<'_>,
    func: &str,
    name: &str,
) -> napi::Result<Option<T>> {
    match value.get_type()? {
        ValueType::Undefined | ValueType::Null => Ok(None),
        _ => object_arg(env, value, func, name).map(Some),
    }
}

/// The error for a failed conversion of argument `name`.
fn bad(env: &Env, e: napi::Error, value: Unknown<'_>, func: &str, name: &str, expected: &str) -> napi::Error {
    // A getter of the host's threw while napi read the value: that error is the host's own.
    if e.status == Status::PendingException {
        return e;
    }
    throw(env, invalid(describe(&e.reason, value, func, name, expected)))
}

/// An `InvalidArgumentError` for a function-typed option that is not a function (napi takes
/// any value as a `Function` and would fail only when it is first called).
pub fn check_function(env: &Env, raw: sys::napi_value, func: &str, path: &str) -> napi::Result<()> {
    // SAFETY: `raw` is a live value of `env`, on its JS thread.
    let value = unsafe { Unknown::from_raw_unchecked(env.raw(), raw) };
    if matches!(value.get_type(), Ok(ValueType::Function)) {
        return Ok(());
    }
    Err(throw(env, invalid(format!("{func}: {path} must be a function, got {}", type_of(value)))))
}

/// napi's reason in the API's words: `createClient: options.maxTurns must be a number`.
fn describe(reason: &str, value: Unknown<'_>, func: &str, name: &str, expected: &str) -> String {
    // napi appends ` on Struct.field` for each object level the failure went through, the
    // innermost first.
    let mut core = reason;
    let mut fields = Vec::new();
    while let Some((rest, field)) = outer_field(core) {
        fields.push(field);
        core = rest;
    }
    let mut path = name.to_string();
    for f in fields.iter().rev() {
        path.push('.');
        path.push_str(f);
    }
    if let Some(field) = missing_field(core) {
        return format!("{func}: {path}.{field} is required");
    }
    if fields.is_empty() {
        let got = type_of(value);
        // The value has the right shape; something inside it does not convert.
        if matches!(got, "object" | "array") && (expected.contains("object") || expected.contains("array")) {
            return format!("{func}: {name}: {core}");
        }
        return format!("{func}: {name} must be {expected}, got {got}");
    }
    match expected_of(core) {
        Some(what) => format!("{func}: {path} must be {what}"),
        None => format!("{func}: {path}: {core}"),
    }
}

/// `("reason", "field")` from `"reason on Struct.field"`.
fn outer_field(reason: &str) -> Option<(&str, &str)> {
    let (rest, location) = reason.rsplit_once(" on ")?;
    let (owner, field) = location.split_once('.')?;
    let ident = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (ident(owner) && ident(field)).then_some((rest, field))
}

/// `f` from "Missing field `f`".
fn missing_field(core: &str) -> Option<&str> {
    core.strip_prefix("Missing field `")?.strip_suffix('`')
}

/// What the Rust type napi names in a conversion failure is, for a JS reader.
fn expected_of(core: &str) -> Option<String> {
    if let Some(class) = core.strip_prefix("Unwrap value [").and_then(|s| s.split(']').next()) {
        let name = class.rsplit("::").next().unwrap_or(class);
        return Some(format!("a {name}"));
    }
    if core == "Expected an array" || core.starts_with("Failed to get Array length") {
        return Some("an array".into());
    }
    let (_, rust) = core.split_once("into rust type `")?;
    let rust = rust.split('`').next()?;
    let what = match rust {
        "String" => "a string",
        "bool" => "a boolean",
        "u8" | "u16" | "u32" | "u64" | "i8" | "i16" | "i32" | "i64" | "f32" | "f64" | "usize" | "isize" => "a number",
        _ => return None,
    };
    Some(what.into())
}

/// `typeof`, with `null` and arrays told apart.
pub fn type_of(value: Unknown<'_>) -> &'static str {
    match value.get_type() {
        Ok(ValueType::Undefined) => "undefined",
        Ok(ValueType::Null) => "null",
        Ok(ValueType::Boolean) => "boolean",
        Ok(ValueType::Number) => "number",
        Ok(ValueType::String) => "string",
        Ok(ValueType::Symbol) => "symbol",
        Ok(ValueType::Function) => "function",
        Ok(ValueType::BigInt) => "bigint",
        Ok(ValueType::Object) if value.is_array().unwrap_or(false) => "array",
        Ok(ValueType::Object | ValueType::External) => "object",
        _ => "unknown",
    }
}
