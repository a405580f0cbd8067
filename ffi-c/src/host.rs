//! The core's host traits implemented over C callbacks. Each callback gets its input as JSON
//! and a completion token, and answers through `tn_complete`, from its own thread or any
//! other. A callback runs on a library thread and must return promptly: slow work is done
//! elsewhere and completed later.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

use bytes::Bytes;
use engine::{
    Answer, Error, ErrorInfo, ErrorKind, HookFuture, HookName, HookSet, HttpRequest, HttpResponse, JsonHooks, OnError,
    Request, Tier, ToolContext, ToolHandler, ToolResult, Transport, WaitFor,
};
use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use crate::guard::{c_arg, Result};
use crate::runtime::{host_call, Completion};
use crate::status::{kind_of, TN_ERR_HOST, TN_OK};

/// Runs a tool: `call_json` is `{"last_to_start", "name", "args", "call_id", "host_ref"?,
/// "answer"?, "timeout_ms"?}` (`host_ref` when the tool was declared with one), its first key
/// always `last_to_start` (ABI version 4): true when every other call of the turn has already
/// started, so that running this one before returning holds none of them back (a host
/// driving the run on its own thread, `tn_client_run_here`, may then run it inline).
/// Complete with a ToolResult JSON `{"output", "is_error", "metadata"?, "parts"?}`, or with an
/// error status and a message (the model then sees an error result with that message).
/// `parts` are content parts in the canonical form (see `tn_part_build`), sent beside the
/// output where the provider's style can carry them; a part that is not valid makes the
/// result an error saying why.
pub type tn_tool_fn = Option<unsafe extern "C" fn(user_data: *mut c_void, call_json: *const c_char, token: u64)>;

/// Resolves a suspension inline: `request_json` is the Request. Complete with an Answer JSON,
/// or `null` for no answer (treated as a decline).
pub type tn_wait_for_fn = Option<unsafe extern "C" fn(user_data: *mut c_void, request_json: *const c_char, token: u64)>;

/// Rewrites each model request body just before it is sent: `body_json` is the body (the
/// model, messages, tools and every request parameter). Complete with a JSON object to send
/// instead, or `null` to send it unchanged; an error status ends the run with that message.
pub type tn_body_transform_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, body_json: *const c_char, token: u64)>;

/// Receives each metric event (SPEC §8) as JSON: `{"event": "llm", "model", "status" ("ok" |
/// "error"), "ms", "prompt_tokens", "completion_tokens", "parts"?}` (`parts`: the request's content
/// parts as `{"type", "mimeType", "bytes"}`, never their data, when it had any), `{"event": "tool", "tool", "source",
/// "is_error", "ms", "pending"?}` or `{"event": "run", "model", "turns", "tool_calls",
/// "total_tokens", "ms", "error"?}`. Called synchronously, in order, on the library thread
/// driving the run, with nothing to complete: return quickly, and do not block on the run
/// itself. `event_json` is valid only during the call. Added in ABI version 3.
pub type tn_on_metric_fn = Option<unsafe extern "C" fn(user_data: *mut c_void, event_json: *const c_char)>;

/// Receives what a run warns about, each kind once per client, as JSON `{"code", "message"}`
/// (`content_part_placeholder`: a tool's content part the provider cannot take, or one over
/// `max_part_bytes`, was sent as its text placeholder). Called synchronously on the library
/// thread driving the run, with nothing to complete. Added in ABI version 4.
pub type tn_on_warning_fn = Option<unsafe extern "C" fn(user_data: *mut c_void, warning_json: *const c_char)>;

/// Computes data skills when a toolkit is built (`tn_toolkit_create_with`): `request_json`
/// is `{}` (reserved). Complete with a JSON array of SkillDefs (`{"name", "description",
/// "content", "resources"?, "base"?}`); an error status becomes a warning on the toolkit and
/// the other skill sources still load.
pub type tn_skill_provider_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, request_json: *const c_char, token: u64)>;

/// An in-process model (`tn_client_new_in_process`): `request_json` is `{"messages", "tools"
/// (or null), "model", "body"}`; complete with one assistant message: `{"content"}`, or
/// `{"tool_calls": [{"id"?, "name", "arguments"}]}` (`arguments` an object or a JSON string),
/// with an optional `"usage"`. An error status ends the run at once: nothing is retried.
pub type tn_generate_fn = Option<unsafe extern "C" fn(user_data: *mut c_void, request_json: *const c_char, token: u64)>;

/// Sends one model request: `request_json` is `{"url", "headers": {name: value}, "body",
/// "timeout_ms"}` (`body` is the JSON text). Complete with `{"status", "headers", "body"}` for
/// any HTTP answer; with `TN_ERR_NETWORK` and a message when no answer came (the engine
/// retries it); any other error status ends the run.
pub type tn_transport_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, request_json: *const c_char, token: u64)>;

