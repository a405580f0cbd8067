//! `webfetch`: an HTTP GET through the engine's own transport, following redirects as
//! upstream's client does (at most [`MAX_REDIRECTS`]), the body returned as it came
//! (`format: "html"`) or with upstream's light HTML strip (`text`, `markdown`).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use regex::Regex;
use serde_json::{json, Value};

use super::{builtin, err, err_with, ok_with, py, Env};
use crate::tool::Tool;
use crate::transport::Http1Transport;
use crate::types::{ToolContext, ToolResult};

/// The timeout when the call gives none, in seconds.
const DEFAULT_TIMEOUT_S: f64 = 30.0;
/// Redirects followed before the last 3xx is the answer (urllib's limit).
const MAX_REDIRECTS: usize = 10;
/// The longest timeout honoured.
const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

pub(super) fn tool(env: &Arc<Env>) -> Tool {
    builtin(
        "webfetch",
        "HTTP GET a URL and return its body as text, markdown, or html.",
        json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "URL to fetch"},
                "format": {
                    "type": "string",
                    "enum": ["text", "markdown", "html"],
                    "description": "Response format (default markdown)"
                },
                "timeout": {"type": "number", "description": "Timeout in seconds (default 30)"}
            },
            "required": ["url"],
            "additionalProperties": false
        }),
        env,
        |_, args, ctx| Box::pin(run(args, ctx)),
    )
}

async fn run(args: Value, ctx: ToolContext) -> ToolResult {
    let url = py::arg_text(&args, "url");
    if url.is_empty() {
        return err("webfetch", "url is required");
    }
    let format = match args.get("format").and_then(Value::as_str) {
        Some("text") => "text",
        Some("html") => "html",
        _ => "markdown",
    };
    let seconds = py::num(py::arg(&args, "timeout")).unwrap_or(DEFAULT_TIMEOUT_S);
    let timeout = Duration::try_from_secs_f64(seconds.max(0.0)).unwrap_or(MAX_TIMEOUT).min(MAX_TIMEOUT);
    // One bound for the whole fetch, redirects included.
    let bounded = async {
        match tokio::time::timeout(timeout, fetch(&url, format, timeout)).await {
            Ok(r) => r,
            Err(_) => err("webfetch", format!("request timed out after {} ms", timeout.as_millis())),
        }
    };
    tokio::select! {
        r = bounded => r,
        () = ctx.cancel.cancelled() => err("webfetch", "cancelled"),
    }
}

async fn fetch(url: &str, format: &str, timeout: Duration) -> ToolResult {
    // A transport of its own: fetched sites share no pool with the provider's connections.
    let transport = Http1Transport::new();
    let headers = vec![
        ("user-agent".to_string(), format!("toolnexus/{}", crate::VERSION)),
        ("accept".to_string(), "*/*".to_string()),
        ("accept-encoding".to_string(), "identity".to_string()),
    ];
    let mut url = url.to_string();
    let mut redirects = 0;
    let response = loop {
        let response = match transport.get(&url, &headers, timeout).await {
            Ok(r) => r,
            Err(e) => return err("webfetch", e.message()),
        };
        let location = response.header("location").filter(|_| is_redirect(response.status));
        match location.and_then(|l| join_url(&url, l)) {
            Some(next) if redirects < MAX_REDIRECTS => {
                redirects += 1;
                url = next;
            }
            _ => break response,
        }
    };
    let status = response.status;
    if !(200..300).contains(&status) {
        return err_with(format!("HTTP {status}"), json!({"status": status}));
    }
    let body = String::from_utf8_lossy(&response.body);
    let output = if format == "html" { body.into_owned() } else { strip_html(&body) };
    ok_with(output, json!({"status": status, "format": format}))
}

fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// Where a `Location` points from `base`; `None` for a scheme other than http(s).
fn join_url(base: &str, location: &str) -> Option<String> {
    let location = location.trim();
    if location.starts_with("http://") || location.starts_with("https://") {
        return Some(location.to_string());
    }
    let (scheme, rest) = base.split_once("://")?;
    if let Some(net) = location.strip_prefix("//") {
        return Some(format!("{scheme}://{net}"));
    }
    if location.contains(':') && location.find(':') < location.find(['/', '?', '#']) {
        return None; // another scheme (`ftp:`, `mailto:`)
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let origin = format!("{scheme}://{authority}");
    let path = tail.split(['?', '#']).next().unwrap_or("");
    if location.starts_with('/') {
        return Some(format!("{origin}{location}"));
    }
    if location.starts_with('?') {
        return Some(format!("{origin}{}{location}", if path.is_empty() { "/" } else { path }));
    }
    let dir = match path.rfind('/') {
        Some(i) => &path[..=i],
        None => "/",
    };
    Some(format!("{origin}{dir}{location}"))
}

fn patterns() -> &'static [(Regex, &'static str)] {
    static P: OnceLock<Vec<(Regex, &'static str)>> = OnceLock::new();
    P.get_or_init(|| {
        [
            (r"(?i)<script[\s\S]*?</script>", ""),
            (r"(?i)<style[\s\S]*?</style>", ""),
            (r"<[^>]+>", ""),
            (r"[ \t]+\n", "\n"),
            (r"\n{3,}", "\n\n"),
        ]
        .into_iter()
        .filter_map(|(p, with)| Regex::new(p).ok().map(|re| (re, with)))
        .collect()
    })
}

/// Upstream's light HTML → text: scripts, styles and tags dropped, blank runs collapsed.
fn strip_html(html: &str) -> String {
    let mut text = html.to_string();
    for (re, with) in patterns() {
        text = re.replace_all(&text, *with).into_owned();
    }
    py::strip(&text).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_is_stripped_as_upstream_strips_it() {
        // python3: toolnexus.builtin._strip_html(...) on the same input.
        let html = "<html><head><style>p{x}</style><SCRIPT>a()</script></head>\n<body><h1>Title</h1>  \n\n\n\n<p>One &amp; two</p>\t\n</body></html>\n";
        assert_eq!(strip_html(html), "Title\n\nOne &amp; two");
    }

    #[test]
    fn redirects_resolve_against_the_url() {
        let j = |l: &str| join_url("http://h:1/a/b?q=1", l);
        assert_eq!(j("/c").as_deref(), Some("http://h:1/c"));
        assert_eq!(j("c").as_deref(), Some("http://h:1/a/c"));
        assert_eq!(j("?z").as_deref(), Some("http://h:1/a/b?z"));
        assert_eq!(j("//o/p").as_deref(), Some("http://o/p"));
        assert_eq!(j("https://x/y").as_deref(), Some("https://x/y"));
        assert_eq!(j("ftp://x/y"), None);
    }
}
