//! `tn_client_stream(_async)`: a run whose model answers are streamed (server-sent events)
//! and whose steps reach the host as they happen (SPEC §8).

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use engine::{Error, OnStreamEvent, StreamEvent, StreamTo};

use crate::client::{result_json, start, tn_cancel, tn_client, Job};
use crate::done::{tn_done_fn, Drive};
use crate::guard::{c_arg, call, write_out, Result};
use crate::runtime::block_on;
use crate::toolkit::tn_toolkit;

/// Receives one step of a streamed run as JSON: `{"type": "text", "delta"}`, `{"type":
/// "tool_call", "id", "name", "args"}`, `{"type": "tool_result", "id", "name", "output",
/// "is_error"}`, `{"type": "pending", "request"}` (before `wait_for` is asked, or the request
/// a durable halt stops on), `{"type": "usage", "usage"}` (just before a run ends `done`).
/// Called synchronously, in order, on the library thread driving the run, with nothing to
/// complete: return quickly. `event_json` is valid only during the call. The run's result
/// follows as the call's own (`result_out`, or `done`). Added in ABI version 3.
pub type tn_event_fn = Option<unsafe extern "C" fn(user_data: *mut c_void, event_json: *const c_char)>;

struct CEvents {
    f: unsafe extern "C" fn(*mut c_void, *const c_char),
    /// The host's pointer, handed back only (the header requires it usable from any thread).
    user_data: usize,
}

impl OnStreamEvent for CEvents {
    fn on_event(&self, event: StreamEvent) {
        let arg = c_arg(event.to_json().to_string());
        // SAFETY: the host's callback with its own pointer; `arg` outlives the call.
        unsafe { (self.f)(self.user_data as *mut c_void, arg.as_ptr()) }
    }
}

fn streamed(mut job: Job, on_event: tn_event_fn, user_data: *mut c_void) -> Result<Job> {
    let f = on_event.ok_or_else(|| Error::invalid("on_event is NULL"))?;
    job.stream = Some(StreamTo(Arc::new(CEvents { f, user_data: user_data as usize })));
    Ok(job)
}

/// `tn_client_run`, streamed: the requests ask for server-sent events, and `on_event` (with
/// `event_user_data`) gets each step as it happens. Blocks until the run ends; the RunResult
/// goes to `*result_out`. A stream cut short, garbled or stalled past the run's deadline is an
/// error (`TN_ERR_NETWORK`, `TN_ERR_PROTOCOL`, `TN_ERR_TIMEOUT`); once text arrived, a failed
/// request is not retried. Added in ABI version 3.
///
/// # Safety
/// Pointers as documented; `result_out` must be writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // tn_client_run's arguments plus the event callback pair
pub unsafe extern "C" fn tn_client_stream(
    client: *const tn_client,
    toolkit: *const tn_toolkit,
    input_json: *const c_char,
    cancel: *const tn_cancel,
    on_event: tn_event_fn,
    event_user_data: *mut c_void,
    result_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        if result_out.is_null() {
            return Err(Error::invalid("result_out is NULL"));
        }
        let job = Job::new(client, toolkit, cancel)?.input_json(input_json)?;
        let r = block_on(streamed(job, on_event, event_user_data)?.run())?;
        write_out(result_out, "result_out", result_json(&r))
    })
}

/// `tn_client_run_async`, streamed: `on_event` gets `user_data` too (as `done` and
/// `tn_token_run_data` do). Added in ABI version 3.
///
/// # Safety
/// Pointers as documented; `done` and `on_event` must not be NULL.
#[no_mangle]
pub unsafe extern "C" fn tn_client_stream_async(
    client: *const tn_client,
    toolkit: *const tn_toolkit,
    input_json: *const c_char,
    cancel: *const tn_cancel,
    on_event: tn_event_fn,
    done: tn_done_fn,
    user_data: *mut c_void,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let job = Job::new(client, toolkit, cancel)?.input_json(input_json)?;
        let job = streamed(job, on_event, user_data)?;
        start(job, Drive::Spawn, done, user_data)
    })
}

/// `tn_client_stream_async` driven on the calling thread, as `tn_client_run_here` drives
/// `tn_client_run_async`: blocks until the run ends, `on_event` and `done` called on this
/// thread, `done` before it returns `TN_OK`. Added in ABI version 4.
///
/// # Safety
/// Pointers as documented; `done` and `on_event` must not be NULL.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // tn_client_stream_async's arguments
pub unsafe extern "C" fn tn_client_stream_here(
    client: *const tn_client,
    toolkit: *const tn_toolkit,
    input_json: *const c_char,
    cancel: *const tn_cancel,
    on_event: tn_event_fn,
    done: tn_done_fn,
    user_data: *mut c_void,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let job = Job::new(client, toolkit, cancel)?.input_json(input_json)?;
        let job = streamed(job, on_event, user_data)?;
        start(job, Drive::Here, done, user_data)
    })
}
