//! `tn_client_translate(_async)`: one OpenAI-shaped turn through the client's provider
//! (SPEC §11), blocking or with a completion callback, as the runs are.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use engine::{CancellationToken, Error, Toolkit, TranslateRequest, TranslateResult};

use crate::client::{tn_cancel, tn_client, ClientHandle};
use crate::done::{start_async, tn_done_fn, Drive};
use crate::guard::{call, in_json, write_out, Result};
use crate::handles;
use crate::runtime::block_on;
use crate::toolkit::tn_toolkit;

struct Translation {
    client: Arc<ClientHandle>,
    toolkit: Option<Arc<Toolkit>>,
    request: TranslateRequest,
    cancel: Option<CancellationToken>,
}

impl Translation {
    fn new(
        client: *const tn_client,
        toolkit: *const tn_toolkit,
        request_json: *const c_char,
        cancel: *const tn_cancel,
    ) -> Result<Translation> {
        Ok(Translation {
            client: handles::client(client)?,
            toolkit: if toolkit.is_null() { None } else { Some(handles::toolkit(toolkit)?) },
            request: TranslateRequest::from_json(&in_json(request_json, "request_json")?)?,
            cancel: if cancel.is_null() { None } else { Some(handles::cancel(cancel)?) },
        })
    }

    async fn run(self) -> Result<TranslateResult> {
        self.client.client.translate(self.request, self.toolkit.as_deref(), self.cancel).await
    }
}

fn result_json(r: &TranslateResult) -> String {
    r.to_json().to_string()
}

/// Translates one turn and blocks until the provider answers. `request_json` is `{"messages"
/// (OpenAI shape), "tools"?, "tool_choice"?, "system"?, "max_tokens"?}`; `toolkit` (may be
/// NULL) is declared before `tools`, never run. Writes `{"text", "tool_calls": [{"id",
/// "name", "arguments"}], "finish_reason", "usage", "model", "raw"}` to `*result_out`. One
/// provider call with the client's retries; `before_llm` and `after_llm` fire once, no tool
/// hook. Refused with `TN_ERR_REENTRANT` inside a callback. Added in ABI version 3.
///
/// # Safety
/// Pointers as documented; `result_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_client_translate(
    client: *const tn_client,
    toolkit: *const tn_toolkit,
    request_json: *const c_char,
    cancel: *const tn_cancel,
    result_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        if result_out.is_null() {
            return Err(Error::invalid("result_out is NULL"));
        }
        let r = block_on(Translation::new(client, toolkit, request_json, cancel)?.run())?;
        write_out(result_out, "result_out", result_json(&r))
    })
}

/// `tn_client_translate` without blocking: `done` is called exactly once, as for
/// `tn_client_run_async`, and `user_data` is what `tn_token_run_data` answers for its hook
/// callbacks. Added in ABI version 3.
///
/// # Safety
/// Pointers as documented; `done` must not be NULL.
#[no_mangle]
pub unsafe extern "C" fn tn_client_translate_async(
    client: *const tn_client,
    toolkit: *const tn_toolkit,
    request_json: *const c_char,
    cancel: *const tn_cancel,
    done: tn_done_fn,
    user_data: *mut c_void,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let t = Translation::new(client, toolkit, request_json, cancel)?;
        let keep = Box::new((t.client.clone(), t.toolkit.clone()));
        start_async(Drive::Spawn, t.run(), keep, result_json, done, user_data)
    })
}
