//! `createClient` options: the JS port's names, read into the engine's `ClientOptions`, with
//! each host function wrapped as the engine trait it plays.

use std::sync::Arc;

use engine::JsonObject;
use napi::bindgen_prelude::{Function, JsObjectValue, Object, Unknown};
use napi::{Env, JsValue, ValueType};
use napi_derive::napi;
use serde_json::Value;

use crate::args::{arg, check_function};
use crate::call::{callback, MaybePromise};
use crate::callbacks::{ErrorInfoEvent, JsBodyTransform, JsGenerate, JsHooks, JsOnError, JsWaitFor};
use crate::convert::{Json, Request};
use crate::fetch::{FetchCall, FetchReply, JsFetch};
use crate::metrics::JsSink;

/// `createClient` options (the JS port's names; defaults as upstream). The type the
/// declarations show; the options themselves are read by the engine (see [`engine_options`]).
#[napi(object, object_to_js = false)]
#[allow(dead_code)]
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
    /// The longest `Retry-After` honoured, in ms (default 60000); a longer one rejects the run
    /// at once with the `ProviderError`, whose `retryAfter` says when to try again.
    pub max_retry_after_ms: Option<f64>,
    /// Whether a run with no API key anywhere fails before any request (default `true`, as
    /// upstream); `false` sends no auth header, for a `fetch` that authenticates itself.
    pub require_api_key: Option<bool>,
    /// Where `ask` and runs with an `id` remember conversations: an object with `get(id)` and
    /// `save(id, messages)` (values or Promises), an `InMemoryConversationStore` or
    /// `SqliteConversationStore`, or a path (a SQLite file). Default: an in-memory store of the
    /// client's own.
    #[napi(ts_type = "ConversationStore | string")]
    pub store: Option<Unknown<'a>>,
    /// Receives each metric event, in order, on the JS thread, before the Promise of its run
    /// settles. It cannot fail the run: what it throws becomes a process warning
    /// (`metric_sink_failed`). `client.metrics()` counts the events either way.
    #[napi(ts_type = "(event: MetricEvent) => void")]
    pub on_metric: Option<Function<'a, Json, ()>>,
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

/// The options that are host functions: wrapped as the engine traits they play. Every other
/// key goes to the engine as JSON, named as the user wrote it; it reads and checks them all.
const HOST_FUNCTIONS: [&str; 6] = ["hooks", "waitFor", "onError", "bodyTransform", "fetch", "onMetric"];

/// What `createClient` leaves out of the plain options: the host functions, and `store` when
/// it is an object (a path is the engine's to open).
fn host_keys(o: &Object<'_>, functions: &[&'static str]) -> napi::Result<Vec<&'static str>> {
    let mut skip = functions.to_vec();
    if o.get_named_property::<Unknown>("store")?.get_type()? == ValueType::Object {
        skip.push("store");
    }
    Ok(skip)
}

/// The keys of the options object `o` as JSON, named as the user wrote them, for the engine
/// to read: `undefined` ones left out, those of `skip` (host values) too, and those of
/// `given` as whether they are set (`true` unless `null`). `func` and `what` name the object
/// in a conversion error.
pub fn plain_json(
    env: &Env,
    o: &Object<'_>,
    func: &str,
    what: &str,
    skip: &[&str],
    given: &[&str],
) -> napi::Result<serde_json::Map<String, Value>> {
    let mut plain = serde_json::Map::new();
    let names = o.get_property_names()?;
    for i in 0..names.get_array_length()? {
        let key: String = names.get_element(i)?;
        if skip.contains(&key.as_str()) {
            continue;
        }
        let value: Unknown = o.get_named_property(&key)?;
        let json = match value.get_type()? {
            ValueType::Undefined => continue,
            _ if given.contains(&key.as_str()) => Value::Bool(!matches!(value.get_type()?, ValueType::Null)),
            _ => json_value(env, value, func, &format!("{what}.{key}"))?,
        };
        plain.insert(key, json);
    }
    Ok(plain)
}

/// A JS value as JSON for the engine to read. JSON has no NaN or Infinity: they reach the
/// engine as their names, to be refused.
pub fn json_value(env: &Env, value: Unknown<'_>, func: &str, path: &str) -> napi::Result<Value> {
    Ok(match value.get_type()? {
        ValueType::Undefined => Value::Null,
        ValueType::Number => match value.coerce_to_number()?.get_double()? {
            n if n.is_finite() => serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number),
            n => Value::String(format!("{n}")),
        },
        _ => arg::<Json>(env, value, func, path, "JSON data")?.0,
    })
}

