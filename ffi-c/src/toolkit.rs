//! `tn_toolkit`: the tools a run may call, declared as JSON and run through one host callback.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use engine::{DuplicateNames, Error, ErrorKind, Tool, ToolContext, ToolResult, ToolSource, Toolkit};
use serde_json::Value;

use crate::done::{start_async, tn_done_fn, Drive};
use crate::guard::{call, in_json, in_str, quietly, write_out, Result};
use crate::handles::{self, Object};
use crate::host::{tn_free_fn, tn_tool_fn, CTool, HostData};
use crate::runtime::block_on;

/// An opaque set of tools. Made by `tn_toolkit_new`, released by `tn_toolkit_free`; a run in
/// progress keeps what it uses alive.
pub struct tn_toolkit {
    _private: [u8; 0],
}

/// The tools and the duplicate rule of a `tools_json`: an array, or `{"tools", "duplicates"?}`.
fn spec(tools: &Value) -> Result<(&Vec<Value>, DuplicateNames)> {
    let bad = || Error::invalid("tools_json must be a JSON array, or an object {\"tools\": [...], \"duplicates\"?}");
    match tools {
        Value::Array(arr) => Ok((arr, DuplicateNames::KeepFirst)),
        Value::Object(o) => {
            if let Some(k) = o.keys().find(|k| !["tools", "duplicates"].contains(&k.as_str())) {
                return Err(Error::invalid(format!("unknown tools_json key {k:?} (known: tools, duplicates)")));
            }
            let arr = o.get("tools").and_then(Value::as_array).ok_or_else(bad)?;
            let rule = match o.get("duplicates") {
                None | Some(Value::Null) => DuplicateNames::KeepFirst,
                Some(Value::String(s)) => DuplicateNames::parse(s)?,
                Some(_) => return Err(Error::invalid("\"duplicates\" must be \"keep_first\" or \"keep_last\"")),
            };
            Ok((arr, rule))
        }
        _ => Err(bad()),
    }
}

pub(crate) fn build(arr: &[Value], tool: tn_tool_fn, data: &Arc<HostData>) -> Result<Vec<Tool>> {
    arr.iter().enumerate().map(|(i, t)| make_tool(i, t, tool, data)).collect()
}

fn make_tool(i: usize, t: &Value, tool: tn_tool_fn, data: &Arc<HostData>) -> Result<Tool> {
    // An HTTP tool is the engine's own: it needs no callback.
    if let Some(spec) = t.get("http") {
        if let Some(k) = t.as_object().and_then(|o| o.keys().find(|k| k.as_str() != "http")) {
            return Err(Error::invalid(format!("tools[{i}]: an \"http\" tool takes no other key, got {k:?}")));
        }
        return engine::http_tool(engine::HttpToolSpec::from_json(spec)?);
    }
    let name = t.get("name").and_then(Value::as_str).filter(|n| !n.is_empty());
    let name = name.ok_or_else(|| Error::invalid(format!("tools[{i}] needs a non-empty \"name\"")))?;
    let desc = t.get("description").and_then(Value::as_str).unwrap_or("");
    let schema = t.get("input_schema").cloned().filter(|s| !s.is_null());
    let host_ref = match t.get("host_ref") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64().ok_or_else(|| Error::invalid(format!("tools[{i}].host_ref must be a non-negative integer")))?,
        ),
    };
    let made = if t.get("relay").and_then(Value::as_bool).unwrap_or(false) {
        Tool::relay(name, desc, schema)
    } else {
        let source = match t.get("source").and_then(Value::as_str) {
            None => ToolSource::Native,
            Some(s) => {
                ToolSource::parse(s).ok_or_else(|| Error::invalid(format!("tools[{i}]: unknown source {s:?}")))?
            }
        };
        let f = tool.ok_or_else(|| {
            Error::invalid(format!("tools[{i}] ({name}) is not a relay tool, so tool_fn must not be NULL"))
        })?;
        let handler = Arc::new(CTool { data: data.clone(), f, name: engine::sanitize(name), host_ref });
        Tool::new(name, desc, schema.unwrap_or_else(engine::empty_schema), source, handler)
    };
    Ok(match host_ref {
        Some(r) => made.with_host_ref(r),
        None => made,
    })
}

