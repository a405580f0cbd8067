//! The tool sources' parts a port exposes on their own, outside a toolkit: skills listed and
//! loaded, MCP configs read and servers listed, `${ENV}` headers, elicitation mapped both
//! ways, and which tools MCP serve would expose. Each is the core's function, in JSON.

use std::ffi::c_char;

use engine::mcp::{elicit_action, elicitation_request, exposed_tools, list_mcp_tools, McpConfig};
use engine::{list_skills, CancellationToken, Error, SkillsSpec};
use serde_json::{json, Value};

use crate::client::tn_cancel;
use crate::guard::{call, in_json, in_str, write_out, Result};
use crate::handles;
use crate::runtime::block_on;
use crate::status::warnings_json;
use crate::toolkit::tn_toolkit;

fn warnings_value(w: &[engine::Warning]) -> Value {
    serde_json::from_str(&warnings_json(w)).unwrap_or(Value::Array(Vec::new()))
}

/// Lists the skills of `options_json` (upstream's `list_skills` options: `dirs`, `skills`)
/// without exposing any, to author a filter from: writes `{"skills": [SkillInfo], "skipped":
/// [{"location", "reason", "detail"}], "warnings": [...]}` to `*inventory_out`. Blocks while
/// the folders are read.
///
/// # Safety
/// `options_json` is a NUL-terminated string; `inventory_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_skills_list(
    options_json: *const c_char,
    inventory_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let spec = SkillsSpec::from_load_json(&in_json(options_json, "options_json")?)?;
        let inv = block_on(async move { list_skills(&spec, None).await })?;
        let out = json!({
            "skills": inv.value.skills.iter().map(engine::SkillInfo::to_json).collect::<Vec<_>>(),
            "skipped": inv.value.skipped.iter().map(engine::SkillSkip::to_json).collect::<Vec<_>>(),
            "warnings": warnings_value(&inv.warnings),
        });
        write_out(inventory_out, "inventory_out", out.to_string())
    })
}

/// Writes the skills a toolkit exposes to `*skills_out`: `{"skills": [SkillInfo], "skipped":
/// [...]}` (empty without a skill source).
///
/// # Safety
/// `toolkit` is a pointer this library returned; `skills_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_toolkit_skills(
    toolkit: *const tn_toolkit,
    skills_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let tk = handles::toolkit(toolkit)?;
        let catalog = tk.skills();
        let out = json!({
            "skills": catalog.skills().iter().map(engine::SkillInfo::to_json).collect::<Vec<_>>(),
            "skipped": catalog.skipped().iter().map(engine::SkillSkip::to_json).collect::<Vec<_>>(),
        });
        write_out(skills_out, "skills_out", out.to_string())
    })
}

/// Writes the server entries of an MCP config, as written, to `*servers_out` (upstream's
/// `parse_mcp_config`): `config` is a JSON object, or (when `is_path` is non-zero) the path of
/// a JSON file.
///
/// # Safety
/// `config` is a NUL-terminated string; `servers_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_mcp_config_servers(
    config: *const c_char,
    is_path: i32,
    servers_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let value = read_config(config, is_path)?;
        write_out(servers_out, "servers_out", Value::Object(McpConfig::server_entries(&value)?).to_string())
    })
}

fn read_config(config: *const c_char, is_path: i32) -> Result<Value> {
    if is_path != 0 {
        McpConfig::read_file(in_str(config, "config")?)
    } else {
        in_json(config, "config")
    }
}

/// Connects to every enabled server of an MCP config (as for `tn_mcp_config_servers`), lists
/// its tools and disconnects: writes `{"tools": {server: [{name, description,
/// input_schema}]}, "status": {server: status}, "warnings": [...]}` to `*inventory_out`.
/// Blocks; `cancel` (may be NULL), fired, stops it with `TN_ERR_CANCELLED`.
///
/// # Safety
/// Pointers as documented; `cancel` is NULL or a live `tn_cancel`.
#[no_mangle]
pub unsafe extern "C" fn tn_mcp_list_tools(
    config: *const c_char,
    is_path: i32,
    cancel: *const tn_cancel,
    inventory_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let parsed = McpConfig::from_json(&read_config(config, is_path)?)?;
        let cancel = if cancel.is_null() { CancellationToken::new() } else { handles::cancel(cancel)? };
        let inv = block_on(async move { list_mcp_tools(&parsed.value, cancel).await })?;
        let mut out = inv.to_json();
        let mut warnings = parsed.warnings;
        warnings.extend(inv.warnings);
        out["warnings"] = warnings_value(&warnings);
        write_out(inventory_out, "inventory_out", out.to_string())
    })
}

