//! Bytes off a socket through the default transport's HTTP/1.1 response reader: status line,
//! headers, interim responses, `Content-Length`, chunked bodies (extensions, trailers), reads
//! to the end of the stream, and the size limits.
//!
//! Checked: the reader finishes on a source that is at its end (no hang), fails only with a
//! protocol or network error, and reads the same response however the bytes are split into
//! reads (once whole, once in small pieces): a limit or a parse must not depend on where the
//! network cut the stream.
#![no_main]

use toolnexus::{fuzzing, ErrorKind};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let whole = fuzzing::read_response(data, usize::MAX);
    let piece = 1 + data.len() % 13;
    let split = fuzzing::read_response(data, piece);
    match (&whole, &split) {
        (Ok((a, reuse_a)), Ok((b, reuse_b))) => {
            assert_eq!((a.status, &a.headers, &a.body, reuse_a), (b.status, &b.headers, &b.body, reuse_b));
            assert!(!(100..200).contains(&a.status), "an interim response returned as the answer");
            assert!(a.body.len() <= data.len());
            if a.status == 204 || a.status == 304 {
                assert!(a.body.is_empty(), "a body on a {} response", a.status);
            }
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.kind(), b.kind(), "{a} / {b} (in reads of {piece} bytes)");
            assert!(matches!(a.kind(), ErrorKind::Protocol | ErrorKind::Network), "{a}");
        }
        _ => panic!("whole: {whole:?}, in reads of {piece} bytes: {split:?}"),
    }
});
