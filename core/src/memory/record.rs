//! What a store keeps of one conversation, and its JSON form (the C ABI's and host stores').

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::types::{Answer, Request};

/// One conversation as a store records it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoredRun {
    /// The transcript, in the provider's message shape.
    pub messages: Vec<Value>,
    /// The request the last run halted on, while nothing has resumed it.
    pub pending: Option<Request>,
    /// The answer a resume accepted and has not finished with: left here when the process
    /// died mid-resume, so the next resume with the same answer picks the run up.
    pub answer: Option<Answer>,
    /// When `pending` was recorded, in milliseconds since the Unix epoch.
    pub since_ms: Option<u64>,
}

/// A conversation waiting on a request ([`super::ConversationStore::pending_runs`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PendingRun {
    /// The conversation id.
    pub id: String,
    /// What the run waits on.
    pub request: Request,
    /// When it started waiting, in milliseconds since the Unix epoch.
    pub since_ms: u64,
}

impl StoredRun {
    /// A record holding a transcript only.
    pub fn transcript(messages: Vec<Value>) -> StoredRun {
        StoredRun { messages, ..StoredRun::default() }
    }

    /// `{"messages", "pending"?, "answer"?, "since_ms"?}`.
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("messages".into(), Value::Array(self.messages.clone()));
        if let Some(p) = &self.pending {
            out.insert("pending".into(), json!(p));
        }
        if let Some(a) = &self.answer {
            out.insert("answer".into(), json!(a));
        }
        if let Some(t) = self.since_ms {
            out.insert("since_ms".into(), json!(t));
        }
        Value::Object(out)
    }

    /// Reads [`StoredRun::to_json`]'s form.
    pub fn from_json(v: &Value) -> Result<StoredRun> {
        let obj = v.as_object().ok_or_else(|| Error::invalid("a stored run must be a JSON object"))?;
        let messages = match obj.get("messages") {
            Some(Value::Array(m)) => m.clone(),
            _ => return Err(Error::invalid("a stored run needs \"messages\" (an array)")),
        };
        let pending = match obj.get("pending") {
            None | Some(Value::Null) => None,
            Some(p) => Some(Request::from_json(p)?),
        };
        let answer = match obj.get("answer") {
            None | Some(Value::Null) => None,
            Some(a) => Some(Answer::from_json(a)?),
        };
        let since_ms = match obj.get("since_ms") {
            None | Some(Value::Null) => None,
            Some(t) => Some(t.as_u64().ok_or_else(|| Error::invalid("\"since_ms\" must be a whole number"))?),
        };
        Ok(StoredRun { messages, pending, answer, since_ms })
    }
}

impl PendingRun {
    /// `{"id", "request", "since_ms"}`.
    pub fn to_json(&self) -> Value {
        json!({"id": self.id, "request": self.request, "since_ms": self.since_ms})
    }
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// `messages` as stored: a JSON array's text.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn messages_text(messages: &[Value]) -> String {
    Value::Array(messages.to_vec()).to_string()
}

/// Reads [`messages_text`]'s form back.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn messages_from_text(text: &str) -> Result<Vec<Value>> {
    match serde_json::from_str(text) {
        Ok(Value::Array(m)) => Ok(m),
        _ => Err(Error::protocol("a stored transcript is not a JSON array")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn a_record_round_trips_through_json() {
        let pending = Request {
            id: "r1".into(),
            kind: "approval".into(),
            prompt: "ok?".into(),
            url: None,
            data: None,
            expires_at: None,
        };
        let answer = crate::answer_output("r1", "yes");
        let run = StoredRun {
            messages: vec![json!({"role": "user", "content": "hi"})],
            pending: Some(pending),
            answer: Some(answer),
            since_ms: Some(7),
        };
        assert_eq!(StoredRun::from_json(&run.to_json()).unwrap(), run);
        assert_eq!(StoredRun::from_json(&json!({"messages": []})).unwrap(), StoredRun::default());
        assert!(StoredRun::from_json(&json!({"messages": {}})).is_err());
    }
}
