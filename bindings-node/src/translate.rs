//! The translator's pure mappings (SPEC §11), with the JS port's names; the conversions are
//! the engine's.

use napi::bindgen_prelude::{Either, Unknown};
use napi::Env;
use napi_derive::napi;
use serde_json::{json, Value};

use crate::args::arg;
use crate::convert::Json;
use crate::error::throw;

/// An array argument (`null`/`undefined`: empty).
fn list(env: &Env, v: Unknown, func: &str, what: &str) -> napi::Result<Vec<Value>> {
    match arg::<Option<Json>>(env, v, func, what, "an array")? {
        None | Some(Json(Value::Null)) => Ok(Vec::new()),
        Some(Json(Value::Array(a))) => Ok(a),
        Some(_) => Err(throw(env, crate::error::invalid(format!("{func}: {what} must be an array")))),
    }
}

/// OpenAI `messages` as `{messages, system}` for an Anthropic provider: tool calls become
/// `tool_use` blocks, consecutive `tool` results one user turn, system and developer
/// messages the system text.
#[napi(
    js_name = "openAIMessagesToAnthropic",
    ts_args_type = "messages: any[]",
    ts_return_type = "{ messages: any[]; system: string }"
)]
pub fn openai_messages_to_anthropic(env: &Env, messages: Unknown) -> napi::Result<Json> {
    let msgs = list(env, messages, "openAIMessagesToAnthropic", "messages")?;
    let (out, system) = engine::openai_messages_to_anthropic(&msgs).map_err(|e| throw(env, e))?;
    Ok(Json(json!({"messages": out, "system": system})))
}

/// OpenAI `tools` as Anthropic declarations (native entries pass, unknown ones are skipped).
#[napi(js_name = "openAIToolsToAnthropic", ts_args_type = "tools?: any[]", ts_return_type = "any[]")]
pub fn openai_tools_to_anthropic(env: &Env, tools: Unknown) -> napi::Result<Json> {
    let tools = list(env, tools, "openAIToolsToAnthropic", "tools")?;
    Ok(Json(Value::Array(engine::openai_tools_to_anthropic(&tools))))
}

/// OpenAI `tool_choice` in Anthropic's shape; `undefined` for `auto`, absent or unknown.
#[napi(js_name = "openAIToolChoiceToAnthropic", ts_args_type = "choice: unknown", ts_return_type = "any")]
pub fn openai_tool_choice_to_anthropic(env: &Env, choice: Unknown) -> napi::Result<Either<Json, ()>> {
    let choice: Option<Json> = arg(env, choice, "openAIToolChoiceToAnthropic", "choice", "JSON data")?;
    Ok(match choice.and_then(|c| engine::openai_tool_choice_to_anthropic(&c.0)) {
        Some(v) => Either::A(Json(v)),
        None => Either::B(()),
    })
}

/// The OpenAI finish reason for a provider stop reason: any tool call makes it `tool_calls`.
#[napi(
    js_name = "finishReasonFor",
    ts_args_type = "hasToolCalls: boolean, providerStop?: string",
    ts_return_type = "'stop' | 'tool_calls' | 'length' | 'content_filter'"
)]
pub fn finish_reason_for(env: &Env, has_tool_calls: Unknown, provider_stop: Unknown) -> napi::Result<&'static str> {
    let has: bool = arg(env, has_tool_calls, "finishReasonFor", "hasToolCalls", "a boolean")?;
    let stop: Option<String> = arg(env, provider_stop, "finishReasonFor", "providerStop", "a string")?;
    Ok(engine::finish_reason_for(has, stop.as_deref()))
}
