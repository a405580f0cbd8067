//! Calling the C ABI from a fuzz target: inputs split into C strings, out-params read and
//! released, and the ABI's own promises checked on every call (a known status; on success the
//! out-param written and no error; on failure an error JSON naming the status's kind, and
//! never `TN_ERR_INTERNAL`, which only a bug or a caught panic reports).

use std::ffi::{c_char, CStr, CString};
use std::ptr;

use serde_json::Value;

/// The NUL-separated parts of a fuzz input, each a C string (a C string holds no NUL, so this
/// is exactly the set of argument lists the ABI can be given).
pub fn parts(data: &[u8]) -> Vec<CString> {
    data.split(|b| *b == 0).map(|p| CString::new(p).unwrap_or_default()).collect()
}

/// The part `i`, or `fallback`.
pub fn part<'a>(parts: &'a [CString], i: usize, fallback: &'a CStr) -> &'a CStr {
    parts.get(i).map(CString::as_c_str).unwrap_or(fallback)
}

/// Takes a string the library handed out, and frees it.
///
/// # Safety
/// `s` is NULL or a string from the library, not freed yet.
pub unsafe fn take(s: *mut c_char) -> Option<String> {
    if s.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated string from the library (the caller's contract).
    let text = unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned();
    // SAFETY: as above; freed exactly once, here.
    unsafe { ffi::tn_string_free(s) };
    Some(text)
}

/// Calls an export that writes a string to one out-param, and checks the ABI's conventions.
/// Returns the status and, on success, the string.
pub fn call_out(f: impl FnOnce(*mut *mut c_char, *mut *mut c_char) -> i32) -> (i32, Option<String>) {
    let mut out: *mut c_char = ptr::null_mut();
    let mut err: *mut c_char = ptr::null_mut();
    let status = f(&mut out, &mut err);
    // SAFETY: both are NULL or strings the library just handed out.
    let (out, err) = unsafe { (take(out), take(err)) };
    check_status(status, out.is_some(), err.as_deref());
    (status, out)
}

/// Calls an export that writes nothing on success (or a handle, which the caller checks).
pub fn call_status(f: impl FnOnce(*mut *mut c_char) -> i32) -> i32 {
    let mut err: *mut c_char = ptr::null_mut();
    let status = f(&mut err);
    // SAFETY: NULL or a string the library just handed out.
    let err = unsafe { take(err) };
    check_status(status, status == ffi::TN_OK, err.as_deref());
    status
}

/// The conventions every export keeps: `wrote` is whether the out-param was written.
pub fn check_status(status: i32, wrote: bool, err: Option<&str>) {
    // The engine's own list of kinds: a status added to the ABI is known here at once.
    let known = status == ffi::TN_OK || u32::try_from(status).ok().and_then(toolnexus::ErrorKind::from_code).is_some();
    assert!(known, "unknown status {status}");
    assert_ne!(status, ffi::TN_ERR_INTERNAL, "an internal error (a bug or a caught panic): {err:?}");
    if status == ffi::TN_OK {
        assert!(wrote, "TN_OK without the out-param written");
        assert!(err.is_none(), "TN_OK with an error written");
        return;
    }
    assert!(!wrote, "a failure that wrote the out-param");
    let err = err.unwrap_or_else(|| panic!("status {status} without an error JSON"));
    let v: Value = serde_json::from_str(err).unwrap_or_else(|e| panic!("error JSON {err:?} is not JSON: {e}"));
    assert_eq!(v["code"], status, "error JSON {err} does not carry the status");
    assert!(v["kind"].is_string() && v["message"].is_string(), "error JSON {err} lacks kind or message");
}

/// A JSON text the library handed out: it must parse.
pub fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("the library handed out invalid JSON {text:?}: {e}"))
}
