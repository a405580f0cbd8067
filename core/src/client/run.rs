//! The loop itself, plus the whole-run deadline and cancellation around it.

use std::borrow::Cow;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::call::{Caller, Read};
use super::options::Style;
use super::stream::{StreamEvent, StreamTo};
use super::turn::{Plan, ToolEnv, TurnOutcome};
use super::wire::{Call, Entry};
use super::{resume, wire, Client, RunInput};
use crate::error::{Error, ErrorKind, Result};
use crate::hooks::{AfterLlmEvent, BeforeLlmEvent, BodyTransform, HookSet};
use crate::metrics::{ms_since, LlmMetric, Meter, MetricEvent, RunMetric};
use crate::redact::Secrets;
use crate::toolkit::{Declarations, Toolkit};
use crate::types::{Request, RunResult, RunStatus, ToolCallRecord, Usage, LIMIT_MAX_TURNS};

/// The state a run accumulates.
struct State {
    messages: Vec<Value>,
    tools: Declarations,
    records: Vec<ToolCallRecord>,
    usage: Usage,
    turns: u32,
    model: String,
    last_text: String,
}

/// What a run has done so far, kept outside its future so that a run that fails, times out
/// or is cancelled still reports its turns, calls and tokens in its `run` metric.
#[derive(Default)]
struct Progress {
    turns: u32,
    tool_calls: u64,
    total_tokens: u64,
    model: String,
}

/// Times one model call; dropped without [`LlmTimer::ok`] (an error, a cancel, the deadline)
/// it reports the call as failed.
pub(super) struct LlmTimer<'a> {
    meter: Meter<'a>,
    model: String,
    /// The request's parts as `{type, mimeType, bytes}`, for the ok event.
    parts: Vec<Value>,
    start: Instant,
    done: bool,
}

impl<'a> LlmTimer<'a> {
    pub(super) fn start(meter: Meter<'a>, model: &str, parts: Vec<Value>) -> LlmTimer<'a> {
        LlmTimer { meter, model: model.to_string(), parts, start: Instant::now(), done: false }
    }

    pub(super) fn ok(mut self, usage: Usage) {
        self.done = true;
        self.emit(true, usage);
    }

    fn emit(&mut self, ok: bool, usage: Usage) {
        self.meter.emit(MetricEvent::Llm(LlmMetric {
            model: std::mem::take(&mut self.model),
            ok,
            ms: ms_since(self.start),
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            // Upstream describes the parts of a call that got a reply only.
            parts: if ok { std::mem::take(&mut self.parts) } else { Vec::new() },
        }));
    }
}

impl Drop for LlmTimer<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.emit(false, Usage::default());
        }
    }
}

fn cancelled_error() -> Error {
    Error::new(ErrorKind::Cancelled, "run cancelled")
}

impl Client {
    /// Runs the loop for `input`, bounded by the client's `timeout_ms` and `input.cancel`.
    /// With `input.id` set, the conversation is loaded from and saved to the client's store.
    pub async fn run_input(&self, input: RunInput<'_>) -> Result<RunResult> {
        // The run's own futures are boxed: they are many kilobytes, and a caller that moves
        // this one (a binding spawning it onto a runtime) would otherwise copy all of it.
        let resuming = input.resume.is_some() || input.answer.is_some();
        match input.id.clone() {
            // An empty id is no conversation for a new prompt (upstream's rule), but a resume
            // by id names one.
            Some(id) if id.is_empty() && resuming => {
                Err(Error::invalid("a resume by conversation id needs the id (it is empty)"))
            }
            Some(id) if !id.is_empty() => Box::pin(self.run_remembered(id, input)).await,
            _ if input.answer.is_some() => {
                Err(Error::invalid("an answer without a pending request needs a conversation id"))
            }
            _ => Box::pin(self.run_counted(input)).await,
        }
    }

    /// One run, reported in the `run` metric whatever its outcome.
    pub(super) async fn run_counted(&self, input: RunInput<'_>) -> Result<RunResult> {
        let started = Instant::now();
        let progress = Mutex::new(Progress { model: self.opts.model.clone(), ..Progress::default() });
        let result = self.run_guarded(input, &progress).await;
        let p = progress.into_inner().unwrap_or_else(|p| p.into_inner());
        let run = match &result {
            Ok(r) => RunMetric {
                model: r.model.clone(),
                turns: r.turns,
                tool_calls: r.tool_call_count as u64,
                total_tokens: r.usage.total_tokens,
                ms: ms_since(started),
                error: None,
            },
            Err(e) => RunMetric {
                model: p.model,
                turns: p.turns,
                tool_calls: p.tool_calls,
                total_tokens: p.total_tokens,
                ms: ms_since(started),
                error: Some(e.message().to_string()),
            },
        };
        self.meter().emit(MetricEvent::Run(run));
        result
    }

