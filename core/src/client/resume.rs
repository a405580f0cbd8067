//! Durable resume: read the halted tool turn back out of a transcript and plan how each of
//! its calls is settled, so the resumed transcript has exactly one result per call.
//!
//! A halt leaves the transcript ending in the halted assistant turn followed by the results
//! of the calls up to and including the suspended one (whose result is a placeholder). On
//! resume: relay calls named by the Request take their results from the Answer; the suspended
//! call re-runs with the Answer; calls already answered keep their results; calls whose
//! results never entered run now.

use std::collections::HashMap;

use serde_json::Value;

use super::turn::Plan;
use super::wire::{calls_of, results_after, Call};
use crate::answer::check_answer_id;
use crate::error::{Error, Result};
use crate::relay::{is_relay_request, relay_calls_of};
use crate::types::{Answer, Request};

/// The halted turn, ready to settle.
pub(crate) struct ResumePlan {
    /// The transcript up to and including the halted assistant turn.
    pub messages: Vec<Value>,
    pub calls: Vec<Call>,
    pub plans: Vec<Plan>,
}

/// Plans the resume of `history` with `answer` to `pending`.
pub(crate) fn plan(mut history: Vec<Value>, pending: &Request, answer: &Answer) -> Result<ResumePlan> {
    check_answer_id(pending, answer)?;
    let idx = history
        .iter()
        .rposition(|m| calls_of(m).is_some())
        .ok_or_else(|| Error::invalid("cannot resume: the transcript has no assistant turn with tool calls"))?;
    let calls = calls_of(&history[idx]).unwrap_or_default();
    let (found, used) = results_after(&history[idx + 1..]);
    if idx + 1 + used != history.len() {
        return Err(Error::invalid(
            "cannot resume: the transcript continues after the halted tool turn (pass the messages of the pending result)",
        ));
    }
    let mut entered: HashMap<String, Value> = found.into_iter().collect();

    let relay_ids: Vec<String> = relay_calls_of(pending).into_iter().map(|c| c.id).collect();
    let suspended = if is_relay_request(pending) {
        if !calls.iter().any(|c| relay_ids.contains(&c.id)) {
            return Err(Error::invalid(
                "cannot resume: none of the pending relay calls is in the transcript's last tool turn",
            ));
        }
        None
    } else {
        let last = calls.iter().rposition(|c| entered.contains_key(&c.id)).ok_or_else(|| {
            Error::invalid("cannot resume: the transcript holds no placeholder result for the pending request")
        })?;
        Some(last)
    };

    let plans = calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if let Some(pos) = relay_ids.iter().position(|id| *id == c.id) {
                Plan::Relay(answer.clone(), pos == 0)
            } else if suspended == Some(i) {
                Plan::Resume(pending.clone(), answer.clone())
            } else if let Some(v) = entered.remove(&c.id) {
                Plan::Keep(v)
            } else {
                Plan::Run
            }
        })
        .collect();
    history.truncate(idx + 1);
    Ok(ResumePlan { messages: history, calls, plans })
}
