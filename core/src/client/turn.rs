//! One assistant turn's tool calls: run them concurrently, then walk the results in call
//! order applying the suspension rules (inline `wait_for`, relay batching, durable halt on
//! the first suspension). Every call that enters the transcript gets exactly one result.

use std::sync::Arc;
use std::time::Instant;

use futures_util::future::join_all;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::options::ClientOptions;
use super::wire::{Call, Entry};
use crate::answer::{check_answer_id, declined_output, unresolved_output};
use crate::error::Result;
use crate::hooks::{AfterToolEvent, BeforeToolEvent, HookSet, Hooks};
use crate::relay::{relay_request, relay_result, RelayCall};
use crate::tool::Tool;
use crate::toolkit::{unknown_tool, Toolkit};
use crate::types::{Answer, Request, ToolCallRecord, ToolContext, ToolResult};

/// What a run needs to execute tools.
pub(crate) struct ToolEnv<'a> {
    pub opts: &'a ClientOptions,
    pub toolkit: Option<&'a Toolkit>,
    pub hooks: Option<&'a Arc<dyn Hooks>>,
    pub enabled: HookSet,
    pub cancel: CancellationToken,
    pub deadline: Option<Instant>,
}

/// How one call of a turn is to be settled.
pub(crate) enum Plan {
    /// Run it (a fresh call).
    Run,
    /// The call whose suspension `Request` is answered: re-run it with the answer.
    Resume(Request, Answer),
    /// A relay call the host answered; `bool` marks the first call of its Request.
    Relay(Answer, bool),
    /// Its result is already in the transcript.
    Keep(Value),
}

/// A turn's settled calls: transcript entries, records, and the halt, if any.
pub(crate) struct TurnOutcome {
    pub entries: Vec<Entry>,
    pub records: Vec<ToolCallRecord>,
    pub halted: Option<Request>,
}

enum Slot {
    Final(Value, ToolResult),
    Suspended(Value, Request),
    RelaySuspended(Value),
    Kept(Value),
}

