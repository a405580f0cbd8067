//! One model call with the resilience rules: retry 429/500/502/503/504/529 (plus the host's
//! extra statuses) and network errors with exponential backoff and jitter, honour
//! `Retry-After` only as delay-seconds, let `on_error` decide each attempt within the
//! `retries` budget. Aborts (deadline, cancel) are handled by the caller, which drops this
//! future: they are never retried.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::Value;

use super::options::{ClientOptions, Style};
use super::stream::{StreamReader, StreamTo};
use super::wire::{self, Reply};
use crate::error::{Error, ErrorKind, HttpErrorDetail, Result};
use crate::hooks::{ErrorInfo, Tier};
use crate::redact::{capped, safe_error_body_with, Secrets};
use crate::transport::{HttpRequest, HttpResponse, Transport};
use crate::types::Usage;

/// The per-request timeout when the run has no deadline.
const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// The largest `Retry-After` honoured, in seconds.
const RETRY_AFTER_MAX: u64 = 2_147_483_647;

/// What one run needs to call the model.
pub(crate) struct Caller<'a> {
    pub opts: &'a ClientOptions,
    pub transport: &'a Arc<dyn Transport>,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub secrets: &'a Secrets,
    pub deadline: Option<Instant>,
}

impl Caller<'_> {
    /// POSTs `body` until it succeeds or the policy gives up, and decodes the JSON answer.
    /// With `stream`, a 2xx answer is read as server-sent events of that style as it arrives
    /// (text going to the stream) and folded into the same answer; once any of it arrived, a
    /// failure is final: the host already saw its text.
    pub async fn call(&self, body: Bytes, stream: Option<(Style, &StreamTo)>) -> Result<Replied> {
        let mut attempt: u32 = 0;
        loop {
            let timeout = match self.deadline {
                Some(d) => d.saturating_duration_since(Instant::now()),
                None => DEFAULT_REQUEST_TIMEOUT,
            };
            let request =
                HttpRequest { url: self.url.clone(), headers: self.headers.clone(), body: body.clone(), timeout };
            let sent = match stream {
                None => self.transport.post(request).await.map(|r| (r, None)),
                Some((style, to)) => {
                    let mut reader = StreamReader::new(style, to);
                    let sent = self.transport.post_streaming(request, &mut reader).await;
                    match sent {
                        Err(e) if reader.touched => return Err(e),
                        other => other.map(|r| (r, Some(reader))),
                    }
                }
            };
            let failure = match sent {
                Ok((resp, reader)) if (200..300).contains(&resp.status) => {
                    return match reader {
                        Some(r) => r.finish().map(Replied::Folded),
                        None => Ok(Replied::Body(resp)),
                    }
                }
                Ok((resp, _)) => Failure::Status(resp),
                Err(e) if e.kind() == ErrorKind::Network => Failure::Network(e),
                Err(e) if e.kind() == ErrorKind::Http && e.http_detail().is_some() => Failure::HostStatus(e),
                Err(e) => return Err(e),
            };
            let info = failure.info(self.opts, attempt);
            let tier = match &self.opts.on_error {
                Some(c) => c.classify(info.clone()).await?,
                None => Tier::Default,
            }
            .resolve(&info);
            if tier == Tier::Fail || attempt >= self.opts.retries {
                return Err(failure.into_error(self.secrets));
            }
            let delay = match &failure {
                Failure::Status(r) => retry_after(r.header("retry-after")),
                Failure::HostStatus(e) => retry_after(e.http_detail().and_then(|d| d.retry_after.as_deref())),
                Failure::Network(_) => None,
            };
            // A provider asking for a longer wait than the host allows gets no parked run:
            // the error surfaces with its `retry_after`, for the host to schedule.
            if delay.is_some_and(|d| d > Duration::from_millis(self.opts.max_retry_after_ms)) {
                return Err(failure.into_error(self.secrets));
            }
            let delay = delay.unwrap_or_else(|| backoff(self.opts.retry_base_ms, attempt));
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
    }
}

enum Failure {
    Status(HttpResponse),
    /// A host transport's own HTTP error (see [`Error::http_from_host`]).
    HostStatus(Error),
    Network(Error),
}

impl Failure {
    fn info(&self, opts: &ClientOptions, attempt: u32) -> ErrorInfo {
        match self {
            Failure::Status(r) => ErrorInfo {
                status: Some(r.status),
                error: None,
                attempt,
                retryable: opts.is_retryable_status(r.status),
            },
            Failure::HostStatus(e) => {
                let status = e.http_detail().map(|d| d.status);
                ErrorInfo {
                    status,
                    error: Some(e.message().to_string()),
                    attempt,
                    retryable: status.is_some_and(|s| opts.is_retryable_status(s)),
                }
            }
            Failure::Network(e) => {
                ErrorInfo { status: None, error: Some(e.message().to_string()), attempt, retryable: true }
            }
        }
    }

