//! `tn_client`: a configured model client, its runs (blocking and async), and cancellation.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use engine::{Answer, CancellationToken, Client, ClientOptions, Error, Request, RunInput, RunResult, Toolkit};
use serde_json::{Map, Value};

use crate::done::{start_async, tn_done_fn, Drive};
use crate::guard::{call, in_json, in_json_member, quietly, write_out, Result};
use crate::handles::{self, Object};
use crate::host::{
    tn_body_transform_fn, tn_free_fn, tn_hook_fn, tn_on_error_fn, tn_on_metric_fn, tn_on_warning_fn, tn_transport_fn,
    tn_wait_for_fn, CBodyTransform, CHooks, COnError, COnMetric, COnWarning, CTransport, CWaitFor, HostData,
};
use crate::runtime::{block_on, run_data_of};

/// An opaque model client. Made by `tn_client_new`, released by `tn_client_free`; runs in
/// progress keep what they use alive. One client may run many times, concurrently.
pub struct tn_client {
    _private: [u8; 0],
}

/// An opaque cancellation handle for runs (`tn_cancel_new`, `tn_cancel_fire`, `tn_cancel_free`).
pub struct tn_cancel {
    _private: [u8; 0],
}

/// The host behaviour of a client. Every field may be NULL / 0. Callbacks run on library
/// threads, get `user_data` back, and answer through `tn_complete`.
#[repr(C)]
pub struct tn_callbacks {
    /// Handed back to every callback.
    pub user_data: *mut c_void,
    /// Called once with `user_data` when the client is freed and no run uses it any more.
    pub free_user_data: tn_free_fn,
    /// Resolves suspensions inline; NULL makes a suspension halt the run (status `pending`).
    pub wait_for: tn_wait_for_fn,
    /// Sends the model requests; NULL uses the library's own HTTP/1.1 client.
    pub transport: tn_transport_fn,
    /// Lifecycle hooks, called for the hooks named in `hook_mask`.
    pub hook: tn_hook_fn,
    /// `TN_HOOK_*` bits.
    pub hook_mask: u32,
    /// Classifies failed model calls; NULL retries what the default policy retries.
    pub on_error: tn_on_error_fn,
    /// Rewrites each request body before it is sent; NULL sends it as built. Added in ABI
    /// version 2, which is why a host checks `tn_abi_version()` before its first call: a
    /// host built against version 1 must be rebuilt.
    pub body_transform: tn_body_transform_fn,
    /// Receives each metric event as it happens; NULL: the client's registry
    /// (`tn_client_metrics`) still counts them. Added in ABI version 3.
    pub on_metric: tn_on_metric_fn,
    /// Receives what a run warns about; NULL: nothing is said. Added in ABI version 4.
    pub on_warning: tn_on_warning_fn,
}

pub(crate) struct ClientHandle {
    pub(crate) client: Client,
    /// What reading the options warned about, as a JSON array.
    warnings: String,
    /// Keeps the host's user_data alive (and its finalizer pending) while the client lives.
    _data: Option<Arc<HostData>>,
}

impl ClientHandle {
    /// A handle for `client`, made from `c`'s, keeping what `c` keeps (its warnings and the
    /// host's user data).
    pub(crate) fn derived(c: &ClientHandle, client: Client) -> ClientHandle {
        ClientHandle { client, warnings: c.warnings.clone(), _data: c._data.clone() }
    }
}

fn attach(opts: &mut ClientOptions, cb: &tn_callbacks, data: &Arc<HostData>) {
    if let Some(f) = cb.wait_for {
        opts.wait_for = Some(Arc::new(CWaitFor { data: data.clone(), f }));
    }
    if let Some(f) = cb.transport {
        opts.transport = Some(Arc::new(CTransport { data: data.clone(), f }));
    }
    if let (Some(f), true) = (cb.hook, cb.hook_mask != 0) {
        opts.hooks = Some(Arc::new(engine::JsonHooksAdapter(CHooks { data: data.clone(), f, mask: cb.hook_mask })));
    }
    if let Some(f) = cb.on_error {
        opts.on_error = Some(Arc::new(COnError { data: data.clone(), f }));
    }
    if let Some(f) = cb.body_transform {
        opts.body_transform = Some(Arc::new(CBodyTransform { data: data.clone(), f }));
    }
    if let Some(f) = cb.on_metric {
        opts.on_metric = Some(Arc::new(COnMetric { data: data.clone(), f }));
    }
    if let Some(f) = cb.on_warning {
        opts.on_warning = Some(Arc::new(COnWarning { data: data.clone(), f }));
    }
}