impl ToolEnv<'_> {
    /// Settles `calls` according to `plans` (one plan per call).
    pub async fn run_turn(&self, calls: &[Call], plans: Vec<Plan>, turn: u32) -> Result<TurnOutcome> {
        let slots = join_all(calls.iter().zip(plans).map(|(c, p)| self.first_pass(c, p, turn))).await;
        let mut slots = slots.into_iter().collect::<Result<Vec<Slot>>>()?;
        let mut out = TurnOutcome { entries: Vec::with_capacity(calls.len()), records: Vec::new(), halted: None };
        let relayed = relay_calls(calls, &slots);
        let relay_req = (!relayed.is_empty()).then(|| relay_request(&relayed));
        let first_relay = relayed.first().map(|c| c.id.clone());
        let mut relay_answer: Option<Answer> = None;
        for i in 0..calls.len() {
            let call = &calls[i];
            let slot = std::mem::replace(&mut slots[i], Slot::Kept(Value::Null));
            let (args, result) = match slot {
                Slot::Kept(v) => {
                    out.entries.push(Entry::Verbatim(v));
                    continue;
                }
                Slot::Final(args, result) => (args, result),
                Slot::Suspended(args, request) => match self.opts.wait_for.as_ref() {
                    Some(w) => {
                        let answer = w.wait_for(request.clone()).await?;
                        if let Some(a) = &answer {
                            check_answer_id(&request, a)?;
                        }
                        let result = self.settle_answered(call, &args, &request, answer, turn).await?;
                        (args, result)
                    }
                    None => {
                        let placeholder = ToolResult::error(request.prompt.clone());
                        out.push(call, args, placeholder);
                        out.halted = Some(request);
                        break;
                    }
                },
                Slot::RelaySuspended(args) => {
                    let request = relay_req.clone().unwrap_or_else(|| relay_request(&[]));
                    let first = first_relay.as_deref() == Some(call.id.as_str());
                    let answer = match (&relay_answer, self.opts.wait_for.as_ref()) {
                        (Some(a), _) => a.clone(),
                        (None, Some(w)) => {
                            let a = w.wait_for(request.clone()).await?.unwrap_or_else(|| Answer {
                                id: request.id.clone(),
                                ok: false,
                                data: None,
                                reason: None,
                            });
                            check_answer_id(&request, &a)?;
                            relay_answer = Some(a.clone());
                            a
                        }
                        (None, None) => {
                            out.push(call, args, ToolResult::error(request.prompt.clone()));
                            out.halted = Some(request);
                            break;
                        }
                    };
                    let result = relay_result(&answer, &call.id, &call.name, first);
                    let result = self.after_tool(call, &args, result, turn).await?;
                    (args, result)
                }
            };
            out.push(call, args, result);
        }
        Ok(out)
    }

    async fn first_pass(&self, call: &Call, plan: Plan, turn: u32) -> Result<Slot> {
        let args = match &call.args {
            Ok(a) => a.clone(),
            Err(why) => {
                let msg = format!("invalid arguments for tool {}: {why}; the tool was not run", call.name);
                return Ok(match plan {
                    Plan::Keep(v) => Slot::Kept(v),
                    _ => Slot::Final(json!({}), ToolResult::error(msg)),
                });
            }
        };
        match plan {
            Plan::Keep(v) => Ok(Slot::Kept(v)),
            Plan::Run => self.run_fresh(call, args, turn).await,
            Plan::Resume(request, answer) => {
                let result = self.settle_answered(call, &args, &request, Some(answer), turn).await?;
                Ok(Slot::Final(args, result))
            }
            Plan::Relay(answer, first) => {
                let result = relay_result(&answer, &call.id, &call.name, first);
                let result = self.after_tool(call, &args, result, turn).await?;
                Ok(Slot::Final(args, result))
            }
        }
    }

    /// `before_tool` → execute → `after_tool` (skipped on a suspension).
    async fn run_fresh(&self, call: &Call, mut args: Value, turn: u32) -> Result<Slot> {
        if let (Some(h), true) = (self.hooks, self.enabled.before_tool) {
            let ev = BeforeToolEvent { name: call.name.clone(), args: args.clone(), id: call.id.clone(), turn };
            if let Some(ov) = h.before_tool(ev).await? {
                if let Some(result) = ov.result {
                    return Ok(match result.pending() {
                        Some(req) => Slot::Suspended(args, req),
                        None => Slot::Final(args, result),
                    });
                }
                if let Some(a) = ov.args {
                    args = a;
                }
            }
        }
        if self.tool(&call.name).is_some_and(Tool::is_relay) {
            return Ok(Slot::RelaySuspended(args));
        }
        let result = self.exec(call, args.clone(), None).await?;
        if let Some(req) = result.pending() {
            return Ok(Slot::Suspended(args, req));
        }
        let result = self.after_tool(call, &args, result, turn).await?;
        Ok(Slot::Final(args, result))
    }

    /// The answered path: declined → error result, no re-run; ok → re-run once with the
    /// answer; a second suspension → `unresolved: <prompt>`.
    async fn settle_answered(
        &self,
        call: &Call,
        args: &Value,
        request: &Request,
        answer: Option<Answer>,
        turn: u32,
    ) -> Result<ToolResult> {
        let answer = match answer {
            Some(a) if a.ok => a,
            _ => return Ok(ToolResult::error(declined_output(&request.prompt))),
        };
        if self.tool(&call.name).is_some_and(Tool::is_relay) {
            let result = relay_result(&answer, &call.id, &call.name, true);
            return self.after_tool(call, args, result, turn).await;
        }
        let result = self.exec(call, args.clone(), Some(answer)).await?;
        if result.pending().is_some() {
            return Ok(ToolResult::error(unresolved_output(&request.prompt)));
        }
        self.after_tool(call, args, result, turn).await
    }

    async fn after_tool(&self, call: &Call, args: &Value, result: ToolResult, turn: u32) -> Result<ToolResult> {
        let (Some(h), true) = (self.hooks, self.enabled.after_tool) else {
            return Ok(result);
        };
        let ev = AfterToolEvent {
            name: call.name.clone(),
            args: args.clone(),
            result: result.clone(),
            id: call.id.clone(),
            turn,
        };
        Ok(h.after_tool(ev).await?.unwrap_or(result))
    }

    /// The toolkit's tool called `name`.
    fn tool(&self, name: &str) -> Option<&Tool> {
        self.toolkit.and_then(|tk| tk.get(name))
    }

    /// Runs the tool with a context for this call (relay calls never reach here).
    async fn exec(&self, call: &Call, args: Value, answer: Option<Answer>) -> Result<ToolResult> {
        let Some(tool) = self.tool(&call.name) else {
            return Ok(unknown_tool(&call.name));
        };
        let ctx = ToolContext {
            answer,
            cancel: self.cancel.clone(),
            timeout: self.deadline.map(|d| d.saturating_duration_since(Instant::now())),
            call_id: call.id.clone(),
        };
        tool.execute(args, ctx).await
    }
}

impl TurnOutcome {
    fn push(&mut self, call: &Call, args: Value, result: ToolResult) {
        self.records.push(ToolCallRecord {
            name: call.name.clone(),
            args,
            output: result.output.clone(),
            is_error: result.is_error,
            metadata: result.metadata.clone(),
        });
        self.entries.push(Entry::Fresh(call.id.clone(), result));
    }
}

/// Every relay suspension of the turn, in call order, as it rides the Request.
fn relay_calls(calls: &[Call], slots: &[Slot]) -> Vec<RelayCall> {
    calls
        .iter()
        .zip(slots)
        .filter_map(|(c, slot)| {
            let Slot::RelaySuspended(args) = slot else { return None };
            let arguments = match &c.args {
                Ok(original) if original == args => c.raw_args.clone(),
                _ => args.to_string(),
            };
            Some(RelayCall { id: c.id.clone(), name: c.name.clone(), input: args.clone(), arguments })
        })
        .collect()
}
