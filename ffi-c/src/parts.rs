//! Content parts for hosts: `tn_part_build` makes one from what a host holds (a path, a URL,
//! bytes), `tn_part_validate`, `tn_part_inspect` and `tn_part_encode` answer what the ports ask
//! of one, so a binding never carries the extension table, base64, the limit, the checks, the
//! token estimate or the provider blocks.

use std::ffi::c_char;

use engine::content::{self, build_part_from_json};
use engine::{Error, Style};

use crate::guard::{call, in_json, in_str, write_out};

/// Makes a content part (SPEC §1B) and writes it to `*part_out` in the canonical form,
/// `{"type", "mimeType", "data"?, "url"?, "name"?}` (the form a prompt's parts and a tool
/// result's `"parts"` take). `spec_json` is an object; its keys (snake_case or camelCase):
/// - `source`: a path (read now; the part never holds it), a `data:` URL (base64 only) or an
///   `http(s)://` URL (kept as `url`). Without it, the `bytes_len` bytes at `bytes` are the
///   content; with it, `bytes_len` must be 0. `bytes` may be NULL when `bytes_len` is 0.
/// - `file_name`: with bytes, the name (a path) of the file they were read from; the MIME
///   type and the part's name come from it as from a path.
/// - `type`: `image`, `file` or `audio`; absent, the MIME type's: `image/*` an image,
///   `audio/*` audio, anything else a file.
/// - `mime_type`: wins over the extension's; required for bytes without `file_name`, a path
///   or URL whose extension is not in the media table.
/// - `name`: wins over the file's base name.
/// - `max_part_bytes`: the most decoded bytes the part may hold (absent: no limit here; a
///   client checks its own `max_part_bytes` when it sends the part).
///
/// A part that cannot be made (an unknown extension, an unreadable file, a `data:` URL that
/// is not base64, too many bytes) is `TN_ERR_CONTENT_PART` with upstream's message; a
/// malformed spec is `TN_ERR_INVALID_ARGUMENT`. Reads a file when `source` is a path, and
/// never blocks otherwise. Added in ABI version 4.
///
/// # Safety
/// `bytes` is NULL or points to `bytes_len` readable bytes; other pointers as documented;
/// `part_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_part_build(
    spec_json: *const c_char,
    bytes: *const u8,
    bytes_len: usize,
    part_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let spec = in_json(spec_json, "spec_json")?;
        let bytes: &[u8] = match (bytes.is_null(), bytes_len) {
            (true, 0) => &[],
            (true, _) => return Err(Error::invalid("bytes is NULL but bytes_len is not 0")),
            // SAFETY: non-NULL and, per the header, `bytes_len` readable bytes for this call.
            (false, n) => unsafe { std::slice::from_raw_parts(bytes, n) },
        };
        write_out(part_out, "part_out", build_part_from_json(&spec, bytes)?.to_string())
    })
}

/// Checks a content part (`part_json`, canonical form): TN_OK, or `TN_ERR_CONTENT_PART` with
/// upstream's message (an unknown type, a missing `mimeType`, both or neither of `data` and
/// `url`, more than `max_part_bytes` decoded bytes when that is not negative). A `part_json`
/// that is not JSON is `TN_ERR_INVALID_ARGUMENT`. Added in ABI version 4.
///
/// # Safety
/// `part_json` is a NUL-terminated string; `error_out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tn_part_validate(
    part_json: *const c_char,
    max_part_bytes: i64,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let part = in_json(part_json, "part_json")?;
        content::validate_within(&part, u64::try_from(max_part_bytes).ok())
    })
}

/// Writes what may be said of a part without sending it to `*info_out`, never its data:
/// `{"view": {"type", "mimeType", "bytes"} (a text part: {"type", "bytes"}, its UTF-8 length),
/// "line": a text part's text, else the description, "description": "<type> (<mimeType>,
/// <bytes> bytes)", "placeholder": "[unsupported <type> part (...)]", "bytes": decoded bytes,
/// "estimated_tokens": n}`. Nothing is checked (`tn_part_validate` does). Added in ABI
/// version 4.
///
/// # Safety
/// `part_json` is a NUL-terminated string; `info_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_part_inspect(
    part_json: *const c_char,
    info_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let part = in_json(part_json, "part_json")?;
        if !part.is_object() {
            return Err(Error::invalid("part_json must be a JSON object"));
        }
        write_out(info_out, "info_out", content::inspect(&part).to_string())
    })
}

/// Writes a content part as the `style` provider's content block (`"openai"` or
/// `"anthropic"`) to `*block_out`: `TN_ERR_UNSUPPORTED_PART` when that provider has no block
/// for it (Anthropic and audio; OpenAI and a file or audio by URL). Added in ABI version 4.
///
/// # Safety
/// `part_json` and `style` are NUL-terminated strings; `block_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_part_encode(
    part_json: *const c_char,
    style: *const c_char,
    block_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let part = in_json(part_json, "part_json")?;
        let style = Style::parse(in_str(style, "style")?)?;
        write_out(block_out, "block_out", content::encode_part(&part, style)?.to_string())
    })
}
