//! `tn_client_new_in_process`: a client whose model is a callback of the host (SPEC §8).

use std::ffi::c_char;
use std::sync::Arc;

use engine::{in_process_refused, ClientOptions, Error, InProcessTransport};

use crate::client::{make_client, tn_callbacks, tn_client};
use crate::guard::call;
use crate::host::{tn_generate_fn, CGenerate, HostData};

const FUNC: &str = "tn_client_new_in_process";

/// Makes a client whose model is `generate` (its `user_data` is `callbacks->user_data`): no
/// URL, no key, no network. `options_json` is `tn_client_new`'s without `base_url`, `api_key`,
/// `style` and the retry options (`retries`, `retry_base_ms`, `retryable_statuses`,
/// `max_retry_after_ms`), each refused, as are a `transport` and an `on_error` callback: a
/// model that failed ends the run at once. Every other callback works as for
/// `tn_client_new`. Added in ABI version 3.
///
/// # Safety
/// Pointers as documented; `out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_client_new_in_process(
    options_json: *const c_char,
    callbacks: *const tn_callbacks,
    generate: tn_generate_fn,
    out: *mut *mut tn_client,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let read = |v: &serde_json::Value| ClientOptions::in_process_from_json(v, FUNC);
        let finish = |opts: &mut ClientOptions, cb: Option<&tn_callbacks>, data: Option<&Arc<HostData>>| {
            if cb.is_some_and(|cb| cb.transport.is_some()) {
                return Err(in_process_refused(FUNC, "transport"));
            }
            if cb.is_some_and(|cb| cb.on_error.is_some()) {
                return Err(in_process_refused(FUNC, "on_error"));
            }
            let (Some(f), Some(data)) = (generate, data) else {
                return Err(Error::invalid("tn_client_new_in_process needs callbacks and a generate callback"));
            };
            opts.transport = Some(Arc::new(InProcessTransport(Arc::new(CGenerate { data: data.clone(), f }))));
            Ok(())
        };
        // SAFETY: as documented (NULL or a readable struct; `out` checked).
        unsafe { make_client(options_json, callbacks, out, read, finish) }
    })
}
