//! `apply_patch`: opencode's Begin/End Patch grammar (`*** Add File:`, `*** Update File:`,
//! `*** Delete File:`). Every operation is staged first and the filesystem is touched only
//! when all of them apply, so a hunk that does not match writes nothing. The paths live in
//! the patch text, so they go through the same base directory and confinement as the
//! arguments of the other file tools.

use std::sync::Arc;

use serde_json::{json, Value};

use super::paths::Target;
use super::{blocking, builtin, err, ok_with, py, Env};
use crate::tool::Tool;
use crate::types::ToolResult;

#[derive(Debug)]
enum Op {
    Add { path: String, content: String },
    Update { path: String, body: Vec<String> },
    Delete { path: String },
}

impl Op {
    fn path(&self) -> &str {
        match self {
            Op::Add { path, .. } | Op::Update { path, .. } | Op::Delete { path } => path,
        }
    }
}

pub(super) fn tool(env: &Arc<Env>) -> Tool {
    builtin(
        "apply_patch",
        "Apply a patch (Begin/End Patch grammar: Add/Update/Delete File). Atomic — a non-matching hunk aborts \
         with no writes.",
        json!({
            "type": "object",
            "properties": {
                "patchText": {"type": "string", "description": "The patch text in Begin/End Patch format"}
            },
            "required": ["patchText"],
            "additionalProperties": false
        }),
        env,
        |env, args, _| Box::pin(blocking("apply_patch", move || run(&env, &args))),
    )
}

/// `*** Add File: p` and its kin: the operation and the (trimmed) path.
fn file_marker(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix("*** ")?;
    let (kind, path) = ["Add", "Update", "Delete"]
        .into_iter()
        .find_map(|k| rest.strip_prefix(k).and_then(|r| r.strip_prefix(" File: ")).map(|p| (k, p)))?;
    // Upstream's `(.+)$`: at least one character, none of them a line break.
    (!path.is_empty() && !path.contains('\n')).then_some((kind, path))
}

fn parse(text: &str) -> Result<Vec<Op>, String> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut i = 0;
    while i < lines.len() && py::strip(lines[i]).is_empty() {
        i += 1;
    }
    if i >= lines.len() || py::strip(lines[i]) != "*** Begin Patch" {
        return Err("missing '*** Begin Patch'".into());
    }
    i += 1;
    let mut ops = Vec::new();
    while i < lines.len() {
        let line = lines[i];
        if py::strip(line) == "*** End Patch" {
            return Ok(ops);
        }
        if py::strip(line).is_empty() {
            i += 1;
            continue;
        }
        let Some((kind, path)) = file_marker(line) else {
            return Err(format!("unexpected line: {line}"));
        };
        let path = py::strip(path).to_string();
        i += 1;
        let mut body = Vec::new();
        while i < lines.len() && py::strip(lines[i]) != "*** End Patch" && file_marker(lines[i]).is_none() {
            body.push(lines[i].to_string());
            i += 1;
        }
        ops.push(match kind {
            "Add" => {
                let content: Vec<&str> = body.iter().map(|l| l.strip_prefix('+').unwrap_or(l)).collect();
                Op::Add { path, content: content.join("\n") }
            }
            "Delete" => Op::Delete { path },
            _ => Op::Update { path, body },
        });
    }
    Err("missing '*** End Patch'".into())
}

