//! The C ABI's vocabulary exports, each given the input's C strings (NUL-separated parts;
//! the first part where an export takes one string): `tn_answer_normalize`, `tn_pending`,
//! `tn_relay_answer`, `tn_auth_required`, `tn_answer_output`, `tn_answer_declined`,
//! `tn_sanitize`, and `tn_complete` / `tn_complete_host_error` with a token nobody waits on.
//!
//! Checked on every call: the ABI's conventions (`toolnexus_fuzz::abi`); and that what the
//! library writes is JSON its own normaliser takes back unchanged.
#![no_main]

use std::ffi::CStr;

use toolnexus_fuzz::abi::{call_out, call_status, json, part, parts};

fn normalize(text: &CStr) -> (i32, Option<String>) {
    // SAFETY: valid C strings and out-params.
    call_out(|out, err| unsafe { ffi::tn_answer_normalize(text.as_ptr(), out, err) })
}

/// An Answer the library wrote must be its own normal form.
fn check_answer(text: &str) {
    let c = std::ffi::CString::new(text).unwrap_or_else(|_| panic!("an Answer with a NUL: {text:?}"));
    let (status, again) = normalize(&c);
    assert_eq!(status, ffi::TN_OK, "the library's own Answer {text} is refused");
    assert_eq!(again.as_deref(), Some(text), "the library's own Answer is not in normal form");
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let parts = parts(data);
    let a = part(&parts, 0, c"");
    let b = part(&parts, 1, c"");

    if let (ffi::TN_OK, Some(out)) = normalize(a) {
        check_answer(&out);
    }
    // SAFETY (every call below): valid C strings, out-params, or NULL where allowed.
    if let (ffi::TN_OK, Some(out)) = call_out(|out, err| unsafe { ffi::tn_pending(a.as_ptr(), out, err) }) {
        let r = json(&out);
        assert_eq!(r["is_error"], true, "a suspension that is not an error result: {out}");
        assert!(r["metadata"]["pending"]["id"].as_str().is_some_and(|id| !id.is_empty()), "no id: {out}");
    }
    for (id, results) in [(c"relay-1", a), (a, b)] {
        let (status, out) =
            call_out(|out, err| unsafe { ffi::tn_relay_answer(id.as_ptr(), results.as_ptr(), out, err) });
        if status == ffi::TN_OK {
            check_answer(&out.unwrap_or_default());
        }
    }
    for prompt in [std::ptr::null(), b.as_ptr()] {
        if let (ffi::TN_OK, Some(out)) =
            call_out(|out, err| unsafe { ffi::tn_auth_required(a.as_ptr(), prompt, out, err) })
        {
            assert_eq!(json(&out)["metadata"]["pending"]["kind"], "authorization");
        }
    }
    if let (ffi::TN_OK, Some(out)) =
        call_out(|out, err| unsafe { ffi::tn_answer_output(a.as_ptr(), b.as_ptr(), out, err) })
    {
        check_answer(&out);
    }
    if let (ffi::TN_OK, Some(out)) =
        call_out(|out, err| unsafe { ffi::tn_answer_declined(a.as_ptr(), b.as_ptr(), out, err) })
    {
        check_answer(&out);
    }
    if let (ffi::TN_OK, Some(out)) = call_out(|out, err| unsafe { ffi::tn_sanitize(a.as_ptr(), out, err) }) {
        assert!(out.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-'), "{out:?}");
    }
    // No run is waiting: every token is unknown, whatever the payload.
    let token =
        u64::from_le_bytes(data.iter().copied().chain([0; 8]).take(8).collect::<Vec<_>>().try_into().unwrap_or([0; 8]));
    for status in [ffi::TN_OK, ffi::TN_ERR_NETWORK] {
        let s = call_status(|err| unsafe { ffi::tn_complete(token, status, a.as_ptr(), err) });
        assert_eq!(s, ffi::TN_ERR_INVALID_ARGUMENT);
    }
    let s = call_status(|err| unsafe { ffi::tn_complete_host_error(token, a.as_ptr(), 7, err) });
    assert_eq!(s, ffi::TN_ERR_INVALID_ARGUMENT);
});
