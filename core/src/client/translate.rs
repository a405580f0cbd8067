//! `Client::translate` (SPEC §11): the engine as a wire-format translator. OpenAI-shaped
//! messages, tools and `tool_choice` in, exactly one provider call (with the loop's retries,
//! `request_params`, body transform, `before_llm`/`after_llm` and `llm` metric), the turn
//! back in the OpenAI shape. No loop, no tool runs, no state: calls may run concurrently.

use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use super::call::Caller;
use super::options::{ClientOptions, Style};
use super::run::{transform_body, LlmTimer};
use super::wire::translate::{self as tr, TranslatedToolCall};
use super::{wire, Client};
use crate::error::{Error, Result};
use crate::hooks::{AfterLlmEvent, BeforeLlmEvent, HookSet};
use crate::spec_json::{camel_case, Fields};
use crate::toolkit::Toolkit;
use crate::types::Usage;

/// What one translation sends. Build it with [`TranslateRequest::from_json`] or by hand.
#[derive(Clone, Debug, Default)]
pub struct TranslateRequest {
    /// The OpenAI `messages`, verbatim: assistant turns with `tool_calls`, `tool` results with
    /// `tool_call_id`, system and developer messages.
    pub messages: Vec<Value>,
    /// The OpenAI `tools`, verbatim (declared, never run); after the toolkit's, if any.
    pub tools: Vec<Value>,
    /// The OpenAI `tool_choice`, verbatim; `None` leaves it out.
    pub tool_choice: Option<Value>,
    /// Replaces the system prompt; `None` uses the messages' own system text and the client's
    /// `system_prompt`.
    pub system: Option<String>,
    /// `max_tokens` for this call; `None` leaves openai's out and uses the client's
    /// `max_tokens` (4096) for anthropic.
    pub max_tokens: Option<u32>,
}

/// The keys of a translate request's JSON.
pub const TRANSLATE_REQUEST_KEYS: [&str; 5] = ["messages", "tools", "tool_choice", "system", "max_tokens"];

impl TranslateRequest {
    /// Reads `{"messages", "tools"?, "tool_choice"?, "system"?, "max_tokens"?}` (camelCase
    /// keys too). A missing `messages`, an unknown key or a wrong type is an
    /// [`crate::ErrorKind::InvalidArgument`] error naming it.
    pub fn from_json(v: &Value) -> Result<TranslateRequest> {
        let f = Fields::new("translate request", v, &TRANSLATE_REQUEST_KEYS, true)?;
        let list = |k: &str| -> Result<Vec<Value>> {
            match f.get(k) {
                None => Ok(Vec::new()),
                Some(Value::Array(a)) => Ok(a.clone()),
                Some(other) => Err(f.wrong(k, "an array", other)),
            }
        };
        if f.get("messages").is_none() {
            return Err(Error::invalid("translate request key \"messages\" is required"));
        }
        let max_tokens = match f.count("max_tokens")? {
            None | Some(0) => None,
            Some(n) => Some(u32::try_from(n).map_err(|_| Error::invalid("translate max_tokens is too large"))?),
        };
        Ok(TranslateRequest {
            messages: list("messages")?,
            tools: list("tools")?,
            tool_choice: f.get("tool_choice").cloned(),
            system: f.string("system")?,
            max_tokens,
        })
    }
}

/// One translated turn, in the OpenAI shape.
#[derive(Clone, Debug)]
pub struct TranslateResult {
    /// The assistant text (`""` when the model only called tools).
    pub text: String,
    /// The tool calls, in the provider's order; none is dropped.
    pub tool_calls: Vec<TranslatedToolCall>,
    /// `stop`, `tool_calls`, `length` or `content_filter` (an OpenAI provider's own value
    /// passes through); any tool call makes it `tool_calls` for an Anthropic provider.
    pub finish_reason: String,
    /// This call's tokens.
    pub usage: Usage,
    /// The model the call sent.
    pub model: String,
    /// The provider's decoded response, for fields this type does not model.
    pub raw: Value,
}

