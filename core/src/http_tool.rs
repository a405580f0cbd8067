//! HTTP tools (upstream SPEC §7): a remote endpoint declared as a tool (source `http`).
//!
//! Each call builds the request from the model's arguments as upstream's Python port does:
//! `{name}` placeholders in the URL take (and consume) their arguments, percent-encoded;
//! the arguments named in `query`, and every argument of a `GET`, go to the query string;
//! what is left is the body of any other method but `HEAD` (`json`, `form` or `raw`). Header
//! values expand `${ENV}` from the environment at call time. A 2xx answer is the body text;
//! any other status is the error result `HTTP <status>: <body>`; a failure to get an answer
//! is an error result with its reason. Header values are secrets: no error text shows one.

use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::pystr::{json_dumps, quote, str_of, urlencode};
use crate::redact::Secrets;
use crate::spec_json::Fields;
use crate::tool::{Tool, ToolHandler, ToolSource};
use crate::transport::{Http1Transport, HttpResponse};
use crate::types::{json_type, ToolContext, ToolResult};

/// How long a call may take when the tool sets no `timeout_ms`.
pub const DEFAULT_HTTP_TIMEOUT_MS: u64 = 30_000;

/// How the arguments left after the URL and the query string are sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BodyMode {
    /// `json.dumps(args)`, `Content-Type: application/json` unless a header sets it.
    #[default]
    Json,
    /// `application/x-www-form-urlencoded`.
    Form,
    /// The text of the `body` argument alone, no content type.
    Raw,
}

/// What a 2xx answer becomes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ResultMode {
    /// The body text.
    #[default]
    Text,
    /// The body re-serialised as JSON (a body that is not JSON becomes a JSON string).
    Json,
    /// `<status>\n<body text>`.
    StatusText,
}

/// An HTTP tool's declaration.
#[derive(Clone, PartialEq)]
pub struct HttpToolSpec {
    /// The tool name (sanitised to `[a-zA-Z0-9_-]`).
    pub name: String,
    /// What the model is told the tool does.
    pub description: String,
    /// The HTTP method, any case (sent upper-cased).
    pub method: String,
    /// The URL, `http://` or `https://`, with `{name}` placeholders filled from the arguments.
    pub url: String,
    /// Static headers, in order; `${ENV_VAR}` in a value expands from the environment.
    pub headers: Vec<(String, String)>,
    /// Arguments sent in the query string whatever the method.
    pub query: Vec<String>,
    /// How the other arguments are sent.
    pub body: BodyMode,
    /// The arguments' JSON Schema; upstream's empty object schema when absent.
    pub input_schema: Option<Value>,
    /// How long one call may take; [`DEFAULT_HTTP_TIMEOUT_MS`] when absent.
    pub timeout_ms: Option<u64>,
    /// What a 2xx answer becomes.
    pub result_mode: ResultMode,
}

// Header values are secrets: Debug shows their names only.
impl std::fmt::Debug for HttpToolSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpToolSpec")
            .field("name", &self.name)
            .field("method", &self.method)
            .field("url", &self.url)
            .field("header_names", &self.headers.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>())
            .field("query", &self.query)
            .field("body", &self.body)
            .field("timeout_ms", &self.timeout_ms)
            .field("result_mode", &self.result_mode)
            .finish_non_exhaustive()
    }
}

/// Every key [`HttpToolSpec::from_json`] reads (snake_case; camelCase is read too).
pub const HTTP_TOOL_KEYS: [&str; 10] =
    ["name", "description", "method", "url", "headers", "query", "body", "input_schema", "timeout_ms", "result_mode"];

impl HttpToolSpec {
    /// A tool calling `method url` with no headers, JSON bodies and text results.
    pub fn new(name: impl Into<String>, method: impl Into<String>, url: impl Into<String>) -> HttpToolSpec {
        HttpToolSpec {
            name: name.into(),
            description: String::new(),
            method: method.into(),
            url: url.into(),
            headers: Vec::new(),
            query: Vec::new(),
            body: BodyMode::Json,
            input_schema: None,
            timeout_ms: None,
            result_mode: ResultMode::Text,
        }
    }

