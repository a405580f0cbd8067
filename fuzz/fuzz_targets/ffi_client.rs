//! The C ABI's client exports, from NUL-separated parts: `[flags, options_json, tools_json,
//! input_json, reply...]`. `tn_client_new` with `options_json` and a transport callback (so
//! no network is touched), `tn_client_warnings`, `tn_toolkit_new` with `tools_json`, then
//! `tn_client_run` with `input_json` (a prompt, or a resume): the transport completes each
//! request with the next `reply` as its `tn_complete` payload, and with a host error once
//! they run out. `flags` adds callbacks: `w` a `wait_for` that approves, `d` one that gives
//! no answer, `h` every hook (completing with `null`), `e` an `on_error` that says `fail`,
//! `b` a body transform (rewriting every other body), `m` an `on_metric` and an `on_warning` sink. A tool whose
//! name starts with `ask` suspends (through `tn_pending`) until answered; any other tool
//! answers `ok`.
//!
//! So that no input sleeps, a JSON-object `options_json` gets `retry_base_ms` 0,
//! `max_retry_after_ms` 0, `retries` at most 2 and `timeout_ms` at most 3000 before it is
//! passed on; anything else is passed as it is.
//!
//! Checked: the ABI's conventions on every call (`toolnexus_fuzz::abi`), JSON out of every
//! success, the callbacks' inputs are JSON, and every host `user_data` is finalised once its
//! handle is freed (a leak otherwise).
#![no_main]

use std::collections::VecDeque;
use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolnexus_fuzz::abi::{call_out, call_status, json, part, parts};

/// User data made minus user data finalised.
static LIVE: AtomicIsize = AtomicIsize::new(0);

struct Host {
    replies: Mutex<VecDeque<CString>>,
    approve: bool,
}

fn host<'a>(user_data: *mut c_void) -> &'a Host {
    // SAFETY: our own Host, alive until its finalizer, which runs after the last callback.
    unsafe { &*(user_data as *const Host) }
}

fn arg(p: *const c_char) -> Value {
    // SAFETY: the library passes a C string valid for the call.
    json(&unsafe { CStr::from_ptr(p) }.to_string_lossy())
}

fn complete(token: u64, status: i32, payload: &CStr) {
    // SAFETY: a token the library issued and a C string.
    let s = unsafe { ffi::tn_complete(token, status, payload.as_ptr(), std::ptr::null_mut()) };
    assert!(s == ffi::TN_OK || s == ffi::TN_ERR_INVALID_ARGUMENT, "tn_complete: {s}");
}

fn complete_json(token: u64, v: &Value) {
    complete(token, ffi::TN_OK, &CString::new(v.to_string()).unwrap_or_default());
}

unsafe extern "C" fn transport(user_data: *mut c_void, request_json: *const c_char, token: u64) {
    let req = arg(request_json);
    assert!(req["url"].is_string() && req["body"].is_string() && req["headers"].is_object(), "{req}");
    let next = host(user_data).replies.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
    match next {
        Some(reply) => complete(token, ffi::TN_OK, &reply),
        None => complete(token, ffi::TN_ERR_HOST, c"the script has no reply left"),
    }
}

unsafe extern "C" fn wait_for(user_data: *mut c_void, request_json: *const c_char, token: u64) {
    let req = arg(request_json);
    if host(user_data).approve {
        complete_json(token, &json!({"id": req["id"], "ok": true, "data": {"output": "yes"}}));
    } else {
        complete_json(token, &Value::Null);
    }
}

unsafe extern "C" fn hook(_: *mut c_void, name: *const c_char, event_json: *const c_char, token: u64) {
    // SAFETY: a C string valid for the call.
    let name = unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned();
    assert!(["before_llm", "after_llm", "before_tool", "after_tool"].contains(&name.as_str()), "{name}");
    arg(event_json);
    complete_json(token, &Value::Null);
}

unsafe extern "C" fn on_error(_: *mut c_void, info_json: *const c_char, token: u64) {
    arg(info_json);
    complete_json(token, &json!("fail"));
}

/// Keeps every other body and rewrites the rest (a model of its own), so both answers run.
unsafe extern "C" fn body_transform(_: *mut c_void, body_json: *const c_char, token: u64) {
    let mut body = arg(body_json);
    if body["messages"].as_array().is_some_and(|m| m.len() % 2 == 0) {
        body["model"] = json!("rewritten");
        complete_json(token, &body);
    } else {
        complete_json(token, &Value::Null);
    }
}

/// Metric events are the engine's own JSON objects, whatever the run did.
unsafe extern "C" fn on_metric(_: *mut c_void, event_json: *const c_char) {
    let event = arg(event_json);
    assert!(event["event"].is_string(), "a metric event without its kind: {event}");
}

/// Warnings are `{code, message}` objects.
unsafe extern "C" fn on_warning(_: *mut c_void, warning_json: *const c_char) {
    let w = arg(warning_json);
    assert!(w["code"].is_string() && w["message"].is_string(), "a malformed warning: {w}");
}