/// A lifecycle hook: `hook` names it and `event_json` is its event; complete with `null` or
/// an override, or with an error status to end the run with that message:
/// - `before_llm` `{messages, tools, model, turn}` → `{messages?, tools?, model?}` (a model
///   applies to this turn only; messages and tools replace the run's);
/// - `after_llm` `{response, model, turn}` → `null`;
/// - `before_tool` `{name, args, id, turn}` → `{result}` to skip the tool (a suspension
///   included) or `{args}` to rewrite them;
/// - `after_tool` `{name, args, result, id, turn}` → `{result}` to replace it (never called
///   on a suspension).
pub type tn_hook_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, hook: *const c_char, event_json: *const c_char, token: u64)>;

/// Classifies a failed model call: `info_json` is `{"status"?, "error"?, "attempt",
/// "retryable"}`. Complete with `"retry"`, `"fail"`, or `"default"` (or `null`: what the
/// engine would do without `on_error`, `retryable ? retry : fail`).
pub type tn_on_error_fn = Option<unsafe extern "C" fn(user_data: *mut c_void, info_json: *const c_char, token: u64)>;

/// Releases a `user_data` once the library no longer uses it. Called exactly once, on
/// whichever thread drops the last use: the caller's (inside `tn_client_free`,
/// `tn_toolkit_free`, or a `_new` that failed) or a library thread (when the last run using
/// it ends after its handle was freed). It must not call back into the library.
pub type tn_free_fn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

/// `tn_callbacks.hook_mask` bit: call the hook for `before_llm`.
pub const TN_HOOK_BEFORE_LLM: u32 = 1;
/// `tn_callbacks.hook_mask` bit: call the hook for `after_llm`.
pub const TN_HOOK_AFTER_LLM: u32 = 2;
/// `tn_callbacks.hook_mask` bit: call the hook for `before_tool`.
pub const TN_HOOK_BEFORE_TOOL: u32 = 4;
/// `tn_callbacks.hook_mask` bit: call the hook for `after_tool`.
pub const TN_HOOK_AFTER_TOOL: u32 = 8;

/// The `TN_HOOK_*` bit of a hook: the one mapping from the core's hook names to the bits.
pub(crate) const fn hook_bit(hook: HookName) -> u32 {
    match hook {
        HookName::BeforeLlm => TN_HOOK_BEFORE_LLM,
        HookName::AfterLlm => TN_HOOK_AFTER_LLM,
        HookName::BeforeTool => TN_HOOK_BEFORE_TOOL,
        HookName::AfterTool => TN_HOOK_AFTER_TOOL,
    }
}

/// A host's `user_data` and its finalizer, run once when the last user lets go.
pub(crate) struct HostData {
    user_data: *mut c_void,
    free: tn_free_fn,
}

// SAFETY: the header requires `user_data` to be usable from any thread; the library only
// passes it back to the host's own callbacks and finalizer.
unsafe impl Send for HostData {}
// SAFETY: as above; the library never reads through the pointer.
unsafe impl Sync for HostData {}

impl HostData {
    pub(crate) fn new(user_data: *mut c_void, free: tn_free_fn) -> Arc<HostData> {
        Arc::new(HostData { user_data, free })
    }
}

impl Drop for HostData {
    fn drop(&mut self) {
        if let Some(free) = self.free {
            // SAFETY: the host's finalizer, called exactly once with its own pointer.
            unsafe { free(self.user_data) };
        }
    }
}

/// Calls `f(user_data, arg, token)` and waits for its completion.
async fn ask(
    data: &Arc<HostData>,
    f: unsafe extern "C" fn(*mut c_void, *const c_char, u64),
    arg: String,
) -> Completion {
    let arg = c_arg(arg);
    // SAFETY: a host callback with its own user_data; `arg` outlives the call.
    host_call(|token| unsafe { f(data.user_data, arg.as_ptr(), token) }).await
}

/// Calls a two-string callback `f(user_data, name, arg, token)` and reads its completion as
/// JSON (`what` names the callback in errors).
pub(crate) async fn host_json(
    data: &Arc<HostData>,
    f: unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char, u64),
    name: &str,
    arg: String,
    what: &str,
) -> Result<Value> {
    let (name, arg) = (c_arg(name.into()), c_arg(arg));
    // SAFETY: the host's callback with its own user_data; both strings outlive the call.
    let c = host_call(|token| unsafe { f(data.user_data, name.as_ptr(), arg.as_ptr(), token) }).await;
    payload_json(c, what)
}