/// Makes a client from `options_json`: `{"base_url", "style" ("openai" | "anthropic"),
/// "model", "api_key"?, "headers"? {name: value}, "system_prompt"?, "max_turns"? (10),
/// "retries"? (2), "retry_base_ms"? (500), "retryable_statuses"? [], "max_retry_after_ms"?
/// (60000), "timeout_ms"?, "max_tokens"? (4096), "request_params"? {}, "store"? (a SQLite
/// path or a postgres:// URL), "max_part_bytes"?, "on_unsupported_part"? ("error" | "text")}`. An unknown key or a
/// value of the wrong type is `TN_ERR_INVALID_ARGUMENT` naming the option; a `request_params`
/// key the engine owns (`messages`, `tools`, `stream`) is dropped with a warning (see
/// `tn_client_warnings`). `callbacks` may
/// be NULL; the struct is copied. The library owns `callbacks->user_data` from this call on:
/// `free_user_data` runs once when the client is freed and no run uses it any more, and also
/// when this call fails, so the caller never frees it itself.
///
/// # Safety
/// Pointers as documented; `out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_client_new(
    options_json: *const c_char,
    callbacks: *const tn_callbacks,
    out: *mut *mut tn_client,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        // SAFETY: as documented (NULL or a readable struct; `out` checked).
        unsafe { make_client(options_json, callbacks, out, ClientOptions::from_json, |_, _, _| Ok(())) }
    })
}

/// Makes a client: `read` reads the options, then the callbacks are attached and `finish`
/// completes the options (with the callbacks and the host data, when given).
///
/// # Safety
/// `callbacks` is NULL or readable; `out` is NULL or writable.
pub(crate) unsafe fn make_client(
    options_json: *const c_char,
    callbacks: *const tn_callbacks,
    out: *mut *mut tn_client,
    read: impl FnOnce(&Value) -> Result<engine::Parsed<ClientOptions>>,
    finish: impl FnOnce(&mut ClientOptions, Option<&tn_callbacks>, Option<&Arc<HostData>>) -> Result<()>,
) -> Result<()> {
    // SAFETY: NULL or a readable tn_callbacks (documented).
    let cb = unsafe { callbacks.as_ref() };
    // Made first, so that any failure below still runs the host's finalizer, once.
    let data = cb.map(|cb| HostData::new(cb.user_data, cb.free_user_data));
    if out.is_null() {
        return Err(Error::invalid("out is NULL"));
    }
    let parsed = read(&in_json(options_json, "options_json")?)?;
    let warnings = crate::status::warnings_json(&parsed.warnings);
    let mut opts = parsed.value;
    if let (Some(cb), Some(data)) = (cb, &data) {
        attach(&mut opts, cb, data);
    }
    finish(&mut opts, cb, data.as_ref())?;
    let client = Client::new(opts)?;
    let handle = ClientHandle { client, warnings, _data: data };
    let handle = handles::register(Object::Client(Arc::new(handle)))?;
    // SAFETY: checked non-NULL above.
    unsafe { *out = handle };
    Ok(())
}

/// Writes to `*warnings_out` what making `client` warned about, as a JSON array of
/// `{"code", "message"}` (`[]` when nothing): an option accepted but not implemented yet
/// (`unimplemented_option`), a `request_params` key the engine owns, dropped
/// (`ignored_request_param`). The library never prints them; a host shows them its own way.
///
/// # Safety
/// `client` is a pointer this library returned; `warnings_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_client_warnings(
    client: *const tn_client,
    warnings_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let c = handles::client(client)?;
        write_out(warnings_out, "warnings_out", c.warnings.clone())
    })
}

/// Writes the client's cumulative metrics as Prometheus text (SPEC §8) to `*text_out` (free
/// it with `tn_string_free`): HELP and TYPE lines only before the first run. Added in ABI
/// version 3.
///
/// # Safety
/// `client` is a pointer this library returned; `text_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_client_metrics(
    client: *const tn_client,
    text_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let c = handles::client(client)?;
        write_out(text_out, "text_out", c.client.metrics())
    })
}

/// Releases a client. NULL, or a handle already freed, is ignored.
///
/// # Safety
/// `client` is NULL or a pointer this library returned.
#[no_mangle]
pub unsafe extern "C" fn tn_client_free(client: *mut tn_client) {
    quietly(|| handles::release(client, "tn_client"));
}

