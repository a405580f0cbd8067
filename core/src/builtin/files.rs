//! `read`, `write` and `edit`: one file at a time, through [`super::paths::Fs`] so a
//! confined toolkit never reads or writes outside its root.

use std::sync::Arc;

use serde_json::{json, Value};

use super::{blocking, builtin, err, ok_with, py, Env};
use crate::content::{base64, media_type};
use crate::tool::Tool;
use crate::types::ToolResult;

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
    if let Some((mime, part)) = media_type(&target.shown.to_string_lossy()) {
        // No size check here: the client checks every part when it sends it.
        let name = p.rsplit('/').next().unwrap_or("");
        let part = json!({"type": part, "mimeType": mime, "data": base64(&bytes), "name": name});
        return ToolResult {
            parts: Some(vec![part]),
            ..ToolResult::ok(format!("{p} ({mime}, {} bytes)", bytes.len()))
        };
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
