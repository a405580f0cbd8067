//! The client: drives a model through the tool-calling loop.
//!
//! Per turn: `before_llm` → build the body (once, straight to bytes) → transport with
//! retries → `after_llm` → parse tool calls → run them concurrently → settle suspensions in
//! call order → append results in the provider's shape → repeat until the model stops
//! calling tools (`done`), a suspension halts the run (`pending`), or `max_turns` is reached
//! (`incomplete`).

mod call;
pub use call::retry_after_seconds;
mod options;
mod options_json;
mod resume;
mod run;
mod turn;
pub(crate) mod wire;

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use options::{ClientOptions, Style, DEFAULT_MAX_RETRY_AFTER_MS, DEFAULT_RETRYABLE_STATUSES};
pub use options_json::CLIENT_OPTION_KEYS;

use crate::error::Result;
use crate::toolkit::Toolkit;
use crate::transport::{Http1Transport, Transport};
use crate::types::{Answer, Request, RunResult};

/// A configured model client. Cheap to share: wrap it in an `Arc` and run concurrently.
pub struct Client {
    opts: ClientOptions,
    transport: Arc<dyn Transport>,
}

/// Everything one run takes. Build it with [`RunInput::prompt`] or [`RunInput::resume`].
#[derive(Clone, Debug, Default)]
pub struct RunInput<'a> {
    /// The new user turn (`None` only when resuming).
    pub prompt: Option<String>,
    /// A prior transcript to continue.
    pub history: Vec<Value>,
    /// The tools the model may call.
    pub toolkit: Option<&'a Toolkit>,
    /// Cancels the run (in-flight request and tools included) when fired.
    pub cancel: Option<CancellationToken>,
    /// The halted Request and its Answer, for a durable resume.
    pub resume: Option<(Request, Answer)>,
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
        Ok(Client { opts, transport })
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
