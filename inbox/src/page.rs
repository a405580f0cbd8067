//! The pages, rendered on the server as plain HTML: no script, no external asset, every
//! value from a store escaped (a request's prompt, URL and data are untrusted text).

use std::fmt::Write as _;

use serde_json::Value;
use toolnexus::memory::PendingRun;
use toolnexus::{answer_output_of, Answer, Error, Reason, Request, RunResult, RunStatus};

const STYLE: &str = "body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#1d1d1f;background:#fafafa}\
h1{font-size:1.6rem}h2{font-size:1.15rem;margin:0 0 .5rem}\
.run,.outcome{background:#fff;border:1px solid #d0d0d7;border-radius:8px;padding:1rem 1.25rem;margin:1rem 0}\
.kind{display:inline-block;background:#2f5fd0;color:#fff;border-radius:4px;padding:0 .45rem;margin-right:.5rem;font-size:.85rem}\
.prompt{font-size:1.1rem;white-space:pre-wrap}dl{display:grid;grid-template-columns:8rem 1fr;gap:.25rem .75rem}\
dt{color:#555}dd{margin:0;overflow-wrap:anywhere}pre{background:#f1f1f4;padding:.5rem;border-radius:4px;white-space:pre-wrap;overflow-wrap:anywhere;margin:0}\
form{display:inline-flex;gap:.4rem;align-items:center;margin:.5rem 1rem .25rem 0}\
button{font:inherit;padding:.3rem .8rem;border-radius:5px;border:1px solid #888;background:#eee;cursor:pointer}\
button.approve{background:#1f8f3a;color:#fff;border-color:#1f8f3a}button.decline{background:#b3261e;color:#fff;border-color:#b3261e}\
.status{font-weight:600}.error{border-color:#b3261e}.empty{color:#555}";

/// Escapes text for an HTML element or a quoted attribute.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A whole page around `body`.
fn layout(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>{}</title><style>{STYLE}</style></head>\
<body>{body}</body></html>",
        esc(title)
    )
}

/// How long ago `since_ms` was, in the largest whole unit.
pub(crate) fn age(now_ms: u64, since_ms: u64) -> String {
    let s = now_ms.saturating_sub(since_ms) / 1000;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min", s / 60),
        3600..=86_399 => format!("{} h", s / 3600),
        _ => format!("{} d", s / 86_400),
    }
}

/// The request's fields as a definition list; the URL is a link only when it is http(s).
fn request_fields(req: &Request, extra: &str) -> String {
    let mut dl = String::from("<dl>");
    if let Some(url) = req.url.as_deref().filter(|u| !u.is_empty()) {
        let lower = url.to_ascii_lowercase();
        let shown = if lower.starts_with("https://") || lower.starts_with("http://") {
            format!("<a class=\"url\" href=\"{0}\" rel=\"noopener noreferrer\" target=\"_blank\">{0}</a>", esc(url))
        } else {
            format!("<span class=\"url\">{}</span>", esc(url))
        };
        let _ = write!(dl, "<dt>URL</dt><dd>{shown}</dd>");
    }
    if let Some(data) = &req.data {
        let text = serde_json::to_string_pretty(&Value::Object(data.clone())).unwrap_or_default();
        let _ = write!(dl, "<dt>Data</dt><dd><pre class=\"data\">{}</pre></dd>", esc(&text));
    }
    if let Some(exp) = &req.expires_at {
        let _ = write!(dl, "<dt>Expires</dt><dd>{}</dd>", esc(exp));
    }
    let _ = write!(dl, "<dt>Request</dt><dd><code>{}</code></dd>{extra}</dl>", esc(&req.id));
    dl
}

/// The hidden fields every form carries.
fn hidden(csrf: &str, run: &PendingRun) -> String {
    format!(
        "<input type=\"hidden\" name=\"csrf\" value=\"{}\"><input type=\"hidden\" name=\"conversation\" value=\"{}\">\
<input type=\"hidden\" name=\"request\" value=\"{}\">",
        esc(csrf),
        esc(&run.id),
        esc(&run.request.id)
    )
}

/// An answer in words.
pub(crate) fn describe(answer: &Answer) -> String {
    match (answer.ok, answer_output_of(answer)) {
        (true, Some(out)) => format!("ok, {out:?}"),
        (true, None) => "ok".to_string(),
        (false, _) => format!("refused ({})", answer.reason.as_deref().unwrap_or("declined")),
    }
}

