//! Runs with a conversation id (upstream's `ask(id=)` and `askWithAnswer`): the client's store
//! supplies the history and keeps the result, and a halted run waits there for its answer.
//!
//! With a store that records runs (every built-in one) the conversation is locked for the
//! run, the request it halted on is recorded, and an accepted answer is written before the
//! resumed run starts: a second resume of the same request never proceeds, a different answer
//! is a conflict, and a resume that died midway is picked up by the next one with that answer.

use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::{Client, RunInput};
use crate::answer::check_answer_id;
use crate::error::{Error, Result};
use crate::memory::{ConversationStore, StoredRun};
use crate::toolkit::Toolkit;
use crate::types::{Answer, Request, RunResult};

impl Client {
    /// The store `ask` and runs with an `id` remember conversations in: the one the options
    /// named, else the client's own [`crate::memory::InMemoryConversationStore`].
    pub fn conversation_store(&self) -> &Arc<dyn ConversationStore> {
        &self.store
    }

    /// Runs `prompt` as the next turn of conversation `id` (stateless when `id` is `None` or
    /// empty, like [`Client::run`]).
    pub async fn ask(&self, prompt: &str, toolkit: Option<&Toolkit>, id: Option<&str>) -> Result<RunResult> {
        self.run_input(RunInput { toolkit, id: id.map(str::to_string), ..RunInput::prompt(prompt) }).await
    }

    /// Resumes conversation `id`, halted on a request, with `answer`. `pending` may be omitted
    /// when the store records what the run waits on; given, it must be that request.
    pub async fn ask_with_answer(
        &self,
        toolkit: Option<&Toolkit>,
        id: &str,
        pending: Option<&Request>,
        answer: &Answer,
    ) -> Result<RunResult> {
        let input = match pending {
            Some(p) => RunInput::resume(Vec::new(), p.clone(), answer.clone()),
            None => RunInput { answer: Some(answer.clone()), ..RunInput::default() },
        };
        self.run_input(RunInput { toolkit, id: Some(id.to_string()), ..input }).await
    }

    /// A run of `input` whose `id` is set: loads, runs, saves.
    pub(super) async fn run_remembered(&self, id: String, input: RunInput<'_>) -> Result<RunResult> {
        if !input.history.is_empty() {
            return Err(Error::invalid(
                "a run with a conversation id continues the stored transcript: pass no history",
            ));
        }
        let store = self.store.clone();
        let lock = store.lock(&id).await?;
        let outcome = self.run_locked(&id, &store, input).await;
        lock.release().await;
        outcome
    }

    /// [`Client::run_remembered`] once the conversation is held.
    async fn run_locked(
        &self,
        id: &str,
        store: &Arc<dyn ConversationStore>,
        mut input: RunInput<'_>,
    ) -> Result<RunResult> {
        let records = store.records_runs();
        let mut stored = store.load(id).await?.unwrap_or_default();
        input.history = std::mem::take(&mut stored.messages);
        let resuming = input.resume.is_some() || input.answer.is_some();
        if resuming {
            let (pending, answer) = settle(id, &stored, input.resume.take(), input.answer.take(), records)?;
            if records && stored.answer.is_none() {
                // Written before the run starts: a crash from here on leaves the answer on record.
                let accepted = StoredRun { messages: input.history.clone(), answer: Some(answer.clone()), ..stored };
                store.store(id, accepted).await?;
            }
            input.resume = Some((pending, answer));
        } else if let (Some(p), true) = (&stored.pending, records) {
            return Err(Error::conflict(format!(
                "conversation {id:?} is waiting on request {:?}: resume it with the answer",
                p.id
            )));
        }
        let result = self.run_counted(input).await?;
        let since_ms = result.pending.as_ref().map(|_| crate::memory::now_ms());
        let after =
            StoredRun { messages: result.messages.clone(), pending: result.pending.clone(), answer: None, since_ms };
        store.store(id, after).await?;
        Ok(result)
    }
}

/// The request a resume answers, and its answer, checked against what the store recorded.
fn settle(
    id: &str,
    stored: &StoredRun,
    given: Option<(Request, Answer)>,
    answer_only: Option<Answer>,
    records: bool,
) -> Result<(Request, Answer)> {
    let (given_pending, answer) = match (given, answer_only) {
        (Some((p, a)), None) => (Some(p), a),
        (None, Some(a)) => (None, a),
        _ => return Err(Error::invalid("a resume takes one answer")),
    };
    let pending = match (&stored.pending, given_pending) {
        (Some(rec), _) if rec.id != answer.id => {
            return Err(Error::conflict(format!(
                "conversation {id:?} is waiting on request {:?}, not {:?} (answered already, or never asked)",
                rec.id, answer.id
            )))
        }
        (Some(rec), Some(g)) if g.id != rec.id => {
            return Err(Error::conflict(format!(
                "conversation {id:?} is waiting on request {:?}, not {:?}",
                rec.id, g.id
            )))
        }
        (Some(rec), _) => rec.clone(),
        (None, Some(g)) if !records => g,
        (None, _) if records => {
            return Err(Error::conflict(format!(
                "conversation {id:?} is not waiting on a request (resumed already, or it never halted)"
            )))
        }
        (None, _) => return Err(Error::invalid("pass the pending request: this store does not record it")),
    };
    check_answer_id(&pending, &answer)?;
    if let Some(prev) = &stored.answer {
        if *prev != answer {
            return Err(Error::conflict(format!(
                "request {:?} of conversation {id:?} was already answered differently",
                pending.id
            )));
        }
    }
    Ok((pending, answer))
}

/// A conversation held by the host's object rather than a store (upstream's
/// `client.conversation(toolkit)`): each send continues the transcript it keeps.
#[derive(Default)]
pub struct Conversation {
    messages: Mutex<Vec<Value>>,
}

impl Conversation {
    /// An empty conversation.
    pub fn new() -> Conversation {
        Conversation::default()
    }

    /// The transcript so far.
    pub fn messages(&self) -> Vec<Value> {
        self.messages.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Replaces the transcript.
    pub fn set_messages(&self, messages: Vec<Value>) {
        *self.messages.lock().unwrap_or_else(|p| p.into_inner()) = messages;
    }

    /// Forgets the transcript.
    pub fn reset(&self) {
        self.set_messages(Vec::new());
    }

    /// Runs `input` (a prompt) with the transcript as its history; the result's messages
    /// become the transcript. A failed run leaves it as it was.
    pub async fn send(&self, client: &Client, mut input: RunInput<'_>) -> Result<RunResult> {
        if input.id.is_some() || !input.history.is_empty() {
            return Err(Error::invalid("a conversation keeps its own history: pass no id and no history"));
        }
        input.history = self.messages();
        let result = client.run_input(input).await?;
        self.set_messages(result.messages.clone());
        Ok(result)
    }
}