    async fn run_guarded(&self, input: RunInput<'_>, progress: &Mutex<Progress>) -> Result<RunResult> {
        let token = input.cancel.clone().unwrap_or_default().child_token();
        let deadline = self.opts.timeout_ms.map(|ms| Instant::now() + Duration::from_millis(ms));
        let key = self.opts.resolve_key()?;
        let secrets = self.opts.secrets(key.as_deref());
        let run = self.drive(input, key, &secrets, token.clone(), deadline, progress);
        let result = self.bounded(token, deadline, run).await;
        // Whatever its kind, an error's text may carry what a provider or host echoed.
        result.map_err(|e| e.scrubbed(&secrets))
    }

    /// Runs `work` until it ends, `token` is cancelled or `deadline` passes; then cancels
    /// `token`, so that tools still holding it learn that the work is over.
    pub(super) async fn bounded<T>(
        &self,
        token: CancellationToken,
        deadline: Option<Instant>,
        work: impl std::future::Future<Output = Result<T>>,
    ) -> Result<T> {
        let outer = token.clone();
        // Biased: once the token is cancelled (or the deadline passed) the work is not polled
        // again, so it cannot send one more request, nor finish with that request's outcome.
        let expiry = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d.into()).await,
                None => std::future::pending().await,
            }
        };
        let result = tokio::select! {
            biased;
            () = outer.cancelled() => Err(cancelled_error()),
            () = expiry => Err(self.timeout_error()),
            r = work => r,
        };
        token.cancel();
        result
    }

    pub(super) fn timeout_error(&self) -> Error {
        let ms = self.opts.timeout_ms.unwrap_or(0);
        Error::new(ErrorKind::Timeout, format!("run timeout after {ms}ms (client timeout_ms budget)"))
    }

    /// Refuses to go on once the run was cancelled or its deadline passed.
    pub(super) fn check_live(&self, cancel: &CancellationToken, deadline: Option<Instant>) -> Result<()> {
        if cancel.is_cancelled() {
            return Err(cancelled_error());
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(self.timeout_error());
        }
        Ok(())
    }

    async fn drive(
        &self,
        input: RunInput<'_>,
        key: Option<String>,
        secrets: &Secrets,
        cancel: CancellationToken,
        deadline: Option<Instant>,
        progress: &Mutex<Progress>,
    ) -> Result<RunResult> {
        let opts = &self.opts;
        let meter = self.meter();
        let caller = Caller {
            opts,
            transport: &self.transport,
            url: opts.endpoint(),
            headers: opts.request_headers(key.as_deref()),
            secrets,
            deadline,
        };
        let enabled = opts.hooks.as_ref().map(|h| h.enabled()).unwrap_or(HookSet::ALL);
        let stream = input.stream.clone();
        let stream = stream.as_ref();
        let env = ToolEnv {
            opts,
            toolkit: input.toolkit,
            hooks: opts.hooks.as_ref(),
            enabled,
            cancel,
            deadline,
            meter,
            stream,
            unstarted: Default::default(),
        };
        let tools = match (input.toolkit, opts.style) {
            (None, _) => Declarations::replaced(Vec::new()),
            (Some(tk), Style::OpenAi) => tk.openai_declarations().clone(),
            (Some(tk), Style::Anthropic) => tk.anthropic_declarations().clone(),
        };
        // The skill catalog follows the client's own prompt, a blank line between (upstream's rule).
        let skills_prompt = input.toolkit.map_or("", Toolkit::skills_prompt);
        let system = match (opts.system_prompt.as_deref().filter(|s| !s.is_empty()), skills_prompt) {
            (None, "") => None,
            (Some(own), "") => Some(Cow::Borrowed(own)),
            (None, skills) => Some(Cow::Borrowed(skills)),
            (Some(own), skills) => Some(Cow::Owned(format!("{own}\n\n{skills}"))),
        };
        let system = system.as_deref();
        let warn = |key: String, message: String| self.warn_once(key, message);
        let parts = wire::PartPolicy::of(opts, &warn);
        let mut st = State {
            messages: Vec::new(),
            tools,
            records: Vec::new(),
            usage: Usage::default(),
            turns: 0,
            model: opts.model.clone(),
            last_text: String::new(),
        };

        wire::check_history(&input.history)?;
        if let Some((pending, answer)) = &input.resume {
            let mut plan = resume::plan(input.history, pending, answer)?;
            // Earlier turns are balanced like any history; the halted turn is settled below.
            let halted_turn = plan.messages.pop();
            st.messages = wire::balance(opts.style, plan.messages);
            st.messages.extend(halted_turn);
            let outcome = env.run_turn(&plan.calls, plan.plans, 0).await?;
            stream_results(stream, &plan.calls, &outcome);
            let halted = st.absorb(opts.style, outcome);
            st.report(progress);
            if let Some(req) = halted {
                return Ok(st.finish_pending(req));
            }
        } else {
            let fresh = input.history.is_empty();
            let prompt = match input.prompt_parts {
                Some(parts) => Value::Array(crate::content::normalize_parts(&parts)?),
                None => Value::String(input.prompt.unwrap_or_default()),
            };
            st.messages = wire::balance(opts.style, input.history);
            st.messages.extend(wire::opening_messages(opts.style, system, fresh, prompt));
        }

        for _ in 0..opts.max_turns {
            // A cancellation or deadline that came while the last turn's tools ran (tools may
            // finish without yielding) ends the run before it sends another request.
            self.check_live(&env.cancel, deadline)?;
            let turn = st.turns;
            st.turns += 1;
            // A run that fails from here on (a hook, the body transform) still took this turn.
            st.report(progress);
            let mut turn_model = opts.model.clone();
            if let (Some(h), true) = (&opts.hooks, enabled.before_llm) {
                let ev = BeforeLlmEvent {
                    messages: st.messages.clone(),
                    tools: st.tools.values.as_ref().clone(),
                    model: opts.model.clone(),
                    turn,
                };
                if let Some(ov) = h.before_llm(ev).await? {
                    if let Some(m) = ov.messages {
                        st.messages = m;
                    }
                    if let Some(t) = ov.tools {
                        st.tools = Declarations::replaced(t);
                    }
                    if let Some(m) = ov.model.filter(|m| !m.is_empty()) {
                        turn_model = m;
                    }
                }
            }
            let anthropic_system = if opts.style == Style::Anthropic { system } else { None };
            let mut body = wire::build_body(
                opts,
                &turn_model,
                anthropic_system,
                &st.messages,
                &st.tools,
                stream.is_some(),
                &parts,
            )?;
            if let Some(t) = &opts.body_transform {
                body = transform_body(t.as_ref(), body).await?;
            }
            st.model = turn_model;
            st.report(progress);
            // Again after the host's before_llm and body_transform, which may have cancelled.
            self.check_live(&env.cancel, deadline)?;
            // Only a sink sees an event's parts; the registry counts none.
            let summaries =
                if meter.sink.is_some() { crate::content::part_summaries(&st.messages) } else { Vec::new() };
            let timer = LlmTimer::start(meter, &st.model, summaries);
            let replied = caller.call(Bytes::from(body), stream.map(|s| (opts.style, s))).await?;
            let hook = opts.hooks.as_ref().filter(|_| enabled.after_llm);
            // Only a hook needs the whole answer as a value; the loop reads just its parts.
            let (usage, read) = replied.read(opts.style, hook.is_some())?;
            timer.ok(usage);
            // Counted before after_llm, which may fail the run: the tokens were spent anyway.
            // They come from the provider: saturate rather than overflow.
            st.usage.prompt_tokens = st.usage.prompt_tokens.saturating_add(usage.prompt_tokens);
            st.usage.completion_tokens = st.usage.completion_tokens.saturating_add(usage.completion_tokens);
            st.usage.total_tokens = st.usage.total_tokens.saturating_add(usage.total_tokens);
            st.report(progress);
            let reply = match read {
                Read::Reply(reply) => reply?,
                Read::Whole(response) => {
                    if let Some(h) = hook {
                        h.after_llm(AfterLlmEvent { response: response.clone(), model: st.model.clone(), turn })
                            .await?;
                    }
                    wire::parse_reply(opts.style, response)?
                }
            };
            st.last_text = reply.text;
            if let Some(m) = reply.message {
                st.messages.push(m);
            }
            if reply.calls.is_empty() {
                if let Some(s) = stream {
                    s.emit(StreamEvent::Usage(st.usage));
                }
                return Ok(st.finish(RunStatus::Done, None));
            }
            if let Some(s) = stream {
                for c in &reply.calls {
                    let args = c.args.clone().unwrap_or_else(|_| serde_json::json!({}));
                    s.emit(StreamEvent::ToolCall { id: c.id.clone(), name: c.name.clone(), args });
                }
            }
            let plans = reply.calls.iter().map(|_| Plan::Run).collect();
            let outcome = env.run_turn(&reply.calls, plans, turn).await?;
            stream_results(stream, &reply.calls, &outcome);
            let halted = st.absorb(opts.style, outcome);
            st.report(progress);
            if let Some(req) = halted {
                return Ok(st.finish_pending(req));
            }
        }
        // The text of a run cut short, as upstream: openai the last assistant text in the
        // transcript, anthropic none (its interim text rode beside tool calls).
        st.last_text = match opts.style {
            Style::OpenAi => wire::last_assistant_text(&st.messages),
            Style::Anthropic => String::new(),
        };
        Ok(st.finish(RunStatus::Incomplete, Some(LIMIT_MAX_TURNS.to_string())))
    }
}

