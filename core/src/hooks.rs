//! The behaviour a host plugs into the loop besides tools and transport: lifecycle hooks,
//! the inline suspension resolver (`wait_for`) and the retry classifier (`on_error`).
//! Each is a trait a binding implements once around its host callable; a returned `Err`
//! aborts the run with that error (a binding uses [`crate::Error::host`] to carry the host's
//! own exception through unchanged).

use std::future::Future;

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use crate::error::Result;
use crate::types::{Answer, Request, ToolResult};

/// A boxed hook future.
pub type HookFuture<T> = BoxFuture<'static, Result<T>>;

fn none<T: Send + 'static>() -> HookFuture<Option<T>> {
    Box::pin(std::future::ready(Ok(None)))
}

/// Passed to [`Hooks::before_llm`].
#[derive(Clone, Debug)]
pub struct BeforeLlmEvent {
    /// The working transcript.
    pub messages: Vec<Value>,
    /// The tool declarations about to be sent.
    pub tools: Vec<Value>,
    /// The client's model.
    pub model: String,
    /// Zero-based turn index.
    pub turn: u32,
}

/// What [`Hooks::before_llm`] may replace. `None` fields are left unchanged.
#[derive(Clone, Debug, Default)]
pub struct LlmOverride {
    /// Replaces the working transcript for the rest of the run.
    pub messages: Option<Vec<Value>>,
    /// Replaces the tool declarations for the rest of the run.
    pub tools: Option<Vec<Value>>,
    /// A non-empty model is used for this turn only.
    pub model: Option<String>,
}

/// Passed to [`Hooks::after_llm`].
#[derive(Clone, Debug)]
pub struct AfterLlmEvent {
    /// The provider's decoded response.
    pub response: Value,
    /// The model of this turn.
    pub model: String,
    /// Zero-based turn index.
    pub turn: u32,
}

/// Passed to [`Hooks::before_tool`].
#[derive(Clone, Debug)]
pub struct BeforeToolEvent {
    /// The tool name.
    pub name: String,
    /// The arguments.
    pub args: Value,
    /// The provider's tool-call id.
    pub id: String,
    /// Zero-based turn index.
    pub turn: u32,
}

/// What [`Hooks::before_tool`] may do: short-circuit with a result (a suspension included),
/// or rewrite the arguments.
#[derive(Clone, Debug, Default)]
pub struct ToolOverride {
    /// Used instead of running the tool.
    pub result: Option<ToolResult>,
    /// Replaces the arguments.
    pub args: Option<Value>,
}

/// Passed to [`Hooks::after_tool`].
#[derive(Clone, Debug)]
pub struct AfterToolEvent {
    /// The tool name.
    pub name: String,
    /// The arguments the tool ran with.
    pub args: Value,
    /// Its result.
    pub result: ToolResult,
    /// The provider's tool-call id.
    pub id: String,
    /// Zero-based turn index.
    pub turn: u32,
}

/// Which hooks a [`Hooks`] value implements, so the loop skips building events for the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HookSet {
    /// `before_llm` is implemented.
    pub before_llm: bool,
    /// `after_llm` is implemented.
    pub after_llm: bool,
    /// `before_tool` is implemented.
    pub before_tool: bool,
    /// `after_tool` is implemented.
    pub after_tool: bool,
}

impl HookSet {
    /// All four hooks.
    pub const ALL: HookSet = HookSet { before_llm: true, after_llm: true, before_tool: true, after_tool: true };
}

/// Lifecycle middleware around the loop. Every method has a no-op default.
pub trait Hooks: Send + Sync {
    /// Which methods are real; the default claims all four.
    fn enabled(&self) -> HookSet {
        HookSet::ALL
    }

    /// Before each model call; may replace messages, tools, or this turn's model.
    fn before_llm(&self, _ev: BeforeLlmEvent) -> HookFuture<Option<LlmOverride>> {
        none()
    }

