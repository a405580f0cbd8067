//! Client configuration. One options struct, defaults as upstream toolnexus.

use std::fmt;
use std::sync::Arc;

use crate::error::{Error, ErrorKind, Result};
use crate::hooks::{BodyTransform, Hooks, OnError, WaitFor};
use crate::metrics::OnMetric;
use crate::redact::Secrets;
use crate::transport::Transport;
use crate::types::JsonObject;

/// The wire format of the provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Style {
    /// `POST {base}/chat/completions`, Bearer auth.
    OpenAi,
    /// `POST {base}/v1/messages`, `x-api-key` auth.
    Anthropic,
}

impl Style {
    /// The option string: `openai` or `anthropic`.
    pub fn as_str(self) -> &'static str {
        match self {
            Style::OpenAi => "openai",
            Style::Anthropic => "anthropic",
        }
    }

    /// Parses `openai` or `anthropic`.
    pub fn parse(s: &str) -> Result<Style> {
        match s {
            "openai" => Ok(Style::OpenAi),
            "anthropic" => Ok(Style::Anthropic),
            other => Err(Error::invalid(format!("style must be \"openai\" or \"anthropic\", got {other:?}"))),
        }
    }
}

/// The statuses retried by default.
pub const DEFAULT_RETRYABLE_STATUSES: [u16; 6] = [429, 500, 502, 503, 504, 529];

/// The longest `Retry-After` delay honoured by default: one minute.
pub const DEFAULT_MAX_RETRY_AFTER_MS: u64 = 60_000;

/// Request-body keys a `request_params` entry may not set.
pub(crate) const FORBIDDEN_PARAMS: [&str; 3] = ["messages", "tools", "stream"];

/// `on_unsupported_part`: what a content part the provider's style cannot carry becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnsupportedPart {
    /// The run fails with an [`crate::ErrorKind::UnsupportedPart`] error.
    Error,
    /// The part is sent as its text placeholder.
    Text,
}

impl UnsupportedPart {
    /// `"error"` or `"text"`.
    pub fn parse(s: &str) -> Result<UnsupportedPart> {
        match s {
            "error" => Ok(UnsupportedPart::Error),
            "text" => Ok(UnsupportedPart::Text),
            other => {
                Err(crate::Error::invalid(format!("on_unsupported_part must be \"error\" or \"text\", got {other:?}")))
            }
        }
    }
}

/// Receives a run's warnings (see [`ClientOptions::on_warning`]).
pub trait OnWarning: Send + Sync {
    /// One warning.
    fn on_warning(&self, warning: &crate::Warning);
}

impl<F: Fn(&crate::Warning) + Send + Sync> OnWarning for F {
    fn on_warning(&self, warning: &crate::Warning) {
        self(warning)
    }
}

