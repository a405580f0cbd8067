//! The MCP config file (SPEC §2): which servers to start and how. Pure parsing, no I/O
//! beyond reading a file: the same rules for every binding, so a config a host wrote for
//! Claude Desktop, VS Code or an upstream port reads the same everywhere.
//!
//! The servers sit under `mcpServers`, `servers` or `mcp`; without any of those the whole
//! object is the server map, less the sibling sections `builtins`, `agents`, `a2a` and
//! `mcpServer`. An entry with `url` is a streamable-HTTP server, one with `command` a stdio
//! server (`command` as upstream's list `[cmd, ...args]`, or a string with `args` beside it as
//! Claude Desktop and VS Code write it). A malformed entry does not fail the config: that
//! server alone is recorded as failed when the config is loaded, as a server that cannot
//! start would be.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::types::json_type;
use crate::warning::{Parsed, Warning};

/// The per-phase timeout when a server gives none (connect, `initialize`, `tools/list`, and
/// each `tools/call` outside a run's deadline).
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// The top-level keys that hold the server map, in the order they are looked for.
pub const WRAPPER_KEYS: [&str; 3] = ["mcpServers", "servers", "mcp"];

/// Sibling sections of a config file that are never servers, when the file has no wrapper key.
pub const RESERVED_KEYS: [&str; 4] = ["builtins", "agents", "a2a", "mcpServer"];

/// The servers of an MCP config, in the order the file lists them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct McpConfig {
    /// Every entry, the disabled and the malformed ones included.
    pub servers: Vec<ServerConfig>,
}

/// One server entry.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerConfig {
    /// The key it is listed under (the prefix of its tools' names, sanitised).
    pub name: String,
    /// `false` for `disabled: true` or `enabled: false`: the server is skipped (status `disabled`).
    pub enabled: bool,
    /// The bound of each phase (connect, `initialize`, `tools/list`) and of a `tools/call`
    /// made outside a run's deadline.
    pub timeout: Duration,
    /// The per-server tool filter, by the server's own tool names (see [`crate::mcp::filter_tools`]).
    pub tools: Option<Vec<(String, bool)>>,
    /// How to reach it.
    pub transport: ServerTransport,
}

/// How a server is reached.
#[derive(Clone, PartialEq)]
pub enum ServerTransport {
    /// A child process speaking MCP over its stdin and stdout.
    Stdio(StdioServer),
    /// A streamable-HTTP endpoint.
    Http(HttpServer),
    /// The entry cannot describe a server; the text says why. Loading records it as failed.
    Invalid(String),
}

/// A local server: the command to spawn.
#[derive(Clone, PartialEq)]
pub struct StdioServer {
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Added to (and overriding) the engine's own environment (`environment`, alias `env`).
    pub env: Vec<(String, String)>,
    /// The working directory, when given.
    pub cwd: Option<PathBuf>,
}

/// A remote server: the endpoint and the headers sent with every request.
#[derive(Clone, PartialEq)]
pub struct HttpServer {
    /// The streamable-HTTP endpoint.
    pub url: String,
    /// As written: `${ENV_VAR}` in a value is expanded from the environment when connecting.
    pub headers: Vec<(String, String)>,
}

// Header and environment values are often credentials: Debug shows the names only.
impl fmt::Debug for ServerTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerTransport::Stdio(s) => f
                .debug_struct("Stdio")
                .field("command", &s.command)
                .field("args", &s.args)
                .field("env", &s.env.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>())
                .field("cwd", &s.cwd)
                .finish(),
            ServerTransport::Http(h) => f
                .debug_struct("Http")
                .field("url", &h.url)
                .field("headers", &h.headers.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>())
                .finish(),
            ServerTransport::Invalid(why) => f.debug_tuple("Invalid").field(why).finish(),
        }
    }
}

