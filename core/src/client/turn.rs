//! One assistant turn's tool calls: run them concurrently, then walk the results in call
//! order applying the suspension rules (inline `wait_for`, relay batching, durable halt on
//! the first suspension). Every call that enters the transcript gets exactly one result.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use futures_util::future::try_join_all;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::options::ClientOptions;
use super::stream::{StreamEvent, StreamTo};
use super::wire::{Call, Entry};
use crate::answer::{check_answer_id, declined_output, unresolved_output};
use crate::error::Result;
use crate::hooks::{AfterToolEvent, BeforeToolEvent, HookSet, Hooks};
use crate::metrics::{ms_since, Meter, MetricEvent, ToolMetric};
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
    pub meter: Meter<'a>,
    /// Where a streamed run's steps go.
    pub stream: Option<&'a StreamTo>,
    /// The calls of the current turn not yet started (see [`ToolContext::last_to_start`]).
    pub unstarted: AtomicUsize,
}

/// One call's part in its turn's count of calls not yet started: it leaves the count when
/// its tool first runs, or when its pass ends without running it.
struct Starting<'a> {
    unstarted: &'a AtomicUsize,
    counted: AtomicBool,
}

impl Starting<'_> {
    /// Marks the call started; whether no other call of the turn is still to start.
    fn start(&self) -> bool {
        self.leave();
        self.unstarted.load(Ordering::Acquire) == 0
    }

    /// Leaves the count, once.
    fn leave(&self) {
        if !self.counted.swap(true, Ordering::AcqRel) {
            self.unstarted.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl Drop for Starting<'_> {
    fn drop(&mut self) {
        self.leave();
    }
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
        // Each call runs, and with `wait_for` also waits for its answer, on its own: the host
        // sees one `wait_for` per suspension, all at once (it may park them and answer them
        // together). The first failure ends the turn and drops the others.
        // Counted: the calls that may run a tool (a kept result, a relay answer, bad arguments
        // or an unknown tool never does).
        let may_start: Vec<bool> = calls
            .iter()
            .zip(&plans)
            .map(|(c, p)| {
                matches!(p, Plan::Run | Plan::Resume(..))
                    && c.args.is_ok()
                    && self.tool(&c.name).is_some_and(|t| !t.is_relay())
            })
            .collect();
        self.unstarted.store(may_start.iter().filter(|m| **m).count(), Ordering::Release);
        let passes = calls.iter().zip(plans).zip(may_start).map(|((c, p), may)| async move {
            let starting = Starting { unstarted: &self.unstarted, counted: AtomicBool::new(!may) };
            self.first_pass(c, p, turn, &starting).await
        });
        let mut slots = try_join_all(passes).await?;
        let mut out = TurnOutcome { entries: Vec::with_capacity(calls.len()), records: Vec::new(), halted: None };
        // Durable only from here: what is still suspended halts the run, in call order.
        let relayed = relay_calls(calls, &slots);
        for i in 0..calls.len() {
            let call = &calls[i];
            match std::mem::replace(&mut slots[i], Slot::Kept(Value::Null)) {
                Slot::Kept(v) => out.entries.push(Entry::Verbatim(v)),
                Slot::Final(args, result) => out.push(call, args, result),
                Slot::Suspended(args, request) => {
                    out.push(call, args, ToolResult::error(request.prompt.clone()));
                    out.halted = Some(request);
                    break;
                }
                Slot::RelaySuspended(args) => {
                    // Every relay call of the turn rides this one Request.
                    let request = relay_request(&relayed);
                    out.push(call, args, ToolResult::error(request.prompt.clone()));
                    out.halted = Some(request);
                    break;
                }
            }
        }
        Ok(out)
    }

    async fn first_pass(&self, call: &Call, plan: Plan, turn: u32, starting: &Starting<'_>) -> Result<Slot> {
        let args = match &call.args {
            Ok(a) => a.clone(),
            Err(why) => {
                let msg = format!("invalid arguments for tool {}: {why}; the tool was not run", call.name);
                return Ok(match plan {
                    Plan::Keep(v) => Slot::Kept(v),
                    _ => {
                        self.record_tool(call, true, false, Instant::now());
                        Slot::Final(json!({}), ToolResult::error(msg))
                    }
                });
            }
        };
        let slot = match plan {
            Plan::Keep(v) => return Ok(Slot::Kept(v)),
            Plan::Run => {
                let t0 = Instant::now();
                let slot = self.run_fresh(call, args, turn, starting).await?;
                match &slot {
                    Slot::Final(_, r) => self.record_tool(call, r.is_error, false, t0),
                    Slot::Suspended(..) | Slot::RelaySuspended(_) => self.record_tool(call, false, true, t0),
                    Slot::Kept(_) => {}
                }
                slot
            }
            Plan::Resume(request, answer) => {
                let result = self.settle_answered(call, &args, &request, Some(answer), turn, starting).await?;
                return Ok(Slot::Final(args, result));
            }
            Plan::Relay(answer, first) => {
                let t0 = Instant::now();
                let result = relay_result(&answer, &call.id, &call.name, first);
                let result = self.after_tool(call, &args, result, turn).await?;
                self.record_tool(call, result.is_error, false, t0);
                return Ok(Slot::Final(args, result));
            }
        };
        let Some(w) = self.opts.wait_for.as_ref() else { return Ok(slot) };
        match slot {
            Slot::Suspended(args, request) => {
                if let Some(s) = self.stream {
                    s.emit(StreamEvent::Pending(request.clone()));
                }
                let answer = w.wait_for(request.clone()).await?;
                if let Some(a) = &answer {
                    check_answer_id(&request, a)?;
                }
                let result = self.settle_answered(call, &args, &request, answer, turn, starting).await?;
                Ok(Slot::Final(args, result))
            }
            Slot::RelaySuspended(args) => {
                // Inline, each relay call is its own Request, carrying just that call.
                let request = relay_request(&[relay_call(call, &args)]);
                if let Some(s) = self.stream {
                    s.emit(StreamEvent::Pending(request.clone()));
                }
                let answer = w.wait_for(request.clone()).await?.unwrap_or_else(|| Answer {
                    id: request.id.clone(),
                    ok: false,
                    data: None,
                    reason: None,
                });
                check_answer_id(&request, &answer)?;
                let t0 = Instant::now();
                let result = relay_result(&answer, &call.id, &call.name, true);
                let result = self.after_tool(call, &args, result, turn).await?;
                self.record_tool(call, result.is_error, false, t0);
                Ok(Slot::Final(args, result))
            }
            other => Ok(other),
        }
    }

    /// `before_tool` → execute → `after_tool` (skipped on a suspension).
    async fn run_fresh(&self, call: &Call, mut args: Value, turn: u32, starting: &Starting<'_>) -> Result<Slot> {
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
        let result = self.exec(call, args.clone(), None, starting).await?;
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
        starting: &Starting<'_>,
    ) -> Result<ToolResult> {
        let answer = match answer {
            Some(a) if a.ok => a,
            _ => return Ok(ToolResult::error(declined_output(&request.prompt))),
        };
        let t0 = Instant::now();
        let result = if self.tool(&call.name).is_some_and(Tool::is_relay) {
            relay_result(&answer, &call.id, &call.name, true)
        } else {
            let result = self.exec(call, args.clone(), Some(answer), starting).await?;
            if result.pending().is_some() {
                self.record_tool(call, false, true, t0);
                return Ok(ToolResult::error(unresolved_output(&request.prompt)));
            }
            result
        };
        let result = self.after_tool(call, args, result, turn).await?;
        self.record_tool(call, result.is_error, false, t0);
        Ok(result)
    }

    /// The `tool` metric of one execution (a suspension is `pending`, never an error). A run
    /// without a toolkit executes nothing, so a call its model makes anyway is no tool event
    /// (as upstream).
    fn record_tool(&self, call: &Call, is_error: bool, pending: bool, t0: Instant) {
        if self.toolkit.is_none() {
            return;
        }
        let source = self.tool(&call.name).map_or("custom", |t| t.source().as_str());
        self.meter.emit(MetricEvent::Tool(ToolMetric {
            tool: call.name.clone(),
            source: source.to_string(),
            is_error: is_error && !pending,
            ms: ms_since(t0),
            pending,
        }));
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
    async fn exec(
        &self,
        call: &Call,
        args: Value,
        answer: Option<Answer>,
        starting: &Starting<'_>,
    ) -> Result<ToolResult> {
        let Some(tool) = self.tool(&call.name) else {
            return Ok(unknown_tool(&call.name));
        };
        let ctx = ToolContext {
            answer,
            cancel: self.cancel.clone(),
            timeout: self.deadline.map(|d| d.saturating_duration_since(Instant::now())),
            call_id: call.id.clone(),
            last_to_start: starting.start(),
        };
        tool.execute(args, ctx).await
    }
}

impl TurnOutcome {
    fn push(&mut self, call: &Call, args: Value, mut result: ToolResult) {
        // A part the engine could not send is the tool's mistake: its result says so.
        if let Some(e) = result.parts.iter().flatten().find_map(|p| crate::content::validate(p).err()) {
            result = ToolResult::error(format!("{} returned an invalid content part: {}", call.name, e.message()));
        }
        self.records.push(ToolCallRecord {
            name: call.name.clone(),
            args,
            output: result.output.clone(),
            is_error: result.is_error,
            metadata: result.metadata.clone(),
        });
        self.entries.push(Entry::Fresh(call.id.clone(), call.name.clone(), result));
    }
}

/// Every relay suspension of the turn, in call order, as it rides the Request.
fn relay_calls(calls: &[Call], slots: &[Slot]) -> Vec<RelayCall> {
    calls
        .iter()
        .zip(slots)
        .filter_map(|(c, slot)| match slot {
            Slot::RelaySuspended(args) => Some(relay_call(c, args)),
            _ => None,
        })
        .collect()
}

/// `call` as a relay call with the arguments it runs with (the model's raw text when a hook
/// left them unchanged).
fn relay_call(call: &Call, args: &Value) -> RelayCall {
    let arguments = match &call.args {
        Ok(original) if original == args => call.raw_args.clone(),
        _ => args.to_string(),
    };
    RelayCall { id: call.id.clone(), name: call.name.clone(), input: args.clone(), arguments }
}