    /// After each model call.
    fn after_llm(&self, _ev: AfterLlmEvent) -> HookFuture<()> {
        Box::pin(std::future::ready(Ok(())))
    }

    /// Before each tool runs; may short-circuit or rewrite the arguments.
    fn before_tool(&self, _ev: BeforeToolEvent) -> HookFuture<Option<ToolOverride>> {
        none()
    }

    /// After each tool ran (never on a suspension); may replace the result.
    fn after_tool(&self, _ev: AfterToolEvent) -> HookFuture<Option<ToolResult>> {
        none()
    }
}

/// Which hook a [`JsonHooks`] call is for, and the JSON it exchanges:
/// - `before_llm`: `{messages, tools, model, turn}` → `null` or `{messages?, tools?, model?}`;
/// - `after_llm`: `{response, model, turn}` → anything (ignored);
/// - `before_tool`: `{name, args, id, turn}` → `null`, `{result}` (skip the tool; a suspension
///   included) or `{args}` (rewrite them);
/// - `after_tool`: `{name, args, result, id, turn}` → `null` or `{result}` (replace it).
///
/// Results are ToolResult JSON: `{output, is_error, metadata?}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookName {
    /// Before each model call.
    BeforeLlm,
    /// After each model call.
    AfterLlm,
    /// Before each tool runs.
    BeforeTool,
    /// After each tool ran.
    AfterTool,
}

impl HookName {
    /// Every hook, in the order of the C ABI's `TN_HOOK_*` bits: the one list a binding's
    /// table of hook names is made from.
    pub const ALL: [HookName; 4] = [HookName::BeforeLlm, HookName::AfterLlm, HookName::BeforeTool, HookName::AfterTool];

    /// The snake_case name (`before_llm`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            HookName::BeforeLlm => "before_llm",
            HookName::AfterLlm => "after_llm",
            HookName::BeforeTool => "before_tool",
            HookName::AfterTool => "after_tool",
        }
    }
}

/// A host's hook callables by hook name: the one table a binding fills, from its own
/// language's spelling of each name, instead of keeping four slots of its own.
pub struct HookTable<F> {
    slots: [Option<F>; 4],
}

impl<F> HookTable<F> {
    /// Fills the table, asking `lookup` for each hook of [`HookName::ALL`] in turn.
    pub fn build<E>(
        mut lookup: impl FnMut(HookName) -> std::result::Result<Option<F>, E>,
    ) -> std::result::Result<Self, E> {
        let [a, b, c, d] = HookName::ALL;
        Ok(HookTable { slots: [lookup(a)?, lookup(b)?, lookup(c)?, lookup(d)?] })
    }

    /// The callable for `hook`, if the host has one.
    pub fn get(&self, hook: HookName) -> Option<&F> {
        let i = HookName::ALL.iter().position(|h| *h == hook)?;
        self.slots[i].as_ref()
    }

    /// Which hooks the host has.
    pub fn enabled(&self) -> HookSet {
        HookSet {
            before_llm: self.get(HookName::BeforeLlm).is_some(),
            after_llm: self.get(HookName::AfterLlm).is_some(),
            before_tool: self.get(HookName::BeforeTool).is_some(),
            after_tool: self.get(HookName::AfterTool).is_some(),
        }
    }

    /// Whether the host has no hook at all.
    pub fn is_empty(&self) -> bool {
        self.slots.iter().all(Option::is_none)
    }
}

/// Hooks that speak JSON: what a binding implements around its host's callables. Wrap it in
/// [`JsonHooksAdapter`] to get [`Hooks`]; the event shapes and the override rules live there,
/// once, for every binding.
pub trait JsonHooks: Send + Sync {
    /// Which hooks the host has.
    fn enabled(&self) -> HookSet;
    /// Calls the host's `hook` with `event`; `null` means "no change".
    fn call(&self, hook: HookName, event: Value) -> HookFuture<Value>;
}