impl McpConfig {
    /// Reads a config from JSON: an object with `mcpServers`, `servers` or `mcp` (the first
    /// present and not `null`), or the raw server map. Only a config that is not an object, or
    /// a wrapper that is not one, is an error; a bad `timeout` or `tools` value is a warning and
    /// falls back to the default, and a malformed server entry becomes a
    /// [`ServerTransport::Invalid`] server.
    pub fn from_json(v: &Value) -> Result<Parsed<McpConfig>> {
        let (map, raw) = McpConfig::unwrap(v)?;
        let mut warnings = Vec::new();
        let servers = map
            .iter()
            // A raw map's reserved keys, and a wrapper key left `null`, are not servers.
            .filter(|(name, _)| !(raw && is_reserved(name)))
            .map(|(name, entry)| parse_server(name, entry, &mut warnings))
            .collect();
        Ok(Parsed { value: McpConfig { servers }, warnings })
    }

    /// The server entries of a config as written (upstream's `parse_mcp_config`): the map
    /// under `mcpServers`, `servers` or `mcp`, or the raw map less the keys of
    /// [`RESERVED_KEYS`]. Errors as [`McpConfig::from_json`].
    pub fn server_entries(v: &Value) -> Result<serde_json::Map<String, Value>> {
        let (map, raw) = McpConfig::unwrap(v)?;
        Ok(map.iter().filter(|(name, _)| !raw || !is_reserved(name)).map(|(k, v)| (k.clone(), v.clone())).collect())
    }

    /// The server map of `v`, and whether it is the raw map (no wrapper key).
    fn unwrap(v: &Value) -> Result<(&serde_json::Map<String, Value>, bool)> {
        let root = v
            .as_object()
            .ok_or_else(|| Error::invalid(format!("MCP config must be a JSON object, got {}", json_type(v))))?;
        let wrapped = WRAPPER_KEYS.iter().find_map(|k| root.get(*k).filter(|v| !v.is_null()).map(|v| (*k, v)));
        match wrapped {
            Some((key, v)) => {
                let map = v.as_object().ok_or_else(|| {
                    Error::invalid(format!("MCP config: \"{key}\" must be an object of servers, got {}", json_type(v)))
                })?;
                Ok((map, false))
            }
            None => Ok((root, true)),
        }
    }

    /// Reads a config file (JSON). An unreadable file or invalid JSON is an
    /// [`crate::ErrorKind::InvalidArgument`] error naming the path.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Parsed<McpConfig>> {
        McpConfig::from_json(&McpConfig::read_file(path)?)
    }

    /// A config file's JSON, unparsed. An unreadable file or invalid JSON is an
    /// [`crate::ErrorKind::InvalidArgument`] error naming the path.
    pub fn read_file(path: impl AsRef<Path>) -> Result<Value> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::invalid(format!("cannot read MCP config {}: {e}", path.display())))?;
        serde_json::from_str(&text)
            .map_err(|e| Error::invalid(format!("MCP config {} is not valid JSON: {e}", path.display())))
    }

    /// The server listed under `name`.
    pub fn server(&self, name: &str) -> Option<&ServerConfig> {
        self.servers.iter().find(|s| s.name == name)
    }
}

/// A key of a raw server map that is not a server: a sibling config block, or a wrapper
/// key left `null`.
fn is_reserved(name: &str) -> bool {
    RESERVED_KEYS.contains(&name) || WRAPPER_KEYS.contains(&name)
}

fn config_warning(server: &str, what: &str) -> Warning {
    Warning { code: "mcp_config", message: format!("[toolnexus] MCP server \"{server}\": {what}") }
}

fn parse_server(name: &str, entry: &Value, warnings: &mut Vec<Warning>) -> ServerConfig {
    let mut server = ServerConfig {
        name: name.to_string(),
        enabled: true,
        timeout: Duration::from_millis(DEFAULT_TIMEOUT_MS),
        tools: None,
        transport: ServerTransport::Invalid(String::new()),
    };
    let Some(o) = entry.as_object() else {
        server.transport = ServerTransport::Invalid(format!("the entry must be an object, got {}", json_type(entry)));
        return server;
    };
    // As upstream: only a literal `disabled: true` or `enabled: false` turns a server off.
    server.enabled = !(o.get("disabled") == Some(&Value::Bool(true)) || o.get("enabled") == Some(&Value::Bool(false)));
    server.timeout = timeout_of(name, o.get("timeout"), warnings);
    server.tools = tools_of(name, o.get("tools"), warnings);
    server.transport = transport_of(o).unwrap_or_else(ServerTransport::Invalid);
    server
}