/// Makes a toolkit.
///
/// `tools_json` is an array of `{"name", "description", "input_schema", "source"?, "relay"?,
/// "host_ref"?}` or `{"http": {...}}` (an HTTP tool the engine runs itself: `name`,
/// `description`, `method`, `url` with `{arg}` placeholders, `headers` (`${ENV}` expanded),
/// `query`, `body`, `input_schema`, `timeout_ms`, `result_mode`), or `{"tools": [...], "duplicates"?: "keep_first" | "keep_last"}`. Names are
/// sanitised to `[a-zA-Z0-9_-]`; of tools sharing a name the first is kept (or the last, in the
/// first one's place, with `keep_last`), and each dropped one is a warning
/// (`tn_toolkit_warnings`); a relay tool named like a built-in tool (`bash`, `read`, ...) is
/// refused. `host_ref` is the host's own number for a tool: the engine hands it back in every
/// `call_json` of that tool and in `tn_toolkit_declarations`' order of kept tools
/// (`tn_toolkit_host_refs`), so a host finds its tool object without keeping names itself. Every non-relay tool runs through
/// `tool_fn` (see `tn_tool_fn`), which may be NULL only when all tools are relay tools.
/// `free_user_data`, if not NULL, is called once with `user_data` when the toolkit is freed
/// and no run uses it any more (also when this call fails).
///
/// # Safety
/// `tools_json` is a NUL-terminated string; `out` and `error_out` are writable or NULL.
#[no_mangle]
pub unsafe extern "C" fn tn_toolkit_new(
    tools_json: *const c_char,
    tool_fn: tn_tool_fn,
    user_data: *mut c_void,
    free_user_data: tn_free_fn,
    out: *mut *mut tn_toolkit,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let data = HostData::new(user_data, free_user_data);
        if out.is_null() {
            return Err(Error::invalid("out is NULL"));
        }
        let json = in_json(tools_json, "tools_json")?;
        let (specs, duplicates) = spec(&json)?;
        let tk = Toolkit::with_duplicates(build(specs, tool_fn, &data)?, duplicates)?;
        let handle = handles::register(Object::Toolkit(Arc::new(tk)))?;
        // SAFETY: checked non-NULL above.
        unsafe { *out = handle };
        Ok(())
    })
}

/// Writes to `*warnings_out` what making `toolkit` warned about, as a JSON array of
/// `{"code", "message"}` (`[]` when nothing): a tool dropped for its duplicate name
/// (`duplicate_tool`). The library never prints them.
///
/// # Safety
/// `toolkit` is a pointer this library returned; `warnings_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_toolkit_warnings(
    toolkit: *const tn_toolkit,
    warnings_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let tk = handles::toolkit(toolkit)?;
        write_out(warnings_out, "warnings_out", crate::status::warnings_json(tk.warnings()))
    })
}

/// Writes to `*refs_out` the `host_ref` of every tool the toolkit kept, in order, as a JSON
/// array (`null` for a tool given without one).
///
/// # Safety
/// `toolkit` is a pointer this library returned; `refs_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_toolkit_host_refs(
    toolkit: *const tn_toolkit,
    refs_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let tk = handles::toolkit(toolkit)?;
        let refs: Vec<Value> = tk.tools().iter().map(|t| t.host_ref().map_or(Value::Null, Value::from)).collect();
        write_out(refs_out, "refs_out", Value::Array(refs).to_string())
    })
}

/// Writes to `*tools_out` every tool the toolkit kept, in order, as a JSON array of
/// `{"name", "description", "input_schema", "source", "relay", "host_ref"}` (`source` is
/// `mcp`, `skill`, `builtin`, `native`, `http`, `relay`, ...; `host_ref` is `null` for a tool
/// given without one, and for every tool the engine made itself).
///
/// # Safety
/// `toolkit` is a pointer this library returned; `tools_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_toolkit_tools(
    toolkit: *const tn_toolkit,
    tools_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let tk = handles::toolkit(toolkit)?;
        let tools: Vec<Value> = tk
            .tools()
            .iter()
            .map(|t| {
                serde_json::json!({
                    "name": t.name(), "description": t.description(), "input_schema": t.input_schema(),
                    "source": t.source().as_str(), "relay": t.is_relay(), "host_ref": t.host_ref(),
                })
            })
            .collect();
        write_out(tools_out, "tools_out", Value::Array(tools).to_string())
    })
}

/// Releases a toolkit. NULL, or a handle already freed, is ignored.
///
/// # Safety
/// `toolkit` is NULL or a pointer this library returned.
#[no_mangle]
pub unsafe extern "C" fn tn_toolkit_free(toolkit: *mut tn_toolkit) {
    quietly(|| handles::release(toolkit, "tn_toolkit"));
}

/// The tool declarations for `style` (`openai`, `anthropic` or `gemini`), as a JSON array
/// written to `*json_out` (free it with `tn_string_free`).
///
/// # Safety
/// Pointers as documented; `json_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_toolkit_declarations(
    toolkit: *const tn_toolkit,
    style: *const c_char,
    json_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let tk = handles::toolkit(toolkit)?;
        let decls = match in_str(style, "style")? {
            "openai" => tk.to_openai(),
            "anthropic" => tk.to_anthropic(),
            "gemini" => tk.to_gemini(),
            other => return Err(Error::invalid(format!("style must be openai, anthropic or gemini, got {other:?}"))),
        };
        write_out(json_out, "json_out", Value::Array(decls).to_string())
    })
}

