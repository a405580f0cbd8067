//! The one error type of the engine.
//!
//! Every failure carries an [`ErrorKind`] from a single table: a stable name, a stable
//! numeric code (0 is success, codes are never reused) and whether the loop may retry it.
//! Bindings map the kind once (Python exception classes, JS `code`, C status codes) and
//! never match on message text.

use std::fmt;

use crate::redact::Secrets;

/// The stable classification of an [`Error`]. Names and codes are part of the public ABI.
/// The enum is exhaustive on purpose: each binding maps it with an exhaustive `match`, so a new
/// kind does not compile until every binding has decided what it means there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A caller passed a value the engine cannot use (bad option, malformed Answer, ...).
    InvalidArgument,
    /// The client is not configured to run (for example no API key anywhere).
    Config,
    /// The provider answered with a non-success HTTP status.
    Http,
    /// The request never got an HTTP answer (connect, reset, per-request timeout).
    Network,
    /// The whole-run deadline (`timeout_ms`) passed.
    Timeout,
    /// The run was cancelled by its cancellation token.
    Cancelled,
    /// The provider answered 2xx with a body the engine cannot read.
    Protocol,
    /// An Answer's id does not echo the pending Request's id.
    AnswerMismatch,
    /// A host callback (tool, wait_for, hook, transport) failed; the cause is the host's error.
    Host,
    /// A bug in the engine itself.
    Internal,
    /// A blocking entry point was called from inside one of the engine's own callbacks,
    /// where waiting would deadlock the engine.
    Reentrant,
    /// A conversation in a store is in use by another run, or its pending request was
    /// already answered differently (exactly-once resume).
    Conflict,
    /// A conversation store failed (I/O, a database that cannot be read).
    Store,
    /// A content part is malformed, or over the size limit (upstream's `ContentPartError`).
    ContentPart,
    /// The provider's style has no block for a content part (upstream's `UnsupportedPartError`).
    UnsupportedPart,
}

impl ErrorKind {
    /// Every kind, in code order. The single source for generated tables.
    pub const ALL: [ErrorKind; 15] = [
        ErrorKind::InvalidArgument,
        ErrorKind::Config,
        ErrorKind::Http,
        ErrorKind::Network,
        ErrorKind::Timeout,
        ErrorKind::Cancelled,
        ErrorKind::Protocol,
        ErrorKind::AnswerMismatch,
        ErrorKind::Host,
        ErrorKind::Internal,
        ErrorKind::Reentrant,
        ErrorKind::Conflict,
        ErrorKind::Store,
        ErrorKind::ContentPart,
        ErrorKind::UnsupportedPart,
    ];

    /// The stable numeric code (never 0, never reused).
    pub const fn code(self) -> u32 {
        match self {
            ErrorKind::InvalidArgument => 1,
            ErrorKind::Config => 2,
            ErrorKind::Http => 3,
            ErrorKind::Network => 4,
            ErrorKind::Timeout => 5,
            ErrorKind::Cancelled => 6,
            ErrorKind::Protocol => 7,
            ErrorKind::AnswerMismatch => 8,
            ErrorKind::Host => 9,
            ErrorKind::Internal => 10,
            ErrorKind::Reentrant => 11,
            ErrorKind::Conflict => 12,
            ErrorKind::Store => 13,
            ErrorKind::ContentPart => 14,
            ErrorKind::UnsupportedPart => 15,
        }
    }

    /// The stable snake_case name (used as JS `code`, in C docs and in logs).
    pub const fn name(self) -> &'static str {
        match self {
            ErrorKind::InvalidArgument => "invalid_argument",
            ErrorKind::Config => "config",
            ErrorKind::Http => "http",
            ErrorKind::Network => "network",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Protocol => "protocol",
            ErrorKind::AnswerMismatch => "answer_mismatch",
            ErrorKind::Host => "host",
            ErrorKind::Internal => "internal",
            ErrorKind::Reentrant => "reentrant",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Store => "store",
            ErrorKind::ContentPart => "content_part",
            ErrorKind::UnsupportedPart => "unsupported_part",
        }
    }

    /// Whether the kind is retryable by default. `Http` depends on the status and is
    /// decided by the client's retryable set, so it is `false` here.
    pub const fn retryable(self) -> bool {
        matches!(self, ErrorKind::Network)
    }

    /// The kind with this code, if any.
    pub fn from_code(code: u32) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.code() == code)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Details of a provider's HTTP error answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpErrorDetail {
    /// The HTTP status.
    pub status: u16,
    /// The provider's body with account identifiers and secrets redacted (empty for 401/403).
    pub body: String,
    /// The raw `Retry-After` header, when the response carried one.
    pub retry_after: Option<String>,
}

/// A host's own failure, carried unchanged so its binding can re-raise the original object.
pub type HostError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The engine's error: a kind, a message without secrets, and optional details.
pub struct Error {
    kind: ErrorKind,
    message: String,
    http: Option<HttpErrorDetail>,
    source: Option<HostError>,
    /// A tool's failure that ends the run instead of becoming its error result.
    aborts_run: bool,
}