fn timeout_of(server: &str, v: Option<&Value>, warnings: &mut Vec<Warning>) -> Duration {
    let default = Duration::from_millis(DEFAULT_TIMEOUT_MS);
    match v {
        None | Some(Value::Null) => default,
        Some(Value::Number(n)) => {
            match n.as_f64().filter(|ms| *ms >= 0.0).and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok()) {
                Some(d) => d,
                None => {
                    warnings.push(config_warning(
                        server,
                        &format!("timeout {n} is not a usable number of ms — using {DEFAULT_TIMEOUT_MS}"),
                    ));
                    default
                }
            }
        }
        Some(other) => {
            warnings.push(config_warning(
                server,
                &format!("timeout must be a number of ms, got {} — using {DEFAULT_TIMEOUT_MS}", json_type(other)),
            ));
            default
        }
    }
}

fn tools_of(server: &str, v: Option<&Value>, warnings: &mut Vec<Warning>) -> Option<Vec<(String, bool)>> {
    match v {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(
            m.iter()
                .filter_map(|(k, v)| match v {
                    Value::Bool(b) => Some((k.clone(), *b)),
                    other => {
                        warnings.push(config_warning(
                            server,
                            &format!("tools filter \"{k}\" must be true or false, got {} — ignored", json_type(other)),
                        ));
                        None
                    }
                })
                .collect(),
        ),
        Some(other) => {
            warnings.push(config_warning(
                server,
                &format!("tools must be an object of tool name to true/false, got {} — ignored", json_type(other)),
            ));
            None
        }
    }
}

/// Remote when `type` says so or, without a `type` of `remote`/`local`, when `url` is a
/// string (upstream's inference); local otherwise.
fn transport_of(o: &Map<String, Value>) -> std::result::Result<ServerTransport, String> {
    let remote = match o.get("type").and_then(Value::as_str) {
        Some("remote") => true,
        Some("local") => false,
        _ => o.get("url").is_some_and(Value::is_string),
    };
    if remote {
        let url = match o.get("url") {
            Some(Value::String(u)) if !u.trim().is_empty() => u.trim().to_string(),
            Some(Value::String(_)) => return Err("\"url\" is empty".into()),
            None | Some(Value::Null) => return Err("a remote server needs \"url\"".into()),
            Some(other) => return Err(format!("\"url\" must be a string, got {}", json_type(other))),
        };
        return Ok(ServerTransport::Http(HttpServer { url, headers: string_map(o, "headers")? }));
    }
    let mut argv = match o.get("command") {
        Some(Value::String(c)) => vec![c.clone()],
        Some(Value::Array(a)) => strings(a, "command")?,
        None | Some(Value::Null) => return Err("needs \"url\" (a remote server) or \"command\" (a local one)".into()),
        Some(other) => {
            return Err(format!("\"command\" must be a string or an array of strings, got {}", json_type(other)))
        }
    };
    match o.get("args") {
        None | Some(Value::Null) => {}
        Some(Value::Array(a)) => argv.extend(strings(a, "args")?),
        Some(other) => return Err(format!("\"args\" must be an array of strings, got {}", json_type(other))),
    }
    let command = argv.first().filter(|c| !c.is_empty()).cloned().ok_or("\"command\" is empty")?;
    // As upstream: `environment` unless it is missing or empty, then `env`.
    let env = match string_map(o, "environment")? {
        env if !env.is_empty() => env,
        _ => string_map(o, "env")?,
    };
    let cwd = match o.get("cwd") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) if c.is_empty() => None,
        Some(Value::String(c)) => Some(PathBuf::from(c)),
        Some(other) => return Err(format!("\"cwd\" must be a string, got {}", json_type(other))),
    };
    Ok(ServerTransport::Stdio(StdioServer { command, args: argv.split_off(1), env, cwd }))
}

fn strings(a: &[Value], key: &str) -> std::result::Result<Vec<String>, String> {
    a.iter()
        .map(|v| {
            v.as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("\"{key}\" must hold strings only, found {}", json_type(v)))
        })
        .collect()
}

