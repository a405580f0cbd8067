//! The engine's tool sources outside a toolkit, with the JS port's names: the built-in tools
//! (`createBuiltinTools`, `selectBuiltins`, `builtinsEnabled`), HTTP tools (`httpTool`,
//! `expandEnvHeaders`) and skills (`loadSkills`, `listSkills`). Every option is read by the
//! engine; this side converts arguments and results.

use engine::{SkillOrigin, SkillsSpec};
use napi::bindgen_prelude::{Either, Object, Unknown};
use napi::Env;
use napi_derive::napi;
use serde_json::{json, Map, Value};

use crate::args::{arg, object_arg};
use crate::error::throw;
use crate::options::{json_value, plain_json};
use crate::tool::Tool;

// ---- built-ins ------------------------------------------------------------------------------

/// The `builtins` argument `cfg` of `func`, read by the engine (its warnings emitted).
fn builtins_arg(env: &Env, cfg: Unknown, func: &str) -> napi::Result<engine::BuiltinsSpec> {
    let json = json_value(env, cfg, func, "cfg")?;
    let parsed = engine::BuiltinsSpec::from_json(&json).map_err(|e| throw(env, e))?;
    crate::warning::emit(env, &parsed.warnings)?;
    Ok(parsed.value)
}

fn tools_of(tools: Vec<engine::Tool>) -> Vec<Tool> {
    tools.into_iter().map(|t| Tool { inner: t }).collect()
}

/// All ten built-in tools, whatever the toggles say, in upstream's order (`bash, read, write,
/// edit, grep, glob, webfetch, question, apply_patch, todowrite`); `cfg` may set where they
/// act (`root`, `baseDir`) and the `shell`.
#[napi(ts_args_type = "cfg?: BuiltinsConfig", ts_return_type = "Tool[]")]
pub fn create_builtin_tools(env: &Env, cfg: Unknown) -> napi::Result<Vec<Tool>> {
    let spec = builtins_arg(env, cfg, "createBuiltinTools")?;
    Ok(tools_of(engine::create_builtin_tools(&spec)))
}

/// The built-in tools `cfg` selects: none when the source is off, else the ten less those
/// `cfg.tools` turns off. Throws a `ConfigError` when `bash` is kept and no shell exists.
#[napi(ts_args_type = "cfg?: BuiltinsConfig", ts_return_type = "Tool[]")]
pub fn select_builtins(env: &Env, cfg: Unknown) -> napi::Result<Vec<Tool>> {
    let spec = builtins_arg(env, cfg, "selectBuiltins")?;
    engine::builtin_tools(&spec).map(tools_of).map_err(|e| throw(env, e))
}

/// Whether the built-in source is on (default on; `disabled: true` wins, then
/// `enabled: false`).
#[napi(ts_args_type = "cfg?: BuiltinsConfig", ts_return_type = "boolean")]
pub fn builtins_enabled(env: &Env, cfg: Unknown) -> napi::Result<bool> {
    let spec = builtins_arg(env, cfg, "builtinsEnabled")?;
    Ok(engine::builtins_enabled(&spec))
}

// ---- HTTP tools -----------------------------------------------------------------------------

/// `httpTool` options (read by the engine).
#[napi(object, object_to_js = false)]
#[allow(dead_code)]
pub struct HttpToolOptions {
    /// The tool name (sanitised to `[a-zA-Z0-9_-]`).
    pub name: String,
    /// What the model is told the tool does.
    pub description: String,
    /// Any case; sent upper-cased.
    pub method: String,
    /// `http://` or `https://`; `{name}` placeholders are filled from the arguments.
    pub url: String,
    /// Static headers; `${ENV_VAR}` in a value expands from the environment at call time.
    #[napi(ts_type = "Record<string, string>")]
    pub headers: Option<Value>,
    /// Arguments sent in the query string whatever the method (a GET sends them all there).
    pub query: Option<Vec<String>>,
    /// How the other arguments are sent (default `json`).
    #[napi(ts_type = "'json' | 'form' | 'raw'")]
    pub body: Option<String>,
    /// The arguments' JSON Schema (default: an object with no properties).
    #[napi(ts_type = "Record<string, unknown>")]
    pub input_schema: Option<Value>,
    /// Milliseconds one call may take (default 30000).
    pub timeout: Option<f64>,
    /// What a 2xx answer becomes (default `text`).
    #[napi(ts_type = "'text' | 'json' | 'status+text'")]
    pub result_mode: Option<String>,
}