unsafe extern "C" fn tool(_: *mut c_void, call_json: *const c_char, token: u64) {
    let call = arg(call_json);
    let name = call["name"].as_str().unwrap_or("");
    if name.starts_with("ask") && call.get("answer").is_none() {
        let (status, out) = call_out(|out, err| unsafe {
            ffi::tn_pending(c"{\"kind\": \"approval\", \"prompt\": \"go?\"}".as_ptr(), out, err)
        });
        assert_eq!(status, ffi::TN_OK);
        complete(token, ffi::TN_OK, &CString::new(out.unwrap_or_default()).unwrap_or_default());
    } else {
        complete_json(token, &json!({"output": "ok", "is_error": false}));
    }
}

unsafe extern "C" fn free_host(user_data: *mut c_void) {
    // SAFETY: a Box made below, finalised once.
    drop(unsafe { Box::from_raw(user_data as *mut Host) });
    LIVE.fetch_sub(1, Ordering::SeqCst);
}

fn new_host(replies: VecDeque<CString>, approve: bool) -> *mut c_void {
    LIVE.fetch_add(1, Ordering::SeqCst);
    Box::into_raw(Box::new(Host { replies: Mutex::new(replies), approve })).cast()
}

/// `options_json` with the settings that would make a run sleep taken out.
fn tamed(options: &CStr) -> CString {
    let Ok(Value::Object(mut o)) = serde_json::from_slice::<Value>(options.to_bytes()) else {
        return options.to_owned();
    };
    o.insert("retry_base_ms".into(), json!(0));
    o.insert("max_retry_after_ms".into(), json!(0));
    let retries = o.get("retries").and_then(Value::as_u64).map_or(2, |n| n.min(2));
    o.insert("retries".into(), json!(retries));
    let timeout = o.get("timeout_ms").and_then(Value::as_u64).map_or(3000, |n| n.min(3000));
    o.insert("timeout_ms".into(), json!(timeout));
    CString::new(Value::Object(o).to_string()).unwrap_or_default()
}

/// Every user_data made so far is finalised, soon (a run's last task may still be letting go).
fn all_finalised() {
    let start = Instant::now();
    while LIVE.load(Ordering::SeqCst) != 0 {
        assert!(start.elapsed() < Duration::from_secs(5), "a user_data was never finalised (a leak)");
        std::thread::sleep(Duration::from_millis(1));
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let parts = parts(data);
    let flags = part(&parts, 0, c"").to_bytes();
    let options = tamed(part(&parts, 1, c"{}"));
    let (tools, input) = (part(&parts, 2, c"[]"), part(&parts, 3, c"{\"prompt\": \"hi\"}"));
    let replies: VecDeque<CString> = parts.iter().skip(4).cloned().collect();

    let callbacks = ffi::tn_callbacks {
        user_data: new_host(replies, !flags.contains(&b'd')),
        free_user_data: Some(free_host),
        wait_for: if flags.contains(&b'w') || flags.contains(&b'd') { Some(wait_for) } else { None },
        transport: Some(transport),
        hook: if flags.contains(&b'h') { Some(hook) } else { None },
        hook_mask: if flags.contains(&b'h') { 15 } else { 0 },
        on_error: if flags.contains(&b'e') { Some(on_error) } else { None },
        body_transform: if flags.contains(&b'b') { Some(body_transform) } else { None },
        on_metric: if flags.contains(&b'm') { Some(on_metric) } else { None },
        on_warning: if flags.contains(&b'm') { Some(on_warning) } else { None },
    };
    let mut client: *mut ffi::tn_client = std::ptr::null_mut();
    // SAFETY (every call below): valid C strings, out-params and the library's own handles.
    let status = call_status(|err| unsafe { ffi::tn_client_new(options.as_ptr(), &callbacks, &mut client, err) });
    if status != ffi::TN_OK {
        assert!(client.is_null(), "a failed tn_client_new wrote its handle");
        all_finalised();
        return;
    }
    let (status, warnings) = call_out(|out, err| unsafe { ffi::tn_client_warnings(client, out, err) });
    assert_eq!(status, ffi::TN_OK);
    assert!(json(&warnings.unwrap_or_default()).is_array());

    let mut toolkit: *mut ffi::tn_toolkit = std::ptr::null_mut();
    let tk_data = new_host(VecDeque::new(), true);
    let status = call_status(|err| unsafe {
        ffi::tn_toolkit_new(tools.as_ptr(), Some(tool), tk_data, Some(free_host), &mut toolkit, err)
    });
    if status != ffi::TN_OK {
        toolkit = std::ptr::null_mut();
    }
    let (status, out) =
        call_out(|out, err| unsafe { ffi::tn_client_run(client, toolkit, input.as_ptr(), std::ptr::null(), out, err) });
    if status == ffi::TN_OK {
        let r = json(&out.unwrap_or_default());
        assert!(r["messages"].is_array() && r["status"].is_string(), "not a RunResult: {r}");
    }
    unsafe {
        ffi::tn_toolkit_free(toolkit);
        ffi::tn_client_free(client);
    }
    all_finalised();
});
