//! The one redaction every error text passes through before it leaves the engine.
//!
//! A provider's error body: a 401/403 body is dropped (gateways reflect credentials there);
//! elsewhere account identifiers and every configured secret are replaced, not truncated,
//! and the message form is capped. Every error message of every kind: the configured
//! secrets are replaced ([`Secrets`]), since a gateway or a host may echo them anywhere.

/// What replaces a redacted value.
pub const REDACTED: &str = "«redacted»";

/// A secret at least this long is replaced wherever it appears; a shorter one only where it
/// stands as a whole token, so that a short value such as `1` or a one-letter test key does
/// not erase every digit or letter of a message.
const SUBSTRING_MIN: usize = 8;

/// The values a run must never show: the API key and every configured header value.
///
/// The rule, for every error text of every kind: each of them, and for a value made of a
/// scheme and a credential (`Bearer abc`) the credential alone too, is replaced wherever it
/// appears when it has at least 8 characters, and where it stands as a whole token (not
/// inside a longer run of letters and digits) when it is shorter.
#[derive(Clone, Debug, Default)]
pub(crate) struct Secrets {
    /// Replaced wherever they appear.
    anywhere: Vec<String>,
    /// Replaced where they stand as a token.
    tokens: Vec<String>,
}

impl Secrets {
    /// The secrets of a run: its API key and its configured headers.
    pub fn of(key: Option<&str>, headers: &[(String, String)]) -> Secrets {
        Secrets::of_values(key.into_iter().chain(headers.iter().map(|(_, v)| v.as_str())))
    }

    /// The secrets of any list of values (header values, values expanded from the
    /// environment), by the same rule as [`Secrets::of`].
    pub fn of_values<'a>(values: impl IntoIterator<Item = &'a str>) -> Secrets {
        let mut s = Secrets::default();
        for value in values {
            let value = value.trim();
            s.add(value);
            if let Some((_, credential)) = value.split_once(char::is_whitespace) {
                s.add(credential.trim());
            }
        }
        // Longest first, so a secret that contains another is replaced whole.
        s.anywhere.sort_by_key(|v| std::cmp::Reverse(v.len()));
        s.anywhere.dedup();
        s
    }

    fn add(&mut self, value: &str) {
        if value.chars().count() >= SUBSTRING_MIN {
            self.anywhere.push(value.to_string());
        } else if !value.is_empty() {
            self.tokens.push(value.to_string());
        }
    }

    /// `text` with every secret replaced by [`REDACTED`].
    pub fn scrub(&self, text: &str) -> String {
        let mut s = text.to_string();
        for secret in &self.anywhere {
            if s.contains(secret.as_str()) {
                s = s.replace(secret.as_str(), REDACTED);
            }
        }
        for secret in &self.tokens {
            s = replace_tokens(&s, secret);
        }
        s
    }
}

/// `text` with each occurrence of `token` that is not inside a longer run of letters and
/// digits replaced by [`REDACTED`].
fn replace_tokens(text: &str, token: &str) -> String {
    let alnum = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    // A token's edge that is itself a letter or digit must meet a non-word neighbour.
    let open_start = !alnum(token.chars().next());
    let open_end = !alnum(token.chars().next_back());
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (i, _) in text.match_indices(token) {
        if i < copied {
            continue; // overlaps the occurrence just replaced
        }
        let before = text[..i].chars().next_back();
        let after = text[i + token.len()..].chars().next();
        if (open_start || !alnum(before)) && (open_end || !alnum(after)) {
            out.push_str(&text[copied..i]);
            out.push_str(REDACTED);
            copied = i + token.len();
        }
    }
    out.push_str(&text[copied..]);
    out
}

const IDENTIFIER_KEYS: [&str; 4] = ["user_id", "account_id", "org_id", "organization"];

/// The longest body excerpt put in an error message.
pub const MAX_ERROR_BODY: usize = 200;

/// A provider's error body as it may be read: empty for 401/403 (gateways reflect the
/// credential there), otherwise the whole body with account-identifier values (`user_id`,
/// `account_id`, `org_id`, `organization`) replaced by [`REDACTED`], never capped.
pub fn safe_error_body(status: u16, text: &str) -> String {
    safe_error_body_with(status, text, &Secrets::default())
}

/// [`safe_error_body`] capped at [`MAX_ERROR_BODY`] characters (plus `…`): the form an error
/// message shows.
pub fn capped_error_body(status: u16, text: &str) -> String {
    capped(&safe_error_body(status, text))
}

/// The message of an HTTP error for a provider body: `LLM <status>: <capped body>`, or
/// `LLM <status>` when nothing of the body may be shown.
pub fn http_error_message(status: u16, text: &str) -> String {
    message_for(status, &capped_error_body(status, text))
}