/// Wraps an HTTP endpoint as a tool (source `http`): a non-2xx answer or a network failure
/// is an error result.
#[napi(ts_args_type = "opts: HttpToolOptions", ts_return_type = "Tool")]
pub fn http_tool(env: &Env, opts: Unknown) -> napi::Result<Tool> {
    let o: Object = object_arg(env, opts, "httpTool", "opts")?;
    let mut plain = plain_json(env, &o, "httpTool", "opts", &[], &[])?;
    // The JS port's name for the engine's `timeout_ms`.
    if let Some(t) = plain.remove("timeout") {
        plain.insert("timeout_ms".into(), t);
    }
    let spec = engine::HttpToolSpec::from_json(&Value::Object(plain)).map_err(|e| throw(env, e))?;
    engine::http_tool(spec).map(|t| Tool { inner: t }).map_err(|e| throw(env, e))
}

/// `headers` with each `${NAME}` in a value replaced from the environment (an unset
/// variable by nothing); `undefined` for no headers.
#[napi(ts_args_type = "headers?: Record<string, string>", ts_return_type = "Record<string, string> | undefined")]
pub fn expand_env_headers(env: &Env, headers: Unknown) -> napi::Result<Either<Map<String, Value>, ()>> {
    const F: &str = "expandEnvHeaders";
    let Some(headers) = arg::<Option<engine::JsonObject>>(env, headers, F, "headers", "an object")? else {
        return Ok(Either::B(()));
    };
    let expanded = engine::expand_env_headers_json(&Value::Object(headers)).map_err(|e| throw(env, e))?;
    Ok(Either::A(expanded))
}

// ---- skills ---------------------------------------------------------------------------------

/// A skill supplied as data.
#[napi(object, object_to_js = false)]
#[allow(dead_code)]
pub struct SkillDef {
    /// Its name, the `skill` tool's argument.
    pub name: String,
    /// Shown in the catalog; a skill without one is loadable but not listed.
    pub description: Option<String>,
    /// The instructions the `skill` tool returns.
    pub content: String,
    /// Logical resource names listed in the `<skill_files>` block.
    pub resources: Option<Vec<String>>,
    /// The logical base shown to the model (default `skill://<name>/`).
    pub base: Option<String>,
}

/// A discovered skill.
#[napi(object, object_from_js = false)]
pub struct SkillInfo {
    /// Its name.
    pub name: String,
    /// Its description, when it has one.
    pub description: Option<String>,
    /// The absolute path of its SKILL.md, or a data skill's logical base.
    pub location: String,
    /// The instructions (after the front matter).
    pub content: String,
    /// `fs`: from a skills folder; `logical`: supplied as data.
    #[napi(ts_type = "'fs' | 'logical'")]
    pub origin: String,
    /// A data skill's resources.
    pub resources: Option<Vec<String>>,
    /// A data skill's logical base.
    pub base: Option<String>,
}

/// A candidate that did not become a skill.
#[napi(object, object_from_js = false)]
pub struct SkillSkip {
    /// The SKILL.md path, or a data skill's base.
    pub location: String,
    /// Why, as the cross-port reason code.
    #[napi(ts_type = "'missing-name' | 'malformed-frontmatter' | 'duplicate-name' | 'unreadable'")]
    pub reason: String,
    /// The parser's or the file system's own message (show it, never match on it).
    pub detail: String,
}

/// Every skill the sources hold and every refusal, unfiltered.
#[napi(object, object_from_js = false)]
pub struct SkillInventory {
    /// The skills, in discovery order.
    pub skills: Vec<SkillInfo>,
    /// The refusals, with their reasons.
    pub skipped: Vec<SkillSkip>,
}

/// `loadSkills` / `listSkills` options (read by the engine).
#[napi(object, object_to_js = false)]
#[allow(dead_code)]
pub struct LoadSkillsOptions {
    #[napi(ts_type = "string | string[]")]
    pub dirs: Option<Value>,
    #[napi(ts_type = "SkillDef[]")]
    pub skills: Option<Value>,
    /// Which skills are exposed: any `true` makes an allowlist, only `false`s a drop-list.
    #[napi(ts_type = "Record<string, boolean>")]
    pub filter: Option<Value>,
    /// The `<skill_files>` sample size: 0 the default (10), n > 0 at most n, -1 none.
    pub sample_limit: Option<f64>,
}