/// Applies an Update body to a file's content: each `@@`-separated hunk's old lines must
/// appear (the first occurrence is replaced); a hunk with no old lines appends.
fn apply_update(content: &str, body: &[String]) -> Result<String, String> {
    let mut hunks: Vec<Vec<&str>> = Vec::new();
    let mut cur: Vec<&str> = Vec::new();
    for l in body {
        if l.starts_with("@@") {
            if !cur.is_empty() {
                hunks.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(l);
        }
    }
    if !cur.is_empty() {
        hunks.push(cur);
    }
    let mut result = content.to_string();
    for hunk in hunks {
        let mut old = Vec::new();
        let mut new = Vec::new();
        for l in hunk {
            if let Some(x) = l.strip_prefix('-') {
                old.push(x);
            } else if let Some(x) = l.strip_prefix('+') {
                new.push(x);
            } else {
                let x = l.strip_prefix(' ').unwrap_or(l);
                old.push(x);
                new.push(x);
            }
        }
        let (old, new) = (old.join("\n"), new.join("\n"));
        if old.is_empty() {
            let sep = if result.ends_with('\n') || result.is_empty() { "" } else { "\n" };
            result = format!("{result}{sep}{new}");
        } else if result.contains(&old) {
            result = result.replacen(&old, &new, 1);
        } else {
            return Err("hunk does not match file contents".into());
        }
    }
    Ok(result)
}

fn run(env: &Env, args: &Value) -> ToolResult {
    let text = py::arg_text(args, "patchText");
    if text.is_empty() {
        return err("apply_patch", "patchText is required");
    }
    let ops = match parse(&text) {
        Ok(ops) => ops,
        Err(e) => return err("apply_patch", e),
    };
    let mut targets: Vec<Target> = Vec::with_capacity(ops.len());
    for op in &ops {
        match env.fs.resolve(op.path()) {
            Ok(t) => targets.push(t),
            Err(e) => return err("apply_patch", e),
        }
    }
    // Stage every write and delete; the filesystem is touched only if all of them apply.
    let mut writes: Vec<(&Target, &str, String)> = Vec::new();
    let mut deletes: Vec<(&Target, &str)> = Vec::new();
    for (op, target) in ops.iter().zip(&targets) {
        let shown = target.shown.display();
        match op {
            Op::Add { path, content } => {
                if target.real.exists() {
                    return err("apply_patch", format!("file already exists: {shown}"));
                }
                writes.push((target, path, content.clone()));
            }
            Op::Delete { path } => {
                if !target.real.exists() {
                    return err("apply_patch", format!("file not found: {shown}"));
                }
                deletes.push((target, path));
            }
            Op::Update { path, body } => {
                let current = match env.fs.read(target, path).map(String::from_utf8) {
                    Ok(Ok(c)) => c,
                    Ok(Err(_)) => return err("apply_patch", format!("{shown} is not valid UTF-8 text")),
                    Err(e) => return err("apply_patch", e),
                };
                match apply_update(&current, body) {
                    Ok(next) => writes.push((target, path, next)),
                    Err(e) => return err("apply_patch", e),
                }
            }
        }
    }
    for (target, path, content) in &writes {
        if let Err(e) = env.fs.make_parents(target).and_then(|()| env.fs.write(target, content.as_bytes(), path)) {
            return err("apply_patch", e);
        }
    }
    for (target, path) in &deletes {
        if let Err(e) = env.fs.remove(target, path) {
            return err("apply_patch", e);
        }
    }
    let count = |f: fn(&Op) -> bool| ops.iter().filter(|o| f(o)).count();
    let plural = if ops.len() == 1 { "" } else { "s" };
    ok_with(
        format!("Applied patch: {} file operation{plural}", ops.len()),
        json!({
            "added": count(|o| matches!(o, Op::Add { .. })),
            "updated": count(|o| matches!(o, Op::Update { .. })),
            "deleted": count(|o| matches!(o, Op::Delete { .. })),
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_parses_as_upstream() {
        let ops =
            parse("\n  \n*** Begin Patch\n*** Add File: a.txt \n+x\ny\n\n*** Delete File: b\n*** End Patch").unwrap();
        assert_eq!(ops.len(), 2);
        assert!(matches!(&ops[0], Op::Add { path, content } if path == "a.txt" && content == "x\ny\n"));
        assert_eq!(parse("*** Begin Patch\n*** Add File: a").unwrap_err(), "missing '*** End Patch'");
        assert_eq!(parse("nope").unwrap_err(), "missing '*** Begin Patch'");
        assert_eq!(parse("*** Begin Patch\nstray\n*** End Patch").unwrap_err(), "unexpected line: stray");
    }

    #[test]
    fn hunks_replace_the_first_match_or_append() {
        let body = |b: &[&str]| b.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(apply_update("a\nb\nc\n", &body(&["@@", " a", "-b", "+B"])).unwrap(), "a\nB\nc\n");
        assert_eq!(apply_update("a", &body(&["+z"])).unwrap(), "a\nz");
        assert_eq!(apply_update("a\n", &body(&["@@", "+z"])).unwrap(), "a\nz");
        assert_eq!(apply_update("a", &body(&["-q"])).unwrap_err(), "hunk does not match file contents");
    }
}