/// [`Hooks`] over a [`JsonHooks`] host.
pub struct JsonHooksAdapter<T>(pub T);

/// A hook's answer read strictly: nothing (`null`), or an object whose known keys have their
/// type. A mistake in a hook is an error naming the hook and the key, never an answer that
/// is quietly ignored or, worse, handed on (arguments no tool schema allows).
struct HookAnswer<'a> {
    hook: HookName,
    fields: Option<&'a serde_json::Map<String, Value>>,
}

impl<'a> HookAnswer<'a> {
    fn read(hook: HookName, v: &'a Value) -> Result<HookAnswer<'a>> {
        match v {
            Value::Null => Ok(HookAnswer { hook, fields: None }),
            Value::Object(m) => Ok(HookAnswer { hook, fields: Some(m) }),
            other => Err(crate::Error::invalid(format!(
                "{} must return an object or nothing, got {}",
                hook.as_str(),
                crate::types::json_type(other)
            ))),
        }
    }

    fn is_none(&self) -> bool {
        self.fields.is_none()
    }

    /// Key `k`, present and not null, checked by `want` (which names the expected type).
    fn get(&self, k: &str, want: &str, ok: fn(&Value) -> bool) -> Result<Option<&'a Value>> {
        match self.fields.and_then(|m| m.get(k)).filter(|v| !v.is_null()) {
            None => Ok(None),
            Some(v) if ok(v) => Ok(Some(v)),
            Some(v) => Err(crate::Error::invalid(format!(
                "{}: \"{k}\" must be {want}, got {}",
                self.hook.as_str(),
                crate::types::json_type(v)
            ))),
        }
    }

    fn list(&self, k: &str) -> Result<Option<Vec<Value>>> {
        Ok(self.get(k, "an array", Value::is_array)?.and_then(Value::as_array).cloned())
    }

    fn result(&self) -> Result<Option<ToolResult>> {
        match self.get("result", "a ToolResult object", Value::is_object)? {
            None => Ok(None),
            Some(r) => serde_json::from_value(r.clone()).map(Some).map_err(|e| {
                crate::Error::invalid(format!("{}: \"result\" is not a ToolResult: {e}", self.hook.as_str()))
            }),
        }
    }
}

impl<T: JsonHooks> Hooks for JsonHooksAdapter<T> {
    fn enabled(&self) -> HookSet {
        self.0.enabled()
    }

    fn before_llm(&self, ev: BeforeLlmEvent) -> HookFuture<Option<LlmOverride>> {
        let event = json!({"messages": ev.messages, "tools": ev.tools, "model": ev.model, "turn": ev.turn});
        let fut = self.0.call(HookName::BeforeLlm, event);
        Box::pin(async move {
            let v = fut.await?;
            let a = HookAnswer::read(HookName::BeforeLlm, &v)?;
            if a.is_none() {
                return Ok(None);
            }
            let model = a.get("model", "a string", Value::is_string)?.and_then(Value::as_str).map(str::to_string);
            Ok(Some(LlmOverride { messages: a.list("messages")?, tools: a.list("tools")?, model }))
        })
    }

    fn after_llm(&self, ev: AfterLlmEvent) -> HookFuture<()> {
        let fut = self.0.call(HookName::AfterLlm, json!({"response": ev.response, "model": ev.model, "turn": ev.turn}));
        Box::pin(async move { fut.await.map(|_| ()) })
    }

    fn before_tool(&self, ev: BeforeToolEvent) -> HookFuture<Option<ToolOverride>> {
        let event = json!({"name": ev.name, "args": ev.args, "id": ev.id, "turn": ev.turn});
        let fut = self.0.call(HookName::BeforeTool, event);
        Box::pin(async move {
            let v = fut.await?;
            let a = HookAnswer::read(HookName::BeforeTool, &v)?;
            if a.is_none() {
                return Ok(None);
            }
            let args = a.get("args", "an object", Value::is_object)?.cloned();
            Ok(Some(ToolOverride { result: a.result()?, args }))
        })
    }

