//! The C ABI's toolkit exports, from NUL-separated parts: `[tools_json, call_json,
//! tool_reply, style]`. `tn_toolkit_new` (with a tool callback, and without one), then
//! `tn_toolkit_declarations` for every style and the given one, `tn_toolkit_execute_call`
//! with `call_json`, `tn_toolkit_execute` of each declared tool with `call_json` as its
//! arguments; the tool callback completes with `tool_reply` (a `tn_complete` payload).
//!
//! Checked: the ABI's conventions on every call (`toolnexus_fuzz::abi`), JSON out of every
//! success, a ToolResult out of every execution, and the host's `user_data` finalised exactly
//! once by the time the toolkit is freed (or its making failed).
#![no_main]

use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::atomic::{AtomicIsize, Ordering};

use toolnexus_fuzz::abi::{call_out, call_status, json, part, parts};

/// User data made minus user data finalised.
static LIVE: AtomicIsize = AtomicIsize::new(0);

struct Host {
    reply: CString,
}

unsafe extern "C" fn tool(user_data: *mut c_void, call_json: *const c_char, token: u64) {
    // SAFETY: our own Host, alive until its finalizer; the call JSON is valid for the call.
    let (host, call) = unsafe { (&*(user_data as *const Host), CStr::from_ptr(call_json)) };
    json(&call.to_string_lossy());
    // SAFETY: a live token and a C string.
    let status = unsafe { ffi::tn_complete(token, ffi::TN_OK, host.reply.as_ptr(), std::ptr::null_mut()) };
    assert!(status == ffi::TN_OK || status == ffi::TN_ERR_INVALID_ARGUMENT, "tn_complete: {status}");
}

unsafe extern "C" fn free_host(user_data: *mut c_void) {
    // SAFETY: the Box made below, finalised once.
    drop(unsafe { Box::from_raw(user_data as *mut Host) });
    LIVE.fetch_sub(1, Ordering::SeqCst);
}

fn check_result(out: &str) {
    let r = json(out);
    assert!(r["output"].is_string() && r["is_error"].is_boolean(), "not a ToolResult: {out}");
}

fn exercise(tools: &CStr, call: &CStr, reply: &CStr, style: &CStr, with_fn: bool) {
    let host = Box::into_raw(Box::new(Host { reply: reply.to_owned() }));
    LIVE.fetch_add(1, Ordering::SeqCst);
    let tool_fn: ffi::tn_tool_fn = if with_fn { Some(tool) } else { None };
    let mut tk: *mut ffi::tn_toolkit = std::ptr::null_mut();
    // SAFETY (every call below): valid C strings and out-params; `tk` is the library's handle.
    let status = call_status(|err| unsafe {
        ffi::tn_toolkit_new(tools.as_ptr(), tool_fn, host.cast(), Some(free_host), &mut tk, err)
    });
    if status != ffi::TN_OK {
        assert!(tk.is_null(), "a failed tn_toolkit_new wrote its handle");
        assert_eq!(LIVE.load(Ordering::SeqCst), 0, "a failed tn_toolkit_new kept its user_data");
        return;
    }
    let mut names = Vec::new();
    for s in [c"openai", c"anthropic", c"gemini", style] {
        if let (ffi::TN_OK, Some(out)) =
            call_out(|out, err| unsafe { ffi::tn_toolkit_declarations(tk, s.as_ptr(), out, err) })
        {
            let decls = json(&out);
            let decls = decls.as_array().unwrap_or_else(|| panic!("declarations that are not an array: {out}"));
            if s == c"anthropic" {
                names = decls.iter().filter_map(|d| d["name"].as_str().map(str::to_string)).take(3).collect();
            }
        }
    }
    if let (ffi::TN_OK, Some(out)) =
        call_out(|out, err| unsafe { ffi::tn_toolkit_execute_call(tk, call.as_ptr(), out, err) })
    {
        check_result(&out);
    }
    for name in names.iter().filter_map(|n| CString::new(n.as_str()).ok()) {
        let (status, out) =
            call_out(|out, err| unsafe { ffi::tn_toolkit_execute(tk, name.as_ptr(), call.as_ptr(), out, err) });
        if status == ffi::TN_OK {
            check_result(&out.unwrap_or_default());
        }
    }
    // SAFETY: our handle, freed once.
    unsafe { ffi::tn_toolkit_free(tk) };
    assert_eq!(LIVE.load(Ordering::SeqCst), 0, "tn_toolkit_free did not finalise the user_data");
    // A freed handle is refused, not used.
    let status = call_status(|err| unsafe {
        ffi::tn_toolkit_declarations(tk, c"openai".as_ptr(), &mut std::ptr::null_mut(), err)
    });
    assert_eq!(status, ffi::TN_ERR_INVALID_ARGUMENT);
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let parts = parts(data);
    let default_reply = c"{\"output\": \"ok\", \"is_error\": false}";
    let (tools, call) = (part(&parts, 0, c"[]"), part(&parts, 1, c"{}"));
    let (reply, style) = (part(&parts, 2, default_reply), part(&parts, 3, c"openai"));
    exercise(tools, call, reply, style, true);
    exercise(tools, call, reply, style, false);
});
