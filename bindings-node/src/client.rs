//! `createClient` and the `Client` class: `run` and `runWithAnswer` start the engine's loop
//! on napi's tokio runtime and settle a Promise on the JS thread, where engine errors become
//! the JS error classes and an `AbortSignal` is wired to the run's cancellation token.

use std::sync::Arc;

use engine::{CancellationToken, RunInput};
use napi::bindgen_prelude::{ClassInstance, FnArgs, Function, JsObjectValue, Object, ObjectRef, PromiseRaw, Unknown};
use napi::{Env, JsValue, Status};
use napi_derive::napi;
use serde_json::Value;

use crate::args::{arg, object_arg, optional_object_arg};
use crate::convert::{Json, JsonText, RunResult};
use crate::error::{invalid, throw, to_js};
use crate::keepalive;
use crate::lazy::Raw;
use crate::options::engine_options;
use crate::toolkit::Toolkit;

/// A configured model client. Cheap to share; runs may overlap.
#[napi]
pub struct Client {
    inner: Arc<engine::Client>,
}

/// Builds a client. Bad options throw an `InvalidArgumentError`.
#[napi(ts_args_type = "options: ClientOptions", ts_return_type = "Client")]
pub fn create_client(env: &Env, options: Unknown) -> napi::Result<Client> {
    let options: Object = object_arg(env, options, "createClient", "options")?;
    let parsed = engine_options(env, &options)?.map_err(|e| throw(env, e))?;
    crate::warning::emit(env, &parsed.warnings)?;
    let inner = engine::Client::new(parsed.value).map_err(|e| throw(env, e))?;
    Ok(Client { inner: Arc::new(inner) })
}

/// A client whose model is `generate`, a function of this process (SPEC §8): no URL, no key,
/// no socket. `generate(request)` gets `{messages, tools, model, body}` and returns one
/// assistant message (`{content}` or `{toolCalls: [{id?, name, arguments}]}`, `usage`
/// optional), or a Promise of it. What it throws ends the run at once. Every `createClient`
/// option but `baseUrl`, `apiKey`, `style`, `fetch` and the retry options (refused).
#[napi(ts_args_type = "options: InProcessOptions", ts_return_type = "Client")]
pub fn create_in_process_client(env: &Env, options: Unknown) -> napi::Result<Client> {
    let options: Object = object_arg(env, options, "createInProcessClient", "options")?;
    let parsed = crate::options::in_process_options(env, &options)?.map_err(|e| throw(env, e))?;
    crate::warning::emit(env, &parsed.warnings)?;
    let inner = engine::Client::new(parsed.value).map_err(|e| throw(env, e))?;
    Ok(Client { inner: Arc::new(inner) })
}

/// `run` options.
#[napi(object, object_to_js = false)]
pub struct RunOptions<'a> {
    /// The tools the model may call.
    pub toolkit: Option<ClassInstance<'a, Toolkit>>,
    /// A prior transcript to continue (provider message shape).
    #[napi(ts_type = "any[]")]
    pub history: Option<Unknown<'a>>,
    /// Aborts the run (in-flight request included); the Promise rejects with an `AbortError`
    /// whose `cause` is the signal's reason.
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Object<'a>>,
    /// A conversation id: the client's store supplies the history and keeps the result.
    pub id: Option<String>,
}

/// `translate`'s request: the engine reads every data key (`messages`, `tools`, `toolChoice`,
/// `system`, `maxTokens`); `toolkit` and `signal` are host objects. The type the declarations
/// show.
#[napi(object, object_to_js = false)]
#[allow(dead_code)]
pub struct TranslateRequest<'a> {
    /// The OpenAI `messages`, verbatim.
    #[napi(ts_type = "any[]")]
    pub messages: Json,
    /// The OpenAI `tools`, verbatim: declared, never run.
    #[napi(ts_type = "any[]")]
    pub tools: Option<Json>,
    /// Declared before `tools`; none of its tools runs.
    pub toolkit: Option<ClassInstance<'a, Toolkit>>,
    /// The OpenAI `tool_choice`, verbatim (converted for an Anthropic provider).
    #[napi(ts_type = "any")]
    pub tool_choice: Option<Json>,
    /// Replaces the system prompt.
    pub system: Option<String>,
    /// This call's `max_tokens` (0 or absent: the default).
    pub max_tokens: Option<u32>,
    /// Aborts the call; the Promise rejects with an `AbortError`.
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Object<'a>>,
}

