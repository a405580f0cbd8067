//! The elicitation bridge (SPEC §2): a server may ask the user for input in the middle of a
//! `tools/call` (`elicitation/create`, a request from server to client). It rides the one
//! [`WaitFor`] the host already has instead of a second input path: form mode becomes a
//! Request of kind `input` with the requested schema in `data.schema`, URL mode one of kind
//! `authorization` with the `url`. The answer goes back as the MCP result: `ok` ⇒ `accept`
//! with the answer's `data` (or `{}`), declined ⇒ `decline`, anything else ⇒ `cancel`. The
//! reverse request is satisfied inline; the tool is not re-run.
//!
//! Without a `wait_for` the client does not advertise the capability, so a compliant server
//! never elicits.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction, Implementation,
};
use rmcp::service::RequestContext;
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{json, Value};
use tokio::sync::watch;

use crate::hooks::WaitFor;
use crate::types::{Answer, JsonObject, Request};

static ELICIT_SEQ: AtomicU64 = AtomicU64::new(1);

/// The Request for an `elicitation/create` request's params (`{mode?, message, requestedSchema?,
/// url?}`): id `elc-<unix ms in hex>-<sequence>`, kind `authorization` with the `url` in URL
/// mode, else kind `input` with `data.schema`.
pub fn elicitation_request(params: &Value) -> Request {
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let is_url = params.get("mode").and_then(Value::as_str) == Some("url");
    let prompt = match params.get("message") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    let url = params.get("url").and_then(Value::as_str).filter(|u| is_url && !u.is_empty()).map(str::to_string);
    let schema = params.get("requestedSchema").filter(|s| !is_url && is_truthy(s));
    let data = schema.map(|s| {
        let mut d = JsonObject::new();
        d.insert("schema".into(), s.clone());
        d
    });
    Request {
        id: format!("elc-{ms:x}-{}", ELICIT_SEQ.fetch_add(1, Ordering::Relaxed)),
        kind: if is_url { "authorization" } else { "input" }.into(),
        prompt,
        url,
        data,
        expires_at: None,
    }
}

// Upstream tests the schema for truthiness: an empty object carries nothing to show.
fn is_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Object(o) => !o.is_empty(),
        _ => true,
    }
}

/// What the server is told.
#[derive(Clone, Debug, PartialEq)]
pub enum ElicitAction {
    /// The user answered; the content is the answer's `data` (`{}` without one).
    Accept(Value),
    /// The user said no.
    Decline,
    /// Dismissed, expired, or no answer at all.
    Cancel,
}

/// The MCP action for the host's answer: `ok` ⇒ accept with `data`, `reason: "declined"` ⇒
/// decline, anything else (another reason, none, or no answer) ⇒ cancel.
pub fn elicit_action(answer: Option<&Answer>) -> ElicitAction {
    match answer {
        Some(a) if a.ok => ElicitAction::Accept(a.data.clone().map_or_else(|| json!({}), Value::Object)),
        Some(a) if a.reason.as_deref() == Some("declined") => ElicitAction::Decline,
        _ => ElicitAction::Cancel,
    }
}

impl ElicitAction {
    /// The MCP wire name: `accept`, `decline` or `cancel`.
    pub const fn as_str(&self) -> &'static str {
        match self {
            ElicitAction::Accept(_) => "accept",
            ElicitAction::Decline => "decline",
            ElicitAction::Cancel => "cancel",
        }
    }

    fn into_result(self) -> ElicitResult {
        match self {
            ElicitAction::Accept(content) => ElicitResult::new(ElicitationAction::Accept).with_content(content),
            ElicitAction::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitAction::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        }
    }
}

/// The client side of one connection: its advertised capabilities and the elicitation
/// handler. `pending` counts the elicitations waiting on the host, so a call's timeout does
/// not run out while a person is answering.
pub(crate) struct Bridge {
    wait_for: Option<Arc<dyn WaitFor>>,
    info: ClientConfig,
    pending: watch::Sender<usize>,
}