/// A settled turn's results, in call order, to the stream; a halted turn's last result is the
/// suspension's placeholder, which the stream shows as the pending Request instead.
fn stream_results(stream: Option<&StreamTo>, calls: &[Call], outcome: &TurnOutcome) {
    let Some(s) = stream else { return };
    let fresh: Vec<(&String, &crate::types::ToolResult)> = outcome
        .entries
        .iter()
        .filter_map(|e| match e {
            Entry::Fresh(id, _, r) => Some((id, r)),
            Entry::Verbatim(_) => None,
        })
        .collect();
    let shown = fresh.len() - usize::from(outcome.halted.is_some() && !fresh.is_empty());
    for (id, r) in &fresh[..shown] {
        let name = calls.iter().find(|c| &c.id == *id).map(|c| c.name.clone()).unwrap_or_default();
        s.emit(StreamEvent::ToolResult { id: (*id).clone(), name, output: r.output.clone(), is_error: r.is_error });
    }
    if let Some(req) = &outcome.halted {
        s.emit(StreamEvent::Pending(req.clone()));
    }
}

/// Hands the body to the host's transform as JSON and takes back what it returns.
pub(super) async fn transform_body(t: &dyn BodyTransform, body: Vec<u8>) -> Result<Vec<u8>> {
    let value: Value = serde_json::from_slice(&body).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
    match t.transform(value).await? {
        None => Ok(body),
        Some(v) if v.is_object() => serde_json::to_vec(&v).map_err(|e| Error::new(ErrorKind::Internal, e.to_string())),
        Some(_) => Err(Error::invalid("body_transform must return a JSON object (or nothing)")),
    }
}