    fn into_error(self, secrets: &Secrets) -> Error {
        match self {
            // A host's own error carries the host's text, which may echo a credential.
            Failure::Network(e) | Failure::HostStatus(e) => e.scrubbed(secrets),
            Failure::Status(r) => {
                let text = String::from_utf8_lossy(&r.body);
                let body = safe_error_body_with(r.status, &text, secrets);
                let shown = capped(&body);
                let retry_after = r.header("retry-after").map(str::to_string);
                Error::http(HttpErrorDetail { status: r.status, body, retry_after }, &shown)
            }
        }
    }
}

/// A model call's 2xx answer.
pub(crate) enum Replied {
    /// The body as it came.
    Body(HttpResponse),
    /// A streamed answer, folded into the value its unstreamed body would have held.
    Folded(Value),
}

/// The reply of an answer, beside its usage.
pub(crate) enum Read {
    /// The reply, read straight from the body's bytes.
    Reply(Result<Reply>),
    /// The whole answer, for the loop to parse after handing it to an `after_llm` hook.
    Whole(Value),
}

impl Replied {
    /// The answer as a JSON value.
    pub fn into_value(self) -> Result<Value> {
        match self {
            Replied::Body(r) => serde_json::from_slice(&r.body).map_err(|e| not_json(r.status, e)),
            Replied::Folded(v) => Ok(v),
        }
    }

    /// Its usage and its reply; the whole value instead when `whole` is asked for or the
    /// answer was streamed (already a value).
    pub fn read(self, style: Style, whole: bool) -> Result<(Usage, Read)> {
        match self {
            Replied::Body(r) if !whole => {
                let (usage, reply) = wire::read_reply(style, &r.body).map_err(|e| not_json(r.status, e))?;
                Ok((usage, Read::Reply(reply)))
            }
            other => {
                let value = other.into_value()?;
                Ok((wire::usage_of(style, &value), Read::Whole(value)))
            }
        }
    }
}

/// A 2xx body that is not JSON.
pub(crate) fn not_json(status: u16, e: serde_json::Error) -> Error {
    Error::protocol(format!("provider answered {status} with a body that is not JSON ({e})"))
}

/// `Retry-After` as a delay: ASCII digits only, `0..=2147483647` seconds; anything else
/// (dates, fractions, signs, garbage) is `None` and the caller backs off instead.
pub(crate) fn retry_after(value: Option<&str>) -> Option<Duration> {
    retry_after_seconds(value?).map(Duration::from_secs)
}

/// The delay a `Retry-After` value asks for, in whole seconds, when it is in the only form
/// the engine honours: delay-seconds (`1*DIGIT`), at most 2147483647, `0` meaning "now".
/// Dates, fractions, signs and anything else are `None`: the engine backs off instead.
pub fn retry_after_seconds(value: &str) -> Option<u64> {
    let s = value.trim();
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = s.parse().ok()?;
    (n <= RETRY_AFTER_MAX).then_some(n)
}

/// `base * 2^attempt` plus up to 100 ms of jitter.
pub(crate) fn backoff(base_ms: u64, attempt: u32) -> Duration {
    let exp = base_ms.saturating_mul(1u64 << attempt.min(20));
    Duration::from_millis(exp.saturating_add(jitter_ms()))
}

fn jitter_ms() -> u64 {
    // A splitmix step over a global counter seeded by the clock: plenty for spreading retries.
    static STATE: AtomicU64 = AtomicU64::new(0);
    let seed =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
    let mut z = STATE.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed) ^ seed;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) % 100
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_delay_seconds_only() {
        assert_eq!(retry_after(Some("0")), Some(Duration::ZERO));
        assert_eq!(retry_after(Some(" 7 ")), Some(Duration::from_secs(7)));
        assert_eq!(retry_after(Some("2147483647")), Some(Duration::from_secs(2_147_483_647)));
        for bad in ["2147483648", "-1", "1.5", "+3", "", "Wed, 21 Oct 2015 07:28:00 GMT", "٣"] {
            assert_eq!(retry_after(Some(bad)), None, "{bad:?}");
        }
        assert_eq!(retry_after(None), None);
    }

    #[test]
    fn backoff_grows_exponentially_with_bounded_jitter() {
        for attempt in 0..4 {
            let d = backoff(100, attempt).as_millis() as u64;
            let base = 100 << attempt;
            assert!(d >= base && d < base + 100, "{d}");
        }
    }
}
