//! Python's text forms of values, where upstream's output is defined by them.
//!
//! Upstream's reference port is Python: a skill's front-matter scalar is `str(value)`, an
//! HTTP tool sends `json.dumps(args)` and `urlencode(params)`, and a skill's base is
//! `Path.as_uri()`. The same input gives the same bytes here only if those forms are
//! reproduced exactly, so they live in one place.

use serde_json::Value;

/// Python's `str.isspace()`: Rust's `char::is_whitespace` plus the four ASCII separators
/// (`\x1c` to `\x1f`) Python also counts.
pub(crate) fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.strip()` with no argument.
pub(crate) fn strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// Python's `str.splitlines()`: every line boundary Python knows, `\r\n` as one.
pub(crate) fn splitlines(s: &str) -> Vec<&str> {
    let is_break = |c: char| {
        matches!(c, '\n' | '\r' | '\u{0b}' | '\u{0c}' | '\u{1c}'..='\u{1e}' | '\u{85}' | '\u{2028}' | '\u{2029}')
    };
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if !is_break(c) {
            continue;
        }
        out.push(&s[start..i]);
        start = i + c.len_utf8();
        if c == '\r' && chars.peek().map(|&(_, n)| n) == Some('\n') {
            chars.next();
            start += 1;
        }
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// Python's `repr()` of a float (also its `str()` and what `json.dumps` writes): the
/// shortest digits that read back as the same number, positional from 1e-4 up to 1e16 and
/// with `.0` when whole, scientific (`1e+16`, `1.5e-05`) outside that.
pub(crate) fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x == 0.0 {
        return format!("{sign}0.0");
    }
    if (-4..16).contains(&exp) {
        let point = exp + 1;
        let body = if point <= 0 {
            format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
        } else if point as usize >= digits.len() {
            format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
        } else {
            let (int, frac) = digits.split_at(point as usize);
            format!("{int}.{frac}")
        };
        return format!("{sign}{body}");
    }
    let (first, rest) = digits.split_at(1);
    let frac = if rest.is_empty() { String::new() } else { format!(".{rest}") };
    let esign = if exp < 0 { '-' } else { '+' };
    format!("{sign}{first}{frac}e{esign}{:02}", exp.unsigned_abs())
}

/// A JSON number as Python reads it back from `json.loads` and prints it.
fn number_text(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        n.to_string()
    } else {
        float_repr(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// Python's `str()` of a value as `json.loads` builds it: a string as itself, `True`,
/// `None`, a float as [`float_repr`], a list or dict as its `repr()`.
pub(crate) fn str_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => repr_of(other),
    }
}

/// Python's `repr()` of a value as `json.loads` builds it.
fn repr_of(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => number_text(n),
        Value::String(s) => repr_str(s),
        Value::Array(a) => format!("[{}]", a.iter().map(repr_of).collect::<Vec<_>>().join(", ")),
        Value::Object(o) => {
            let items: Vec<String> = o.iter().map(|(k, v)| format!("{}: {}", repr_str(k), repr_of(v))).collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}

/// Python's `repr()` of a string: single quotes unless only double quotes avoid escaping.
pub(crate) fn repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || (0x7f..=0xa0).contains(&(c as u32)) || c == '\u{ad}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if matches!(c, '\u{2028}' | '\u{2029}' | '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}' | '\u{feff}') =>
            {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python's `json.dumps(value)` with its defaults: `", "` and `": "` separators, every
/// character outside printable ASCII escaped (`ensure_ascii`).
pub(crate) fn json_dumps(v: &Value) -> String {
    let mut out = String::new();
    dump_into(v, &mut out);
    out
}

fn dump_into(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number_text(n)),
        Value::String(s) => dump_str(s, out),
        Value::Array(a) => {
            out.push('[');
            for (i, item) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                dump_into(item, out);
            }
            out.push(']');
        }
        Value::Object(o) => {
            out.push('{');
            for (i, (k, item)) in o.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                dump_str(k, out);
                out.push_str(": ");
                dump_into(item, out);
            }
            out.push('}');
        }
    }
}

fn dump_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
        }
    }
    out.push('"');
}

/// `urllib.parse.quote(bytes, safe=...)`: every byte outside the letters, digits, `_.-~`
/// and `safe` becomes `%XX`.
pub(crate) fn quote(bytes: &[u8], safe: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b"_.-~".contains(&b) || safe.contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `urllib.parse.quote_plus(s, safe="")`, as `urlencode` writes each key and value.
pub(crate) fn quote_plus(s: &str) -> String {
    quote(s.as_bytes(), b" ").replace(' ', "+")
}

/// `urllib.parse.urlencode(pairs)`.
pub(crate) fn urlencode(pairs: &[(String, String)]) -> String {
    pairs.iter().map(|(k, v)| format!("{}={}", quote_plus(k), quote_plus(v))).collect::<Vec<_>>().join("&")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_print_as_python_prints_them() {
        for (x, s) in [
            (1.0, "1.0"),
            (1000.0, "1000.0"),
            (0.1, "0.1"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (685230.15, "685230.15"),
            (-2.5, "-2.5"),
            (-0.0, "-0.0"),
            (1.5e-7, "1.5e-07"),
            (f64::INFINITY, "inf"),
        ] {
            assert_eq!(float_repr(x), s, "{x}");
        }
    }

    #[test]
    fn json_dumps_uses_pythons_separators_and_escapes() {
        let v = json!({"q": "x y", "n": 5, "f": 1.0, "u": "é\u{1F600}", "l": [true, null]});
        assert_eq!(json_dumps(&v), r#"{"q": "x y", "n": 5, "f": 1.0, "u": "\u00e9\ud83d\ude00", "l": [true, null]}"#);
    }

    #[test]
    fn str_of_matches_python() {
        assert_eq!(str_of(&json!("a")), "a");
        assert_eq!(str_of(&json!(true)), "True");
        assert_eq!(str_of(&json!(null)), "None");
        assert_eq!(str_of(&json!(2.0)), "2.0");
        assert_eq!(str_of(&json!(["a", 1, {"k": "it's"}])), r#"['a', 1, {'k': "it's"}]"#);
    }

    #[test]
    fn quoting_matches_urllib() {
        assert_eq!(quote("/tmp/a b/é~".as_bytes(), b"/"), "/tmp/a%20b/%C3%A9~");
        assert_eq!(quote(b"a/b", b""), "a%2Fb");
        assert_eq!(urlencode(&[("q".into(), "x y&z*".into())]), "q=x+y%26z%2A");
    }

    #[test]
    fn splitlines_knows_every_break() {
        assert_eq!(splitlines("a\r\nb\rc\u{2028}d\n"), ["a", "b", "c", "d"]);
        assert_eq!(splitlines(""), Vec::<&str>::new());
        assert_eq!(splitlines("a\n\nb"), ["a", "", "b"]);
    }
}