/// The completion as a JSON value, or the host's failure as an error of `kind`.
fn payload_json(c: Completion, what: &str) -> Result<Value> {
    if c.status != TN_OK {
        let message = c.payload.unwrap_or_else(|| format!("{what} failed"));
        return Err(match kind_of(c.status) {
            Some(ErrorKind::Cancelled) => Error::new(ErrorKind::Cancelled, message),
            _ => Error::host(Box::new(HostFailure { message, host_ref: c.host_ref })),
        });
    }
    let text = c.payload.unwrap_or_else(|| "null".into());
    serde_json::from_str(&text).map_err(|e| Error::host(format!("{what} completed with invalid JSON: {e}").into()))
}

/// What a completion `tn_complete` refused (its text is not UTF-8) delivers instead: the host
/// believes it has answered, so the call must end rather than wait forever on the token. An
/// error status keeps its kind (a transport's network error stays retryable) and its message,
/// decoded lossily; a result the engine cannot read becomes the host's failure, saying why.
///
/// # Safety
/// `text` is a non-NULL, NUL-terminated string.
pub(crate) unsafe fn refused_completion(
    status: i32,
    text: *const c_char,
    refusal: &Error,
    host_ref: Option<u64>,
) -> Completion {
    if status == TN_OK {
        let message = format!("the host's completion was refused: {}", refusal.message());
        return Completion { status: TN_ERR_HOST, payload: Some(message), host_ref };
    }
    // SAFETY: non-NULL and NUL-terminated, as the caller guarantees.
    let message = unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned();
    Completion { status, payload: Some(message), host_ref }
}

/// A failure a host callback reported, with the host's own reference to it, if it gave one.
#[derive(Debug)]
pub(crate) struct HostFailure {
    pub message: String,
    pub host_ref: Option<u64>,
}

impl std::fmt::Display for HostFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for HostFailure {}

pub(crate) struct CTool {
    pub data: Arc<HostData>,
    pub f: unsafe extern "C" fn(*mut c_void, *const c_char, u64),
    pub name: String,
    /// The host's own number for this tool, echoed in every call.
    pub host_ref: Option<u64>,
}

