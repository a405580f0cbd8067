//! The suspension vocabulary as JSON constructors, and `tn_complete`.

use std::ffi::c_char;

use engine::relay::{relay_answer, relay_execute, RelayResult};
use engine::{answer_declined, answer_output, auth_required, pending, Answer, Error, PendingSpec, Request};
use serde_json::Value;

use crate::guard::{call, in_json, in_opt_str, in_str, write_out};
use crate::host::refused_completion;
use crate::runtime::{complete, Completion};
use crate::status::TN_ERR_HOST;

/// Answers a callback: `token` is the one the callback received; `status` is `TN_OK` with the
/// JSON the callback documents as `payload`, or an error status with a message (may be NULL).
/// The payload is copied. Callable from any thread, inside the callback or later. A token that
/// is unknown, already completed, or whose run has ended is `TN_ERR_INVALID_ARGUMENT`.
///
/// A payload that is not UTF-8 is refused (`TN_ERR_INVALID_ARGUMENT`), but the completion
/// still counts: the token is used up (completing it again is `TN_ERR_INVALID_ARGUMENT`, as
/// for any used token) and the call ends as a failing callback does, so the run never waits
/// on it. An error status keeps its kind, its message decoded lossily (each invalid byte
/// becomes U+FFFD); `TN_OK` becomes `TN_ERR_HOST` with a message saying the payload was
/// refused. A failing tool is an error result the model sees; a failing `wait_for` ends the
/// run.
///
/// # Safety
/// `payload` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn tn_complete(
    token: u64,
    status: i32,
    payload: *const c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || match in_opt_str(payload, "payload") {
        Ok(payload) => complete(token, Completion { status, payload: payload.map(str::to_string), host_ref: None }),
        Err(refused) => {
            // SAFETY: `payload` is non-NULL (a NULL one is never refused) and NUL-terminated.
            let completion = unsafe { refused_completion(status, payload, &refused, None) };
            complete(token, completion)?;
            Err(refused)
        }
    })
}

/// Ends a callback with a failure that belongs to the host: like `tn_complete` with
/// `TN_ERR_HOST` and `message`, plus `host_ref`, a number the host chooses (for example a key
/// into its own table of exception objects). When the failure ends the run, the run's error
/// JSON carries `"host_ref"`, so the binding can re-raise its own exception object unchanged.
/// A `message` that is not UTF-8 is refused as in `tn_complete`: the token is used up and the
/// call still fails, with the message decoded lossily and `host_ref` kept.
///
/// # Safety
/// `message` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn tn_complete_host_error(
    token: u64,
    message: *const c_char,
    host_ref: u64,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || match in_opt_str(message, "message") {
        Ok(text) => {
            let payload = Some(text.unwrap_or("host error").to_string());
            complete(token, Completion { status: TN_ERR_HOST, payload, host_ref: Some(host_ref) })
        }
        Err(refused) => {
            // SAFETY: `message` is non-NULL (a NULL one is never refused) and NUL-terminated.
            let completion = unsafe { refused_completion(TN_ERR_HOST, message, &refused, Some(host_ref)) };
            complete(token, completion)?;
            Err(refused)
        }
    })
}

/// Writes to `*out` a copy of `value` with every character outside `[a-zA-Z0-9_-]` replaced
/// by `_`, as tool names are (a plain string, not JSON; free it with `tn_string_free`).
///
/// # Safety
/// Pointers as documented; `out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_sanitize(value: *const c_char, out: *mut *mut c_char, error_out: *mut *mut c_char) -> i32 {
    call(error_out, || write_out(out, "out", engine::sanitize(in_str(value, "value")?)))
}

/// The Answer that supplies a reply: `{"id", "ok": true, "data": {"output"}}`.
///
/// # Safety
/// Pointers as documented; `json_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_answer_output(
    id: *const c_char,
    output: *const c_char,
    json_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let a = answer_output(in_str(id, "id")?, in_str(output, "output")?);
        write_out(json_out, "json_out", a.to_json().to_string())
    })
}

/// The Answer that refuses a request: `{"id", "ok": false, "reason"}`; a NULL or empty
/// `reason` is `"declined"`. Any reason string is carried; the advisory vocabulary is
/// `declined`, `cancelled`, `expired`.
///
/// # Safety
/// Pointers as documented; `json_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_answer_declined(
    id: *const c_char,
    reason: *const c_char,
    json_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let a = answer_declined(in_str(id, "id")?, in_opt_str(reason, "reason")?.unwrap_or(""));
        write_out(json_out, "json_out", a.to_json().to_string())
    })
}

