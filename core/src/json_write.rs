//! Writes a [`Value`] as compact JSON, byte for byte what `serde_json::to_vec` writes, with
//! strings scanned sixteen bytes at a time (SSE2 on x86_64). Every request body carries the
//! whole transcript again, and serde_json's escaping, a table lookup per byte, was a tenth of
//! a Go history-200 run's CPU (bench/peers/left.md); most of a transcript's bytes are plain
//! text that needs no escape, which this skips a chunk at a time.

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

/// One bit per byte of `chunk`, set where the byte needs an escape: below 0x20, '"' or '\\'.
/// Bytes from 0x80 on are UTF-8, written as they are.
#[cfg(target_arch = "x86_64")]
fn escape_mask(chunk: &[u8; 16]) -> u32 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of every x86_64 CPU, `chunk` is 16 readable bytes, and an
    // unaligned load reads them wherever they sit.
    unsafe {
        let v = _mm_loadu_si128(chunk.as_ptr().cast());
        // Unsigned: a byte is below 0x20 when its minimum with 0x1f is itself.
        let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        _mm_movemask_epi8(_mm_or_si128(control, _mm_or_si128(quote, backslash))) as u32
    }
}

/// [`escape_mask`] a byte at a time, for other targets (and, on x86_64, for its tests).
#[cfg(any(test, not(target_arch = "x86_64")))]
fn escape_mask_bytes(chunk: &[u8; 16]) -> u32 {
    let needs_escape = |c: u8| c < 0x20 || c == b'"' || c == b'\\';
    chunk.iter().enumerate().fold(0, |m, (k, &c)| m | u32::from(needs_escape(c)) << k)
}

#[cfg(not(target_arch = "x86_64"))]
use escape_mask_bytes as escape_mask;

/// The index of the first byte from `i` on that needs an escape, or `bytes.len()`.
fn next_escape(bytes: &[u8], mut i: usize) -> usize {
    let len = bytes.len();
    let first = |m: u32, at: usize| if m != 0 { at + m.trailing_zeros() as usize } else { len };
    if len - i < 16 {
        // Short strings (most keys) padded with spaces, which need no escape, to one chunk.
        let mut chunk = [b' '; 16];
        chunk[..len - i].copy_from_slice(&bytes[i..]);
        return first(escape_mask(&chunk), i);
    }
    while let Some(chunk) = bytes[i..].first_chunk::<16>() {
        let m = escape_mask(chunk);
        if m != 0 {
            return first(m, i);
        }
        i += 16;
    }
    match bytes.last_chunk::<16>() {
        // The last 16 bytes, the bits of those already scanned shifted out.
        Some(tail) if i < len => first(escape_mask(tail) >> (i - (len - 16)), i),
        _ => len,
    }
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
    fn every_chunk_is_masked_as_byte_by_byte() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for round in 0..ROUNDS {
            let mut chunk = [0u8; 16];
            for b in &mut chunk {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Half the rounds only the bytes at the edges of what needs an escape.
                let edges = [0x1f, 0x20, b'"', b'\\', 0x7f, 0x80, 0, 0xff];
                *b = if round % 2 == 0 { x as u8 } else { edges[(x % 8) as usize] };
            }
            assert_eq!(escape_mask(&chunk), escape_mask_bytes(&chunk), "{chunk:?}");
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