fn skill_info(s: &engine::SkillInfo) -> SkillInfo {
    let data = s.origin == SkillOrigin::Data;
    SkillInfo {
        name: s.name.clone(),
        description: s.description.clone(),
        location: s.location.clone(),
        content: s.content.clone(),
        origin: s.origin.as_str().into(),
        resources: data.then(|| s.resources.clone()),
        base: s.base.clone(),
    }
}

fn skill_skip(s: &engine::SkillSkip) -> SkillSkip {
    SkillSkip { location: s.location.clone(), reason: s.reason.as_str().into(), detail: s.detail.clone() }
}

/// The argument `input` of `func` (folders, or the options) as the engine's skill spec.
fn skills_arg(env: &Env, input: Unknown, func: &str) -> napi::Result<SkillsSpec> {
    let json = match json_value(env, input, func, "input")? {
        dirs @ (Value::String(_) | Value::Array(_)) => json!({ "dirs": dirs }),
        other => other,
    };
    SkillsSpec::from_load_json(&json).map_err(|e| throw(env, e))
}

/// The skills of a `loadSkills` call: the `skill` tool and the system-prompt catalog.
#[napi]
pub struct SkillSource {
    catalog: engine::SkillCatalog,
}

#[napi]
impl SkillSource {
    /// The exposed skills by name.
    #[napi(getter, ts_return_type = "Record<string, SkillInfo>")]
    pub fn skills<'e>(&self, env: &'e Env) -> napi::Result<Object<'e>> {
        let mut o = Object::new(env)?;
        for s in self.catalog.skills() {
            o.set(&s.name, skill_info(s))?;
        }
        Ok(o)
    }

    /// The `skill` tool (source `skill`); absent only when no source was given at all.
    #[napi(getter, ts_return_type = "Tool | undefined")]
    pub fn tool(&self) -> Either<Tool, ()> {
        self.catalog.tool().map_or(Either::B(()), |t| Either::A(Tool { inner: t }))
    }

    /// Every candidate refused while loading, with its reason.
    #[napi(getter)]
    pub fn skipped(&self) -> Vec<SkillSkip> {
        self.catalog.skipped().iter().map(skill_skip).collect()
    }

    /// The Markdown catalog for the system prompt.
    #[napi]
    pub fn prompt(&self) -> String {
        self.catalog.prompt()
    }
}

/// Discovers skills (folders and/or data), applies the filter and builds the `skill` tool.
/// Synchronous, as in the JS port: the folders are read on the calling thread.
#[napi(ts_args_type = "input: string | string[] | LoadSkillsOptions")]
pub fn load_skills(env: &Env, input: Unknown) -> napi::Result<SkillSource> {
    let spec = skills_arg(env, input, "loadSkills")?;
    let parsed = engine::load_skills_now(&spec);
    crate::warning::emit(env, &parsed.warnings)?;
    Ok(SkillSource { catalog: parsed.value })
}

/// Discovers and validates skills without exposing any: the unfiltered inventory and every
/// refusal with its reason. Synchronous, as in the JS port.
#[napi(ts_args_type = "input: string | string[] | LoadSkillsOptions")]
pub fn list_skills(env: &Env, input: Unknown) -> napi::Result<SkillInventory> {
    let spec = skills_arg(env, input, "listSkills")?;
    let parsed = engine::list_skills_now(&spec);
    crate::warning::emit(env, &parsed.warnings)?;
    let inv = parsed.value;
    Ok(SkillInventory {
        skills: inv.skills.iter().map(skill_info).collect(),
        skipped: inv.skipped.iter().map(skill_skip).collect(),
    })
}

/// The first lines of the skills catalog in the system prompt (the JS port's constant).
#[napi]
pub const SKILLS_PROMPT_PREAMBLE: &str = engine::skill::SKILLS_PROMPT_PREAMBLE;

/// The `skill` tool's description (the JS port's constant).
#[napi]
pub const SKILL_TOOL_DESCRIPTION: &str = engine::skill::SKILL_TOOL_DESCRIPTION;
