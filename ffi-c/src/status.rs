//! Status codes: `TN_OK` and one `TN_ERR_*` per core error kind, with the kind's own code.
//! They are spelled out as literals so cbindgen can put them in the header; a test checks
//! each against the core's table, so they cannot drift.

use engine::{Error, ErrorKind};
use serde_json::json;

/// Success.
pub const TN_OK: i32 = 0;
/// A caller passed a value the engine cannot use (NULL, bad UTF-8, malformed JSON, an unknown
/// or freed handle, a completion token that is unknown or already used).
pub const TN_ERR_INVALID_ARGUMENT: i32 = 1;
/// The client is not configured to run (for example no API key anywhere).
pub const TN_ERR_CONFIG: i32 = 2;
/// The provider answered with a non-success HTTP status.
pub const TN_ERR_HTTP: i32 = 3;
/// The request never got an HTTP answer.
pub const TN_ERR_NETWORK: i32 = 4;
/// The whole-run deadline passed.
pub const TN_ERR_TIMEOUT: i32 = 5;
/// The run was cancelled (`tn_cancel_fire`, or the library shut its runtime down).
pub const TN_ERR_CANCELLED: i32 = 6;
/// The provider answered with a body the engine cannot read.
pub const TN_ERR_PROTOCOL: i32 = 7;
/// An Answer's id does not echo the pending Request's id.
pub const TN_ERR_ANSWER_MISMATCH: i32 = 8;
/// A host callback reported a failure.
pub const TN_ERR_HOST: i32 = 9;
/// A bug in the library (a caught panic included).
pub const TN_ERR_INTERNAL: i32 = 10;
/// A blocking call was made from inside one of the library's callbacks.
pub const TN_ERR_REENTRANT: i32 = 11;
/// A conversation is in use by another run, or its pending request was already answered
/// differently. Added in ABI version 4.
pub const TN_ERR_CONFLICT: i32 = 12;
/// A conversation store failed (I/O, a database that cannot be read). Added in ABI version 4.
pub const TN_ERR_STORE: i32 = 13;
/// A content part is malformed or over the size limit. Added in ABI version 4.
pub const TN_ERR_CONTENT_PART: i32 = 14;
/// The provider's style has no block for a content part. Added in ABI version 4.
pub const TN_ERR_UNSUPPORTED_PART: i32 = 15;

/// The status of a core error kind.
pub(crate) fn status_of(kind: ErrorKind) -> i32 {
    kind.code() as i32
}

/// The core error kind of a status, if it names one.
pub(crate) fn kind_of(status: i32) -> Option<ErrorKind> {
    u32::try_from(status).ok().and_then(ErrorKind::from_code)
}

/// An error as the JSON object handed out: `{kind, code, message, status?, body?, retry_after?}`.
pub(crate) fn error_json(e: &Error) -> String {
    let mut v = json!({"kind": e.kind().name(), "code": e.kind().code(), "message": e.message()});
    if let Some(r) = e.host_source().and_then(|s| s.downcast_ref::<crate::host::HostFailure>()).and_then(|f| f.host_ref)
    {
        v["host_ref"] = json!(r);
    }
    if let Some(d) = e.http_detail() {
        v["status"] = json!(d.status);
        v["body"] = json!(d.body);
        if let Some(ra) = &d.retry_after {
            v["retry_after"] = json!(ra);
        }
    }
    v.to_string()
}

/// Warnings as the JSON array handed out: `[{code, message}]`.
pub(crate) fn warnings_json(warnings: &[engine::Warning]) -> String {
    let arr: Vec<serde_json::Value> = warnings.iter().map(|w| json!({"code": w.code, "message": w.message})).collect();
    serde_json::Value::Array(arr).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_the_core_table() {
        let consts = [
            (ErrorKind::InvalidArgument, TN_ERR_INVALID_ARGUMENT),
            (ErrorKind::Config, TN_ERR_CONFIG),
            (ErrorKind::Http, TN_ERR_HTTP),
            (ErrorKind::Network, TN_ERR_NETWORK),
            (ErrorKind::Timeout, TN_ERR_TIMEOUT),
            (ErrorKind::Cancelled, TN_ERR_CANCELLED),
            (ErrorKind::Protocol, TN_ERR_PROTOCOL),
            (ErrorKind::AnswerMismatch, TN_ERR_ANSWER_MISMATCH),
            (ErrorKind::Host, TN_ERR_HOST),
            (ErrorKind::Internal, TN_ERR_INTERNAL),
            (ErrorKind::Reentrant, TN_ERR_REENTRANT),
            (ErrorKind::Conflict, TN_ERR_CONFLICT),
            (ErrorKind::Store, TN_ERR_STORE),
            (ErrorKind::ContentPart, TN_ERR_CONTENT_PART),
            (ErrorKind::UnsupportedPart, TN_ERR_UNSUPPORTED_PART),
        ];
        assert_eq!(consts.len(), ErrorKind::ALL.len(), "a core kind has no TN_ERR_ constant");
        for (kind, code) in consts {
            assert_eq!(status_of(kind), code, "{kind}");
            assert_eq!(kind_of(code), Some(kind));
        }
        assert_eq!(kind_of(TN_OK), None);
    }
}