impl TranslateResult {
    /// `{"text", "tool_calls": [{"id", "name", "arguments"}], "finish_reason", "usage":
    /// {"prompt_tokens", "completion_tokens", "total_tokens"}, "model", "raw"}`.
    pub fn to_json(&self) -> Value {
        let calls: Vec<Value> =
            self.tool_calls.iter().map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments})).collect();
        json!({
            "text": self.text,
            "tool_calls": calls,
            "finish_reason": self.finish_reason,
            "usage": {
                "prompt_tokens": self.usage.prompt_tokens,
                "completion_tokens": self.usage.completion_tokens,
                "total_tokens": self.usage.total_tokens,
            },
            "model": self.model,
            "raw": self.raw,
        })
    }

    /// [`TranslateResult::to_json`] with the JS and Go ports' key names (`toolCalls`,
    /// `finishReason`, `usage.promptTokens`, ...); `raw` is the provider's, unchanged.
    pub fn to_json_camel(&self) -> Value {
        let mut v = self.to_json();
        if let Value::Object(o) = &mut v {
            let renamed: Map<String, Value> = std::mem::take(o)
                .into_iter()
                .map(|(k, mut val)| {
                    if k == "usage" {
                        if let Value::Object(u) = &mut val {
                            *u = std::mem::take(u).into_iter().map(|(k, n)| (camel_case(&k), n)).collect();
                        }
                    }
                    (camel_case(&k), val)
                })
                .collect();
            *o = renamed;
        }
        v
    }
}

/// Translate's endpoint, which upstream's ports give their own rule: an OpenAI base that
/// neither ends in `/v1` nor holds `/chat/` gets `/v1` added.
fn endpoint(opts: &ClientOptions) -> String {
    let base = opts.base_url.trim().trim_end_matches('/');
    match opts.style {
        Style::OpenAi if base.ends_with("/v1") || base.contains("/chat/") => format!("{base}/chat/completions"),
        Style::OpenAi => format!("{base}/v1/chat/completions"),
        Style::Anthropic => opts.endpoint(),
    }
}

impl Client {
    /// Translates one turn: `toolkit`'s tools are declared (never run) before `req.tools`.
    /// Bounded by the client's `timeout_ms` and `cancel`, like a run.
    pub async fn translate(
        &self,
        req: TranslateRequest,
        toolkit: Option<&Toolkit>,
        cancel: Option<CancellationToken>,
    ) -> Result<TranslateResult> {
        let token = cancel.unwrap_or_default().child_token();
        let deadline = self.opts.timeout_ms.map(|ms| Instant::now() + Duration::from_millis(ms));
        let key = self.opts.resolve_key()?;
        let secrets = self.opts.secrets(key.as_deref());
        let caller = Caller {
            opts: &self.opts,
            transport: &self.transport,
            url: endpoint(&self.opts),
            headers: self.opts.request_headers(key.as_deref()),
            secrets: &secrets,
            deadline,
        };
        let work = self.translate_once(req, toolkit, &caller, token.clone(), deadline);
        self.bounded(token, deadline, work).await.map_err(|e| e.scrubbed(&secrets))
    }