/// The list of waiting runs, each with its approve, decline and answer forms; a run whose
/// resume accepted an answer and did not finish (`accepted`, by index) offers that answer
/// again instead, the only one its store will take.
pub(crate) fn inbox(
    runs: &[PendingRun],
    accepted: &[Option<Answer>],
    now_ms: u64,
    csrf: &str,
    store_kind: &str,
) -> String {
    let mut body = format!(
        "<h1>Approvals inbox</h1><p class=\"summary\">{} waiting in the {} store.</p>",
        match runs.len() {
            1 => "1 run".to_string(),
            n => format!("{n} runs"),
        },
        esc(store_kind)
    );
    if runs.is_empty() {
        body.push_str("<p class=\"empty\">Nothing is waiting for an answer.</p>");
    }
    for (i, run) in runs.iter().enumerate() {
        let req = &run.request;
        let waiting = format!("<dt>Waiting</dt><dd class=\"age\">{}</dd>", age(now_ms, run.since_ms));
        let reasons: String =
            Reason::ALL.iter().map(|r| format!("<option value=\"{0}\">{0}</option>", r.as_str())).collect();
        let h = hidden(csrf, run);
        let controls = match accepted.get(i).and_then(Option::as_ref) {
            Some(a) => format!(
                "<p class=\"accepted\">An answer was accepted but the run did not finish resuming: {}.</p>\
<form method=\"post\" action=\"/answer\">{h}<button name=\"action\" value=\"retry\">Resume with that answer</button></form>",
                esc(&describe(a))
            ),
            None => format!(
                "<form method=\"post\" action=\"/answer\">{h}<button class=\"approve\" name=\"action\" value=\"approve\">Approve</button></form>\
<form method=\"post\" action=\"/answer\">{h}<label>Reason <select name=\"reason\">{reasons}</select></label>\
<button class=\"decline\" name=\"action\" value=\"decline\">Decline</button></form>\
<form method=\"post\" action=\"/answer\">{h}<label>Answer <input name=\"text\" required></label>\
<button name=\"action\" value=\"answer\">Send answer</button></form>"
            ),
        };
        let _ = write!(
            body,
            "<section class=\"run\" data-conversation=\"{conv}\"><h2><span class=\"kind\">{kind}</span>\
conversation <code>{conv}</code></h2><p class=\"prompt\">{prompt}</p>{fields}{controls}</section>",
            conv = esc(&run.id),
            kind = esc(&req.kind),
            prompt = esc(&req.prompt),
            fields = request_fields(req, &waiting),
        );
    }
    layout("Approvals inbox", &body)
}

/// What was sent, in words.
pub(crate) fn sent(action: &str, detail: &str) -> String {
    match action {
        "approve" => "Approved".to_string(),
        "decline" => format!("Declined ({detail})"),
        "retry" => format!("Resumed with the accepted answer: {detail}"),
        _ => format!("Answered: {detail}"),
    }
}

/// The resumed run's outcome: its status, final text, or the request it halted on next.
pub(crate) fn outcome(conversation: &str, sent: &str, result: &RunResult) -> String {
    let mut body = format!(
        "<h1>Run resumed</h1><section class=\"outcome\"><h2>Conversation <code>{}</code></h2>\
<p class=\"sent\">{}</p><p>Status: <span class=\"status\">{}</span></p>",
        esc(conversation),
        esc(sent),
        result.status.as_str()
    );
    match (&result.status, &result.pending) {
        (RunStatus::Pending, Some(req)) => {
            let _ = write!(
                body,
                "<p>The run is waiting again: <span class=\"kind\">{}</span></p><p class=\"prompt\">{}</p>{}",
                esc(&req.kind),
                esc(&req.prompt),
                request_fields(req, "")
            );
        }
        _ => {
            if let Some(limit) = &result.limit {
                let _ = write!(body, "<p>Stopped at the limit: <code>{}</code></p>", esc(limit));
            }
            let _ = write!(body, "<h2>Final text</h2><pre class=\"text\">{}</pre>", esc(&result.text));
        }
    }
    let _ = write!(
        body,
        "<p>Turns: {} · tool calls: {}</p></section><p><a href=\"/\">Back to the inbox</a></p>",
        result.turns, result.tool_call_count
    );
    layout("Run resumed", &body)
}

/// A resume the store refused: answered already, or being resumed right now.
pub(crate) fn conflict(conversation: &str, err: &Error) -> String {
    let body = format!(
        "<h1>Already resumed</h1><section class=\"outcome error\"><p>Conversation <code>{}</code> was resumed already, \
is being resumed, or holds another answer: this answer was not used.</p><p class=\"detail\">{}</p></section>\
<p><a href=\"/\">Back to the inbox</a></p>",
        esc(conversation),
        esc(err.message())
    );
    layout("Already resumed", &body)
}

/// A resume that failed for another reason; the store keeps an accepted answer, so the
/// same answer can be sent again.
pub(crate) fn failed(conversation: &str, err: &Error) -> String {
    let body = format!(
        "<h1>The resume failed</h1><section class=\"outcome error\"><p>Conversation <code>{}</code>: \
<span class=\"status\">{}</span></p><p class=\"detail\">{}</p></section><p><a href=\"/\">Back to the inbox</a></p>",
        esc(conversation),
        err.kind().name(),
        esc(err.message())
    );
    layout("The resume failed", &body)
}

/// A short page for a refused or malformed request.
pub(crate) fn message(title: &str, text: &str) -> String {
    layout(title, &format!("<h1>{}</h1><p>{}</p>", esc(title), esc(text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_escaped() {
        assert_eq!(esc("<script>\"a\" & 'b'</script>"), "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;");
    }

    #[test]
    fn ages_use_the_largest_unit() {
        assert_eq!(age(10_000, 1_000), "9 s");
        assert_eq!(age(200_000, 0), "3 min");
        assert_eq!(age(7_300_000, 0), "2 h");
        assert_eq!(age(3 * 86_400_000, 0), "3 d");
        assert_eq!(age(0, 5_000), "0 s");
    }

    #[test]
    fn only_http_urls_are_links() {
        let mut req = Request {
            id: "r".into(),
            kind: "login".into(),
            prompt: "p".into(),
            url: Some("javascript:alert(1)".into()),
            data: None,
            expires_at: None,
        };
        assert!(!request_fields(&req, "").contains("href"));
        req.url = Some("https://example.com/a?b=\"c\"".into());
        assert!(request_fields(&req, "").contains("href=\"https://example.com/a?b=&quot;c&quot;\""));
    }
}
