//! The client: drives a model through the tool-calling loop.
//!
//! Per turn: `before_llm` → build the body (once, straight to bytes) → transport with
//! retries → `after_llm` → parse tool calls → run them concurrently → settle suspensions in
//! call order → append results in the provider's shape → repeat until the model stops
//! calling tools (`done`), a suspension halts the run (`pending`), or `max_turns` is reached
//! (`incomplete`).

mod call;
mod elide;
mod in_process;
mod lenient;
pub use call::retry_after_seconds;
mod options;
mod options_json;
mod remembered;
mod resume;
mod run;
mod stream;
mod translate;
mod turn;
pub(crate) mod wire;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

#[cfg(feature = "fuzzing")]
pub(crate) use call::not_json;
pub use in_process::{
    envelope as in_process_envelope, in_process_refused, InProcessModel, InProcessTransport, IN_PROCESS_BASE_URL,
    IN_PROCESS_REFUSED,
};
pub use options::{
    ClientOptions, OnWarning, Style, UnsupportedPart, DEFAULT_MAX_RETRY_AFTER_MS, DEFAULT_RETRYABLE_STATUSES,
};
pub use options_json::CLIENT_OPTION_KEYS;
pub use remembered::Conversation;
#[cfg(feature = "fuzzing")]
pub(crate) use stream::StreamReader;
pub use stream::{OnStreamEvent, StreamEvent, StreamTo};
pub use translate::{TranslateRequest, TranslateResult, TRANSLATE_REQUEST_KEYS};
pub use wire::translate::{
    finish_reason_for, openai_messages_to_anthropic, openai_tool_choice_to_anthropic, openai_tools_to_anthropic,
    TranslatedToolCall,
};

use crate::error::Result;
use crate::memory::{ConversationStore, InMemoryConversationStore};
use crate::metrics::{Meter, MetricsRegistry};
use crate::toolkit::Toolkit;
use crate::transport::{Http1Transport, Transport};
use crate::types::{Answer, Request, RunResult};

/// A configured model client. Cheap to share: wrap it in an `Arc` and run concurrently.
pub struct Client {
    opts: ClientOptions,
    transport: Arc<dyn Transport>,
    metrics: Arc<MetricsRegistry>,
    store: Arc<dyn ConversationStore>,
    /// What this client has warned about already (each kind is said once per client).
    warned: Arc<Mutex<HashSet<String>>>,
}

/// Everything one run takes. Build it with [`RunInput::prompt`] or [`RunInput::resume`].
#[derive(Clone, Debug, Default)]
pub struct RunInput<'a> {
    /// The new user turn (`None` only when resuming).
    pub prompt: Option<String>,
    /// The new user turn as content parts ([`crate::content`]; strings are text parts), in
    /// place of `prompt`: checked, then kept in the transcript in the canonical form.
    pub prompt_parts: Option<Vec<Value>>,
    /// A prior transcript to continue.
    pub history: Vec<Value>,
    /// The tools the model may call.
    pub toolkit: Option<&'a Toolkit>,
    /// Cancels the run (in-flight request and tools included) when fired.
    pub cancel: Option<CancellationToken>,
    /// The halted Request and its Answer, for a durable resume.
    pub resume: Option<(Request, Answer)>,
    /// Streams the run: the model's answers are read as server-sent events and the run's
    /// steps go here as they happen (see [`StreamEvent`]).
    pub stream: Option<StreamTo>,
    /// A conversation id: the client's store supplies the history and keeps the result
    /// ([`Client::conversation_store`]). `None` or empty: a run that remembers nothing.
    pub id: Option<String>,
    /// With `id`: the answer to the request the stored conversation waits on (a resume
    /// without naming the request, which the store recorded).
    pub answer: Option<Answer>,
}

