//! The suspension vocabulary: how a tool asks (`pending`, `auth_required`) and how a host
//! answers (`answer_output`, `answer_declined`). One spelling for every port, so a host never
//! has to guess which `data` key the engine reads.

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::error::{Error, Result};
use crate::types::{Answer, JsonObject, Request, ToolResult};

/// The closed vocabulary of why a request was refused. The wire carries any string; a
/// binding that mirrors a strict API validates with [`Reason::from_str`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// An explicit "no".
    Declined,
    /// Dismissed without an answer.
    Cancelled,
    /// Went stale before anyone answered.
    Expired,
}

impl Reason {
    /// Every reason, in documentation order.
    pub const ALL: [Reason; 3] = [Reason::Declined, Reason::Cancelled, Reason::Expired];

    /// The wire string.
    pub const fn as_str(self) -> &'static str {
        match self {
            Reason::Declined => "declined",
            Reason::Cancelled => "cancelled",
            Reason::Expired => "expired",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Reason {
    type Err = Error;

    fn from_str(s: &str) -> Result<Reason> {
        Reason::ALL.into_iter().find(|r| r.as_str() == s).ok_or_else(|| {
            Error::invalid(format!("Answer reason must be \"declined\", \"cancelled\" or \"expired\", got {s:?}"))
        })
    }
}

static PENDING_SEQ: AtomicU64 = AtomicU64::new(1);

/// A fresh Request id: `pnd-<unix ms in hex>-<process sequence>`.
pub fn new_request_id() -> String {
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    format!("pnd-{ms:x}-{}", PENDING_SEQ.fetch_add(1, Ordering::Relaxed))
}

/// The fields of a suspension a tool raises; `id` is generated when `None`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PendingSpec {
    /// The request id; generated when `None` or empty.
    pub id: Option<String>,
    /// The request kind.
    pub kind: String,
    /// What is being asked.
    pub prompt: String,
    /// A link where the action happens.
    pub url: Option<String>,
    /// Kind-specific data.
    pub data: Option<JsonObject>,
    /// RFC 3339 staleness time.
    pub expires_at: Option<String>,
}

/// A suspension: an error [`ToolResult`] whose `metadata.pending` is the Request. Its
/// output is the prompt, plus `"\n<url>"` when a non-empty url is given.
pub fn pending(spec: PendingSpec) -> ToolResult {
    let id = spec.id.filter(|s| !s.is_empty()).unwrap_or_else(new_request_id);
    let request = Request {
        id,
        kind: spec.kind,
        prompt: spec.prompt,
        url: spec.url,
        data: spec.data,
        expires_at: spec.expires_at,
    };
    suspend(request)
}

/// A suspension carrying an already-built Request.
pub fn suspend(request: Request) -> ToolResult {
    let output = match request.url.as_deref() {
        Some(url) if !url.is_empty() => format!("{}\n{url}", request.prompt),
        _ => request.prompt.clone(),
    };
    let mut metadata = JsonObject::new();
    metadata.insert("pending".into(), request.to_json());
    ToolResult { output, is_error: true, metadata: Some(metadata), parts: None }
}

/// The default prompt of [`auth_required`].
pub const AUTH_REQUIRED_PROMPT: &str = "Authorization required to continue";

/// An `authorization` suspension at a login url.
pub fn auth_required(url: &str, prompt: Option<&str>) -> ToolResult {
    pending(PendingSpec {
        kind: "authorization".into(),
        prompt: prompt.unwrap_or(AUTH_REQUIRED_PROMPT).into(),
        url: Some(url.into()),
        ..PendingSpec::default()
    })
}

/// The suspension a result carries, if any.
pub fn pending_of(result: &ToolResult) -> Option<Request> {
    result.pending()
}

/// The Answer that supplies a reply: `ok: true`, `data: {"output": output}`.
pub fn answer_output(id: &str, output: &str) -> Answer {
    let mut data = JsonObject::new();
    data.insert("output".into(), Value::String(output.into()));
    Answer { id: id.into(), ok: true, data: Some(data), reason: None }
}

/// The Answer a person's "approve" gives: `ok: true` with `data.output` `"approved"`, so a tool
/// that reads its answer's output learns what was said, as it would from a typed reply.
pub fn answer_approved(id: &str) -> Answer {
    answer_output(id, "approved")
}

/// The Answer that refuses a request: `ok: false` with `reason` (`"declined"` when empty).
pub fn answer_declined(id: &str, reason: &str) -> Answer {
    let reason = if reason.is_empty() { Reason::Declined.as_str() } else { reason };
    Answer { id: id.into(), ok: false, data: None, reason: Some(reason.into()) }
}

/// The `data.output` string of an answer, if it carries one.
pub fn answer_output_of(answer: &Answer) -> Option<&str> {
    answer.data.as_ref()?.get("output")?.as_str()
}

/// The error output fed back when a request is declined or expires.
pub(crate) fn declined_output(prompt: &str) -> String {
    format!("declined/expired: {prompt}")
}

/// The error output fed back when a tool suspends again after its answer.
pub(crate) fn unresolved_output(prompt: &str) -> String {
    format!("unresolved: {prompt}")
}

/// Checks that `answer` resolves `request`.
pub(crate) fn check_answer_id(request: &Request, answer: &Answer) -> Result<()> {
    if answer.id == request.id {
        return Ok(());
    }
    Err(Error::new(
        crate::ErrorKind::AnswerMismatch,
        format!("answer id {:?} does not echo the pending request id {:?}", answer.id, request.id),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pending_builds_a_suspension_with_url_in_output() {
        let r = pending(PendingSpec {
            kind: "authorization".into(),
            prompt: "Log in".into(),
            url: Some("https://x/login".into()),
            ..PendingSpec::default()
        });
        assert!(r.is_error);
        assert_eq!(r.output, "Log in\nhttps://x/login");
        let req = pending_of(&r).unwrap();
        assert!(req.id.starts_with("pnd-"));
        assert_eq!(req.kind, "authorization");
        let blank = pending(PendingSpec {
            kind: "k".into(),
            prompt: "p".into(),
            url: Some(String::new()),
            ..Default::default()
        });
        assert_eq!(blank.output, "p");
    }

    #[test]
    fn generated_ids_are_unique() {
        let a = pending(PendingSpec { kind: "k".into(), prompt: "p".into(), ..Default::default() });
        let b = pending(PendingSpec { kind: "k".into(), prompt: "p".into(), ..Default::default() });
        assert_ne!(pending_of(&a).unwrap().id, pending_of(&b).unwrap().id);
    }

    #[test]
    fn explicit_id_is_kept() {
        let r = pending(PendingSpec {
            id: Some("mine".into()),
            kind: "k".into(),
            prompt: "p".into(),
            ..Default::default()
        });
        assert_eq!(pending_of(&r).unwrap().id, "mine");
    }

    #[test]
    fn auth_required_defaults_its_prompt() {
        let r = auth_required("https://a", None);
        let req = pending_of(&r).unwrap();
        assert_eq!(req.prompt, AUTH_REQUIRED_PROMPT);
        assert_eq!(req.url.as_deref(), Some("https://a"));
    }

    #[test]
    fn answers_have_the_pinned_shapes() {
        assert_eq!(answer_output("p", "yes").to_json(), json!({"id":"p","ok":true,"data":{"output":"yes"}}));
        assert_eq!(answer_declined("p", "").to_json(), json!({"id":"p","ok":false,"reason":"declined"}));
        assert_eq!(answer_declined("p", "no today").reason.as_deref(), Some("no today"));
    }

    #[test]
    fn reason_parses_only_the_closed_vocabulary() {
        assert_eq!("expired".parse::<Reason>().unwrap(), Reason::Expired);
        let e = "nope".parse::<Reason>().unwrap_err();
        assert!(e.message().contains("\"declined\", \"cancelled\" or \"expired\""));
    }
}