/// Everything a [`super::Client`] is built from.
#[derive(Clone)]
pub struct ClientOptions {
    /// The provider base URL (`https://api.openai.com/v1`, `https://api.anthropic.com`, ...).
    pub base_url: String,
    /// The wire format.
    pub style: Style,
    /// The model id, sent verbatim every turn.
    pub model: String,
    /// The API key; when `None`, read at run time from `OPENROUTER_API_KEY`, then the
    /// style's own variable, then `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`. Never logged.
    pub api_key: Option<String>,
    /// Whether a run without any API key fails before its first request (default `true`, as
    /// the Python, JS and Go ports do, a host transport or not). `false` sends no auth header
    /// instead, for a transport or gateway that authenticates on its own (the Clojure port's
    /// behaviour).
    pub require_api_key: bool,
    /// Extra request headers (they win over the engine's own). Values are never logged.
    pub headers: Vec<(String, String)>,
    /// The system prompt.
    pub system_prompt: Option<String>,
    /// Model round trips per run (default 10). With 0 a run sends nothing and ends
    /// `incomplete` with limit `maxTurns`.
    pub max_turns: u32,
    /// Retries of a failed model call (default 2).
    pub retries: u32,
    /// Backoff base in milliseconds: `base * 2^attempt` plus up to 100 ms jitter (default 500).
    pub retry_base_ms: u64,
    /// Statuses retried on top of 429/500/502/503/504/529.
    pub retryable_statuses: Vec<u16>,
    /// The longest `Retry-After` delay honoured, in milliseconds (default 60 000). A provider
    /// asking for longer ends the run at once with its [`crate::ErrorKind::Http`] error,
    /// whose `retry_after` the host can schedule by.
    pub max_retry_after_ms: u64,
    /// Whole-run deadline in milliseconds.
    pub timeout_ms: Option<u64>,
    /// Anthropic `max_tokens` (default 4096).
    pub max_tokens: u32,
    /// Extra top-level body keys merged into every request (they win; `messages`, `tools`
    /// and `stream` are refused).
    pub request_params: Option<JsonObject>,
    /// The HTTP transport; `None` means the engine's shared pooled [`crate::Http1Transport`].
    pub transport: Option<Arc<dyn Transport>>,
    /// Resolves suspensions inline; `None` means a suspension halts the run (`pending`).
    pub wait_for: Option<Arc<dyn WaitFor>>,
    /// Lifecycle hooks.
    pub hooks: Option<Arc<dyn Hooks>>,
    /// Retry classifier.
    pub on_error: Option<Arc<dyn OnError>>,
    /// Rewrites each request body last, just before it is sent.
    pub body_transform: Option<Arc<dyn BodyTransform>>,
    /// Receives every metric event as it happens (the client's registry gets them anyway).
    pub on_metric: Option<Arc<dyn OnMetric>>,
    /// The largest content part sent, in decoded bytes; `None` falls back to the process-wide
    /// [`crate::content::set_max_part_bytes`]. A prompt's part over it fails the run before
    /// any request; a tool's is sent as a text placeholder (with a warning, once per client).
    pub max_part_bytes: Option<u64>,
    /// What a part the provider's style cannot carry becomes; `None` goes by where it came
    /// from: a prompt's part fails the run, a tool's becomes a text placeholder.
    pub on_unsupported_part: Option<UnsupportedPart>,
    /// Receives what a run warns about (a part sent as a placeholder), each kind once per
    /// client; without it, nothing is said.
    pub on_warning: Option<Arc<dyn OnWarning>>,
    /// Where runs with a conversation id are remembered; `None` gives the client its own
    /// [`crate::memory::InMemoryConversationStore`].
    pub store: Option<Arc<dyn crate::memory::ConversationStore>>,
}

impl ClientOptions {
    /// Options with every default, for `base_url`, `style` and `model`.
    pub fn new(base_url: impl Into<String>, style: Style, model: impl Into<String>) -> ClientOptions {
        ClientOptions {
            base_url: base_url.into(),
            style,
            model: model.into(),
            api_key: None,
            require_api_key: true,
            headers: Vec::new(),
            system_prompt: None,
            max_turns: 10,
            retries: 2,
            retry_base_ms: 500,
            retryable_statuses: Vec::new(),
            max_retry_after_ms: DEFAULT_MAX_RETRY_AFTER_MS,
            timeout_ms: None,
            max_tokens: 4096,
            request_params: None,
            transport: None,
            wait_for: None,
            hooks: None,
            on_error: None,
            body_transform: None,
            on_metric: None,
            max_part_bytes: None,
            on_unsupported_part: None,
            on_warning: None,
            store: None,
        }
    }