    /// Reads the keys of [`HTTP_TOOL_KEYS`]: `name`, `description`, `method` and `url` are
    /// required (as upstream's are), `body` is `"json"`, `"form"` or `"raw"`, `result_mode`
    /// `"text"`, `"json"` or `"status+text"`. An unknown key or a wrong type is an
    /// [`ErrorKind::InvalidArgument`] error naming the key (never a header's value).
    pub fn from_json(json: &Value) -> Result<HttpToolSpec> {
        let f = Fields::new("HTTP tool", json, &HTTP_TOOL_KEYS, true)?;
        let body = match f.string("body")?.as_deref() {
            None | Some("json") => BodyMode::Json,
            Some("form") => BodyMode::Form,
            Some("raw") => BodyMode::Raw,
            Some(other) => {
                return Err(Error::invalid(format!(
                    "HTTP tool key \"body\" must be \"json\", \"form\" or \"raw\", got {other:?}"
                )))
            }
        };
        let result_mode = match f.string("result_mode")?.as_deref() {
            None | Some("text") => ResultMode::Text,
            Some("json") => ResultMode::Json,
            Some("status+text") => ResultMode::StatusText,
            Some(other) => {
                return Err(Error::invalid(format!(
                    "HTTP tool key \"result_mode\" must be \"text\", \"json\" or \"status+text\", got {other:?}"
                )))
            }
        };
        let timeout_ms = match f.int("timeout_ms")? {
            None => None,
            Some(n) if n > 0 => Some(n as u64),
            Some(n) => return Err(Error::invalid(format!("HTTP tool key \"timeout_ms\" must be positive, got {n}"))),
        };
        let input_schema = match f.get("input_schema") {
            None => None,
            Some(v @ Value::Object(_)) => Some(v.clone()),
            Some(v) => return Err(f.wrong("input_schema", "an object", v)),
        };
        Ok(HttpToolSpec {
            name: f.required("name")?,
            description: f.required("description")?,
            method: f.required("method")?,
            url: f.required("url")?,
            headers: f
                .map_of("headers", "an object of strings", "a string", |v| v.as_str().map(String::from))?
                .unwrap_or_default(),
            query: f.strings("query")?.unwrap_or_default(),
            body,
            input_schema,
            timeout_ms,
            result_mode,
        })
    }
}

/// Expands `${NAME}` (letters, digits, `_`) in each header value from the environment; an
/// unset variable expands to nothing. The values are secrets: never log them.
pub fn expand_env_headers(headers: &[(String, String)]) -> Vec<(String, String)> {
    headers.iter().map(|(k, v)| (k.clone(), expand_env_with(v, |n| std::env::var(n).ok()))).collect()
}

/// [`expand_env_headers`] of a JSON object of strings, as hosts hand headers over. A value
/// that is not an object, or a header value that is not a string, is an
/// [`ErrorKind::InvalidArgument`] error naming the header (never showing a value).
pub fn expand_env_headers_json(headers: &Value) -> Result<Map<String, Value>> {
    let o = headers
        .as_object()
        .ok_or_else(|| Error::invalid(format!("headers must be an object of strings, got {}", json_type(headers))))?;
    let mut pairs = Vec::with_capacity(o.len());
    for (k, v) in o {
        let v =
            v.as_str().ok_or_else(|| Error::invalid(format!("header {k:?} must be a string, got {}", json_type(v))))?;
        pairs.push((k.clone(), v.to_string()));
    }
    Ok(expand_env_headers(&pairs).into_iter().map(|(k, v)| (k, Value::String(v))).collect())
}