/// What one run needs, owned so it can move onto the runtime.
pub(crate) struct Job {
    pub(crate) client: Arc<ClientHandle>,
    pub(crate) toolkit: Option<Arc<Toolkit>>,
    prompt: Option<String>,
    prompt_parts: Option<Vec<Value>>,
    history: Vec<Value>,
    resume: Option<(Request, Answer)>,
    id: Option<String>,
    answer: Option<Answer>,
    cancel: Option<CancellationToken>,
    /// Where a streamed run's events go.
    pub(crate) stream: Option<engine::StreamTo>,
    /// Whether the result leaves out the unchanged history it starts with.
    elide: bool,
    /// The JSON text the history was read from, when eliding: the result's messages are
    /// compared with it (`Client::run_eliding_text`).
    history_text: Option<String>,
}

impl Job {
    pub(crate) fn new(
        client: *const tn_client,
        toolkit: *const crate::toolkit::tn_toolkit,
        cancel: *const tn_cancel,
    ) -> Result<Job> {
        Ok(Job {
            client: handles::client(client)?,
            toolkit: if toolkit.is_null() { None } else { Some(handles::toolkit(toolkit)?) },
            prompt: None,
            prompt_parts: None,
            history: Vec::new(),
            resume: None,
            id: None,
            answer: None,
            cancel: if cancel.is_null() { None } else { Some(handles::cancel(cancel)?) },
            stream: None,
            elide: false,
            history_text: None,
        })
    }

    /// [`Job::input`] of the C string `input_json`, keeping its history's text when eliding.
    pub(crate) fn input_json(self, input_json: *const c_char) -> Result<Job> {
        let (v, history) = in_json_member(input_json, "input_json", "history")?;
        let mut job = self.input(v)?;
        if job.elide {
            job.history_text = history.map(str::to_owned);
        }
        Ok(job)
    }

    /// Reads `{"prompt", "history"?, "id"?}`, `{"history", "pending", "answer"}` or
    /// `{"id", "answer", "pending"?}`, each with an optional `"elide_history"`.
    pub(crate) fn input(mut self, v: Value) -> Result<Job> {
        let mut o: Map<String, Value> = match v {
            Value::Object(o) => o,
            _ => return Err(Error::invalid("input_json must be a JSON object")),
        };
        const KEYS: [&str; 6] = ["prompt", "history", "pending", "answer", "id", "elide_history"];
        if let Some(k) = o.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(Error::invalid(format!("unknown input key {k:?} (known: {})", KEYS.join(", "))));
        }
        self.elide = match o.remove("elide_history") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => b,
            Some(_) => return Err(Error::invalid("\"elide_history\" must be a boolean")),
        };
        self.id = match o.remove("id") {
            None | Some(Value::Null) => None,
            Some(Value::String(id)) => Some(id),
            Some(_) => return Err(Error::invalid("\"id\" must be a string (a conversation id)")),
        };
        self.history = match o.remove("history") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(h)) => h,
            Some(_) => return Err(Error::invalid("\"history\" must be an array of messages")),
        };
        match (o.remove("prompt"), o.remove("pending"), o.remove("answer")) {
            (Some(Value::String(p)), None, None) => self.prompt = Some(p),
            (Some(Value::Array(parts)), None, None) => self.prompt_parts = Some(parts),
            (None, Some(p), Some(a)) => self.resume = Some((Request::from_json(&p)?, Answer::from_json(&a)?)),
            (None, None, Some(a)) if self.id.is_some() => self.answer = Some(Answer::from_json(&a)?),
            _ => {
                return Err(Error::invalid(
                    "input_json needs either a \"prompt\" (a string, or an array of content parts), or \"pending\" and \"answer\" to resume \
                     (with an \"id\", \"answer\" alone)",
                ))
            }
        }
        Ok(self)
    }

    pub(crate) async fn run(self) -> Result<Ran> {
        let input = RunInput {
            prompt: self.prompt,
            prompt_parts: self.prompt_parts,
            history: self.history,
            toolkit: self.toolkit.as_deref(),
            cancel: self.cancel,
            resume: self.resume,
            stream: self.stream,
            id: self.id,
            answer: self.answer,
        };
        let client = &self.client.client;
        let (result, kept) = match (self.elide, &self.history_text) {
            (true, Some(text)) => {
                let (result, kept) = client.run_eliding_text(input, text).await?;
                (result, Some(kept))
            }
            (true, None) => {
                let (result, kept) = client.run_eliding(input).await?;
                (result, Some(kept))
            }
            (false, _) => (client.run_input(input).await?, None),
        };
        Ok(Ran { result, kept })
    }
}

/// A finished run, and how many of its leading messages were left out as the caller's own
/// (`"elide_history": true` in the input; see `Client::run_eliding`).
pub(crate) struct Ran {
    result: RunResult,
    kept: Option<usize>,
}