    fn after_tool(&self, ev: AfterToolEvent) -> HookFuture<Option<ToolResult>> {
        let result = serde_json::to_value(&ev.result).unwrap_or(Value::Null);
        let event = json!({"name": ev.name, "args": ev.args, "result": result, "id": ev.id, "turn": ev.turn});
        let fut = self.0.call(HookName::AfterTool, event);
        Box::pin(async move {
            let v = fut.await?;
            HookAnswer::read(HookName::AfterTool, &v)?.result()
        })
    }
}

/// Resolves a suspension inline. `Ok(None)` counts as a decline.
pub trait WaitFor: Send + Sync {
    /// Waits for the answer to `request`.
    fn wait_for(&self, request: Request) -> HookFuture<Option<Answer>>;
}

impl<F, Fut> WaitFor for F
where
    F: Fn(Request) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Option<Answer>>> + Send + 'static,
{
    fn wait_for(&self, request: Request) -> HookFuture<Option<Answer>> {
        Box::pin(self(request))
    }
}

/// What to do with a failed model call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// Back off and try again (bounded by `retries`).
    Retry,
    /// Give up now.
    Fail,
    /// Whatever the default policy does with this failure (`retryable ? Retry : Fail`).
    Default,
}

impl Tier {
    /// The wire string: `retry`, `fail` or `default`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Retry => "retry",
            Tier::Fail => "fail",
            Tier::Default => "default",
        }
    }

    /// A host's answer to `on_error`: `retry`, `fail`, `default`, or none (`None`: the
    /// default). Anything else is an [`crate::ErrorKind::InvalidArgument`] error naming it.
    pub fn from_answer(answer: Option<&str>) -> crate::Result<Tier> {
        match answer {
            None | Some("default") => Ok(Tier::Default),
            Some("retry") => Ok(Tier::Retry),
            Some("fail") => Ok(Tier::Fail),
            Some(other) => Err(crate::Error::invalid(format!(
                "on_error must answer \"retry\", \"fail\" or \"default\", got {other:?}"
            ))),
        }
    }

    /// The decision for `info`: [`Tier::Default`] resolved by the default policy.
    pub(crate) fn resolve(self, info: &ErrorInfo) -> Tier {
        match self {
            Tier::Default if info.retryable => Tier::Retry,
            Tier::Default => Tier::Fail,
            other => other,
        }
    }
}

/// One failed model call, as [`OnError`] sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorInfo {
    /// The HTTP status, when the provider answered.
    pub status: Option<u16>,
    /// The network error's message, when it did not.
    pub error: Option<String>,
    /// Zero-based attempt index.
    pub attempt: u32,
    /// Whether the default policy would retry it.
    pub retryable: bool,
}

/// Classifies each failed model call; absent, the default is `retryable ? Retry : Fail`.
pub trait OnError: Send + Sync {
    /// Decides whether to retry.
    fn classify(&self, info: ErrorInfo) -> HookFuture<Tier>;
}

impl<F> OnError for F
where
    F: Fn(&ErrorInfo) -> Tier + Send + Sync,
{
    fn classify(&self, info: ErrorInfo) -> HookFuture<Tier> {
        Box::pin(std::future::ready(Ok(self(&info))))
    }
}

/// Rewrites the whole request body just before it is sent (after `request_params`), for
/// provider-specific shapes the options cannot express. `Ok(None)` sends the body unchanged.
pub trait BodyTransform: Send + Sync {
    /// Returns the body to send, or `None` to keep `body`.
    fn transform(&self, body: Value) -> HookFuture<Option<Value>>;
}

impl<F> BodyTransform for F
where
    F: Fn(Value) -> Option<Value> + Send + Sync,
{
    fn transform(&self, body: Value) -> HookFuture<Option<Value>> {
        Box::pin(std::future::ready(Ok(self(body))))
    }
}
