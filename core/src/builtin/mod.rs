//! The built-in tools (`source: "builtin"`): the default toolset upstream ships so an agent
//! can act with no wiring of its own. Names, input schemas, descriptions, output texts,
//! limits and defaults are upstream's (SPEC §4A, as the 0.21 Python package implements it),
//! so a model sees the same tools and the same results whichever engine runs them.
//!
//! [`builtin_tools`] gives them in upstream's order (`bash, read, write, edit, grep, glob,
//! webfetch, question, apply_patch, todowrite`), filtered by a [`BuiltinsSpec`]: the whole
//! source on or off (`true`/`false`, `{"disabled": true}`, `{"enabled": false}`) and a
//! per-tool map (`{"tools": {"bash": false}}`). Every failure is an error result, never an
//! error of the call.
//!
//! Beyond upstream:
//! - `root` (`{"root": "/some/dir"}`) confines the file tools (`read`, `write`, `edit`,
//!   `grep`, `glob`, `apply_patch`, and `bash`'s working directory) to one folder: a relative
//!   path means inside it, and a path whose real form leaves it (through `..`, an absolute
//!   path, or a symlink, including one swapped in after the check) is an error result. It is
//!   upstream's `base_dir` + `confine_to_base_dir` (accepted too), with the real path resolved
//!   before any access and the opened file checked again. A command run by `bash` is not
//!   confined: only where it starts is.
//! - `bash` runs its command in a process group of its own; on its timeout (default 60 s),
//!   when the run is cancelled (the context's token) and when the run drops the call (a run
//!   deadline), the whole group is stopped (`SIGTERM`, then `SIGKILL` after 2 s), so no
//!   background job outlives it. Its standard input is empty rather than the host's.
//! - An unknown name under `tools` is ignored, as upstream does, and reported as a
//!   [`Warning`]; an unknown key or a mistyped value is an error naming the option.

mod bash;
mod files;
mod patch;
mod paths;
mod py;
mod question;
mod search;
mod todo;
mod webfetch;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::tool::{Tool, ToolHandler, ToolSource};
use crate::toolkit::BUILTIN_TOOL_NAMES;
use crate::types::{json_type, ToolContext, ToolResult};
use crate::warning::{Parsed, Warning};

use paths::Fs;

/// The `builtins` option: which built-in tools a toolkit gets, and where they may act.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuiltinsSpec {
    /// Whether the source is on at all. Off, the per-tool map is not consulted.
    pub enabled: bool,
    /// Per-tool switches over the all-on baseline (`false` drops the tool), by built-in name.
    pub tools: BTreeMap<String, bool>,
    /// Our addition: the folder the file tools are confined to (see the module doc).
    pub root: Option<PathBuf>,
    /// Upstream's `base_dir`: what a relative path means (`None`: the working directory).
    pub base_dir: Option<PathBuf>,
    /// Upstream's `confine_to_base_dir`: refuse paths whose real form leaves `base_dir`.
    pub confine_to_base_dir: bool,
    /// Upstream's `shell`: the argv prefix `bash` runs the command with, used verbatim;
    /// `None`: `/bin/sh -c`, else `sh -c` from `PATH`.
    pub shell: Option<Vec<String>>,
}

impl Default for BuiltinsSpec {
    /// Upstream's default: every built-in on, paths relative to the working directory.
    fn default() -> BuiltinsSpec {
        BuiltinsSpec {
            enabled: true,
            tools: BTreeMap::new(),
            root: None,
            base_dir: None,
            confine_to_base_dir: false,
            shell: None,
        }
    }
}

/// The keys of the `builtins` object, as snake_case (camelCase spellings are read too).
const SPEC_KEYS: [&str; 7] = ["disabled", "enabled", "tools", "root", "base_dir", "confine_to_base_dir", "shell"];

fn snake(key: &str) -> String {
    match key {
        "baseDir" => "base_dir".into(),
        "confineToBaseDir" => "confine_to_base_dir".into(),
        other => other.into(),
    }
}

fn wrong(option: &str, want: &str, got: &Value) -> Error {
    Error::invalid(format!("option \"builtins.{option}\" must be {want}, got {}", json_type(got)))
}

fn flag(o: &Map<String, Value>, key: &str, written: &str) -> Result<Option<bool>> {
    match o.get(written) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(wrong(key, "a boolean", other)),
    }
}