/// The RunResult JSON; an eliding run's carries `"history_kept": n` first.
pub(crate) fn result_json(r: &Ran) -> String {
    let json = serde_json::to_string(&r.result).unwrap_or_default();
    match (r.kept, json.strip_prefix('{')) {
        (Some(n), Some(rest)) => format!("{{\"history_kept\":{n},{rest}"),
        _ => json,
    }
}

/// Runs the loop and blocks until it ends, writing the RunResult JSON (snake_case keys:
/// `text, messages, tool_calls, tool_call_count, turns, usage, model, status, limit?,
/// pending?`) to `*result_out`. `input_json` is `{"prompt", "history"?}` (`prompt` a string,
/// or, from ABI version 4, an array of content parts: `{"type": "text", "text"}` or `{"type":
/// "image" | "file" | "audio", "mimeType", "data" (base64) | "url", "name"?}`), or `{"history",
/// "pending", "answer"}` to resume a halted run. With `"id"` (ABI version 4) the run is the
/// next turn of that conversation in the client's store (`tn_client_with_store`), which
/// supplies the history and keeps the result: `{"prompt", "id"}`, or `{"id", "answer",
/// "pending"?}` to resume it (`pending` may be left out when the store records it; a
/// conversation in use by another run, or a request answered already, is `TN_ERR_CONFLICT`).
/// Any of them may add `"elide_history": true` (ABI version 4): the result's `messages` then
/// leave out the leading messages equal to the `history` passed in, and `"history_kept": n`
/// says how many (the caller puts its own first `n` in front), so a long transcript is not
/// sent back. `toolkit` and `cancel` may be NULL. Refused with `TN_ERR_REENTRANT` inside a
/// callback made on a library thread (one made on a thread driving a run, `tn_client_run_here`,
/// may block).
///
/// # Safety
/// Pointers as documented; `result_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_client_run(
    client: *const tn_client,
    toolkit: *const crate::toolkit::tn_toolkit,
    input_json: *const c_char,
    cancel: *const tn_cancel,
    result_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        if result_out.is_null() {
            return Err(Error::invalid("result_out is NULL"));
        }
        let job = Job::new(client, toolkit, cancel)?.input_json(input_json)?;
        let r = block_on(job.run())?;
        write_out(result_out, "result_out", result_json(&r))
    })
}

/// Resumes a run that halted with status `pending`: `history_json` is its messages,
/// `pending_json` its pending Request, `answer_json` the Answer (its id must echo the
/// Request's, else `TN_ERR_ANSWER_MISMATCH`). Blocks like `tn_client_run`.
///
/// # Safety
/// Pointers as documented; `result_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_client_run_with_answer(
    client: *const tn_client,
    toolkit: *const crate::toolkit::tn_toolkit,
    history_json: *const c_char,
    pending_json: *const c_char,
    answer_json: *const c_char,
    cancel: *const tn_cancel,
    result_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        if result_out.is_null() {
            return Err(Error::invalid("result_out is NULL"));
        }
        let input = resume_input(history_json, pending_json, answer_json)?;
        let job = Job::new(client, toolkit, cancel)?.input(input)?;
        let r = block_on(job.run())?;
        write_out(result_out, "result_out", result_json(&r))
    })
}

/// The resume input of `Job::input`, from the three JSON arguments of a `_with_answer` call.
fn resume_input(history: *const c_char, pending: *const c_char, answer: *const c_char) -> Result<Value> {
    Ok(serde_json::json!({
        "history": in_json(history, "history_json")?,
        "pending": in_json(pending, "pending_json")?,
        "answer": in_json(answer, "answer_json")?,
    }))
}

/// Starts a run and returns at once. When it returns `TN_OK`, `done` is called exactly once,
/// on a library thread, whatever happens next: with `TN_OK` and the RunResult JSON, or with
/// the error status and error JSON (a failed, cancelled or timed-out run; `TN_ERR_CANCELLED`
/// when the library drops the run unfinished), and before the finalizers of a client or
/// toolkit freed during the run. When it returns an error (bad arguments),
/// `done` is never called. `input_json` is as for `tn_client_run` (a resume included).
///
/// # Safety
/// Pointers as documented; `done` must not be NULL.
#[no_mangle]
pub unsafe extern "C" fn tn_client_run_async(
    client: *const tn_client,
    toolkit: *const crate::toolkit::tn_toolkit,
    input_json: *const c_char,
    cancel: *const tn_cancel,
    done: tn_done_fn,
    user_data: *mut c_void,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let job = Job::new(client, toolkit, cancel)?.input_json(input_json)?;
        start(job, Drive::Spawn, done, user_data)
    })
}