impl<'a> RunInput<'a> {
    /// A run of `prompt`.
    pub fn prompt(prompt: impl Into<String>) -> RunInput<'a> {
        RunInput { prompt: Some(prompt.into()), ..RunInput::default() }
    }

    /// A resume of the halted `history` with `answer` to `pending`.
    pub fn resume(history: Vec<Value>, pending: Request, answer: Answer) -> RunInput<'a> {
        RunInput { history, resume: Some((pending, answer)), ..RunInput::default() }
    }

    /// With these tools.
    pub fn toolkit(mut self, toolkit: &'a Toolkit) -> RunInput<'a> {
        self.toolkit = Some(toolkit);
        self
    }

    /// Continuing this transcript.
    pub fn history(mut self, history: Vec<Value>) -> RunInput<'a> {
        self.history = history;
        self
    }

    /// Cancelled by this token.
    pub fn cancel(mut self, token: CancellationToken) -> RunInput<'a> {
        self.cancel = Some(token);
        self
    }
}

impl Client {
    /// A client for `opts`. Invalid options are an [`crate::ErrorKind::InvalidArgument`] error.
    pub fn new(opts: ClientOptions) -> Result<Client> {
        opts.validate()?;
        let transport = match &opts.transport {
            Some(t) => t.clone(),
            None => Http1Transport::shared(),
        };
        let store = match &opts.store {
            Some(s) => s.clone(),
            None => Arc::new(InMemoryConversationStore::new()),
        };
        Ok(Client { opts, transport, metrics: Arc::new(MetricsRegistry::new()), store, warned: Arc::default() })
    }

    /// Every run's metrics so far as Prometheus text (SPEC §8), the same bytes upstream's
    /// ports render; HELP and TYPE lines only before the first run.
    pub fn metrics(&self) -> String {
        self.metrics.render()
    }

    /// The registry behind [`Client::metrics`].
    pub fn metrics_registry(&self) -> &MetricsRegistry {
        &self.metrics
    }

    /// This client on another transport, counting into the same registry.
    pub fn with_transport(&self, transport: Arc<dyn Transport>) -> Client {
        let mut opts = self.opts.clone();
        opts.transport = Some(transport.clone());
        Client {
            opts,
            transport,
            metrics: self.metrics.clone(),
            store: self.store.clone(),
            warned: self.warned.clone(),
        }
    }

    /// This client remembering conversations in `store`, counting into the same registry.
    pub fn with_store(&self, store: Arc<dyn ConversationStore>) -> Client {
        let mut opts = self.opts.clone();
        opts.store = Some(store.clone());
        Client {
            opts,
            transport: self.transport.clone(),
            metrics: self.metrics.clone(),
            store,
            warned: self.warned.clone(),
        }
    }

    /// Hands `message` to the client's `on_warning` the first time `key` is seen.
    pub(crate) fn warn_once(&self, key: String, message: String) {
        let Some(sink) = &self.opts.on_warning else { return };
        if self.warned.lock().unwrap_or_else(|p| p.into_inner()).insert(key) {
            sink.on_warning(&crate::Warning { code: "content_part_placeholder", message });
        }
    }

    pub(crate) fn meter(&self) -> Meter<'_> {
        Meter { registry: &self.metrics, sink: self.opts.on_metric.as_ref() }
    }

    /// The options the client was built with.
    pub fn options(&self) -> &ClientOptions {
        &self.opts
    }

    /// Runs `prompt` with `toolkit`.
    pub async fn run(&self, prompt: &str, toolkit: Option<&Toolkit>) -> Result<RunResult> {
        self.run_input(RunInput { toolkit, ..RunInput::prompt(prompt) }).await
    }

    /// Runs `prompt` as the next user turn of `history`.
    pub async fn run_with_history(
        &self,
        prompt: &str,
        toolkit: Option<&Toolkit>,
        history: Vec<Value>,
    ) -> Result<RunResult> {
        self.run_input(RunInput { toolkit, history, ..RunInput::prompt(prompt) }).await
    }

    /// Resumes a run that halted with status `pending`: `answer` must echo `pending.id`; the
    /// suspended call re-runs with the answer (relay calls take their results from it), every
    /// other call of the halted turn gets exactly one result, and the loop continues with no
    /// new user turn.
    pub async fn run_with_answer(
        &self,
        toolkit: Option<&Toolkit>,
        history: Vec<Value>,
        pending: &Request,
        answer: &Answer,
    ) -> Result<RunResult> {
        let input = RunInput { toolkit, ..RunInput::resume(history, pending.clone(), answer.clone()) };
        self.run_input(input).await
    }
}
