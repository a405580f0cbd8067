//! # libtoolnexus: the C ABI over the toolnexus engine
//!
//! The conventions every function follows are stated once, in the header's preamble
//! (`cbindgen.toml`, copied to the top of `include/toolnexus.h`); `README.md` shows them in use.
#![allow(non_camel_case_types)]

mod client;
mod done;
mod guard;
mod handles;
mod here;
mod host;
mod in_process;
mod parts;
mod runtime;
mod source_parts;
mod sources;
mod status;
mod store;
mod stream;
mod tables;
mod toolkit;
mod translate;
mod vocab;

use std::ffi::c_char;

pub use client::{
    tn_callbacks, tn_cancel, tn_cancel_fire, tn_cancel_free, tn_cancel_new, tn_client, tn_client_free,
    tn_client_metrics, tn_client_new, tn_client_run, tn_client_run_async, tn_client_run_with_answer,
    tn_client_run_with_answer_async, tn_client_warnings, tn_token_run_data,
};
pub use done::tn_done_fn;
pub use host::{
    tn_body_transform_fn, tn_free_fn, tn_hook_fn, tn_on_error_fn, tn_on_warning_fn, tn_skill_provider_fn, tn_tool_fn,
    tn_transport_fn, tn_wait_for_fn, TN_HOOK_AFTER_LLM, TN_HOOK_AFTER_TOOL, TN_HOOK_BEFORE_LLM, TN_HOOK_BEFORE_TOOL,
};
pub use in_process::tn_client_new_in_process;
pub use parts::tn_part_build;
pub use source_parts::{
    tn_elicit_result, tn_elicitation_request, tn_expand_env_headers, tn_mcp_config_servers, tn_mcp_exposed_tools,
    tn_mcp_list_tools, tn_skill_texts, tn_skills_list, tn_toolkit_skills,
};
pub use sources::{
    tn_mcp_serve, tn_mcp_server, tn_mcp_server_free, tn_mcp_server_info, tn_toolkit_callbacks, tn_toolkit_close,
    tn_toolkit_create, tn_toolkit_create_with, tn_toolkit_mcp_status, tn_toolkit_skills_prompt,
};
pub use status::*;
pub use store::{
    tn_client_store, tn_client_with_store, tn_store, tn_store_callbacks, tn_store_fn, tn_store_free, tn_store_get,
    tn_store_new_host, tn_store_new_memory, tn_store_open_postgres, tn_store_open_sqlite, tn_store_pending_runs,
    tn_store_save,
};
pub use stream::{tn_client_stream, tn_client_stream_async};
pub use tables::{tn_error_kinds, tn_hook_bits};
pub use toolkit::{
    tn_toolkit, tn_toolkit_declarations, tn_toolkit_execute, tn_toolkit_execute_call, tn_toolkit_execute_call_async,
    tn_toolkit_free, tn_toolkit_host_refs, tn_toolkit_new, tn_toolkit_tools, tn_toolkit_warnings,
};
pub use translate::{tn_client_translate, tn_client_translate_async};
pub use vocab::{
    tn_answer_declined, tn_answer_normalize, tn_answer_output, tn_auth_required, tn_complete, tn_complete_host_error,
    tn_pending, tn_relay_answer, tn_relay_execute, tn_sanitize,
};

/// The ABI version this library implements. A binding checks it at load time and asks for a
/// rebuild when it differs from the version it was built against.
pub const TN_ABI_VERSION: u32 = 4;

/// The ABI version of the loaded library (compare with `TN_ABI_VERSION` from the header).
#[no_mangle]
pub extern "C" fn tn_abi_version() -> u32 {
    TN_ABI_VERSION
}

/// The library version, a static string (do not free it).
#[no_mangle]
pub extern "C" fn tn_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// Releases a string the library handed out. NULL is ignored.
///
/// # Safety
/// `s` is NULL or a string this library returned, not freed before.
#[no_mangle]
pub unsafe extern "C" fn tn_string_free(s: *mut c_char) {
    guard::quietly(|| {
        if !s.is_null() {
            // SAFETY: the string came from `guard::into_c` (documented).
            unsafe { guard::drop_c(s) };
        }
    });
}