/// `runWithAnswer` options.
#[napi(object, object_to_js = false)]
pub struct ResumeOptions<'a> {
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Object<'a>>,
}

/// A transcript passed by the host: an array of messages (`null`/`undefined` = none).
fn history_of(h: Value) -> engine::Result<Vec<Value>> {
    match h {
        Value::Array(a) => Ok(a),
        Value::Null => Ok(Vec::new()),
        _ => Err(crate::error::invalid("history must be an array of messages")),
    }
}

/// A reference to the caller's history array, to put its own messages back in the result;
/// `None` for anything but an array (which `history_of` refuses or reads as none).
fn given_history(env: &Env, history: &Unknown<'_>) -> napi::Result<Option<ObjectRef<false>>> {
    if !history.is_array()? {
        return Ok(None);
    }
    Object::from_raw(env.raw(), history.raw()).create_ref().map(Some)
}

/// What a run starts from.
struct Start {
    toolkit: Option<Arc<engine::Toolkit>>,
    /// A string, or content parts.
    prompt: Option<Value>,
    history: Vec<Value>,
    /// The caller's own history array (`history`'s JS form): the result's transcript starts
    /// with its unchanged messages, not with copies of them (RunResult::to_js).
    given: Option<ObjectRef<false>>,
    /// The JSON text `history` was read from, which the result's messages are compared with.
    given_text: String,
    /// `(pending, answer)` as the host passed them, read inside the run so a malformed one
    /// rejects the Promise like any run failure.
    resume: Option<(Value, Value)>,
    /// Where a streamed run's steps go (`stream`, see `index.js`).
    stream: Option<engine::StreamTo>,
    /// The conversation id, and the answer alone when resuming one by id.
    id: Option<String>,
    answer: Option<Value>,
}