/// Reads an Answer from any JSON a host holds (optionals may be `null` or absent) and writes
/// its normal form; a malformed answer is `TN_ERR_INVALID_ARGUMENT` naming what is wrong.
///
/// # Safety
/// Pointers as documented; `json_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_answer_normalize(
    answer_json: *const c_char,
    json_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let a = Answer::from_json(&in_json(answer_json, "answer_json")?)?;
        write_out(json_out, "json_out", a.to_json().to_string())
    })
}

/// A suspension for a tool to return: `spec_json` is `{"kind", "prompt", "id"?, "url"?,
/// "data"?, "expiresAt"?}` (an id is generated when absent); writes the ToolResult JSON
/// (`is_error: true`, `metadata.pending` = the Request, `output` = the prompt plus the url).
///
/// # Safety
/// Pointers as documented; `json_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_pending(
    spec_json: *const c_char,
    json_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let mut v = in_json(spec_json, "spec_json")?;
        // Only the id may be missing: the rest must make a well-formed Request.
        if let Some(o) = v.as_object_mut() {
            o.entry("id").or_insert(Value::String(String::new()));
        }
        let r = Request::from_json(&v)?;
        let spec = PendingSpec {
            id: Some(r.id).filter(|s| !s.is_empty()),
            kind: r.kind,
            prompt: r.prompt,
            url: r.url,
            data: r.data,
            expires_at: r.expires_at,
        };
        write_out(json_out, "json_out", serde_json::to_string(&pending(spec)).unwrap_or_default())
    })
}

/// The suspension for a login at `url`: the `authorization` Request with `prompt` (NULL or
/// empty: `"Authorization required to continue"`); writes the ToolResult JSON as `tn_pending`.
///
/// # Safety
/// Pointers as documented; `json_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_auth_required(
    url: *const c_char,
    prompt: *const c_char,
    json_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let url = in_str(url, "url")?;
        let prompt = in_opt_str(prompt, "prompt")?.filter(|p| !p.is_empty());
        write_out(json_out, "json_out", serde_json::to_string(&auth_required(url, prompt)).unwrap_or_default())
    })
}

/// The Answer for a relay Request: `results_json` is `[{"id", "output", "isError"?}]`, one per
/// relayed call; writes `{"id": request_id, "ok": true, "data": {"results": [...]}}`.
///
/// # Safety
/// Pointers as documented; `json_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_relay_answer(
    request_id: *const c_char,
    results_json: *const c_char,
    json_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let id = in_str(request_id, "request_id")?;
        let results: Vec<RelayResult> = serde_json::from_value(in_json(results_json, "results_json")?)
            .map_err(|e| Error::invalid(format!("results_json must be [{{\"id\", \"output\", \"isError\"?}}]: {e}")))?;
        write_out(json_out, "json_out", relay_answer(id, &results).to_json().to_string())
    })
}

/// What relay tool `name` does when a host executes it itself, outside a run (as the ports let
/// a caller call a tool object). `call_json` is `{"args"?, "call_id"?, "answer"?}`. Without an
/// answer, writes the suspension ToolResult JSON for this one call: `metadata.pending` is the
/// `tool_call` Request a run would relay it with (its id fresh when `call_id` is empty: only a
/// run knows the provider's call id). With an answer, writes the result the model would read
/// for it, read as a run reads it (`data.results` by `call_id`, the single-call shorthand
/// `data.output` / `data.isError`, or `relay declined for <name>: <reason>`).
///
/// # Safety
/// Pointers as documented; `json_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_relay_execute(
    name: *const c_char,
    call_json: *const c_char,
    json_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let name = in_str(name, "name")?;
        let call = in_json(call_json, "call_json")?;
        if !call.is_object() {
            return Err(Error::invalid("call_json must be a JSON object {\"args\"?, \"call_id\"?, \"answer\"?}"));
        }
        let args = call.get("args").cloned().unwrap_or(Value::Null);
        if !(args.is_object() || args.is_null()) {
            return Err(Error::invalid("call_json \"args\" must be an object"));
        }
        let call_id = match call.get("call_id") {
            None | Some(Value::Null) => "",
            Some(Value::String(s)) => s.as_str(),
            Some(_) => return Err(Error::invalid("call_json \"call_id\" must be a string")),
        };
        let answer = match call.get("answer") {
            None | Some(Value::Null) => None,
            Some(a) => Some(Answer::from_json(a)?),
        };
        let result = relay_execute(name, &args, call_id, answer.as_ref());
        write_out(json_out, "json_out", serde_json::to_string(&result).unwrap_or_default())
    })
}