impl ToolHandler for CTool {
    fn execute(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, Result<ToolResult>> {
        let (data, f) = (self.data.clone(), self.f);
        // `last_to_start` leads, so a host can read it without parsing the call.
        let mut call =
            json!({"last_to_start": ctx.last_to_start, "name": self.name, "args": args, "call_id": ctx.call_id});
        if let Some(r) = self.host_ref {
            call["host_ref"] = json!(r);
        }
        if let Some(a) = &ctx.answer {
            call["answer"] = a.to_json();
        }
        if let Some(t) = ctx.timeout {
            call["timeout_ms"] = json!(t.as_millis() as u64);
        }
        Box::pin(async move {
            let v = payload_json(ask(&data, f, call.to_string()).await, "the tool")?;
            serde_json::from_value(v)
                .map_err(|e| Error::host(format!("the tool returned an invalid ToolResult: {e}").into()))
        })
    }
}

pub(crate) struct CWaitFor {
    pub data: Arc<HostData>,
    pub f: unsafe extern "C" fn(*mut c_void, *const c_char, u64),
}

impl WaitFor for CWaitFor {
    fn wait_for(&self, request: Request) -> HookFuture<Option<Answer>> {
        let (data, f) = (self.data.clone(), self.f);
        Box::pin(async move {
            let v = payload_json(ask(&data, f, request.to_json().to_string()).await, "wait_for")?;
            if v.is_null() {
                return Ok(None);
            }
            Answer::from_json(&v).map(Some)
        })
    }
}

pub(crate) struct CBodyTransform {
    pub data: Arc<HostData>,
    pub f: unsafe extern "C" fn(*mut c_void, *const c_char, u64),
}

impl engine::BodyTransform for CBodyTransform {
    fn transform(&self, body: Value) -> HookFuture<Option<Value>> {
        let (data, f) = (self.data.clone(), self.f);
        Box::pin(async move {
            match payload_json(ask(&data, f, body.to_string()).await, "body_transform")? {
                Value::Null => Ok(None),
                v @ Value::Object(_) => Ok(Some(v)),
                _ => Err(Error::invalid("body_transform must complete with a JSON object or null")),
            }
        })
    }
}

pub(crate) struct COnMetric {
    pub data: Arc<HostData>,
    pub f: unsafe extern "C" fn(*mut c_void, *const c_char),
}

impl engine::metrics::OnMetric for COnMetric {
    fn on_metric(&self, event: &engine::metrics::MetricEvent) {
        let arg = c_arg(event.to_json().to_string());
        // SAFETY: a host callback with its own user_data; `arg` outlives the call.
        unsafe { (self.f)(self.data.user_data, arg.as_ptr()) }
    }
}

pub(crate) struct COnWarning {
    pub data: Arc<HostData>,
    pub f: unsafe extern "C" fn(*mut c_void, *const c_char),
}

impl engine::OnWarning for COnWarning {
    fn on_warning(&self, warning: &engine::Warning) {
        let arg = c_arg(serde_json::json!({"code": warning.code, "message": warning.message}).to_string());
        // SAFETY: a host callback with its own user_data; `arg` outlives the call.
        unsafe { (self.f)(self.data.user_data, arg.as_ptr()) }
    }
}

pub(crate) struct CGenerate {
    pub data: Arc<HostData>,
    pub f: unsafe extern "C" fn(*mut c_void, *const c_char, u64),
}

impl engine::InProcessModel for CGenerate {
    fn generate(&self, request: Value) -> HookFuture<Value> {
        let (data, f) = (self.data.clone(), self.f);
        Box::pin(async move { payload_json(ask(&data, f, request.to_string()).await, "generate") })
    }
}

pub(crate) struct CSkillProvider {
    pub data: Arc<HostData>,
    pub f: unsafe extern "C" fn(*mut c_void, *const c_char, u64),
}

impl engine::SkillProvider for CSkillProvider {
    fn skills(&self) -> HookFuture<Vec<engine::SkillDef>> {
        let (data, f) = (self.data.clone(), self.f);
        Box::pin(async move {
            match payload_json(ask(&data, f, "{}".to_string()).await, "the skill provider")? {
                Value::Array(defs) => defs.iter().map(engine::SkillDef::from_json).collect(),
                _ => Err(Error::invalid("the skill provider must complete with a JSON array of skills")),
            }
        })
    }
}

pub(crate) struct CTransport {
    pub data: Arc<HostData>,
    pub f: unsafe extern "C" fn(*mut c_void, *const c_char, u64),
}

impl Transport for CTransport {
    fn post(&self, request: HttpRequest) -> BoxFuture<'static, Result<HttpResponse>> {
        let (data, f) = (self.data.clone(), self.f);
        let headers: serde_json::Map<String, Value> =
            request.headers.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
        let req = json!({
            "url": request.url,
            "headers": headers,
            "body": String::from_utf8_lossy(&request.body),
            "timeout_ms": request.timeout.as_millis() as u64,
        });
        Box::pin(async move {
            let c = ask(&data, f, req.to_string()).await;
            if kind_of(c.status) == Some(ErrorKind::Network) {
                let message = c.payload.unwrap_or_else(|| "network error".into());
                return Err(Error::with_host_source(
                    ErrorKind::Network,
                    Box::new(HostFailure { message, host_ref: c.host_ref }),
                ));
            }
            let v = payload_json(c, "the transport")?;
            let status = v.get("status").and_then(Value::as_u64).and_then(|s| u16::try_from(s).ok());
            let status =
                status.ok_or_else(|| Error::host("the transport's answer has no numeric \"status\"".into()))?;
            let headers = v
                .get("headers")
                .and_then(Value::as_object)
                .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect())
                .unwrap_or_default();
            let body = match v.get("body") {
                Some(Value::String(s)) => Bytes::from(s.clone().into_bytes()),
                Some(Value::Null) | None => Bytes::new(),
                Some(other) => Bytes::from(other.to_string().into_bytes()),
            };
            Ok(HttpResponse { status, headers, body })
        })
    }
}

pub(crate) struct CHooks {
    pub data: Arc<HostData>,
    pub f: unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char, u64),
    pub mask: u32,
}

impl JsonHooks for CHooks {
    fn enabled(&self) -> HookSet {
        let on = |hook| self.mask & hook_bit(hook) != 0;
        HookSet {
            before_llm: on(HookName::BeforeLlm),
            after_llm: on(HookName::AfterLlm),
            before_tool: on(HookName::BeforeTool),
            after_tool: on(HookName::AfterTool),
        }
    }

    fn call(&self, hook: HookName, event: Value) -> HookFuture<Value> {
        let (data, f) = (self.data.clone(), self.f);
        Box::pin(async move { host_json(&data, f, hook.as_str(), event.to_string(), hook.as_str()).await })
    }
}

pub(crate) struct COnError {
    pub data: Arc<HostData>,
    pub f: unsafe extern "C" fn(*mut c_void, *const c_char, u64),
}

impl OnError for COnError {
    fn classify(&self, info: ErrorInfo) -> HookFuture<Tier> {
        let (data, f) = (self.data.clone(), self.f);
        let mut v = json!({"attempt": info.attempt, "retryable": info.retryable});
        if let Some(s) = info.status {
            v["status"] = json!(s);
        }
        if let Some(e) = &info.error {
            v["error"] = json!(e);
        }
        Box::pin(async move {
            let c = ask(&data, f, v.to_string()).await;
            let tier = payload_json(c, "on_error")?;
            match &tier {
                Value::Null => Ok(Tier::Default),
                Value::String(s) => Tier::from_answer(Some(s)),
                other => Err(Error::invalid(format!("on_error must complete with a string, got {other}"))),
            }
        })
    }
}