#[napi]
impl Client {
    /// Runs `prompt` (with `toolkit`, continuing `history`) through the tool-calling loop.
    #[napi(
        ts_args_type = "prompt: string | ContentPart[], options?: RunOptions | undefined | null",
        ts_return_type = "Promise<RunResult>"
    )]
    pub fn run<'e>(
        &self,
        env: &'e Env,
        prompt: Unknown<'e>,
        options: Unknown<'e>,
    ) -> napi::Result<PromiseRaw<'e, Raw>> {
        self.start_prompt(env, prompt, options, None, "run")
    }

    /// `run`, streamed: `onEvent` gets each step (the JS port's `StreamEvent`s but `done`) in
    /// order, before the Promise settles. `index.js` makes it the port's `stream` iterator.
    #[napi(
        js_name = "_stream",
        ts_args_type = "prompt: string | ContentPart[], options: RunOptions | undefined | null, onEvent: (event: StreamEvent) => void",
        ts_return_type = "Promise<RunResult>"
    )]
    pub fn stream_run<'e>(
        &self,
        env: &'e Env,
        prompt: Unknown<'e>,
        options: Unknown<'e>,
        on_event: Function<'e, Json, ()>,
    ) -> napi::Result<PromiseRaw<'e, Raw>> {
        let sink = crate::metrics::JsSink::new(env, on_event, "stream")?;
        self.start_prompt(env, prompt, options, Some(engine::StreamTo(Arc::new(sink))), "stream")
    }

    /// One turn as a translator (SPEC §11): exactly one provider call, no loop, no tool runs,
    /// no state; the turn comes back OpenAI-shaped (`{text, toolCalls[{id, name, arguments}],
    /// finishReason, usage, model, raw}`). Retries, `requestParams`, `bodyTransform`,
    /// `beforeLLM`/`afterLLM` (once) and the `llm` metric apply as in a run.
    #[napi(ts_args_type = "request: TranslateRequest", ts_return_type = "Promise<TranslateResult>")]
    pub fn translate<'e>(&self, env: &'e Env, request: Unknown<'e>) -> napi::Result<PromiseRaw<'e, Json>> {
        const F: &str = "translate";
        let o: Object = object_arg(env, request, F, "request")?;
        let toolkit: Option<ClassInstance<Toolkit>> =
            arg(env, o.get_named_property("toolkit")?, F, "request.toolkit", "a Toolkit")?;
        let signal: Option<Object> = o.get_named_property("signal")?;
        let plain = crate::options::plain_json(env, &o, F, "request", &["toolkit", "signal"], &[])?;
        let req = engine::TranslateRequest::from_json(&Value::Object(plain)).map_err(|e| throw(env, e))?;
        let token = CancellationToken::new();
        let id = keepalive::next_id();
        let watch = watch_signal(env, signal, token.clone(), id, F, "request.signal")?;
        let client = self.inner.clone();
        let toolkit = toolkit.map(|t| t.snapshot());
        let work = async move { client.translate(req, toolkit.as_deref(), Some(token)).await };
        keepalive::spawn(env, id, work, move |env, outcome| {
            let cause = match watch {
                Some(w) => w.finish(env)?,
                None => None,
            };
            match outcome {
                Ok(r) => Ok(Json(r.to_json_camel())),
                Err(e) => Err(to_js(env, e, cause)),
            }
        })
    }

    /// Resumes conversation `id` of the client's store, halted on `pending`, with `answer`:
    /// the store supplies the transcript and keeps the result, so a run halted in one process
    /// resumes in another. `pending` may be `null` when the store records it (the engine's
    /// stores do). A resume runs once: a second one, or another answer to the same request,
    /// rejects with a `ConflictError`.
    #[napi(
        ts_args_type = "toolkit: Toolkit | null | undefined, id: string, pending: Request | null | undefined, answer: Answer, options?: ResumeOptions",
        ts_return_type = "Promise<RunResult>"
    )]
    pub fn ask_with_answer<'e>(
        &self,
        env: &'e Env,
        toolkit: Unknown<'e>,
        id: Unknown<'e>,
        pending: Unknown<'e>,
        answer: Unknown<'e>,
        options: Unknown<'e>,
    ) -> napi::Result<PromiseRaw<'e, Raw>> {
        const F: &str = "askWithAnswer";
        let toolkit: Option<ClassInstance<Toolkit>> = arg(env, toolkit, F, "toolkit", "a Toolkit")?;
        let id: String = arg(env, id, F, "id", "a conversation id (a string)")?;
        let pending: Option<Value> = arg(env, pending, F, "pending", "a Request object")?;
        let answer: Value = arg(env, answer, F, "answer", "an Answer object")?;
        let options: Option<ResumeOptions> = optional_object_arg(env, options, F, "options")?;
        let (resume, answer) = match pending {
            Some(Value::Null) | None => (None, Some(answer)),
            Some(p) => (Some((p, answer)), None),
        };
        let start = Start {
            toolkit: toolkit.map(|t| t.snapshot()),
            prompt: None,
            history: Vec::new(),
            given: None,
            given_text: String::new(),
            resume,
            stream: None,
            id: Some(id),
            answer,
        };
        self.start(env, start, options.and_then(|o| o.signal), F)
    }

    /// The engine store the client remembers conversations in (`index.js` wraps it).
    #[napi(js_name = "_engineStore")]
    pub fn engine_store(&self) -> crate::memory::EngineStore {
        crate::memory::EngineStore { inner: self.inner.conversation_store().clone() }
    }

    /// Every run's metrics so far as Prometheus text (SPEC §8), the same bytes upstream's ports
    /// render; HELP and TYPE lines only before the first run.
    #[napi]
    pub fn metrics(&self) -> String {
        self.inner.metrics()
    }

    /// Resumes a run that halted with status `pending`: `answer.id` must echo `pending.id`;
    /// `history` is the halted result's `messages`. No new user turn is added.
    #[napi(
        ts_args_type = "toolkit: Toolkit | null | undefined, history: any[], pending: Request, answer: Answer, options?: ResumeOptions",
        ts_return_type = "Promise<RunResult>"
    )]
    pub fn run_with_answer<'e>(
        &self,
        env: &'e Env,
        toolkit: Unknown<'e>,
        history: Unknown<'e>,
        pending: Unknown<'e>,
        answer: Unknown<'e>,
        options: Unknown<'e>,
    ) -> napi::Result<PromiseRaw<'e, Raw>> {
        const F: &str = "runWithAnswer";
        let toolkit: Option<ClassInstance<Toolkit>> = arg(env, toolkit, F, "toolkit", "a Toolkit")?;
        let given = given_history(env, &history)?;
        let history: JsonText = arg(env, history, F, "history", "an array of messages")?;
        let pending: Value = arg(env, pending, F, "pending", "a Request object")?;
        let answer: Value = arg(env, answer, F, "answer", "an Answer object")?;
        let options: Option<ResumeOptions> = optional_object_arg(env, options, F, "options")?;
        let given_text = history.text;
        let history = history_of(history.value).map_err(|e| throw(env, e))?;
        let start = Start {
            toolkit: toolkit.map(|t| t.snapshot()),
            prompt: None,
            history,
            given,
            given_text,
            resume: Some((pending, answer)),
            stream: None,
            id: None,
            answer: None,
        };
        self.start(env, start, options.and_then(|o| o.signal), F)
    }
}

