//! `read`, `write` and `edit`: one file at a time, through [`super::paths::Fs`] so a
//! confined toolkit never reads or writes outside its root.

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};

use super::{blocking, builtin, err, ok_with, py, Env};
use crate::tool::Tool;
use crate::types::ToolResult;

/// Files `read` returns as a content part rather than as text: extension → (MIME type, part type).
const MEDIA_TYPES: [(&str, &str, &str); 8] = [
    ("png", "image/png", "image"),
    ("jpg", "image/jpeg", "image"),
    ("jpeg", "image/jpeg", "image"),
    ("gif", "image/gif", "image"),
    ("webp", "image/webp", "image"),
    ("pdf", "application/pdf", "file"),
    ("mp3", "audio/mpeg", "audio"),
    ("wav", "audio/wav", "audio"),
];

pub(super) fn read_tool(env: &Arc<Env>) -> Tool {
    builtin(
        "read",
        "Read a file. A known media file (png/jpg/jpeg/gif/webp/pdf/mp3/wav) comes back as a content part; \
         otherwise it is read as UTF-8 text, and with offset/limit only that line window is returned.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path to the file to read"},
                "offset": {"type": "number", "description": "1-based line to start from"},
                "limit": {"type": "number", "description": "Maximum number of lines to read"}
            },
            "required": ["path"],
            "additionalProperties": false
        }),
        env,
        |env, args, _| Box::pin(blocking("read", move || read(&env, &args))),
    )
}

fn read(env: &Env, args: &Value) -> ToolResult {
    let p = py::arg_text(args, "path");
    if p.is_empty() {
        return err("read", "path is required");
    }
    let target = match env.fs.resolve(&p) {
        Ok(t) => t,
        Err(e) => return err("read", e),
    };
    let bytes = match env.fs.read(&target, &p) {
        Ok(b) => b,
        Err(e) => return err("read", e),
    };
    if let Some((mime, part)) = media_type(&target.shown) {
        // This engine has no content parts yet: the part rides in the metadata, in
        // upstream's shape, and the model sees upstream's text.
        let name = p.rsplit('/').next().unwrap_or("");
        let part = json!({"type": part, "mimeType": mime, "data": base64(&bytes), "name": name});
        return ok_with(format!("{p} ({mime}, {} bytes)", bytes.len()), json!({"parts": [part]}));
    }
    let Ok(content) = String::from_utf8(bytes) else {
        return err("read", format!("{p} is not valid UTF-8 text"));
    };
    if py::arg(args, "offset").is_none() && py::arg(args, "limit").is_none() {
        return ToolResult::ok(content);
    }
    let lines: Vec<&str> = content.split('\n').collect();
    let offset = py::num(py::arg(args, "offset")).map_or(1, |o| py::int(o).max(1));
    let start = offset - 1;
    let len = lines.len() as i64;
    let limit = py::num(py::arg(args, "limit")).map_or(len - start, |l| py::int(l).max(0));
    let from = start.min(len);
    let to = start.saturating_add(limit).clamp(from, len);
    ToolResult::ok(lines[from as usize..to as usize].join("\n"))
}

/// The MIME and part type of a known media file, by extension (`os.path.splitext`).
fn media_type(path: &Path) -> Option<(&'static str, &'static str)> {
    let name = path.file_name()?.to_string_lossy();
    let stem_start = name.len() - name.trim_start_matches('.').len();
    let ext = name[stem_start..].rsplit_once('.')?.1.to_ascii_lowercase();
    MEDIA_TYPES.iter().find(|(e, _, _)| *e == ext).map(|(_, mime, part)| (*mime, *part))
}

fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(TABLE[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

pub(super) fn write_tool(env: &Arc<Env>) -> Tool {
    builtin(
        "write",
        "Write content to a file (create/overwrite), creating parent directories.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path to write to"},
                "content": {"type": "string", "description": "Content to write"}
            },
            "required": ["path", "content"],
            "additionalProperties": false
        }),
        env,
        |env, args, _| Box::pin(blocking("write", move || write(&env, &args))),
    )
}

fn write(env: &Env, args: &Value) -> ToolResult {
    let p = py::arg_text(args, "path");
    if p.is_empty() {
        return err("write", "path is required");
    }
    let content = py::coerce_str(args.get("content"));
    let target = match env.fs.resolve(&p) {
        Ok(t) => t,
        Err(e) => return err("write", e),
    };
    if let Err(e) = env.fs.make_parents(&target).and_then(|()| env.fs.write(&target, content.as_bytes(), &p)) {
        return err("write", e);
    }
    let n = content.len();
    ok_with(format!("Wrote {n} bytes to {p}"), json!({"bytes": n}))
}

pub(super) fn edit_tool(env: &Arc<Env>) -> Tool {
    builtin(
        "edit",
        "Exact-string replace in a file. Default replaces a single unique occurrence; replaceAll replaces all.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path to the file to edit"},
                "oldString": {"type": "string", "description": "Exact string to replace"},
                "newString": {"type": "string", "description": "Replacement string"},
                "replaceAll": {"type": "boolean", "description": "Replace all occurrences"}
            },
            "required": ["path", "oldString", "newString"],
            "additionalProperties": false
        }),
        env,
        |env, args, _| Box::pin(blocking("edit", move || edit(&env, &args))),
    )
}

fn edit(env: &Env, args: &Value) -> ToolResult {
    let p = py::arg_text(args, "path");
    if p.is_empty() {
        return err("edit", "path is required");
    }
    let old = match args.get("oldString") {
        Some(Value::String(s)) if !s.is_empty() => s.as_str(),
        _ => return err("edit", "oldString is required"),
    };
    let new = py::coerce_str(args.get("newString"));
    let target = match env.fs.resolve(&p) {
        Ok(t) => t,
        Err(e) => return err("edit", e),
    };
    let content = match env.fs.read(&target, &p).map(String::from_utf8) {
        Ok(Ok(c)) => c,
        Ok(Err(_)) => return err("edit", format!("{p} is not valid UTF-8 text")),
        Err(e) => return err("edit", e),
    };
    let count = content.matches(old).count();
    if count == 0 {
        return err("edit", format!("oldString not found in {p}"));
    }
    let (next, n) = if args.get("replaceAll") == Some(&Value::Bool(true)) {
        (content.replace(old, &new), count)
    } else if count > 1 {
        return err("edit", format!("oldString is not unique in {p} ({count} occurrences); use replaceAll"));
    } else {
        (content.replacen(old, &new, 1), 1)
    };
    if let Err(e) = env.fs.write(&target, next.as_bytes(), &p) {
        return err("edit", e);
    }
    let plural = if n == 1 { "" } else { "s" };
    ok_with(format!("Edited {p} ({n} replacement{plural})"), json!({"replacements": n}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_pads_as_the_standard_says() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(&[0xff, 0xfe, 0x00, 0x01]), "//4AAQ==");
    }

    #[test]
    fn media_types_go_by_extension_as_splitext() {
        assert_eq!(media_type(Path::new("/a/b.PNG")), Some(("image/png", "image")));
        assert_eq!(media_type(Path::new("/a/.png")), None);
        assert_eq!(media_type(Path::new("/a/x.tar.pdf")), Some(("application/pdf", "file")));
        assert_eq!(media_type(Path::new("/a/notes.txt")), None);
    }
}