    pub(crate) fn validate(&self) -> Result<()> {
        let url = self.base_url.trim();
        let host = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://")).unwrap_or("");
        if host.is_empty() || host.starts_with('/') {
            return Err(Error::invalid(format!("base_url must be an http(s) URL, got {url:?}")));
        }
        if self.model.is_empty() {
            return Err(Error::invalid("model must not be empty"));
        }
        if let Some(params) = &self.request_params {
            if let Some(k) = FORBIDDEN_PARAMS.iter().find(|k| params.contains_key(**k)) {
                return Err(Error::invalid(format!("request_params may not set \"{k}\" (the engine owns it)")));
            }
        }
        for (k, _) in &self.headers {
            if k.is_empty() || !k.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
                return Err(Error::invalid(format!("invalid header name {k:?}")));
            }
        }
        Ok(())
    }

    /// The endpoint of the style.
    pub(crate) fn endpoint(&self) -> String {
        let base = self.base_url.trim().trim_end_matches('/');
        match self.style {
            Style::OpenAi => format!("{base}/chat/completions"),
            Style::Anthropic if base.ends_with("/v1") => format!("{base}/messages"),
            Style::Anthropic => format!("{base}/v1/messages"),
        }
    }

    /// The API key, from the options or the environment. `None` only when no key is required:
    /// the engine then sends no auth header of its own.
    pub(crate) fn resolve_key(&self) -> Result<Option<String>> {
        if let Some(k) = self.api_key.as_ref().filter(|k| !k.is_empty()) {
            return Ok(Some(k.clone()));
        }
        let own = match self.style {
            Style::OpenAi => "OPENAI_API_KEY",
            Style::Anthropic => "ANTHROPIC_API_KEY",
        };
        let found = ["OPENROUTER_API_KEY", own, "OPENAI_API_KEY", "ANTHROPIC_API_KEY"]
            .iter()
            .find_map(|v| std::env::var(v).ok().filter(|k| !k.is_empty()));
        match (found, self.require_api_key) {
            (Some(k), _) => Ok(Some(k)),
            (None, false) => Ok(None),
            (None, true) => Err(Error::new(
                ErrorKind::Config,
                "No API key: set api_key or OPENROUTER_API_KEY / OPENAI_API_KEY / ANTHROPIC_API_KEY",
            )),
        }
    }

    /// The request headers: the style's own, then the host's (a host header replaces an
    /// engine header of the same name).
    pub(crate) fn request_headers(&self, key: Option<&str>) -> Vec<(String, String)> {
        let mut h: Vec<(String, String)> = Vec::with_capacity(3 + self.headers.len());
        match (self.style, key) {
            (Style::OpenAi, Some(key)) => h.push(("authorization".into(), format!("Bearer {key}"))),
            (Style::Anthropic, Some(key)) => h.push(("x-api-key".into(), key.to_string())),
            (_, None) => {}
        }
        if self.style == Style::Anthropic {
            h.push(("anthropic-version".into(), "2023-06-01".into()));
        }
        h.push(("content-type".into(), "application/json".into()));
        for (k, v) in &self.headers {
            let k = k.to_ascii_lowercase();
            h.retain(|(name, _)| *name != k);
            h.push((k, v.clone()));
        }
        h
    }

    pub(crate) fn is_retryable_status(&self, status: u16) -> bool {
        DEFAULT_RETRYABLE_STATUSES.contains(&status) || self.retryable_statuses.contains(&status)
    }

    /// Values that must never appear in an error message.
    pub(crate) fn secrets(&self, key: Option<&str>) -> Secrets {
        Secrets::of(key, &self.headers)
    }
}

impl fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let header_names: Vec<&str> = self.headers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("ClientOptions")
            .field("base_url", &self.base_url)
            .field("style", &self.style)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "«set»"))
            .field("header_names", &header_names)
            .field("max_turns", &self.max_turns)
            .field("retries", &self.retries)
            .field("timeout_ms", &self.timeout_ms)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_follow_the_style_rules() {
        let o = ClientOptions::new("http://h/v1/", Style::OpenAi, "m");
        assert_eq!(o.endpoint(), "http://h/v1/chat/completions");
        let a = ClientOptions::new("https://api.anthropic.com", Style::Anthropic, "m");
        assert_eq!(a.endpoint(), "https://api.anthropic.com/v1/messages");
        let a1 = ClientOptions::new("http://h/v1", Style::Anthropic, "m");
        assert_eq!(a1.endpoint(), "http://h/v1/messages");
    }

    #[test]
    fn host_headers_replace_engine_headers() {
        let mut o = ClientOptions::new("http://h", Style::OpenAi, "m");
        o.headers = vec![("Authorization".into(), "Custom x".into()), ("X-Extra".into(), "1".into())];
        let h = o.request_headers(Some("k"));
        assert_eq!(
            h,
            vec![
                ("content-type".to_string(), "application/json".to_string()),
                ("authorization".to_string(), "Custom x".to_string()),
                ("x-extra".to_string(), "1".to_string()),
            ]
        );
    }

    #[test]
    fn bad_options_are_rejected() {
        let mut o = ClientOptions::new("ftp://x", Style::OpenAi, "m");
        assert!(o.validate().is_err());
        o.base_url = "http://x".into();
        o.max_turns = 0; // a run that may take no turn ends at once, `incomplete` (as upstream)
        assert!(o.validate().is_ok());
        o.request_params = serde_json::json!({"messages": []}).as_object().cloned();
        assert!(o.validate().unwrap_err().message().contains("\"messages\""));
        assert!(Style::parse("gemini").is_err());
    }
}