impl Bridge {
    pub(crate) fn new(wait_for: Option<Arc<dyn WaitFor>>) -> Bridge {
        let caps = if wait_for.is_some() { json!({"elicitation": {"form": {}, "url": {}}}) } else { json!({}) };
        let caps: ClientCapabilities = serde_json::from_value(caps).unwrap_or_default();
        let info = ClientConfig::new(caps, Implementation::new("toolnexus", crate::VERSION));
        Bridge { wait_for, info, pending: watch::channel(0).0 }
    }

    /// A receiver of the number of elicitations waiting on the host.
    pub(crate) fn pending(&self) -> watch::Receiver<usize> {
        self.pending.subscribe()
    }
}

/// Decrements the pending count however the wait ends (answered, failed, dropped).
struct Waiting<'a>(&'a watch::Sender<usize>);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl ClientHandler for Bridge {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let Some(wait_for) = &self.wait_for else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let params = serde_json::to_value(&request).map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        let req = elicitation_request(&params);
        let id = req.id.clone();
        self.pending.send_modify(|n| *n += 1);
        let _waiting = Waiting(&self.pending);
        let answer =
            wait_for.wait_for(req).await.map_err(|e| ErrorData::internal_error(e.message().to_string(), None))?;
        if let Some(a) = answer.as_ref().filter(|a| a.id != id) {
            return Err(ErrorData::invalid_params(
                format!("answer id {:?} does not echo the elicitation request id {id:?}", a.id),
                None,
            ));
        }
        Ok(elicit_action(answer.as_ref()).into_result())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(ok: bool, reason: Option<&str>, data: Option<Value>) -> Answer {
        Answer {
            id: "1".into(),
            ok,
            data: data.and_then(|d| d.as_object().cloned()),
            reason: reason.map(str::to_string),
        }
    }

    #[test]
    fn form_mode_is_an_input_request_with_the_schema() {
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
        let r = elicitation_request(&json!({"mode": "form", "message": "Your name?", "requestedSchema": schema}));
        assert_eq!((r.kind.as_str(), r.prompt.as_str(), r.url.as_deref()), ("input", "Your name?", None));
        assert_eq!(r.data.unwrap()["schema"], schema);
        assert!(r.id.starts_with("elc-"));
        // Without a mode (the 2025-06-18 wire) it is a form too; an empty schema carries no data.
        let r = elicitation_request(&json!({"message": "ok?", "requestedSchema": {}}));
        assert_eq!((r.kind.as_str(), r.data), ("input", None));
    }

    #[test]
    fn url_mode_is_an_authorization_request_with_the_url() {
        let r = elicitation_request(
            &json!({"mode": "url", "message": "Log in", "url": "https://x/auth", "elicitationId": "e1"}),
        );
        assert_eq!((r.kind.as_str(), r.url.as_deref(), r.data), ("authorization", Some("https://x/auth"), None));
        assert_eq!(r.prompt, "Log in");
    }

    #[test]
    fn ids_are_unique() {
        let p = json!({"message": "m"});
        assert_ne!(elicitation_request(&p).id, elicitation_request(&p).id);
    }

    #[test]
    fn answers_map_to_accept_decline_or_cancel() {
        let accepted = elicit_action(Some(&answer(true, None, Some(json!({"name": "Ada"})))));
        assert_eq!(accepted, ElicitAction::Accept(json!({"name": "Ada"})));
        assert_eq!(elicit_action(Some(&answer(true, None, None))), ElicitAction::Accept(json!({})));
        assert_eq!(elicit_action(Some(&answer(false, Some("declined"), None))), ElicitAction::Decline);
        assert_eq!(elicit_action(Some(&answer(false, None, None))), ElicitAction::Cancel);
        assert_eq!(elicit_action(Some(&answer(false, Some("expired"), None))), ElicitAction::Cancel);
        assert_eq!(elicit_action(None), ElicitAction::Cancel);
    }

    #[test]
    fn the_capability_is_advertised_only_with_a_wait_for() {
        assert!(Bridge::new(None).info.capabilities.elicitation.is_none());
        let w: Arc<dyn WaitFor> = Arc::new(|_r: Request| async { Ok(None) });
        let caps = Bridge::new(Some(w)).info.capabilities;
        let e = caps.elicitation.unwrap();
        assert!(e.form.is_some() && e.url.is_some());
    }
}
