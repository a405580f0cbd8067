//! A toolkit built from its sources (`tn_toolkit_create`: MCP servers, skills, built-ins and
//! the host's tools), what it reports (`tn_toolkit_skills_prompt`, `tn_toolkit_mcp_status`),
//! `tn_toolkit_close`, and MCP serve (`tn_mcp_serve`, `tn_mcp_server_info`,
//! `tn_mcp_server_free`).

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use engine::mcp::{serve_mcp, McpServeOptions, McpServer};
use engine::{CancellationToken, Error, Toolkit, ToolkitHost};
use serde_json::{json, Map, Value};

use crate::client::tn_cancel;
use crate::guard::{call, in_json, in_opt_str, quietly, write_out};
use crate::handles::{self, Object};
use crate::host::{tn_free_fn, tn_skill_provider_fn, tn_tool_fn, tn_wait_for_fn, CSkillProvider, CWaitFor, HostData};
use crate::runtime::block_on;
use crate::toolkit::{build, tn_toolkit};

/// An opaque running MCP server (`tn_mcp_serve`), stopped by `tn_mcp_server_free`.
pub struct tn_mcp_server {
    _private: [u8; 0],
}

/// The host behaviour of a toolkit made by `tn_toolkit_create_with`. Every field may be NULL.
/// Callbacks run on library threads, get `user_data` back, and answer through `tn_complete`.
#[repr(C)]
pub struct tn_toolkit_callbacks {
    /// Handed back to every callback.
    pub user_data: *mut c_void,
    /// Called once with `user_data` when the toolkit is freed and no run uses it any more.
    pub free_user_data: tn_free_fn,
    /// Runs the host's own (non-relay) tools, as for `tn_toolkit_new`.
    pub tool: tn_tool_fn,
    /// Where an MCP server's questions to the user go (elicitation): a form is a Request of
    /// kind `input`, a URL one of kind `authorization`; complete with an Answer or `null`.
    /// NULL: servers are told this client cannot answer them.
    pub wait_for: tn_wait_for_fn,
    /// Data skills computed when the toolkit is built.
    pub skill_provider: tn_skill_provider_fn,
}

/// Makes a toolkit from its sources, as the ports' `create_toolkit` does: the MCP servers'
/// tools, then the `skill` tool, then the built-in tools (all ten unless `builtins` says
/// otherwise), then the host's `tools`; a host tool named like a built-in replaces it, and
/// `disable_tools` drops tools by their final name.
///
/// `spec_json` is an object: `tools` (the host's tools, entries as for `tn_toolkit_new`),
/// and the toolkit options `mcp_config` (a config object or a file path), `skills_dir`,
/// `skills`, `skills_filter`, `skill_sample_limit`, `disable_skills`, `builtins`,
/// `disable_tools`, `duplicates` (see the core's `ToolkitSpec`). A server that fails to start
/// is isolated: its status is `failed` and a warning says why (`tn_toolkit_warnings`).
/// Blocks while the servers start; `cancel` (may be NULL), fired, aborts that with
/// `TN_ERR_CANCELLED`. Refused with `TN_ERR_REENTRANT` inside a callback. The servers run
/// until `tn_toolkit_close`, or until the toolkit is freed and no run uses it. The library
/// owns `user_data` from this call on, as for `tn_toolkit_new`.
///
/// # Safety
/// As `tn_toolkit_new`; `cancel` is NULL or a live `tn_cancel`.
#[no_mangle]
pub unsafe extern "C" fn tn_toolkit_create(
    spec_json: *const c_char,
    tool_fn: tn_tool_fn,
    user_data: *mut c_void,
    free_user_data: tn_free_fn,
    cancel: *const tn_cancel,
    out: *mut *mut tn_toolkit,
    error_out: *mut *mut c_char,
) -> i32 {
    let callbacks =
        tn_toolkit_callbacks { user_data, free_user_data, tool: tool_fn, wait_for: None, skill_provider: None };
    // SAFETY: the caller's pointers, passed on as documented; `callbacks` is a local.
    unsafe { tn_toolkit_create_with(spec_json, &callbacks, cancel, out, error_out) }
}

/// `tn_toolkit_create` with every host callback of a toolkit: its tools, MCP elicitation
/// (`wait_for`) and a skill provider. `callbacks` may be NULL; the struct is copied.
///
/// # Safety
/// As `tn_toolkit_create`; `callbacks` is NULL or points to a `tn_toolkit_callbacks`.
#[no_mangle]
pub unsafe extern "C" fn tn_toolkit_create_with(
    spec_json: *const c_char,
    callbacks: *const tn_toolkit_callbacks,
    cancel: *const tn_cancel,
    out: *mut *mut tn_toolkit,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        // SAFETY: NULL or a valid struct, as documented; copied field by field.
        let cb = unsafe { callbacks.as_ref() };
        let data = HostData::new(cb.map_or(std::ptr::null_mut(), |c| c.user_data), cb.and_then(|c| c.free_user_data));
        if out.is_null() {
            return Err(Error::invalid("out is NULL"));
        }
        let mut options = match in_json(spec_json, "spec_json")? {
            Value::Object(o) => o,
            _ => return Err(Error::invalid("spec_json must be a JSON object")),
        };
        let tools = match options.remove("tools") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a,
            Some(_) => return Err(Error::invalid("spec_json \"tools\" must be an array of tools")),
        };
        let cancel = if cancel.is_null() { CancellationToken::new() } else { handles::cancel(cancel)? };
        let host = ToolkitHost {
            extra_tools: build(&tools, cb.and_then(|c| c.tool), &data)?,
            wait_for: cb.and_then(|c| c.wait_for).map(|f| Arc::new(CWaitFor { data: data.clone(), f }) as _),
            skill_provider: cb
                .and_then(|c| c.skill_provider)
                .map(|f| Arc::new(CSkillProvider { data: data.clone(), f }) as _),
            cancel,
        };
        let tk = block_on(async move { Toolkit::create_from_json(&Value::Object(options), host).await })?;
        let handle = handles::register(Object::Toolkit(Arc::new(tk)))?;
        // SAFETY: checked non-NULL above.
        unsafe { *out = handle };
        Ok(())
    })
}

