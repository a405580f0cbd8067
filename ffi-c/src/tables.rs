//! The engine's tables as JSON, for bindings that cannot read the header's `#define`s (JNA)
//! and for tests that check a binding's own constants against the engine: one source, the
//! core's, for every name and number a binding uses.

use std::ffi::c_char;

use engine::{ErrorKind, HookName};
use serde_json::{json, Value};

use crate::guard::{call, write_out};
use crate::host::hook_bit;
use crate::status::status_of;

/// Writes to `*json_out` every error kind, in code order, as a JSON array of
/// `{"name", "code", "retryable"}`: `code` is the kind's `TN_ERR_*` status (0, `TN_OK`, is no
/// kind), `name` the stable name an error JSON's `"kind"` carries, `retryable` whether the
/// engine retries it by default (an `http` error depends on its status, so it is `false`).
///
/// # Safety
/// `json_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_error_kinds(json_out: *mut *mut c_char, error_out: *mut *mut c_char) -> i32 {
    call(error_out, || {
        let kinds: Vec<Value> = ErrorKind::ALL
            .iter()
            .map(|k| json!({"name": k.name(), "code": status_of(*k), "retryable": k.retryable()}))
            .collect();
        write_out(json_out, "json_out", Value::Array(kinds).to_string())
    })
}

/// Writes to `*json_out` every hook, in bit order, as a JSON array of `{"name", "bit"}`:
/// `name` as `tn_hook_fn` receives it, `bit` its `TN_HOOK_*` bit for `tn_callbacks.hook_mask`.
///
/// # Safety
/// `json_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_hook_bits(json_out: *mut *mut c_char, error_out: *mut *mut c_char) -> i32 {
    call(error_out, || {
        let hooks: Vec<Value> =
            HookName::ALL.iter().map(|h| json!({"name": h.as_str(), "bit": hook_bit(*h)})).collect();
        write_out(json_out, "json_out", Value::Array(hooks).to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{TN_HOOK_AFTER_LLM, TN_HOOK_AFTER_TOOL, TN_HOOK_BEFORE_LLM, TN_HOOK_BEFORE_TOOL};

    #[test]
    fn hook_bits_are_distinct_single_bits_covering_every_hook() {
        let bits: Vec<u32> = HookName::ALL.iter().map(|h| hook_bit(*h)).collect();
        assert_eq!(bits, [TN_HOOK_BEFORE_LLM, TN_HOOK_AFTER_LLM, TN_HOOK_BEFORE_TOOL, TN_HOOK_AFTER_TOOL]);
        assert!(bits.iter().all(|b| b.count_ones() == 1));
        assert_eq!(bits.iter().fold(0, |m, b| m | b).count_ones() as usize, bits.len());
    }
}