fn string_map(o: &Map<String, Value>, key: &str) -> std::result::Result<Vec<(String, String)>, String> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                other => Err(format!("\"{key}\" value for \"{k}\" must be a string, got {}", json_type(other))),
            })
            .collect(),
        Some(other) => Err(format!("\"{key}\" must be an object of strings, got {}", json_type(other))),
    }
}

/// `value` with each `${NAME}` expanded from the environment (an unset name becomes empty).
pub(crate) fn expand_env(value: &str) -> String {
    crate::http_tool::expand_env_with(value, |n| std::env::var(n).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> McpConfig {
        McpConfig::from_json(&v).unwrap().value
    }

    #[test]
    fn wrappers_and_the_raw_map_read_alike() {
        let servers = json!({"fs": {"command": ["npx", "-y", "pkg", "/tmp"]}});
        let names = |c: &McpConfig| c.servers.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
        for key in WRAPPER_KEYS {
            assert_eq!(names(&parse(json!({ key: servers.clone() }))), ["fs"]);
        }
        assert_eq!(names(&parse(servers.clone())), ["fs"]);
        // A null wrapper counts as absent (the JS `??`); the raw map then drops reserved keys.
        let raw = json!({"mcpServers": null, "builtins": false, "agents": {}, "a2a": {}, "mcpServer": {}, "fs": {"command": "x"}});
        assert_eq!(names(&parse(raw)), ["fs"]);
        // Reserved keys are servers like any other under a wrapper.
        assert_eq!(names(&parse(json!({"servers": {"builtins": {"command": "x"}}}))), ["builtins"]);
    }

    #[test]
    fn bad_roots_are_errors_naming_the_key() {
        assert!(McpConfig::from_json(&json!([])).unwrap_err().message().contains("must be a JSON object, got array"));
        let e = McpConfig::from_json(&json!({"mcpServers": []})).unwrap_err();
        assert!(e.message().contains("\"mcpServers\" must be an object of servers, got array"));
    }

    #[test]
    fn both_command_forms_and_the_environment() {
        let c = parse(json!({
            "a": {"command": ["node", "s.js", "--x"], "environment": {"K": "v"}, "cwd": "/tmp"},
            "b": {"command": "npx", "args": ["-y", "pkg"], "env": {"E": "1"}},
            "c": {"command": ["node"], "args": ["more"], "environment": {}, "env": {"F": "2"}},
        }));
        let stdio = |i: usize| match &c.servers[i].transport {
            ServerTransport::Stdio(s) => s.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!((stdio(0).command, stdio(0).args), ("node".into(), vec!["s.js".to_string(), "--x".into()]));
        assert_eq!(stdio(0).env, [("K".to_string(), "v".to_string())]);
        assert_eq!(stdio(0).cwd, Some(PathBuf::from("/tmp")));
        assert_eq!((stdio(1).command, stdio(1).args), ("npx".into(), vec!["-y".to_string(), "pkg".into()]));
        assert_eq!(stdio(1).env, [("E".to_string(), "1".to_string())]);
        assert_eq!(stdio(2).args, ["more"]);
        assert_eq!(stdio(2).env, [("F".to_string(), "2".to_string())]);
    }

    #[test]
    fn url_means_remote_unless_type_says_otherwise() {
        let c = parse(json!({
            "r": {"url": "https://x/mcp", "headers": {"Authorization": "Bearer ${T}"}},
            "t": {"type": "remote", "url": "https://y/mcp"},
            "l": {"type": "local", "url": "https://z", "command": "srv"},
            "v": {"type": "http", "url": "https://v/mcp"},
        }));
        assert!(matches!(&c.servers[0].transport, ServerTransport::Http(h)
            if h.url == "https://x/mcp" && h.headers == [("Authorization".to_string(), "Bearer ${T}".to_string())]));
        assert!(matches!(&c.servers[1].transport, ServerTransport::Http(_)));
        assert!(matches!(&c.servers[2].transport, ServerTransport::Stdio(s) if s.command == "srv"));
        assert!(matches!(&c.servers[3].transport, ServerTransport::Http(_)));
    }

    #[test]
    fn disabled_timeout_and_tools() {
        let c = parse(json!({
            "a": {"command": "x", "disabled": true},
            "b": {"command": "x", "enabled": false},
            "c": {"command": "x", "enabled": true, "disabled": false, "timeout": 500, "tools": {"t": true, "u": false}},
            "d": {"command": "x", "disabled": "yes"},
        }));
        let enabled: Vec<bool> = c.servers.iter().map(|s| s.enabled).collect();
        assert_eq!(enabled, [false, false, true, true]);
        assert_eq!(c.servers[0].timeout, Duration::from_millis(DEFAULT_TIMEOUT_MS));
        assert_eq!(c.servers[2].timeout, Duration::from_millis(500));
        assert_eq!(c.servers[2].tools, Some(vec![("t".to_string(), true), ("u".to_string(), false)]));
    }

    #[test]
    fn soft_mistakes_warn_and_fall_back() {
        let p = McpConfig::from_json(&json!({"a": {"command": "x", "timeout": "5s", "tools": {"t": 1, "u": true}}, "b": {"command": "x", "timeout": -1, "tools": []}})).unwrap();
        assert_eq!(p.value.servers[0].timeout, Duration::from_millis(DEFAULT_TIMEOUT_MS));
        assert_eq!(p.value.servers[0].tools, Some(vec![("u".to_string(), true)]));
        assert_eq!(p.value.servers[1].tools, None);
        let codes: Vec<&str> = p.warnings.iter().map(|w| w.code).collect();
        assert_eq!(codes, ["mcp_config"; 4]);
        assert!(p.warnings[0].message.contains("MCP server \"a\": timeout must be a number of ms, got string"));
    }

    #[test]
    fn malformed_entries_are_invalid_servers_not_errors() {
        let c = parse(json!({
            "n": 3, "none": {}, "cmd": {"command": 1}, "argv": {"command": ["x", 2]}, "empty": {"command": []},
            "hdr": {"url": "https://x", "headers": {"A": 1}}, "env": {"command": "x", "env": {"A": null}},
        }));
        let why: Vec<String> = c
            .servers
            .iter()
            .map(|s| match &s.transport {
                ServerTransport::Invalid(w) => w.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(why[0], "the entry must be an object, got number");
        assert_eq!(why[1], "needs \"url\" (a remote server) or \"command\" (a local one)");
        assert!(why[2].contains("\"command\" must be a string or an array of strings, got number"));
        assert!(why[3].contains("\"command\" must hold strings only, found number"));
        assert_eq!(why[4], "\"command\" is empty");
        assert!(why[5].contains("\"headers\" value for \"A\" must be a string"));
        assert!(why[6].contains("\"env\" value for \"A\" must be a string, got null"));
    }

    #[test]
    fn debug_never_shows_header_or_env_values() {
        let c = parse(
            json!({"r": {"url": "https://x", "headers": {"Authorization": "Bearer s3cret"}}, "l": {"command": "x", "env": {"K": "hidden"}}}),
        );
        let shown = format!("{c:?}");
        assert!(shown.contains("Authorization") && shown.contains("\"K\""));
        assert!(!shown.contains("s3cret") && !shown.contains("hidden"));
    }

    #[test]
    fn env_expansion_replaces_only_well_formed_names() {
        std::env::set_var("TN_MCP_TEST_TOKEN", "tok");
        assert_eq!(expand_env("Bearer ${TN_MCP_TEST_TOKEN}"), "Bearer tok");
        assert_eq!(
            expand_env("${TN_MCP_TEST_UNSET_XYZ}|${}|${a-b}|$X|${TN_MCP_TEST_TOKEN"),
            "|${}|${a-b}|$X|${TN_MCP_TEST_TOKEN"
        );
        assert_eq!(expand_env("${TN_MCP_TEST_TOKEN}${TN_MCP_TEST_TOKEN}"), "toktok");
    }

    #[test]
    fn from_file_names_the_path() {
        let e = McpConfig::from_file("/nonexistent/mcp.json").unwrap_err();
        assert!(e.message().contains("cannot read MCP config /nonexistent/mcp.json"));
    }
}
