//! `tn_part_build`: a content part made by the engine from what a host holds (a path, a URL,
//! bytes), so a binding's constructors never carry the extension table, base64 or the limit.

use std::ffi::c_char;

use engine::content::build_part_from_json;
use engine::Error;

use crate::guard::{call, in_json, write_out};

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
