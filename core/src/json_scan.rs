//! Finds the next byte of a JSON string that is not plain text (below 0x20, '"' or '\\')
//! sixteen bytes at a time: SSE2 on x86_64, a byte-at-a-time mask elsewhere. Writing a
//! request body ([`crate::json_write`]) and reading JSON text that crosses from a binding
//! ([`crate::json_read`]) both spend most of their time on a transcript's long plain strings.
//! Also what an escape in a JSON string stands for, for the reader and [`crate::json_same`].

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
pub(crate) fn next_escape(bytes: &[u8], mut i: usize) -> usize {
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

/// The character the escape after a backslash at `at` stands for, and the escape's length;
/// `None` for a surrogate (of a pair or alone) and for what is not an escape.
pub(crate) fn unescape(bytes: &[u8], at: usize) -> Option<(char, usize)> {
    let c = match *bytes.get(at)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let hex = bytes.get(at + 1..at + 5)?;
            let code = hex.iter().try_fold(0u32, |n, &h| Some(n * 16 + char::from(h).to_digit(16)?))?;
            return Some((char::from_u32(code)?, 5));
        }
        _ => return None,
    };
    Some((c, 1))
}

/// The index of the first byte at or after `at` that is not JSON whitespace.
pub(crate) fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\r' | b'\t') = bytes.get(at) {
        at += 1;
    }
    at
}

/// The end of the run of number bytes (digits, sign, point, exponent) starting at `at`; what the
/// run means is left to whoever reads it.
pub(crate) fn number_end(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') = bytes.get(at) {
        at += 1;
    }
    at
}

/// A fixed xorshift stream, for the JSON modules' randomised tests.
#[cfg(test)]
pub(crate) fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random cases per test; fewer under Miri, which runs them a thousand times slower.
    const ROUNDS: u32 = if cfg!(miri) { 150 } else { 3000 };

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
    fn the_first_special_byte_is_found_at_every_offset() {
        // Past 32 bytes every string has a full chunk, an overlapping tail and a padded one.
        for len in 0..if cfg!(miri) { 34 } else { 48 } {
            for at in 0..=len {
                let mut bytes = vec![b'a'; len];
                if at < len {
                    bytes[at] = b'"';
                }
                // Under Miri, from the start, from the special byte and from just before it.
                let froms: Vec<usize> = if cfg!(miri) { vec![0, at.saturating_sub(1), at] } else { (0..=at).collect() };
                for from in froms {
                    assert_eq!(next_escape(&bytes, from), at, "len {len}, from {from}");
                }
            }
        }
    }
}