/// Shorthand for results whose error is [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error of `kind` with `message`. The message must not contain secrets.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error { kind, message: message.into(), http: None, source: None, aborts_run: false }
    }

    /// An [`ErrorKind::InvalidArgument`] error.
    pub fn invalid(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidArgument, message)
    }

    /// An [`ErrorKind::Conflict`] error.
    pub fn conflict(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Conflict, message)
    }

    /// A [`ErrorKind::Protocol`] error.
    pub fn protocol(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Protocol, message)
    }

    /// An [`ErrorKind::Host`] error wrapping the host's own failure.
    pub fn host(source: HostError) -> Error {
        let message = source.to_string();
        Error { kind: ErrorKind::Host, message, http: None, source: Some(source), aborts_run: false }
    }

    /// A host failure raised inside a tool that must end the run rather than become the
    /// tool's error result: the host language's "stop now" (Python's `KeyboardInterrupt` or
    /// `SystemExit`, ...). The run ends with it, and the binding re-raises `source`.
    pub fn aborting(source: HostError) -> Error {
        let mut e = Error::host(source);
        e.aborts_run = true;
        e
    }

    /// Whether this failure ends the run even when a tool raised it (see [`Error::aborting`]).
    pub fn aborts_run(&self) -> bool {
        self.aborts_run
    }

    /// An error of `kind` that carries the host's own failure (for example a host transport's
    /// network error: retried as [`ErrorKind::Network`], then re-raised by the binding as the
    /// host's original object). The message is `source.to_string()`.
    pub fn with_host_source(kind: ErrorKind, source: HostError) -> Error {
        let message = source.to_string();
        Error { kind, message, http: None, source: Some(source), aborts_run: false }
    }

    /// An [`ErrorKind::Http`] error that a host transport raised itself for a provider answer
    /// (its own HTTP error type): the loop retries it by `detail.status` and its
    /// `Retry-After` like any answer, and the binding re-raises `source` at the end. The
    /// message is `source.to_string()`; when the run gives up, the engine replaces the API key
    /// and header secrets in the message and in `detail.body` (and drops a 401/403 body), and
    /// a binding that re-raises `source` should put those redacted texts on it.
    pub fn http_from_host(detail: HttpErrorDetail, source: HostError) -> Error {
        let message = source.to_string();
        Error { kind: ErrorKind::Http, message, http: Some(detail), source: Some(source), aborts_run: false }
    }

    /// An [`ErrorKind::Http`] error for a provider answer with `status`.
    pub(crate) fn http(detail: HttpErrorDetail, shown: &str) -> Error {
        let message = crate::redact::message_for(detail.status, shown);
        Error { kind: ErrorKind::Http, message, http: Some(detail), source: None, aborts_run: false }
    }

    /// This error with every one of `secrets` replaced in its message and HTTP body. Every
    /// error a run ends with passes through here: its text may come from a provider or a
    /// host, which may echo a credential.
    pub(crate) fn scrubbed(mut self, secrets: &Secrets) -> Error {
        self.message = secrets.scrub(&self.message);
        if let Some(detail) = self.http.as_mut() {
            // As for the engine's own HTTP errors: gateways reflect credentials in these.
            detail.body =
                if detail.status == 401 || detail.status == 403 { String::new() } else { secrets.scrub(&detail.body) };
            if let Some(ra) = detail.retry_after.as_mut() {
                *ra = secrets.scrub(ra);
            }
        }
        self
    }

    /// The kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, free of secrets.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The HTTP details, for [`ErrorKind::Http`].
    pub fn http_detail(&self) -> Option<&HttpErrorDetail> {
        self.http.as_ref()
    }

    /// The host's original error, for [`ErrorKind::Host`].
    pub fn host_source(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.source.as_deref()
    }

    /// Takes the host's original error out, for a binding that re-raises it.
    pub fn into_host_source(self) -> Option<HostError> {
        self.source
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.kind)
            .field("message", &self.message)
            .field("http", &self.http)
            .finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.source {
            Some(s) => Some(s.as_ref()),
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_nonzero_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for k in ErrorKind::ALL {
            assert_ne!(k.code(), 0);
            assert!(seen.insert(k.code()), "duplicate code {}", k.code());
            assert_eq!(ErrorKind::from_code(k.code()), Some(k));
        }
        assert_eq!(ErrorKind::from_code(0), None);
    }

    #[test]
    fn any_kind_may_carry_a_host_source() {
        let e = Error::with_host_source(ErrorKind::Network, "reset by host".into());
        assert_eq!((e.kind(), e.message()), (ErrorKind::Network, "reset by host"));
        assert!(e.into_host_source().is_some());
    }

    #[test]
    fn host_error_keeps_its_source() {
        let e = Error::host("boom".into());
        assert_eq!(e.kind(), ErrorKind::Host);
        assert_eq!(e.message(), "boom");
        assert!(e.host_source().is_some());
    }
}