fn path_option(o: &Map<String, Value>, written: &str) -> Result<Option<PathBuf>> {
    match o.get(written) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(PathBuf::from(s))),
        Some(other) => Err(wrong(written, "a string", other)),
    }
}

impl BuiltinsSpec {
    /// Reads the `builtins` option: `null` (upstream's default: on), a boolean, or an object
    /// with `disabled`, `enabled`, `tools` (name → boolean), `root`, `base_dir` (`baseDir`),
    /// `confine_to_base_dir` (`confineToBaseDir`) and `shell` (an array of strings). A wrong
    /// type or an unknown key is an [`ErrorKind::InvalidArgument`] error naming the option; a
    /// name under `tools` that is no built-in is ignored with a warning.
    pub fn from_json(v: &Value) -> Result<Parsed<BuiltinsSpec>> {
        let mut spec = BuiltinsSpec::default();
        let mut warnings = Vec::new();
        let o = match v {
            Value::Null => return Ok(Parsed { value: spec, warnings }),
            Value::Bool(b) => {
                spec.enabled = *b;
                return Ok(Parsed { value: spec, warnings });
            }
            Value::Object(o) => o,
            other => {
                return Err(Error::invalid(format!(
                    "option \"builtins\" must be a boolean or an object, got {}",
                    json_type(other)
                )))
            }
        };
        let mut seen: BTreeMap<String, &str> = BTreeMap::new();
        for key in o.keys() {
            let name = snake(key);
            if !SPEC_KEYS.contains(&name.as_str()) {
                return Err(Error::invalid(format!("unknown option \"builtins.{key}\"")));
            }
            if let Some(first) = seen.insert(name, key) {
                return Err(Error::invalid(format!(
                    "option \"builtins.{key}\" is given twice (also as \"builtins.{first}\")"
                )));
            }
        }
        let written = |name: &str| seen.get(name).copied().unwrap_or(name).to_string();
        // Upstream's precedence, as for MCP servers: `disabled: true` wins, then `enabled: false`.
        let disabled = flag(o, "disabled", "disabled")?;
        let enabled = flag(o, "enabled", "enabled")?;
        spec.enabled = disabled != Some(true) && enabled != Some(false);
        match o.get("tools") {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                for (name, on) in map {
                    let on = match on {
                        Value::Null => continue,
                        Value::Bool(b) => *b,
                        other => return Err(wrong(&format!("tools.{name}"), "a boolean", other)),
                    };
                    if BUILTIN_TOOL_NAMES.contains(&name.as_str()) {
                        spec.tools.insert(name.clone(), on);
                    } else {
                        warnings.push(unknown_builtin(name));
                    }
                }
            }
            Some(other) => return Err(wrong("tools", "an object of booleans", other)),
        }
        spec.root = path_option(o, "root")?;
        if o.get("root").and_then(Value::as_str) == Some("") {
            return Err(Error::invalid("option \"builtins.root\" must be a folder, got an empty string"));
        }
        spec.base_dir = path_option(o, &written("base_dir"))?;
        spec.confine_to_base_dir =
            flag(o, &written("confine_to_base_dir"), &written("confine_to_base_dir"))?.unwrap_or(false);
        spec.shell = match o.get("shell") {
            None | Some(Value::Null) => None,
            Some(Value::Array(a)) if a.is_empty() => None,
            Some(Value::Array(a)) => Some(
                a.iter()
                    .map(|x| x.as_str().map(str::to_string).ok_or_else(|| wrong("shell", "an array of strings", x)))
                    .collect::<Result<Vec<_>>>()?,
            ),
            Some(other) => return Err(wrong("shell", "an array of strings", other)),
        };
        if spec.root.is_some() && (spec.base_dir.is_some() || seen.contains_key("confine_to_base_dir")) {
            return Err(Error::invalid(format!(
                "option \"builtins.root\" cannot be combined with \"builtins.{}\": root is the base directory \
                 and confines to it",
                if spec.base_dir.is_some() { written("base_dir") } else { written("confine_to_base_dir") }
            )));
        }
        if spec.confine_to_base_dir && spec.base_dir.is_none() {
            return Err(Error::invalid(format!(
                "option \"builtins.{}\" is set but \"builtins.{}\" is empty",
                written("confine_to_base_dir"),
                written("base_dir")
            )));
        }
        Ok(Parsed { value: spec, warnings })
    }

    fn fs(&self) -> Fs {
        match (&self.root, &self.base_dir) {
            (Some(root), _) => Fs::new(Some(root.clone()), Some("root")),
            (None, Some(base)) => Fs::new(Some(base.clone()), self.confine_to_base_dir.then_some("baseDir")),
            (None, None) => Fs::new(None, None),
        }
    }
}

