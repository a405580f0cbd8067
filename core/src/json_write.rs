//! Writes a [`Value`] as compact JSON, byte for byte what `serde_json::to_vec` writes, with
//! strings scanned sixteen bytes at a time (SSE2 on x86_64). Every request body carries the
//! whole transcript again, and serde_json's escaping, a table lookup per byte, was a tenth of
//! a Go history-200 run's CPU (bench/peers/left.md); most of a transcript's bytes are plain
//! text that needs no escape, which this skips a chunk at a time.

use crate::json_scan::next_escape;
use serde_json::Value;

/// Appends `v`'s JSON to `out`.
pub(crate) fn write_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => {
            // Numbers are rare in a transcript: serde_json's own formatting (itoa, ryu).
            let _ = serde_json::to_writer(&mut *out, n);
        }
        Value::String(s) => write_str(out, s),
        Value::Array(items) => write_array(out, items),
        Value::Object(map) => {
            out.push(b'{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, k);
                out.push(b':');
                write_value(out, item);
            }
            out.push(b'}');
        }
    }
}

/// Appends the values of `items` as a JSON array.
pub(crate) fn write_array(out: &mut Vec<u8>, items: &[Value]) {
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_value(out, item);
    }
    out.push(b']');
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends `s` as a JSON string, escaped as serde_json escapes.
pub(crate) fn write_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    loop {
        let i = next_escape(bytes, start);
        out.extend_from_slice(&bytes[start..i]);
        let Some(&c) = bytes.get(i) else { break };
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            _ => out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[usize::from(c >> 4)], HEX[usize::from(c & 0xf)]]),
        }
        start = i + 1;
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Random cases per test; fewer under Miri, which runs them a thousand times slower.
    const ROUNDS: u32 = if cfg!(miri) { 150 } else { 3000 };

    fn same_as_serde(v: &Value) {
        let mut out = Vec::new();
        write_value(&mut out, v);
        assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(v).unwrap());
    }

    #[test]
    fn every_byte_is_escaped_as_serde_json_escapes_it() {
        let all: String = (0u8..0x80).map(char::from).collect();
        for s in [all.as_str(), "", "plain text of more than eight bytes", "é日本🎉 \u{2028}\u{7f}", "\"\\"] {
            same_as_serde(&json!(s));
            // At every offset, so the special bytes fall in every lane of a chunk, in the
            // overlapping last chunk and in a short string's padded one.
            for pad in 0..34 {
                same_as_serde(&json!(format!("{}{s}{}", "x".repeat(pad), "y".repeat(pad))));
            }
        }
    }

    #[test]
    fn values_are_written_as_serde_json_writes_them() {
        same_as_serde(&json!({
            "role": "assistant", "content": null, "n": [0, -1, 1.5, 1e300, u64::MAX, i64::MIN],
            "ok": [true, false], "nested": {"z": {}, "a": [], "quote\"key": "v\n"},
            "tool_calls": [{"id": "c1", "function": {"name": "w", "arguments": "{\"city\":\"Paris\"}"}}]
        }));
        let items = vec![json!({"b": 1, "a": 2}), json!("x")];
        let mut out = Vec::new();
        write_array(&mut out, &items);
        assert_eq!(out, serde_json::to_vec(&items).unwrap());
    }

    #[test]
    fn random_strings_are_written_as_serde_json_writes_them() {
        // A fixed xorshift stream: strings dense in escapes, quotes and multi-byte characters.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let alphabet = ['a', ' ', '"', '\\', '\n', '\u{1}', '\u{1f}', 'é', '日', '🎉', '\u{7f}', 'z'];
        for _ in 0..ROUNDS {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 70) as usize;
            let s: String = (0..len).map(|k| alphabet[((x >> (k % 60)) as usize + k) % alphabet.len()]).collect();
            same_as_serde(&json!(s));
        }
    }
}