    async fn translate_once(
        &self,
        req: TranslateRequest,
        toolkit: Option<&Toolkit>,
        caller: &Caller<'_>,
        cancel: CancellationToken,
        deadline: Option<Instant>,
    ) -> Result<TranslateResult> {
        let opts = &self.opts;
        let own_system = opts.system_prompt.clone().filter(|s| !s.is_empty());
        let (mut messages, mut tools, system) = match opts.style {
            Style::OpenAi => {
                let mut messages = tr::openai_transcript(req.messages)?;
                let system = req.system.clone().or(own_system).filter(|s| !s.is_empty());
                if let Some(s) = system.filter(|_| !tr::has_system_message(&messages)) {
                    messages.insert(0, json!({"role": "system", "content": s}));
                }
                let mut tools = toolkit.map(Toolkit::to_openai).unwrap_or_default();
                tools.extend(req.tools);
                (messages, tools, None)
            }
            Style::Anthropic => {
                let (messages, extracted) = tr::anthropic_transcript(&req.messages)?;
                let system = req.system.clone().or(own_system).unwrap_or(extracted);
                let mut tools = toolkit.map(Toolkit::to_anthropic).unwrap_or_default();
                tools.extend(tr::openai_tools_to_anthropic(&req.tools));
                (messages, tools, Some(system).filter(|s| !s.trim().is_empty()))
            }
        };
        let enabled = opts.hooks.as_ref().map(|h| h.enabled()).unwrap_or(HookSet::ALL);
        let mut model = opts.model.clone();
        if let (Some(h), true) = (&opts.hooks, enabled.before_llm) {
            let ev = BeforeLlmEvent { messages: messages.clone(), tools: tools.clone(), model: model.clone(), turn: 0 };
            if let Some(ov) = h.before_llm(ev).await? {
                messages = ov.messages.unwrap_or(messages);
                tools = ov.tools.unwrap_or(tools);
                model = ov.model.filter(|m| !m.is_empty()).unwrap_or(model);
            }
        }
        // Parts are encoded after before_llm, which sees them canonical, as in a run.
        let warn = |key: String, message: String| self.warn_once(key, message);
        let meter = self.meter();
        let summaries = if meter.sink.is_some() { crate::content::part_summaries(&messages) } else { Vec::new() };
        let messages = wire::wire_messages(&messages, &wire::PartPolicy::of(opts, &warn))?.into_owned();
        let mut body = Map::new();
        body.insert("model".into(), json!(model));
        match opts.style {
            Style::OpenAi => {
                body.insert("messages".into(), Value::Array(messages));
                if let Some(n) = req.max_tokens {
                    body.insert("max_tokens".into(), json!(n));
                }
            }
            Style::Anthropic => {
                body.insert("max_tokens".into(), json!(req.max_tokens.unwrap_or(opts.max_tokens)));
                body.insert("messages".into(), Value::Array(messages));
                if let Some(s) = system {
                    body.insert("system".into(), json!(s));
                }
            }
        }
        if !tools.is_empty() {
            body.insert("tools".into(), Value::Array(tools));
        }
        let choice = match (opts.style, req.tool_choice) {
            (_, None | Some(Value::Null)) => None,
            (Style::OpenAi, Some(c)) => Some(c),
            (Style::Anthropic, Some(c)) => tr::openai_tool_choice_to_anthropic(&c),
        };
        if let Some(c) = choice {
            body.insert("tool_choice".into(), c);
        }
        for (k, v) in opts.request_params.iter().flatten() {
            body.insert(k.clone(), v.clone());
        }
        let mut bytes = serde_json::to_vec(&body).map_err(|e| Error::new(crate::ErrorKind::Internal, e.to_string()))?;
        if let Some(t) = &opts.body_transform {
            bytes = transform_body(t.as_ref(), bytes).await?;
        }
        self.check_live(&cancel, deadline)?;
        let timer = LlmTimer::start(meter, &model, summaries);
        let data = caller.call(Bytes::from(bytes), None).await?.into_value()?;
        let usage = wire::usage_of(opts.style, &data);
        timer.ok(usage);
        if let (Some(h), true) = (&opts.hooks, enabled.after_llm) {
            h.after_llm(AfterLlmEvent { response: data.clone(), model: model.clone(), turn: 0 }).await?;
        }
        if let Some(err) = wire::provider_error(&data) {
            return Err(err);
        }
        let (text, tool_calls, finish_reason) = match opts.style {
            Style::OpenAi => tr::openai_reply(&data),
            Style::Anthropic => tr::anthropic_reply(&data),
        };
        Ok(TranslateResult { text, tool_calls, finish_reason, usage, model, raw: data })
    }
}