fn unknown_builtin(name: &str) -> Warning {
    Warning {
        code: "unknown_builtin",
        message: format!("[toolnexus] builtins.tools names no built-in tool {name:?} — ignored"),
    }
}

/// Whether the built-in source is on (upstream's `builtins_enabled`).
pub fn builtins_enabled(spec: &BuiltinsSpec) -> bool {
    spec.enabled
}

/// The built-in tools a spec selects (upstream's `select_builtins`): none when the source is
/// off; otherwise the ten in upstream's order, less those the `tools` map turns off. When
/// `bash` is kept and no shell can be found, the [`builtin_shell`] error: a host that turned
/// `bash` off runs on a machine without one.
pub fn builtin_tools(spec: &BuiltinsSpec) -> Result<Vec<Tool>> {
    if !builtins_enabled(spec) {
        return Ok(Vec::new());
    }
    let selected: Vec<Tool> =
        create_builtin_tools(spec).into_iter().filter(|t| spec.tools.get(t.name()) != Some(&false)).collect();
    if selected.iter().any(|t| t.name() == "bash") {
        builtin_shell(spec)?;
    }
    Ok(selected)
}

/// All ten built-in tools, whatever the toggles say (upstream's `create_builtin_tools`), with
/// the spec's paths and shell.
pub fn create_builtin_tools(spec: &BuiltinsSpec) -> Vec<Tool> {
    let env = Arc::new(Env { fs: spec.fs(), shell: resolve_shell(spec) });
    vec![
        bash::tool(&env),
        files::read_tool(&env),
        files::write_tool(&env),
        files::edit_tool(&env),
        search::grep_tool(&env),
        search::glob_tool(&env),
        webfetch::tool(&env),
        question::tool(&env),
        patch::tool(&env),
        todo::tool(&env),
    ]
}

/// The interpreter `bash` runs commands with (upstream's `builtin_shell`): the spec's
/// `shell`, else `/bin/sh -c`, else `sh -c` from `PATH`. None found is a
/// [`ErrorKind::Config`] error: a host that keeps `bash` may fail its toolkit construction
/// with it, as upstream's does.
pub fn builtin_shell(spec: &BuiltinsSpec) -> Result<Vec<String>> {
    resolve_shell(spec).map_err(|m| Error::new(ErrorKind::Config, m))
}

fn resolve_shell(spec: &BuiltinsSpec) -> std::result::Result<Vec<String>, String> {
    if let Some(shell) = &spec.shell {
        return Ok(shell.clone());
    }
    if Path::new("/bin/sh").exists() {
        return Ok(vec!["/bin/sh".into(), "-c".into()]);
    }
    let on_path =
        std::env::var_os("PATH").is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join("sh").is_file()));
    if on_path {
        return Ok(vec!["sh".into(), "-c".into()]);
    }
    Err("no shell interpreter found (tried: /bin/sh, sh); set builtins['shell'], or disable the bash builtin \
         with builtins['tools']['bash'] = False"
        .into())
}

/// What every built-in may know about the host: where paths land and which shell runs.
pub(crate) struct Env {
    pub(crate) fs: Fs,
    pub(crate) shell: std::result::Result<Vec<String>, String>,
}

type Run = fn(Arc<Env>, Value, ToolContext) -> BoxFuture<'static, ToolResult>;

struct Builtin {
    env: Arc<Env>,
    run: Run,
}

impl ToolHandler for Builtin {
    fn execute(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, Result<ToolResult>> {
        let fut = (self.run)(self.env.clone(), args, ctx);
        Box::pin(async move { Ok(fut.await) })
    }
}

/// A built-in tool: `schema` is upstream's, key order included.
fn builtin(name: &str, description: &str, schema: Value, env: &Arc<Env>, run: Run) -> Tool {
    Tool::new(name, description, schema, ToolSource::Builtin, Arc::new(Builtin { env: env.clone(), run }))
}

/// Runs filesystem work off the async workers; a panic in it is an error result.
async fn blocking<F>(name: &'static str, f: F) -> ToolResult
where
    F: FnOnce() -> ToolResult + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r,
        Err(e) => ToolResult::error(format!("{name}: {e}")),
    }
}