impl Client {
    /// `run`'s arguments read (`func` names the method in errors), and the run started.
    fn start_prompt<'e>(
        &self,
        env: &'e Env,
        prompt: Unknown<'e>,
        options: Unknown<'e>,
        stream: Option<engine::StreamTo>,
        func: &str,
    ) -> napi::Result<PromiseRaw<'e, Raw>> {
        let prompt: Json = arg(env, prompt, func, "prompt", "a string or an array of content parts")?;
        let kind = match &prompt.0 {
            Value::String(_) | Value::Array(_) => None,
            Value::Null => Some("null"),
            Value::Bool(_) => Some("boolean"),
            Value::Number(_) => Some("number"),
            Value::Object(_) => Some("object"),
        };
        if let Some(kind) = kind {
            let msg = format!("{func}: prompt must be a string or an array of content parts, got {kind}");
            return Err(throw(env, invalid(msg)));
        }
        let options: Option<RunOptions> = optional_object_arg(env, options, func, "options")?;
        let (toolkit, history, signal, id) = match options {
            Some(o) => (o.toolkit, o.history, o.signal, o.id),
            None => (None, None, None, None),
        };
        let given = history.as_ref().map(|h| given_history(env, h)).transpose()?.flatten();
        let history_json: JsonText = match history {
            Some(h) => arg(env, h, func, "options.history", "an array of messages")?,
            None => JsonText { value: Value::Null, text: String::new() },
        };
        let start = Start {
            toolkit: toolkit.map(|t| t.snapshot()),
            prompt: Some(prompt.0),
            given,
            history: history_of(history_json.value).map_err(|e| throw(env, e))?,
            given_text: history_json.text,
            resume: None,
            stream,
            id,
            answer: None,
        };
        self.start(env, start, signal, func)
    }

    fn start<'e>(
        &self,
        env: &'e Env,
        start: Start,
        signal: Option<Object<'e>>,
        func: &str,
    ) -> napi::Result<PromiseRaw<'e, Raw>> {
        let token = CancellationToken::new();
        let id = keepalive::next_id();
        let watch = watch_signal(env, signal, token.clone(), id, func, "options.signal")?;
        let client = self.inner.clone();
        let given = start.given;
        let elide = given.is_some();
        let given_text = start.given_text;
        let run = async move {
            let resume = match start.resume {
                Some((p, a)) => Some((engine::Request::from_json(&p)?, engine::Answer::from_json(&a)?)),
                None => None,
            };
            let answer = start.answer.map(|a| engine::Answer::from_json(&a)).transpose()?;
            let (prompt, prompt_parts) = match start.prompt {
                Some(Value::String(p)) => (Some(p), None),
                Some(Value::Array(parts)) => (None, Some(parts)),
                _ => (None, None),
            };
            let input = RunInput {
                prompt,
                prompt_parts,
                history: start.history,
                toolkit: start.toolkit.as_deref(),
                cancel: Some(token),
                resume,
                stream: start.stream,
                id: start.id,
                answer,
            };
            if elide {
                client.run_eliding_text(input, &given_text).await
            } else {
                Ok((client.run_input(input).await?, 0))
            }
        };
        keepalive::spawn(env, id, run, move |env, outcome: engine::Result<(engine::RunResult, usize)>| {
            let cause = match watch {
                Some(w) => w.finish(env)?,
                None => None,
            };
            let given = match given {
                Some(g) => {
                    let value = g.get_value(env)?;
                    g.unref(env)?;
                    Some(value)
                }
                None => None,
            };
            match outcome {
                Ok((r, kept)) => RunResult::to_js(env, r, given.filter(|_| kept > 0).map(|g| (g, kept))),
                Err(e) => Err(to_js(env, e, cause)),
            }
        })
    }
}

