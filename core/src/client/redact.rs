//! What of a provider's error body may be shown. A 401/403 body is dropped (gateways reflect
//! credentials there); elsewhere account identifiers and every known secret are replaced, not
//! truncated, and the message form is capped.

/// What replaces a redacted value.
pub const REDACTED: &str = "«redacted»";

const IDENTIFIER_KEYS: [&str; 4] = ["user_id", "account_id", "org_id", "organization"];

/// The longest body excerpt put in an error message.
pub const MAX_ERROR_BODY: usize = 200;

/// The provider body as it may be read: empty for 401/403, otherwise with identifier values
/// and `secrets` replaced.
pub(crate) fn safe_error_body(status: u16, text: &str, secrets: &[String]) -> String {
    if status == 401 || status == 403 {
        return String::new();
    }
    replace_secrets(&redact_identifiers(text), secrets).trim().to_string()
}

/// `text` with every non-empty one of `secrets` replaced by [`REDACTED`].
pub(crate) fn replace_secrets(text: &str, secrets: &[String]) -> String {
    let mut s = text.to_string();
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        if s.contains(secret.as_str()) {
            s = s.replace(secret.as_str(), REDACTED);
        }
    }
    s
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
        assert_eq!(safe_error_body(401, "key sk-123", &[]), "");
        assert_eq!(safe_error_body(400, "bad key sk-123456", &["sk-123456".into()]), "bad key «redacted»");
    }

    #[test]
    fn cap_adds_an_ellipsis() {
        let long = "x".repeat(250);
        assert_eq!(capped(&long).chars().count(), MAX_ERROR_BODY + 1);
        assert_eq!(capped("short"), "short");
    }
}