fn err(tool: &str, message: impl std::fmt::Display) -> ToolResult {
    ToolResult::error(format!("{tool}: {message}"))
}

fn ok_with(output: impl Into<String>, metadata: Value) -> ToolResult {
    ToolResult { output: output.into(), is_error: false, metadata: metadata.as_object().cloned(), parts: None }
}

fn err_with(output: impl Into<String>, metadata: Value) -> ToolResult {
    ToolResult { output: output.into(), is_error: true, metadata: metadata.as_object().cloned(), parts: None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_toggle_reads_as_upstream() {
        let on = |v: Value| builtins_enabled(&BuiltinsSpec::from_json(&v).unwrap().value);
        assert!(on(Value::Null) && on(json!(true)) && on(json!({})) && on(json!({"enabled": true})));
        assert!(!on(json!(false)) && !on(json!({"enabled": false})) && !on(json!({"disabled": true})));
        assert!(!on(json!({"enabled": true, "disabled": true})), "disabled wins");
    }

    #[test]
    fn bad_options_are_errors_naming_them() {
        for (v, msg) in [
            (json!(3), "option \"builtins\" must be a boolean or an object, got number"),
            (json!({"rooot": "/x"}), "unknown option \"builtins.rooot\""),
            (json!({"disabled": "yes"}), "option \"builtins.disabled\" must be a boolean, got string"),
            (json!({"tools": {"bash": "no"}}), "option \"builtins.tools.bash\" must be a boolean, got string"),
            (json!({"tools": []}), "option \"builtins.tools\" must be an object of booleans, got array"),
            (json!({"shell": "sh"}), "option \"builtins.shell\" must be an array of strings, got string"),
            (json!({"root": 1}), "option \"builtins.root\" must be a string, got number"),
            (json!({"root": ""}), "option \"builtins.root\" must be a folder, got an empty string"),
            (json!({"baseDir": "/a", "base_dir": "/b"}), "is given twice"),
            (json!({"root": "/a", "baseDir": "/b"}), "\"builtins.root\" cannot be combined with \"builtins.baseDir\""),
            (json!({"confine_to_base_dir": true}), "\"builtins.confine_to_base_dir\" is set but \"builtins.base_dir\""),
        ] {
            let e = BuiltinsSpec::from_json(&v).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument);
            assert!(e.message().contains(msg), "{} !~ {msg}", e.message());
        }
    }

    #[test]
    fn unknown_tool_names_are_ignored_with_a_warning() {
        let p = BuiltinsSpec::from_json(&json!({"tools": {"bash": false, "write": false, "nope": false}})).unwrap();
        assert_eq!(p.warnings.len(), 1);
        assert_eq!(p.warnings[0].code, "unknown_builtin");
        assert_eq!(p.warnings[0].message, "[toolnexus] builtins.tools names no built-in tool \"nope\" — ignored");
        let names: Vec<String> = builtin_tools(&p.value).unwrap().iter().map(|t| t.name().to_string()).collect();
        assert_eq!(names, ["read", "edit", "grep", "glob", "webfetch", "question", "apply_patch", "todowrite"]);
    }

    #[test]
    fn all_ten_in_upstream_order_and_none_when_off() {
        let all = builtin_tools(&BuiltinsSpec::default()).unwrap();
        let names: Vec<&str> = all.iter().map(Tool::name).collect();
        assert_eq!(names, BUILTIN_TOOL_NAMES);
        assert!(all.iter().all(|t| t.source() == ToolSource::Builtin));
        let off = BuiltinsSpec::from_json(&json!({"disabled": true, "tools": {"read": true}})).unwrap().value;
        assert!(builtin_tools(&off).unwrap().is_empty());
        assert_eq!(create_builtin_tools(&off).len(), 10);
    }

    #[test]
    fn the_shell_is_detected_or_taken_verbatim() {
        assert_eq!(builtin_shell(&BuiltinsSpec::default()).unwrap(), ["/bin/sh", "-c"]);
        let given = BuiltinsSpec::from_json(&json!({"shell": ["/bin/bash", "-lc"]})).unwrap().value;
        assert_eq!(builtin_shell(&given).unwrap(), ["/bin/bash", "-lc"]);
    }
}
