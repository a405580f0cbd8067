//! Python's value rules, where upstream's built-ins lean on them and the model sees the
//! result: which argument counts as given (`args.get("path") or ""`), how a non-string
//! becomes text (`str(x)`), how the `question` answer is printed (`json.dumps`), and how an
//! `OSError` reads (`[Errno 2] No such file or directory: '/x'`). Upstream 0.21's Python
//! package is the reference for the built-ins' texts, so the same input gives the same text.

use std::io;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

// The value-to-text forms every upstream-facing text shares (skills and HTTP tools too).
pub(crate) use crate::pystr::{json_dumps as dumps, repr_str, str_of as text, strip};

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

/// `_coerce_str`: a string as it is, `None` as `""`, anything else as `str(x)`.
pub(crate) fn coerce_str(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(v) => text(v),
    }
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
    use crate::pystr::float_repr;
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