/// Writes the toolkit's skill catalog for the system prompt to `*prompt_out` (empty without
/// a skill source). A run already appends it to the client's system prompt.
///
/// # Safety
/// `toolkit` is a pointer this library returned; `prompt_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_toolkit_skills_prompt(
    toolkit: *const tn_toolkit,
    prompt_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let tk = handles::toolkit(toolkit)?;
        write_out(prompt_out, "prompt_out", tk.skills_prompt().to_string())
    })
}

/// Writes every configured MCP server's status to `*status_out`, as a JSON object of name to
/// `"connected"`, `"disabled"` or `"failed"` (`{}` without servers).
///
/// # Safety
/// `toolkit` is a pointer this library returned; `status_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_toolkit_mcp_status(
    toolkit: *const tn_toolkit,
    status_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let tk = handles::toolkit(toolkit)?;
        let status: Map<String, Value> =
            tk.mcp_status().into_iter().map(|(name, s)| (name, Value::from(s.as_str()))).collect();
        write_out(status_out, "status_out", Value::Object(status).to_string())
    })
}

/// Stops the toolkit's MCP servers (each gets a moment to exit, then its process group is
/// killed); their tools answer with an error from then on. Closing again does nothing. The
/// handle stays valid until `tn_toolkit_free`. Blocks; refused with `TN_ERR_REENTRANT`
/// inside a callback.
///
/// # Safety
/// `toolkit` is a pointer this library returned.
#[no_mangle]
pub unsafe extern "C" fn tn_toolkit_close(toolkit: *const tn_toolkit, error_out: *mut *mut c_char) -> i32 {
    call(error_out, || {
        let tk = handles::toolkit(toolkit)?;
        block_on(async move {
            tk.close().await;
            Ok(())
        })
    })
}

/// Serves `toolkit` as an MCP server over streamable HTTP. `options_json` is an object:
/// `addr` (`host:port`, default `127.0.0.1:0`, any address off loopback only with a
/// `token`), `name`, `version`, `tools` (expose exactly these; without it the command and
/// file built-ins and relay tools are left out), `token` (the bearer token every request
/// must carry), `allowed_origins` (`{}`: the defaults); or NULL: the `mcpServer` block of
/// the `mcp_config` object the toolkit was made from (a toolkit without one is
/// `TN_ERR_INVALID_ARGUMENT`). `addr`, when not NULL, is where to listen whatever the
/// options say. `tn_mcp_server_info` tells the URL.
///
/// # Safety
/// `toolkit` is a pointer this library returned; `options_json` and `addr` NULL or
/// NUL-terminated strings; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn tn_mcp_serve(
    toolkit: *const tn_toolkit,
    options_json: *const c_char,
    addr: *const c_char,
    out: *mut *mut tn_mcp_server,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        if out.is_null() {
            return Err(Error::invalid("out is NULL"));
        }
        let tk = handles::toolkit(toolkit)?;
        let given = if options_json.is_null() { None } else { Some(in_json(options_json, "options_json")?) };
        let opts = McpServeOptions::for_toolkit(&tk, given.as_ref(), in_opt_str(addr, "addr")?)?;
        let server = block_on(serve_mcp(tk, opts))?;
        let handle = handles::register(Object::McpServer(Arc::new(tokio::sync::Mutex::new(server))))?;
        // SAFETY: checked non-NULL above.
        unsafe { *out = handle };
        Ok(())
    })
}

/// Writes `{"url", "tools", "warnings"}` of a running MCP server to `*info_out`: its
/// endpoint, the names of the tools it exposes, and what serving warned about (a `tools`
/// name the toolkit lacks).
///
/// # Safety
/// `server` is a pointer this library returned; `info_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_mcp_server_info(
    server: *const tn_mcp_server,
    info_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let server = handles::mcp_server(server)?;
        let info = block_on(async move {
            let s = server.lock().await;
            let warnings: Value = serde_json::from_str(&crate::status::warnings_json(s.warnings()))
                .map_err(|e| Error::new(engine::ErrorKind::Internal, e.to_string()))?;
            Ok(json!({"url": s.url(), "tools": s.tool_names(), "warnings": warnings}))
        })?;
        write_out(info_out, "info_out", info.to_string())
    })
}

/// Stops the server (it stops accepting, and open connections end) and releases it. NULL,
/// or a handle already freed, is ignored.
///
/// # Safety
/// `server` is NULL or a pointer this library returned.
#[no_mangle]
pub unsafe extern "C" fn tn_mcp_server_free(server: *mut tn_mcp_server) {
    quietly(|| {
        if let Ok(s) = handles::mcp_server(server) {
            // Stopped here, not left to the last reference: a run elsewhere may hold none,
            // but the port must be free when this returns.
            let _ = block_on(async move {
                let mut s: tokio::sync::MutexGuard<'_, McpServer> = s.lock().await;
                s.close().await;
                Ok(())
            });
        }
        handles::release(server, "tn_mcp_server");
    });
}