/// Runs one tool by name with `args_json` (an object) and writes its ToolResult JSON to
/// `*result_out`. An unknown tool is an error result naming it, not an error status. Blocks the
/// calling thread; refused with `TN_ERR_REENTRANT` inside a callback.
///
/// # Safety
/// Pointers as documented; `result_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_toolkit_execute(
    toolkit: *const tn_toolkit,
    name: *const c_char,
    args_json: *const c_char,
    result_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let tk = handles::toolkit(toolkit)?;
        let name = in_str(name, "name")?.to_string();
        let args = in_json(args_json, "args_json")?;
        if !args.is_object() {
            return Err(Error::invalid("args_json must be a JSON object"));
        }
        let result = block_on(async move { tk.execute(&name, args, ToolContext::default()).await })?;
        write_out(result_out, "result_out", serde_json::to_string(&result).unwrap_or_default())
    })
}

/// One tool call read from a `call_json`: `{"name", "args"?, "answer"?, "call_id"?,
/// "timeout_ms"?}`.
struct ToolCall {
    name: String,
    args: Value,
    ctx: ToolContext,
}

impl ToolCall {
    fn read(call: &Value) -> Result<ToolCall> {
        let name =
            call.get("name").and_then(Value::as_str).ok_or_else(|| Error::invalid("call_json needs a \"name\""))?;
        let args = call.get("args").cloned().unwrap_or(Value::Null);
        if !(args.is_object() || args.is_null()) {
            return Err(Error::invalid("call_json \"args\" must be an object"));
        }
        let answer = match call.get("answer") {
            None | Some(Value::Null) => None,
            Some(a) => Some(engine::Answer::from_json(a)?),
        };
        let call_id = call.get("call_id").and_then(Value::as_str).unwrap_or("").to_string();
        let timeout = call.get("timeout_ms").and_then(Value::as_u64).map(std::time::Duration::from_millis);
        let ctx = ToolContext { answer, call_id, timeout, ..ToolContext::default() };
        Ok(ToolCall { name: name.to_string(), args, ctx })
    }

    async fn run(self, tk: Arc<Toolkit>) -> Result<ToolResult> {
        tk.execute(&self.name, self.args, self.ctx).await
    }
}

fn tool_result_json(r: &ToolResult) -> String {
    serde_json::to_string(r).unwrap_or_default()
}

/// Runs one tool described by `call_json` = `{"name", "args"?, "answer"?, "call_id"?,
/// "timeout_ms"?}` (the answer is handed to the tool as on a re-run after a suspension; the
/// timeout is what the tool is told it has left) and writes its ToolResult
/// JSON to `*result_out`. Blocks like `tn_toolkit_execute`.
///
/// # Safety
/// Pointers as documented; `result_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_toolkit_execute_call(
    toolkit: *const tn_toolkit,
    call_json: *const c_char,
    result_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let tk = handles::toolkit(toolkit)?;
        let call = ToolCall::read(&in_json(call_json, "call_json")?)?;
        let result = block_on(call.run(tk))?;
        write_out(result_out, "result_out", tool_result_json(&result))
    })
}

/// `tn_toolkit_execute_call` without blocking: starts the call and returns at once. As for a
/// run, `user_data` is the call's run data: the tool's callback finds it with
/// `tn_token_run_data(token)`. When it returns `TN_OK`, `done` is called exactly once: with
/// `TN_OK` and the ToolResult JSON, or an error status and the error JSON (`TN_ERR_CANCELLED`
/// when `cancel` fires first: the tool's token is then refused, and its context cancelled).
/// When it returns an error (bad arguments), `done` is never called. `cancel` may be NULL.
///
/// # Safety
/// Pointers as documented; `done` must not be NULL.
#[no_mangle]
pub unsafe extern "C" fn tn_toolkit_execute_call_async(
    toolkit: *const tn_toolkit,
    call_json: *const c_char,
    cancel: *const crate::client::tn_cancel,
    done: tn_done_fn,
    user_data: *mut c_void,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let tk = handles::toolkit(toolkit)?;
        let mut call = ToolCall::read(&in_json(call_json, "call_json")?)?;
        let cancel = if cancel.is_null() { None } else { Some(handles::cancel(cancel)?) };
        if let Some(c) = &cancel {
            call.ctx.cancel = c.child_token();
        }
        // The toolkit outlives `done` (a host that freed it meanwhile gets its finalizer after).
        let keep = Box::new(tk.clone());
        let work = async move {
            let Some(cancel) = cancel else { return call.run(tk).await };
            tokio::select! {
                r = call.run(tk) => r,
                () = cancel.cancelled() => Err(Error::new(ErrorKind::Cancelled, "the tool call was cancelled")),
            }
        };
        start_async(Drive::Spawn, work, keep, tool_result_json, done, user_data)
    })
}
