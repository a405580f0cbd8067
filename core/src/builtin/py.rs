//! Python's value rules, where upstream's built-ins lean on them and the model sees the
//! result: which argument counts as given (`args.get("path") or ""`), how a non-string
//! becomes text (`str(x)`), how the `question` answer is printed (`json.dumps`), and how an
//! `OSError` reads (`[Errno 2] No such file or directory: '/x'`). Upstream 0.21's Python
//! package is the reference for the built-ins' texts, so the same input gives the same text.

use std::fmt::Write as _;
use std::io;
use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};

/// Python truthiness of a JSON value: `null`, `false`, `0`, `""`, `[]` and `{}` are false.
pub(crate) fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// `str(args.get(key) or "")`: the argument as text, empty when absent or falsy.
pub(crate) fn arg_text(args: &Value, key: &str) -> String {
    match args.get(key) {
        Some(v) if truthy(v) => text(v),
        _ => String::new(),
    }
}

/// `args.get(key)`, with `null` counting as absent (Python's `None`).
pub(crate) fn arg<'a>(args: &'a Value, key: &str) -> Option<&'a Value> {
    args.get(key).filter(|v| !v.is_null())
}

/// Python `str(x)` of a JSON value (`None`, `True`, `1.0`, `['a']`).
pub(crate) fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => repr(other),
    }
}

/// `_coerce_str`: a string as it is, `None` as `""`, anything else as `str(x)`.
pub(crate) fn coerce_str(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(v) => text(v),
    }
}

/// Python `repr(x)` of a JSON value.
pub(crate) fn repr(v: &Value) -> String {
    let mut out = String::new();
    write_repr(&mut out, v);
    out
}

fn write_repr(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => out.push_str(&repr_str(s)),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, x);
            }
            out.push(']');
        }
        Value::Object(o) => {
            out.push('{');
            for (i, (k, x)) in o.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&repr_str(k));
                out.push_str(": ");
                write_repr(out, x);
            }
            out.push('}');
        }
    }
}

/// Python `repr(s)` of a string: single quotes unless it holds one and no double quote.
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
            c if (c as u32) < 0x20 || (0x7f..0xa0).contains(&(c as u32)) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// `_num`: a number that is not a bool, as a float.
pub(crate) fn num(v: Option<&Value>) -> Option<f64> {
    match v {
        Some(Value::Number(n)) => n.as_f64(),
        _ => None,
    }
}

/// Python `int(x)` of a float: truncated toward zero (saturating where Python would not need to).
pub(crate) fn int(f: f64) -> i64 {
    f.trunc() as i64
}

/// A JSON number as Python prints it: integers as they are, floats as `repr(float)`.
fn number(n: &serde_json::Number) -> String {
    if n.is_f64() {
        n.as_f64().map(float_repr).unwrap_or_else(|| n.to_string())
    } else {
        n.to_string()
    }
}

/// Python `repr(float)`: the shortest digits that read back, in fixed notation from 1e-4 up
/// to 1e16 and `1.5e-05` style outside it.
pub(crate) fn float_repr(f: f64) -> String {
    if !f.is_finite() {
        return if f.is_nan() {
            "NaN".into()
        } else if f > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if f.is_sign_negative() { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let body = if exp >= 0 {
            let point = exp as usize + 1;
            if digits.len() > point {
                format!("{}.{}", &digits[..point], &digits[point..])
            } else {
                format!("{}{}.0", digits, "0".repeat(point - digits.len()))
            }
        } else {
            format!("0.{}{}", "0".repeat((-exp - 1) as usize), digits)
        };
        format!("{sign}{body}")
    } else {
        let m = if digits.len() > 1 { format!("{}.{}", &digits[..1], &digits[1..]) } else { digits };
        let e_sign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{m}e{e_sign}{:02}", exp.abs())
    }
}

/// `json.dumps(v)` with Python's defaults: `", "` and `": "` separators, every non-ASCII
/// character escaped, floats as `repr(float)`.
pub(crate) fn dumps(v: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, v);
    out
}

fn write_json(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => write_json_str(out, s),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json(out, x);
            }
            out.push(']');
        }
        Value::Object(o) => write_json_object(out, o),
    }
}

fn write_json_object(out: &mut String, o: &Map<String, Value>) {
    out.push('{');
    for (i, (k, x)) in o.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_json_str(out, k);
        out.push_str(": ");
        write_json(out, x);
    }
    out.push('}');
}

fn write_json_str(out: &mut String, s: &str) {
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
                    let _ = write!(out, "\\u{u:04x}");
                }
            }
        }
    }
    out.push('"');
}

/// Python's type name of a JSON value, for the texts of its `TypeError`s.
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// `str.strip()`: Python's whitespace, which adds the four separators `\x1c`-`\x1f` to Rust's.
pub(crate) fn strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

/// An `OSError` as Python prints it: `[Errno 2] No such file or directory: '/x'`. An error
/// with no OS code prints as Rust's.
pub(crate) fn os_error(e: &io::Error, path: &Path) -> String {
    match e.raw_os_error() {
        Some(code) => {
            let full = e.to_string();
            let suffix = format!(" (os error {code})");
            let strerror = full.strip_suffix(&suffix).unwrap_or(&full);
            format!("[Errno {code}] {strerror}: {}", repr_str(&path.to_string_lossy()))
        }
        None => e.to_string(),
    }
}

/// The path made absolute against the working directory, `..` kept (for resolving it).
pub(crate) fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    }
}

/// `os.path.abspath(p)`: absolute against the working directory, `.` and `..` folded lexically.
pub(crate) fn abspath(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in absolute(p).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dumps_matches_python_json_dumps() {
        // python3 -c 'import json; print(json.dumps({...}))'
        let v = json!({"a": [1, 2.0, 1e16, 1.5e-5, 0.0001, -0.0, "é😀\u{7f}\u{1f}", null, true]});
        assert_eq!(
            dumps(&v),
            r#"{"a": [1, 2.0, 1e+16, 1.5e-05, 0.0001, -0.0, "\u00e9\ud83d\ude00\u007f\u001f", null, true]}"#
        );
    }

    #[test]
    fn floats_print_as_python_repr() {
        for (f, want) in [
            (123456789012345680.0, "1.2345678901234568e+17"),
            (1e22, "1e+22"),
            (12345678.9, "12345678.9"),
            (0.5, "0.5"),
            (100.0, "100.0"),
            (1e15, "1000000000000000.0"),
            (1e-5, "1e-05"),
        ] {
            assert_eq!(float_repr(f), want);
        }
    }

    #[test]
    fn str_and_repr_match_python() {
        assert_eq!(text(&json!({"a": [1, true, null, "x"]})), "{'a': [1, True, None, 'x']}");
        assert_eq!(repr_str("it's"), "\"it's\"");
        assert_eq!(repr_str("a\"b"), "'a\"b'");
        assert_eq!(repr_str("x\ny\\"), "'x\\ny\\\\'");
        assert_eq!(arg_text(&json!({"p": 0}), "p"), "");
        assert_eq!(arg_text(&json!({"p": 5}), "p"), "5");
    }

    #[test]
    fn os_errors_read_as_python_prints_them() {
        let e = io::Error::from_raw_os_error(2);
        assert_eq!(os_error(&e, Path::new("/x/y")), "[Errno 2] No such file or directory: '/x/y'");
    }
}
