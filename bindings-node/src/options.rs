//! `createClient` options: the JS port's names, read into the engine's `ClientOptions`, with
//! each host function wrapped as the engine trait it plays.

use std::sync::Arc;

use engine::{JsonObject, Style};
use napi::bindgen_prelude::{Function, Object};
use napi::{Env, JsValue};
use napi_derive::napi;
use serde_json::Value;

use crate::args::check_function;
use crate::call::{callback, MaybePromise};
use crate::callbacks::{ErrorInfoEvent, JsBodyTransform, JsHooks, JsOnError, JsWaitFor};
use crate::convert::{Json, Request};
use crate::error::invalid;
use crate::fetch::{FetchCall, FetchReply, JsFetch};

/// `createClient` options (the JS port's names; defaults as upstream).
#[napi(object, object_to_js = false)]
pub struct ClientOptions<'a> {
    /// The provider base URL (`https://api.openai.com/v1`, `https://api.anthropic.com`, ...).
    pub base_url: String,
    /// The wire format.
    #[napi(ts_type = "'openai' | 'anthropic'")]
    pub style: String,
    /// The model id, sent verbatim every turn.
    pub model: String,
    /// The API key; absent, read at run time from `OPENROUTER_API_KEY`, then the style's own
    /// variable, then `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`.
    pub api_key: Option<String>,
    /// Extra request headers (they win over the engine's own).
    #[napi(ts_type = "Record<string, string>")]
    pub headers: Option<JsonObject>,
    pub system_prompt: Option<String>,
    /// Model round trips per run (default 10).
    pub max_turns: Option<u32>,
    /// Lifecycle hooks; each may return its value or a Promise.
    #[napi(ts_type = "Hooks")]
    pub hooks: Option<Object<'a>>,
    /// Retries of a failed model call (default 2).
    pub retries: Option<u32>,
    /// Backoff base in ms: `base * 2^attempt` plus up to 100 ms jitter (default 500).
    pub retry_base_ms: Option<f64>,
    /// Statuses retried on top of 429/500/502/503/504/529.
    pub retryable_statuses: Option<Vec<u32>>,
    /// Whole-run deadline in ms.
    pub timeout_ms: Option<f64>,
    /// Anthropic `max_tokens` (default 4096).
    pub max_tokens: Option<u32>,
    /// Extra top-level body keys merged into every request (`messages`, `tools` and `stream`
    /// are refused).
    #[napi(ts_type = "Record<string, unknown>")]
    pub request_params: Option<JsonObject>,
    /// Resolves a suspension inline (the tool re-runs once with `ctx.answer`). Absent, a
    /// suspension halts the run with status `pending`. `null`/`undefined` is a decline.
    #[napi(ts_type = "(request: Request) => Answer | null | undefined | Promise<Answer | null | undefined>")]
    pub wait_for: Option<Function<'a, Request, MaybePromise<Option<Value>>>>,
    /// Decides each failed model call within `retries`; `undefined` keeps the default.
    #[napi(ts_type = "(info: ErrorInfoEvent) => 'retry' | 'fail' | undefined | Promise<'retry' | 'fail' | undefined>")]
    pub on_error: Option<Function<'a, ErrorInfoEvent, MaybePromise<Option<String>>>>,
    /// Rewrites each request body last, just before it is sent (after `requestParams`);
    /// `undefined` sends it unchanged.
    #[napi(
        ts_type = "(body: Record<string, any>) => Record<string, any> | undefined | void | Promise<Record<string, any> | undefined | void>"
    )]
    pub body_transform: Option<Function<'a, Json, MaybePromise<Option<Json>>>>,
    /// A fetch-compatible function used for the LLM requests (default: the engine's own
    /// pooled HTTP/1.1 client). A throw or a rejection (of the call or of reading the body)
    /// is a network failure: retried like one, then the run rejects with that very error.
    /// `init.signal` aborts when the run is aborted or times out, or when the request's own
    /// deadline passes.
    #[napi(
        ts_type = "(url: string, init: { method: string; headers: Record<string, string>; body: string; signal: AbortSignal }) => Response | Promise<Response>"
    )]
    pub fetch: Option<Function<'a, FetchCall, MaybePromise<FetchReply>>>,
}

fn ms(v: f64, what: &str) -> engine::Result<u64> {
    if v.is_finite() && v >= 0.0 {
        Ok(v as u64)
    } else {
        Err(invalid(format!("{what} must be a non-negative number of milliseconds")))
    }
}

/// The engine options for `o`. Must run on the JS thread (it wraps the host functions).
pub fn engine_options(env: &Env, o: ClientOptions<'_>) -> napi::Result<engine::Result<engine::ClientOptions>> {
    let functions = [
        ("waitFor", o.wait_for.as_ref().map(|f| f.raw())),
        ("onError", o.on_error.as_ref().map(|f| f.raw())),
        ("bodyTransform", o.body_transform.as_ref().map(|f| f.raw())),
        ("fetch", o.fetch.as_ref().map(|f| f.raw())),
    ];
    for (name, f) in functions {
        if let Some(f) = f {
            check_function(env, f, "createClient", &format!("options.{name}"))?;
        }
    }
    let style = match Style::parse(&o.style) {
        Ok(s) => s,
        Err(e) => return Ok(Err(e)),
    };
    let mut e = engine::ClientOptions::new(o.base_url, style, o.model);
    e.api_key = o.api_key;
    if let Some(h) = o.headers {
        let mut headers = Vec::with_capacity(h.len());
        for (k, v) in h {
            match v {
                Value::String(s) => headers.push((k, s)),
                _ => return Ok(Err(invalid(format!("header {k:?} must be a string")))),
            }
        }
        e.headers = headers;
    }
    e.system_prompt = o.system_prompt;
    if let Some(n) = o.max_turns {
        e.max_turns = n;
    }
    if let Some(n) = o.retries {
        e.retries = n;
    }
    if let Some(v) = o.retry_base_ms {
        match ms(v, "retryBaseMs") {
            Ok(v) => e.retry_base_ms = v,
            Err(err) => return Ok(Err(err)),
        }
    }
    if let Some(s) = o.retryable_statuses {
        e.retryable_statuses = s.into_iter().map(|s| s.min(u32::from(u16::MAX)) as u16).collect();
    }
    if let Some(v) = o.timeout_ms {
        match ms(v, "timeoutMs") {
            Ok(v) => e.timeout_ms = Some(v),
            Err(err) => return Ok(Err(err)),
        }
    }
    if let Some(n) = o.max_tokens {
        e.max_tokens = n;
    }
    e.request_params = o.request_params;
    if let Some(h) = o.hooks {
        e.hooks = Some(Arc::new(engine::JsonHooksAdapter(JsHooks::from_object(&h)?)));
    }
    if let Some(f) = o.wait_for {
        e.wait_for = Some(Arc::new(JsWaitFor(callback(f)?)));
    }
    if let Some(f) = o.on_error {
        e.on_error = Some(Arc::new(JsOnError(callback(f)?)));
    }
    if let Some(f) = o.body_transform {
        e.body_transform = Some(Arc::new(JsBodyTransform(callback(f)?)));
    }
    if let Some(f) = o.fetch {
        e.transport = Some(Arc::new(JsFetch::new(f)?));
    }
    Ok(Ok(e))
}