/// `tn_client_run_async` driven on the calling thread: blocks until the run ends and calls
/// `done` (exactly once, on this thread) before returning `TN_OK`. While it blocks, the run's
/// callbacks (tools, `wait_for`, hooks, the transport) are called on this thread too; a
/// callback may hand its work to another thread and answer through `tn_complete` later, and
/// must do so for work that waits on the run's other callbacks (they are not called while one
/// blocks this thread). For a host whose callbacks are costly to enter from a thread it did
/// not start, this saves the thread hops of `tn_client_run_async`. A callback made on this
/// thread may itself make blocking calls (a nested run is driven here too, the outer one
/// waiting meanwhile); inside a callback on a library thread this is refused with
/// `TN_ERR_REENTRANT`, as the other blocking calls are. `done` is not called when it returns
/// an error. Added in ABI version 4.
///
/// # Safety
/// Pointers as documented; `done` must not be NULL.
#[no_mangle]
pub unsafe extern "C" fn tn_client_run_here(
    client: *const tn_client,
    toolkit: *const crate::toolkit::tn_toolkit,
    input_json: *const c_char,
    cancel: *const tn_cancel,
    done: tn_done_fn,
    user_data: *mut c_void,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let job = Job::new(client, toolkit, cancel)?.input_json(input_json)?;
        start(job, Drive::Here, done, user_data)
    })
}

/// `tn_client_run_with_answer` without blocking: starts the resumed run and returns at once;
/// `done` is called as for `tn_client_run_async`.
///
/// # Safety
/// Pointers as documented; `done` must not be NULL.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the blocking variant's arguments plus the callback pair
pub unsafe extern "C" fn tn_client_run_with_answer_async(
    client: *const tn_client,
    toolkit: *const crate::toolkit::tn_toolkit,
    history_json: *const c_char,
    pending_json: *const c_char,
    answer_json: *const c_char,
    cancel: *const tn_cancel,
    done: tn_done_fn,
    user_data: *mut c_void,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let input = resume_input(history_json, pending_json, answer_json)?;
        let job = Job::new(client, toolkit, cancel)?.input(input)?;
        start(job, Drive::Spawn, done, user_data)
    })
}

/// Starts `job` as `drive` says, reporting to `done`; its client and toolkit are let go only
/// after `done`.
pub(crate) fn start(job: Job, drive: Drive, done: tn_done_fn, user_data: *mut c_void) -> Result<()> {
    let keep = Box::new((job.client.clone(), job.toolkit.clone()));
    start_async(drive, job.run(), keep, result_json, done, user_data)
}

/// The `user_data` of the async run (`tn_client_run_async`, `tn_client_run_with_answer_async`)
/// or async tool call (`tn_toolkit_execute_call_async`) whose callback was handed `token`: how
/// a host serving many concurrent runs from one client and one toolkit tells which run a
/// callback belongs to. NULL when the token is not pending,
/// or its callback comes from a blocking call (`tn_client_run`, `tn_toolkit_execute`). Valid
/// while the token is pending; callable from any thread.
#[no_mangle]
pub extern "C" fn tn_token_run_data(token: u64) -> *mut c_void {
    let mut out = std::ptr::null_mut();
    quietly(|| out = run_data_of(token).map_or(std::ptr::null_mut(), |d| d as *mut c_void));
    out
}

/// Makes a cancellation handle. Pass it to runs; `tn_cancel_fire` aborts them all.
///
/// # Safety
/// `out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_cancel_new(out: *mut *mut tn_cancel, error_out: *mut *mut c_char) -> i32 {
    call(error_out, || {
        if out.is_null() {
            return Err(Error::invalid("out is NULL"));
        }
        let handle = handles::register(Object::Cancel(CancellationToken::new()))?;
        // SAFETY: checked non-NULL above.
        unsafe { *out = handle };
        Ok(())
    })
}

/// Cancels every run given this handle (now and later): their in-flight requests are
/// aborted and they end with `TN_ERR_CANCELLED`. Callable from any thread, callbacks included.
///
/// # Safety
/// `cancel` is a pointer this library returned.
#[no_mangle]
pub unsafe extern "C" fn tn_cancel_fire(cancel: *const tn_cancel, error_out: *mut *mut c_char) -> i32 {
    call(error_out, || {
        handles::cancel(cancel)?.cancel();
        Ok(())
    })
}

/// Releases a cancellation handle (runs already given it keep working). NULL is ignored.
///
/// # Safety
/// `cancel` is NULL or a pointer this library returned.
#[no_mangle]
pub unsafe extern "C" fn tn_cancel_free(cancel: *mut tn_cancel) {
    quietly(|| handles::release(cancel, "tn_cancel"));
}