/// Fires `token` when `signal` (the argument `path` of `func`) aborts; `id`: the run, kept
/// working from the abort until it settles.
pub(crate) fn watch_signal(
    env: &Env,
    signal: Option<Object<'_>>,
    token: CancellationToken,
    id: u64,
    func: &str,
    path: &str,
) -> napi::Result<Option<AbortWatch>> {
    let Some(s) = signal else { return Ok(None) };
    AbortWatch::attach(env, &s, token, id).map(Some).map_err(|e| {
        // A throw of the host's own (a getter, addEventListener) stays its own.
        if e.status == Status::PendingException {
            return e;
        }
        throw(env, invalid(format!("{func}: {path} must be an AbortSignal")))
    })
}

/// An `abort` listener on the host's signal, removed when the run settles.
pub(crate) struct AbortWatch {
    signal: ObjectRef<false>,
    listener: ObjectRef<false>,
}

impl AbortWatch {
    /// `id`: the run, which keeps the process alive from the abort until it settles.
    pub(crate) fn attach(
        env: &Env,
        signal: &Object<'_>,
        token: CancellationToken,
        id: u64,
    ) -> napi::Result<AbortWatch> {
        if signal.get::<bool>("aborted")?.unwrap_or(false) {
            token.cancel();
        }
        let listener = env.create_function_from_closure::<(), (), _>("onabort", move |ctx| {
            token.cancel();
            keepalive::cancelled(ctx.env, id);
            Ok(())
        })?;
        let add: Function<FnArgs<(&str, Unknown)>, Unknown> = signal.get_named_property("addEventListener")?;
        let listener_value = unsafe { Unknown::from_raw_unchecked(env.raw(), listener.raw()) };
        add.apply(signal, FnArgs::from(("abort", listener_value)))?;
        let listener_obj = Object::from_raw(env.raw(), listener.raw());
        Ok(AbortWatch { signal: signal.create_ref()?, listener: listener_obj.create_ref()? })
    }

    /// Removes the listener; the signal's `reason` when it was aborted.
    pub(crate) fn finish<'e>(self, env: &'e Env) -> napi::Result<Option<Unknown<'e>>> {
        let signal = self.signal.get_value(env)?;
        let listener = self.listener.get_value(env)?;
        let remove: Function<FnArgs<(&str, Object)>, Unknown> = signal.get_named_property("removeEventListener")?;
        remove.apply(signal, FnArgs::from(("abort", listener)))?;
        let reason =
            if signal.get::<bool>("aborted")?.unwrap_or(false) { signal.get::<Unknown>("reason")? } else { None };
        self.signal.unref(env)?;
        self.listener.unref(env)?;
        Ok(reason)
    }
}