/// Expands `${NAME}` in each value of `headers_json` (an object of strings) from the
/// environment (an unset name becomes empty) and writes the object to `*headers_out`. The
/// values may be secrets: the library never logs them.
///
/// # Safety
/// `headers_json` is a NUL-terminated string; `headers_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_expand_env_headers(
    headers_json: *const c_char,
    headers_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let out = engine::expand_env_headers_json(&in_json(headers_json, "headers_json")?)?;
        write_out(headers_out, "headers_out", Value::Object(out).to_string())
    })
}

/// The Request an MCP server's elicitation becomes (`params_json`: the `elicitation/create`
/// params; a form is kind `input`, a URL kind `authorization`), written to `*request_out`.
///
/// # Safety
/// `params_json` is a NUL-terminated string; `request_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_elicitation_request(
    params_json: *const c_char,
    request_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let request = elicitation_request(&in_json(params_json, "params_json")?);
        write_out(request_out, "request_out", request.to_json().to_string())
    })
}

/// What an MCP server is told for the host's answer (`answer_json`: an Answer, or `null` for
/// none): `{"action": "accept" | "decline" | "cancel", "content"?}`, written to `*result_out`.
///
/// # Safety
/// `answer_json` is a NUL-terminated string; `result_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_elicit_result(
    answer_json: *const c_char,
    result_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let answer = match in_json(answer_json, "answer_json")? {
            Value::Null => None,
            v => Some(engine::Answer::from_json(&v)?),
        };
        let action = elicit_action(answer.as_ref());
        let out = match &action {
            engine::mcp::ElicitAction::Accept(content) => json!({"action": action.as_str(), "content": content}),
            _ => json!({"action": action.as_str()}),
        };
        write_out(result_out, "result_out", out.to_string())
    })
}

/// Which of a toolkit's tools MCP serve would expose with `tools_json` (an array of names, or
/// `null` for the default: all but relay tools and the command and file built-ins): writes
/// `{"tools": [names], "warnings": [...]}` to `*exposed_out`.
///
/// # Safety
/// `toolkit` is a pointer this library returned; `tools_json` a NUL-terminated string;
/// `exposed_out` writable.
#[no_mangle]
pub unsafe extern "C" fn tn_mcp_exposed_tools(
    toolkit: *const tn_toolkit,
    tools_json: *const c_char,
    exposed_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let tk = handles::toolkit(toolkit)?;
        let names: Option<Vec<String>> = match in_json(tools_json, "tools_json")? {
            Value::Null => None,
            v => Some(
                serde_json::from_value(v)
                    .map_err(|_| Error::invalid("tools_json must be null or an array of tool names"))?,
            ),
        };
        let (tools, warnings) = exposed_tools(&tk, names.as_deref());
        let names: Vec<&str> = tools.iter().map(engine::Tool::name).collect();
        let out = json!({"tools": names, "warnings": warnings_value(&warnings)});
        write_out(exposed_out, "exposed_out", out.to_string())
    })
}

/// Writes the skill source's fixed texts to `*texts_out`: `{"preamble", "tool_description",
/// "no_skills"}` (the system-prompt preamble, the `skill` tool's description, and the prompt
/// when no skill has a description), for ports that export them as constants.
///
/// # Safety
/// `texts_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_skill_texts(texts_out: *mut *mut c_char, error_out: *mut *mut c_char) -> i32 {
    call(error_out, || {
        let out = json!({
            "preamble": engine::skill::SKILLS_PROMPT_PREAMBLE,
            "tool_description": engine::skill::SKILL_TOOL_DESCRIPTION,
            "no_skills": engine::skill::NO_SKILLS_PROMPT,
        });
        write_out(texts_out, "texts_out", out.to_string())
    })
}
