//! `grep` and `glob`: a walk of a directory tree (skipping `node_modules` and `.git`, never
//! following a symlink), in a fixed order (by path relative to the walked directory, in
//! code-point order), stopped at the call's `limit` (default 100).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use regex::Regex;
use serde_json::{json, Value};

use super::paths::Target;
use super::{blocking, builtin, err, ok_with, py, Env};
use crate::tool::Tool;
use crate::types::ToolResult;

/// Directories a walk never enters.
const IGNORE_DIRS: [&str; 2] = ["node_modules", ".git"];
/// Results when the call gives no `limit`.
const DEFAULT_LIMIT: i64 = 100;

/// A glob (`*` within a segment, `**` across them, `?` one character) as an anchored regex.
fn glob_regex(glob: &str) -> Option<Regex> {
    let chars: Vec<char> = glob.chars().collect();
    let mut out = String::from("^");
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' if chars.get(i + 1) == Some(&'*') => {
                out.push_str(".*");
                i += 1;
                if chars.get(i + 1) == Some(&'/') {
                    i += 1;
                }
            }
            '*' => out.push_str("[^/]*"),
            '?' => out.push_str("[^/]"),
            c => out.push_str(&regex::escape(c.encode_utf8(&mut [0; 4]))),
        }
        i += 1;
    }
    out.push('$');
    Regex::new(&out).ok()
}

/// Whether `rel` matches `glob`; a glob without `/` tests the file name alone.
fn glob_matches(re: &Regex, glob: &str, rel: &str) -> bool {
    if glob.contains('/') {
        re.is_match(rel)
    } else {
        re.is_match(rel.rsplit('/').next().unwrap_or(rel))
    }
}

/// Every regular file under the walked directory, as (relative `/`-joined path, path), sorted.
fn walk_files(env: &Env, root: &Target) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![root.real.clone()];
    while let Some(dir) = stack.pop() {
        if !env.fs.may_walk(root, &dir) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else { continue };
            let path = entry.path();
            if kind.is_dir() {
                if !IGNORE_DIRS.iter().any(|d| entry.file_name() == *d) {
                    stack.push(path);
                }
            } else if kind.is_file() {
                out.push((relative(&path, &root.real), path));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn relative(path: &Path, root: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

/// The directory a call walks: its `path`, else the base directory, else the working directory.
fn walk_root(env: &Env, args: &Value) -> Result<Target, String> {
    let p = py::arg_text(args, "path");
    if !p.is_empty() {
        return env.fs.resolve(&p);
    }
    match env.fs.dir()? {
        Some(t) => Ok(t),
        None => {
            let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
            env.fs.resolve(&cwd.to_string_lossy())
        }
    }
}

fn limit(args: &Value) -> i64 {
    py::num(py::arg(args, "limit")).map_or(DEFAULT_LIMIT, py::int)
}

pub(super) fn grep_tool(env: &Arc<Env>) -> Tool {
    builtin(
        "grep",
        "Search file contents by regex under a directory. Output is file:line:text matches.",
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression to search for"},
                "path": {"type": "string", "description": "Directory to search (default: process cwd)"},
                "include": {"type": "string", "description": "Glob filter for file names"},
                "limit": {"type": "number", "description": "Maximum number of matches (default 100)"}
            },
            "required": ["pattern"],
            "additionalProperties": false
        }),
        env,
        |env, args, _| Box::pin(blocking("grep", move || grep(&env, &args))),
    )
}

fn grep(env: &Env, args: &Value) -> ToolResult {
    let pattern = py::arg_text(args, "pattern");
    if pattern.is_empty() {
        return err("grep", "pattern is required");
    }
    let re = match Regex::new(&pattern) {
        Ok(re) => re,
        Err(e) => return err("grep", format!("invalid regex: {e}")),
    };
    let root = match walk_root(env, args) {
        Ok(t) => t,
        Err(e) => return err("grep", e),
    };
    let include = py::arg_text(args, "include");
    let include_re = if include.is_empty() { None } else { glob_regex(&include) };
    let limit = limit(args);
    let mut matches: Vec<String> = Vec::new();
    'files: for (rel, file) in walk_files(env, &root) {
        if matches.len() as i64 >= limit {
            break;
        }
        if !include.is_empty() && !include_re.as_ref().is_some_and(|g| glob_matches(g, &include, &rel)) {
            continue;
        }
        // A file that cannot be read, or is not UTF-8 text, is not searched.
        let Some(text) = env.fs.read_walked(&root, &file).and_then(|b| String::from_utf8(b).ok()) else {
            continue;
        };
        for (i, line) in text.split('\n').enumerate() {
            if matches.len() as i64 >= limit {
                break 'files;
            }
            if re.is_match(line) {
                matches.push(format!("{rel}:{}:{line}", i + 1));
            }
        }
    }
    ok_with(matches.join("\n"), json!({"count": matches.len()}))
}

pub(super) fn glob_tool(env: &Arc<Env>) -> Tool {
    builtin(
        "glob",
        "List files matching a glob under a directory. Output is newline-joined relative paths.",
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Glob pattern to match"},
                "path": {"type": "string", "description": "Directory to search (default: process cwd)"},
                "limit": {"type": "number", "description": "Maximum number of results (default 100)"}
            },
            "required": ["pattern"],
            "additionalProperties": false
        }),
        env,
        |env, args, _| Box::pin(blocking("glob", move || glob(&env, &args))),
    )
}

fn glob(env: &Env, args: &Value) -> ToolResult {
    let pattern = py::arg_text(args, "pattern");
    if pattern.is_empty() {
        return err("glob", "pattern is required");
    }
    let root = match walk_root(env, args) {
        Ok(t) => t,
        Err(e) => return err("glob", e),
    };
    let limit = limit(args);
    let re = glob_regex(&pattern);
    let mut found: Vec<String> = Vec::new();
    for (rel, _) in walk_files(env, &root) {
        if found.len() as i64 >= limit {
            break;
        }
        if re.as_ref().is_some_and(|g| glob_matches(g, &pattern, &rel)) {
            found.push(rel);
        }
    }
    // Upstream reports min(found, limit), which a negative limit makes negative.
    let count = (found.len() as i64).min(limit);
    ok_with(found.join("\n"), json!({"count": count}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_as_upstream() {
        let m = |g: &str, rel: &str| glob_matches(&glob_regex(g).unwrap(), g, rel);
        assert!(m("*.txt", "sub/a.txt"), "a slash-less glob tests the file name");
        assert!(!m("*.txt", "a.txt.bak"));
        assert!(m("**/*.rs", "a/b/c.rs") && m("**/*.rs", "c.rs"));
        assert!(m("src/*.rs", "src/x.rs") && !m("src/*.rs", "src/a/x.rs"));
        assert!(m("a?c.md", "abc.md") && !m("a?c.md", "a/c.md"));
        assert!(m("(x)+[y].{z}", "(x)+[y].{z}"), "regex characters are literal");
    }
}