/// The engine options for the `createClient` options object `o`, with what reading them
/// warned about. Must run on the JS thread (it wraps the host functions).
pub fn engine_options(
    env: &Env,
    o: &Object<'_>,
) -> napi::Result<engine::Result<engine::Parsed<engine::ClientOptions>>> {
    let plain = plain_json(env, o, "createClient", "options", &host_keys(o, &HOST_FUNCTIONS)?, &[])?;
    host_options(env, o, "createClient", engine::ClientOptions::from_json(&Value::Object(plain)))
}

/// The engine options for `createInProcessClient`'s options `o`: the engine refuses the wire
/// ones (`fetch` among them, handed over as given) and `generate` becomes the model.
pub fn in_process_options(
    env: &Env,
    o: &Object<'_>,
) -> napi::Result<engine::Result<engine::Parsed<engine::ClientOptions>>> {
    const F: &str = "createInProcessClient";
    let skip = ["hooks", "waitFor", "bodyTransform", "onMetric", "generate"];
    // The engine refuses `fetch` and `onError` here: it is told whether they were given.
    let plain = plain_json(env, o, F, "options", &host_keys(o, &skip)?, &["fetch", "onError"])?;
    let f: Unknown = o.get_named_property("generate")?;
    if f.get_type()? != ValueType::Function {
        // The JS port's words for it.
        return Err(crate::error::throw(
            env,
            crate::error::invalid("toolnexus: createInProcessClient requires a `generate` function"),
        ));
    }
    let mut parsed =
        match host_options(env, o, F, engine::ClientOptions::in_process_from_json(&Value::Object(plain), F))? {
            Ok(p) => p,
            Err(e) => return Ok(Err(e)),
        };
    let generate: Function<Json, MaybePromise<Json>> = o.get_named_property("generate")?;
    parsed.value.transport = Some(Arc::new(engine::InProcessTransport(Arc::new(JsGenerate(callback(generate)?)))));
    Ok(Ok(parsed))
}

/// `parsed` with the host functions of `o` attached (checked to be functions first).
fn host_options(
    env: &Env,
    o: &Object<'_>,
    func: &str,
    parsed: engine::Result<engine::Parsed<engine::ClientOptions>>,
) -> napi::Result<engine::Result<engine::Parsed<engine::ClientOptions>>> {
    let mut parsed = match parsed {
        Ok(p) => p,
        Err(e) => return Ok(Err(e)),
    };
    let e = &mut parsed.value;
    for name in ["waitFor", "onError", "bodyTransform", "fetch", "onMetric"] {
        let f: Unknown = o.get_named_property(name)?;
        if !matches!(f.get_type()?, ValueType::Undefined | ValueType::Null) {
            check_function(env, f.raw(), func, &format!("options.{name}"))?;
        }
    }
    if let Some(h) = o.get_named_property::<Option<Object>>("hooks")? {
        e.hooks = Some(Arc::new(engine::JsonHooksAdapter(JsHooks::from_object(&h)?)));
    }
    if let Some(f) = o.get_named_property::<Option<Function<Request, MaybePromise<Option<Value>>>>>("waitFor")? {
        e.wait_for = Some(Arc::new(JsWaitFor(callback(f)?)));
    }
    if let Some(f) =
        o.get_named_property::<Option<Function<ErrorInfoEvent, MaybePromise<Option<String>>>>>("onError")?
    {
        e.on_error = Some(Arc::new(JsOnError(callback(f)?)));
    }
    if let Some(f) = o.get_named_property::<Option<Function<Json, MaybePromise<Option<Json>>>>>("bodyTransform")? {
        e.body_transform = Some(Arc::new(JsBodyTransform(callback(f)?)));
    }
    if let Some(f) = o.get_named_property::<Option<Function<FetchCall, MaybePromise<FetchReply>>>>("fetch")? {
        e.transport = Some(Arc::new(JsFetch::new(f)?));
    }
    if let Some(f) = o.get_named_property::<Option<Function<Json, ()>>>("onMetric")? {
        e.on_metric = Some(Arc::new(JsSink::new(env, f, "onMetric")?));
    }
    if o.get_named_property::<Unknown>("store")?.get_type()? == ValueType::Object {
        e.store = crate::memory::store_of(&o.get_named_property::<Object>("store")?)?;
    }
    e.on_warning = Some(Arc::new(crate::metrics::JsWarnings::new(env)?));
    Ok(Ok(parsed))
}
