//! The suspension vocabulary, as the engine spells it: how a tool asks (`pending`,
//! `authRequired`) and how a host answers (`answerOutput`, `answerDeclined`).

use std::str::FromStr;

use engine::{PendingSpec, Reason};
use napi::bindgen_prelude::Either;
use napi::Env;
use napi_derive::napi;
use serde_json::Value;

use crate::convert::{tool_result_from_json, Answer, Request, ToolResult};
use crate::error::throw;

/// A suspension to raise: a Request whose `id` is generated when absent.
#[napi(object, object_to_js = false)]
pub struct PendingRequest {
    pub id: Option<String>,
    pub kind: String,
    pub prompt: String,
    pub url: Option<String>,
    #[napi(ts_type = "Record<string, unknown>")]
    pub data: Option<engine::JsonObject>,
    pub expires_at: Option<String>,
}

/// A suspension: an error ToolResult whose `metadata.pending` is the Request; its output is
/// the prompt, followed by a newline and the url when there is one.
#[napi]
pub fn pending(request: PendingRequest) -> ToolResult {
    engine::pending(PendingSpec {
        id: request.id,
        kind: request.kind,
        prompt: request.prompt,
        url: request.url,
        data: request.data,
        expires_at: request.expires_at,
    })
    .into()
}

/// An `authorization` suspension at a login `url`.
#[napi]
pub fn auth_required(url: String, prompt: Option<String>) -> ToolResult {
    engine::auth_required(&url, prompt.as_deref()).into()
}

/// The suspension a result carries, if `metadata.pending` is a well-formed Request.
#[napi(ts_args_type = "result: ToolResult", ts_return_type = "Request | undefined")]
pub fn pending_of(env: &Env, result: Value) -> napi::Result<Either<Request, ()>> {
    let r = tool_result_from_json(&result).map_err(|e| throw(env, e))?;
    Ok(engine::pending_of(&r).map_or(Either::B(()), |p| Either::A(Request::from(p))))
}

/// The Answer that supplies a reply: `{id, ok: true, data: {output}}`.
#[napi]
pub fn answer_output(id: String, output: String) -> Answer {
    engine::answer_output(&id, &output).into()
}

/// The Answer that refuses a request: `{id, ok: false, reason}`. `reason` is `declined`
/// (default), `cancelled` or `expired`; anything else is an `InvalidArgumentError`.
#[napi(ts_args_type = "id: string, reason?: 'declined' | 'cancelled' | 'expired'")]
pub fn answer_declined(env: &Env, id: String, reason: Option<String>) -> napi::Result<Answer> {
    let reason = match reason {
        None => Reason::Declined,
        Some(r) => Reason::from_str(&r).map_err(|e| throw(env, e))?,
    };
    Ok(engine::answer_declined(&id, reason.as_str()).into())
}