pub(crate) fn message_for(status: u16, shown: &str) -> String {
    if shown.is_empty() {
        format!("LLM {status}")
    } else {
        format!("LLM {status}: {shown}")
    }
}

/// [`safe_error_body`] with the run's `secrets` replaced too.
pub(crate) fn safe_error_body_with(status: u16, text: &str, secrets: &Secrets) -> String {
    if status == 401 || status == 403 {
        return String::new();
    }
    secrets.scrub(&redact_identifiers(text)).trim().to_string()
}

/// [`safe_error_body`] capped at [`MAX_ERROR_BODY`] characters, for a message.
pub(crate) fn capped(body: &str) -> String {
    if body.chars().count() <= MAX_ERROR_BODY {
        return body.to_string();
    }
    let mut s: String = body.chars().take(MAX_ERROR_BODY).collect();
    s.push('…');
    s
}

/// Replaces the values of account-identifier keys in JSON-ish text, keeping the keys.
pub(crate) fn redact_identifiers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'scan: while !rest.is_empty() {
        for key in IDENTIFIER_KEYS {
            let quoted = format!("\"{key}\"");
            if let Some(after_key) = rest.strip_prefix(quoted.as_str()) {
                let trimmed = after_key.trim_start();
                if let Some(after_colon) = trimmed.strip_prefix(':') {
                    let value_start = after_colon.trim_start();
                    let consumed_ws = after_key.len() - value_start.len();
                    let value_len = json_value_len(value_start);
                    if value_len > 0 {
                        out.push_str(&quoted);
                        out.push_str(&after_key[..consumed_ws]);
                        out.push('"');
                        out.push_str(REDACTED);
                        out.push('"');
                        rest = &value_start[value_len..];
                        continue 'scan;
                    }
                }
            }
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            out.push(c);
        }
        rest = chars.as_str();
    }
    out
}

/// The byte length of the JSON string or bare scalar at the start of `s`.
fn json_value_len(s: &str) -> usize {
    let bytes = s.as_bytes();
    if bytes.first() == Some(&b'"') {
        let mut i = 1;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => i += 2,
                b'"' => return i + 1,
                _ => i += 1,
            }
        }
        return bytes.len();
    }
    s.find(|c: char| c == ',' || c == '}' || c.is_whitespace()).unwrap_or(s.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_replaced_keys_kept() {
        let body = r#"{"error":"quota","user_id": "u-\"9\"", "org_id":42,"organization":"acme"}"#;
        assert_eq!(
            redact_identifiers(body),
            r#"{"error":"quota","user_id": "«redacted»", "org_id":"«redacted»","organization":"«redacted»"}"#
        );
    }

    #[test]
    fn auth_failures_drop_the_body_and_secrets_never_show() {
        let none = Secrets::default();
        assert_eq!(safe_error_body_with(401, "key sk-123", &none), "");
        let key = Secrets::of(Some("sk-123456"), &[]);
        assert_eq!(safe_error_body_with(400, "bad key sk-123456", &key), "bad key «redacted»");
    }

    fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn every_configured_secret_is_hidden_whatever_its_length() {
        let s = Secrets::of(
            Some("k1"),
            &headers(&[
                ("X-Api-Key", "ab"),
                ("Authorization", "Bearer t0k"),
                ("X-Team", "blue"),
                ("X-Long", "0123456789"),
            ]),
        );
        // Short values wherever they stand alone, the credential of `Bearer x` too.
        assert_eq!(s.scrub("use k1, not xk1x"), "use «redacted», not xk1x");
        assert_eq!(s.scrub("got ab and Bearer t0k and t0k"), "got «redacted» and «redacted» and «redacted»");
        assert_eq!(s.scrub("team blue, bluebird"), "team «redacted», bluebird");
        // Long ones anywhere, inside a word too.
        assert_eq!(s.scrub("id=x0123456789y"), "id=x«redacted»y");
        // A one-letter test key leaves the words around it alone.
        let k = Secrets::of(Some("k"), &[]);
        assert_eq!(k.scrub("failed to look up k"), "failed to look up «redacted»");
    }

    #[test]
    fn short_values_do_not_erase_unrelated_text() {
        let s = Secrets::of(None, &headers(&[("X-Retry", "1"), ("anthropic-beta", "tools")]));
        assert_eq!(
            s.scrub("LLM 401: limit 1000, retry in 1 s, toolsets"),
            "LLM 401: limit 1000, retry in «redacted» s, toolsets"
        );
        assert_eq!(s.scrub("1"), "«redacted»");
    }

    #[test]
    fn cap_adds_an_ellipsis() {
        let long = "x".repeat(250);
        assert_eq!(capped(&long).chars().count(), MAX_ERROR_BODY + 1);
        assert_eq!(capped("short"), "short");
    }
}