/// `value` with each `${NAME}` replaced by `lookup(NAME)` (nothing when `None`): the one
/// expansion of header values, for HTTP tools and MCP servers alike.
pub(crate) fn expand_env_with(value: &str, mut lookup: impl FnMut(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let len = after.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
        if len > 0 && after.as_bytes().get(len) == Some(&b'}') {
            out.push_str(&lookup(&after[..len]).unwrap_or_default());
            rest = &after[len + 1..];
        } else {
            out.push_str("${");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// The schema upstream declares for a tool without one.
fn empty_http_schema() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

/// The HTTP tool `spec` declares. A method that is not an HTTP token, or a URL that is not
/// `http://` or `https://`, is an [`ErrorKind::InvalidArgument`] error.
pub fn http_tool(spec: HttpToolSpec) -> Result<Tool> {
    let method = spec.method.to_ascii_uppercase();
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if method.is_empty() || !method.bytes().all(token) {
        return Err(Error::invalid(format!("HTTP tool {:?}: invalid method {:?}", spec.name, spec.method)));
    }
    let mut url = spec.url.clone();
    let scheme_end = url.find("://").unwrap_or(0);
    url.replace_range(..scheme_end, &url[..scheme_end].to_ascii_lowercase());
    if !url.starts_with("http://") && !url.starts_with("https://") {
        return Err(Error::invalid(format!("HTTP tool {:?}: the URL must start with http:// or https://", spec.name)));
    }
    let schema = spec.input_schema.clone().unwrap_or_else(empty_http_schema);
    let (name, description) = (spec.name.clone(), spec.description.clone());
    let handler = HttpHandler { spec: HttpToolSpec { method, url, ..spec } };
    Ok(Tool::new(&name, &description, schema, ToolSource::Http, std::sync::Arc::new(handler)))
}

struct HttpHandler {
    spec: HttpToolSpec,
}

/// One call's request, before it is sent.
#[derive(Debug, PartialEq)]
struct Prepared {
    url: String,
    headers: Vec<(String, String)>,
    body: Option<Vec<u8>>,
    /// The values expanded from the environment (secrets, like the header values).
    expanded: Vec<String>,
}

/// `{name}` placeholders filled from `args`, percent-encoded; the arguments they name are
/// removed afterwards (a placeholder may appear twice).
fn fill_url(template: &str, args: &mut Map<String, Value>) -> String {
    let mut consumed = Vec::new();
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(at) = rest.find('{') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let len: usize = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').map(char::len_utf8).sum();
        if len > 0 && after[len..].starts_with('}') {
            let key = &after[..len];
            let value = args.get(key).filter(|v| !v.is_null()).map(str_of).unwrap_or_default();
            out.push_str(&quote(value.as_bytes(), b""));
            consumed.push(key.to_string());
            rest = &after[len + 1..];
        } else {
            out.push('{');
            rest = after;
        }
    }
    out.push_str(rest);
    for key in consumed {
        args.shift_remove(&key);
    }
    out
}

fn prepare(spec: &HttpToolSpec, args: Value, env: impl Fn(&str) -> Option<String>) -> Prepared {
    let mut args = match args {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    let mut url = fill_url(&spec.url, &mut args);
    let get = spec.method == "GET";
    let mut params = Vec::new();
    args.retain(|k, v| {
        if get || spec.query.contains(k) {
            params.push((k.clone(), str_of(v)));
            false
        } else {
            true
        }
    });
    if !params.is_empty() {
        url.push(if url.contains('?') { '&' } else { '?' });
        url.push_str(&urlencode(&params));
    }
    let mut expanded = Vec::new();
    let mut headers: Vec<(String, String)> = spec
        .headers
        .iter()
        .map(|(k, v)| {
            let value = expand_env_with(v, |n| {
                let found = env(n);
                expanded.extend(found.clone());
                found
            });
            (k.to_ascii_lowercase(), value)
        })
        .collect();
    let mut body = None;
    if !get && spec.method != "HEAD" && !args.is_empty() {
        let content_type = match spec.body {
            BodyMode::Json => {
                body = Some(json_dumps(&Value::Object(args)).into_bytes());
                Some("application/json")
            }
            BodyMode::Form => {
                let pairs: Vec<(String, String)> = args.iter().map(|(k, v)| (k.clone(), str_of(v))).collect();
                body = Some(urlencode(&pairs).into_bytes());
                Some("application/x-www-form-urlencoded")
            }
            BodyMode::Raw => {
                body = Some(args.get("body").map(str_of).unwrap_or_default().into_bytes());
                None
            }
        };
        if let Some(ct) = content_type {
            if !headers.iter().any(|(k, _)| k == "content-type") {
                headers.push(("content-type".into(), ct.into()));
            }
        }
    }
    Prepared { url, headers, body, expanded }
}

/// Sends one request through the engine's own transport: a connection per call, so a tool
/// shares no socket with the provider's pool nor, after a fork, with a parent process.
async fn send(
    method: &str,
    url: &str,
    headers: &[(String, String)],
    body: Option<Vec<u8>>,
    timeout: Duration,
) -> Result<HttpResponse> {
    Http1Transport::new().send(method, url, headers, body.as_deref(), timeout).await
}

impl ToolHandler for HttpHandler {
    fn execute(&self, args: Value, ctx: ToolContext) -> futures_util::future::BoxFuture<'static, Result<ToolResult>> {
        let p = prepare(&self.spec, args, |n| std::env::var(n).ok());
        let method = self.spec.method.clone();
        let result_mode = self.spec.result_mode;
        let mut timeout = Duration::from_millis(self.spec.timeout_ms.unwrap_or(DEFAULT_HTTP_TIMEOUT_MS));
        if let Some(left) = ctx.timeout {
            timeout = timeout.min(left);
        }
        Box::pin(async move {
            let secrets = Secrets::of_values(
                p.headers.iter().map(|(_, v)| v.as_str()).chain(p.expanded.iter().map(String::as_str)),
            );
            let sent = tokio::select! {
                r = send(&method, &p.url, &p.headers, p.body, timeout) => r,
                () = ctx.cancel.cancelled() => Err(Error::new(ErrorKind::Cancelled, "the HTTP request was cancelled")),
            };
            let response = match sent {
                Ok(r) => r,
                Err(e) => return Ok(ToolResult::error(secrets.scrub(e.message()))),
            };
            let status = response.status;
            let text = String::from_utf8_lossy(&response.body);
            let mut metadata = Map::new();
            metadata.insert("status".into(), json!(status));
            if !(200..300).contains(&status) {
                let output = format!("HTTP {status}: {}", secrets.scrub(&text));
                return Ok(ToolResult { output, is_error: true, metadata: Some(metadata), parts: None });
            }
            let output = match result_mode {
                ResultMode::Text => text.into_owned(),
                ResultMode::StatusText => format!("{status}\n{text}"),
                ResultMode::Json => match serde_json::from_str::<Value>(&text) {
                    Ok(v) => json_dumps(&v),
                    Err(_) => json_dumps(&Value::String(text.into_owned())),
                },
            };
            Ok(ToolResult { output, is_error: false, metadata: Some(metadata), parts: None })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(method: &str, url: &str) -> HttpToolSpec {
        let mut s = HttpToolSpec::new("t", method, url);
        s.method = s.method.to_ascii_uppercase();
        s
    }

    fn env(n: &str) -> Option<String> {
        (n == "TOKEN").then(|| "s3cr3t-value".to_string())
    }

    #[test]
    fn env_expansion_matches_upstream() {
        let lookup = |n: &str| (n == "A").then(|| "x".to_string());
        assert_eq!(expand_env_with("${A}y${B}", lookup), "xy");
        assert_eq!(expand_env_with("${A-B} ${} $A ${A", lookup), "${A-B} ${} $A ${A");
    }

    #[test]
    fn get_puts_every_argument_in_the_query_after_the_placeholders() {
        // As upstream's Python port sends it for the same arguments.
        let args = json!({"id": 5, "q": "x y", "f": 1.0, "b": true, "z": null, "l": [1, "a"]});
        let p = prepare(&spec("GET", "http://h/posts/{id}"), args, env);
        assert_eq!(p.url, "http://h/posts/5?q=x+y&f=1.0&b=True&z=None&l=%5B1%2C+%27a%27%5D");
        assert_eq!(p.body, None);
        let p = prepare(&spec("GET", "http://h/a?k=1&p={path}"), json!({"path": "a/b c", "z": null}), env);
        assert_eq!(p.url, "http://h/a?k=1&p=a%2Fb%20c&z=None");
        // A missing placeholder argument is empty; braces that are not a placeholder stay.
        assert_eq!(prepare(&spec("GET", "http://h/{x}/{a-b}"), json!({}), env).url, "http://h//{a-b}");
        assert_eq!(prepare(&spec("GET", "http://h/{x}/{x}"), json!({"x": 1}), env).url, "http://h/1/1");
    }

    #[test]
    fn other_methods_send_the_rest_as_the_body() {
        let mut s = spec("POST", "http://h/items/{id}");
        s.query = vec!["page".into()];
        s.headers = vec![("Authorization".into(), "Bearer ${TOKEN}".into())];
        let p = prepare(&s, json!({"id": "a", "page": 2, "title": "é", "n": [1, 2]}), env);
        assert_eq!(p.url, "http://h/items/a?page=2");
        assert_eq!(p.body.as_deref(), Some(br#"{"title": "\u00e9", "n": [1, 2]}"#.as_slice()));
        assert_eq!(
            p.headers,
            [
                ("authorization".to_string(), "Bearer s3cr3t-value".to_string()),
                ("content-type".to_string(), "application/json".to_string())
            ]
        );
        assert_eq!(p.expanded, ["s3cr3t-value"]);
        s.body = BodyMode::Form;
        s.headers = vec![("Content-Type".into(), "text/x".into())];
        let p = prepare(&s, json!({"a": "x&y", "b": false}), env);
        assert_eq!(p.body.as_deref(), Some(b"a=x%26y&b=False".as_slice()));
        assert_eq!(p.headers, [("content-type".to_string(), "text/x".to_string())]);
        s.body = BodyMode::Raw;
        let p = prepare(&s, json!({"body": "raw text", "other": 1}), env);
        assert_eq!(p.body.as_deref(), Some(b"raw text".as_slice()));
        // No arguments left: no body; HEAD never has one.
        assert_eq!(prepare(&spec("POST", "http://h/{id}"), json!({"id": 1}), env).body, None);
        assert_eq!(prepare(&spec("HEAD", "http://h/"), json!({"a": 1}), env).body, None);
    }

    #[test]
    fn specs_are_read_strictly() {
        let s = HttpToolSpec::from_json(&json!({
            "name": "get_post", "description": "d", "method": "get", "url": "http://h/{id}",
            "headers": {"X-Key": "${K}"}, "query": ["q"], "body": "form", "inputSchema": {"type": "object"},
            "timeoutMs": 500, "resultMode": "status+text"
        }))
        .unwrap();
        assert_eq!((s.body, s.result_mode, s.timeout_ms), (BodyMode::Form, ResultMode::StatusText, Some(500)));
        assert_eq!(s.headers, [("X-Key".to_string(), "${K}".to_string())]);
        for bad in [
            json!({"name": "n", "description": "", "method": "GET"}),
            json!({"name": "n", "description": "", "method": "GET", "url": "u", "body": "xml"}),
            json!({"name": "n", "description": "", "method": "GET", "url": "u", "timeout_ms": 0}),
            json!({"name": "n", "description": "", "method": "GET", "url": "u", "headers": {"A": 1}}),
            json!({"name": "n", "description": "", "method": "GET", "url": "u", "nope": 1}),
        ] {
            assert_eq!(HttpToolSpec::from_json(&bad).unwrap_err().kind(), ErrorKind::InvalidArgument, "{bad}");
        }
        let t = http_tool(
            HttpToolSpec::from_json(&json!({"name": "a.b", "description": "d", "method": "get",
            "url": "HTTP://h/"}))
            .unwrap(),
        )
        .unwrap();
        assert_eq!((t.name(), t.source()), ("a_b", ToolSource::Http));
        assert_eq!(t.input_schema(), &empty_http_schema());
        assert!(http_tool(HttpToolSpec::new("t", "GE T", "http://h/")).is_err());
        assert!(http_tool(HttpToolSpec::new("t", "GET", "ftp://h/")).is_err());
    }
}
