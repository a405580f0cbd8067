//! The edge every export goes through: a panic boundary, NULL and UTF-8 checks on what comes
//! in, and library-allocated strings for what goes out. Out-params are written only on success
//! (the error out-param only on failure).

use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use engine::{Error, ErrorKind};
use serde_json::Value;

use crate::status::{error_json, status_of, TN_ERR_INTERNAL, TN_OK};

pub(crate) type Result<T> = std::result::Result<T, Error>;

/// Runs an export body: `Ok` is `TN_OK`; an error is its status, with the error JSON written
/// to `error_out` (when not NULL); a panic is `TN_ERR_INTERNAL`.
pub(crate) fn call(error_out: *mut *mut c_char, body: impl FnOnce() -> Result<()>) -> i32 {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => TN_OK,
        Ok(Err(e)) => {
            write_error(error_out, &e);
            status_of(e.kind())
        }
        Err(_) => {
            write_error(error_out, &Error::new(ErrorKind::Internal, "a panic was caught inside libtoolnexus"));
            TN_ERR_INTERNAL
        }
    }
}

/// Runs a body that cannot report errors (a `_free`), swallowing panics.
pub(crate) fn quietly(body: impl FnOnce()) {
    let _ = catch_unwind(AssertUnwindSafe(body));
}

fn write_error(error_out: *mut *mut c_char, e: &Error) {
    if !error_out.is_null() {
        // SAFETY: the caller passed a writable `char **` (documented in the header).
        unsafe { *error_out = into_c(error_json(e)) };
    }
}

/// Bytes before each string a debug build hands out, so that a host passing one to `free()`
/// and not to `tn_string_free` frees an address malloc never returned: valgrind and ASan in
/// `make c-tests` (and glibc, usually) report it, where the release library, on the host's
/// malloc, would let it through until an allocator that is not glibc's sits under the engine.
const FREE_GUARD: usize = if cfg!(debug_assertions) { 16 } else { 0 };

/// A string for the caller, freed with `tn_string_free`; a NUL in it becomes U+FFFD.
pub(crate) fn into_c(s: String) -> *mut c_char {
    let s = if s.contains('\0') { s.replace('\0', "\u{FFFD}") } else { s };
    let bytes = if FREE_GUARD == 0 {
        s.into_bytes() // the release library hands out the string's own allocation
    } else {
        let mut b = Vec::with_capacity(FREE_GUARD + s.len() + 1);
        b.resize(FREE_GUARD, b'#');
        b.extend_from_slice(s.as_bytes());
        b
    };
    // SAFETY: no NUL is left in `s` and the guard bytes are '#'; the allocation holds
    // FREE_GUARD bytes before the string.
    unsafe { CString::from_vec_unchecked(bytes).into_raw().add(FREE_GUARD) }
}

/// Takes back a string `into_c` handed out.
///
/// # Safety
/// `s` came from `into_c` and was not released before.
pub(crate) unsafe fn drop_c(s: *mut c_char) {
    // SAFETY: `into_c` returned FREE_GUARD bytes into a `CString::into_raw` allocation whose
    // guard bytes are not NUL, so `from_raw` finds the same length.
    drop(unsafe { CString::from_raw(s.sub(FREE_GUARD)) });
}

/// Writes a string to a required out-param.
pub(crate) fn write_out(out: *mut *mut c_char, what: &str, s: String) -> Result<()> {
    if out.is_null() {
        return Err(Error::invalid(format!("{what} is NULL")));
    }
    // SAFETY: checked non-NULL; the caller passed a writable `char **`.
    unsafe { *out = into_c(s) };
    Ok(())
}

/// A required UTF-8 string argument.
pub(crate) fn in_str<'a>(p: *const c_char, what: &str) -> Result<&'a str> {
    if p.is_null() {
        return Err(Error::invalid(format!("{what} is NULL")));
    }
    // SAFETY: non-NULL and, per the header, a NUL-terminated string valid for this call.
    let c = unsafe { CStr::from_ptr(p) };
    c.to_str().map_err(|_| Error::invalid(format!("{what} is not valid UTF-8")))
}

/// An optional UTF-8 string argument (NULL is `None`).
pub(crate) fn in_opt_str<'a>(p: *const c_char, what: &str) -> Result<Option<&'a str>> {
    if p.is_null() {
        return Ok(None);
    }
    in_str(p, what).map(Some)
}

/// A required JSON argument.
pub(crate) fn in_json(p: *const c_char, what: &str) -> Result<Value> {
    engine::parse_json(in_str(p, what)?).map_err(|e| not_json(what, e))
}

/// [`in_json`] of an object, with the text of its top-level member `key`'s value (`None`
/// where it has none, or where the fast reader left the text to serde_json).
pub(crate) fn in_json_member<'a>(p: *const c_char, what: &str, key: &str) -> Result<(Value, Option<&'a str>)> {
    let s: &'a str = in_str(p, what)?;
    let (v, span) = engine::parse_json_member(s, key).map_err(|e| not_json(what, e))?;
    Ok((v, span.and_then(|r| s.get(r))))
}

fn not_json(what: &str, e: serde_json::Error) -> Error {
    Error::invalid(format!("{what} is not valid JSON: {e}"))
}

/// A string to hand to a callback for the duration of the call.
pub(crate) fn c_arg(s: String) -> CString {
    CString::new(s.replace('\0', "\u{FFFD}")).unwrap_or_default()
}
