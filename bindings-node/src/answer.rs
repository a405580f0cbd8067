//! The suspension vocabulary, as the engine spells it: how a tool asks (`pending`,
//! `authRequired`) and how a host answers (`answerOutput`, `answerDeclined`).

use std::str::FromStr;

use engine::{PendingSpec, Reason};
use napi::bindgen_prelude::{Either, Unknown};
use napi::{Env, ValueType};
use napi_derive::napi;
use serde_json::Value;

use crate::args::{arg, object_arg, type_of};
use crate::convert::{tool_result_from_json, Answer, Request, ToolResult};
use crate::error::{invalid, throw, type_error};

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
#[napi(ts_args_type = "request: PendingRequest", ts_return_type = "ToolResult")]
pub fn pending(env: &Env, request: Unknown) -> napi::Result<ToolResult> {
    let request: PendingRequest = object_arg(env, request, "pending", "request")?;
    Ok(engine::pending(PendingSpec {
        id: request.id,
        kind: request.kind,
        prompt: request.prompt,
        url: request.url,
        data: request.data,
        expires_at: request.expires_at,
    })
    .into())
}

/// An `authorization` suspension at a login `url`.
#[napi(ts_args_type = "url: string, prompt?: string | undefined | null", ts_return_type = "ToolResult")]
pub fn auth_required(env: &Env, url: Unknown, prompt: Unknown) -> napi::Result<ToolResult> {
    let url: String = arg(env, url, "authRequired", "url", "a string")?;
    let prompt: Option<String> = arg(env, prompt, "authRequired", "prompt", "a string")?;
    Ok(engine::auth_required(&url, prompt.as_deref()).into())
}

/// The suspension a result carries, if `metadata.pending` is a well-formed Request.
#[napi(ts_args_type = "result: ToolResult", ts_return_type = "Request | undefined")]
pub fn pending_of(env: &Env, result: Unknown) -> napi::Result<Either<Request, ()>> {
    let result: Value = arg(env, result, "pendingOf", "result", "a ToolResult object")?;
    let r = tool_result_from_json(&result).map_err(|e| throw(env, e))?;
    Ok(engine::pending_of(&r).map_or(Either::B(()), |p| Either::A(Request::from(p))))
}

/// The Answer that supplies a reply: `{id, ok: true, data: {output}}`. As in the JS port, a
/// missing id or a non-string output is a `TypeError` (with `code` `invalid_argument`).
#[napi(ts_args_type = "id: string, output: string", ts_return_type = "Answer")]
pub fn answer_output(env: &Env, id: Unknown, output: Unknown) -> napi::Result<Answer> {
    // The JS port checks the output first.
    if output.get_type()? != ValueType::String {
        return Err(type_error(env, &format!("answerOutput: output must be a string, got {}", type_of(output))));
    }
    let id = answer_id(env, id, "answerOutput")?;
    let output: String = arg(env, output, "answerOutput", "output", "a string")?;
    Ok(engine::answer_output(&id, &output).into())
}

/// The Answer that refuses a request: `{id, ok: false, reason}`. `reason` is `declined`
/// (default), `cancelled` or `expired`; anything else is an `InvalidArgumentError`. A missing
/// id is a `TypeError`, as in the JS port.
#[napi(ts_args_type = "id: string, reason?: 'declined' | 'cancelled' | 'expired'", ts_return_type = "Answer")]
pub fn answer_declined(env: &Env, id: Unknown, reason: Unknown) -> napi::Result<Answer> {
    let id = answer_id(env, id, "answerDeclined")?;
    let reason = match reason.get_type()? {
        ValueType::Undefined | ValueType::Null => Reason::Declined,
        ValueType::String => {
            let r: String = arg(env, reason, "answerDeclined", "reason", "a string")?;
            Reason::from_str(&r).map_err(|e| throw(env, e))?
        }
        _ => {
            let e = invalid(format!(
                "answerDeclined: reason must be \"declined\", \"cancelled\" or \"expired\", got {}",
                type_of(reason)
            ));
            return Err(throw(env, e));
        }
    };
    Ok(engine::answer_declined(&id, reason.as_str()).into())
}

/// The id an Answer echoes: required (the JS port's `!id`), and a string.
fn answer_id(env: &Env, id: Unknown, func: &str) -> napi::Result<String> {
    let message = match id.get_type()? {
        ValueType::String => {
            let id: String = arg(env, id, func, "id", "a string")?;
            if !id.is_empty() {
                return Ok(id);
            }
            format!("{func}: id is required (the id of the Request it answers)")
        }
        ValueType::Undefined | ValueType::Null => format!("{func}: id is required (the id of the Request it answers)"),
        _ => format!("{func}: id must be a string, got {}", type_of(id)),
    };
    Err(type_error(env, &message))
}