impl State {
    fn report(&self, progress: &Mutex<Progress>) {
        let mut p = progress.lock().unwrap_or_else(|p| p.into_inner());
        p.turns = self.turns;
        p.tool_calls = self.records.len() as u64;
        p.total_tokens = self.usage.total_tokens;
        p.model.clone_from(&self.model);
    }

    /// Appends a settled turn; returns the halt, if the turn halted.
    fn absorb(&mut self, style: Style, outcome: TurnOutcome) -> Option<Request> {
        wire::append_results(style, &mut self.messages, outcome.entries);
        self.records.extend(outcome.records);
        outcome.halted
    }

    fn finish(self, status: RunStatus, limit: Option<String>) -> RunResult {
        RunResult {
            text: self.last_text,
            tool_call_count: self.records.len(),
            tool_calls: self.records,
            messages: self.messages,
            turns: self.turns,
            usage: self.usage,
            model: self.model,
            status,
            limit,
            pending: None,
        }
    }

    fn finish_pending(mut self, request: Request) -> RunResult {
        self.last_text = request.prompt.clone();
        let mut r = self.finish(RunStatus::Pending, None);
        r.pending = Some(request);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{ClientOptions, Style};

    #[test]
    fn the_run_future_is_send() {
        fn is_send<T: Send>(_: &T) {}
        let client = Client::new(ClientOptions::new("http://127.0.0.1:9", Style::OpenAi, "m")).unwrap();
        let tk = crate::Toolkit::default();
        let fut = client.run_input(RunInput::prompt("x").toolkit(&tk));
        is_send(&fut);
    }
}
