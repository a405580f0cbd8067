//! Skills on disk: every `**/SKILL.md` under a skills directory, and the files beside a
//! skill that its `skill` output samples.
//!
//! Both walks follow symlinked directories and files, skip `node_modules` and `.git`, and
//! visit each real directory once (the cycle guard). Directories are read level by level in
//! name order, so which of two links to one directory is followed does not depend on the
//! file system's listing order. Discovery order is upstream's contract (first name wins):
//! depth first, then the relative path by code point.

use std::collections::{HashSet, VecDeque};
use std::ffi::OsStr;
use std::fs;
use std::path::{Component, Path, PathBuf};

use super::frontmatter;
use super::{Candidate, SkillInfo, SkillOrigin, SkillSkip, SkipReason};
use crate::warning::Warning;

/// `path` made absolute and normalised as Python's `os.path.abspath` does (`.` and `..`
/// resolved by the text, symlinks left alone).
pub(crate) fn absolute(path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().map(|cwd| cwd.join(path)).unwrap_or_else(|_| path.to_path_buf())
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if out.parent().is_some() {
                    out.pop();
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The files under `root` that `want` accepts by name, following symlinks, each real
/// directory visited once.
fn walk(root: &Path, want: impl Fn(&OsStr) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    // As upstream, the root itself is not marked: a link back to it is followed once.
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let mut queue = VecDeque::from([root.to_path_buf()]);
    while let Some(dir) = queue.pop_front() {
        let Ok(read) = fs::read_dir(&dir) else { continue };
        let mut names: Vec<_> = read.filter_map(|e| e.ok().map(|e| e.file_name())).collect();
        names.sort_by(|a, b| a.as_encoded_bytes().cmp(b.as_encoded_bytes()));
        for name in names {
            let path = dir.join(&name);
            // Follows a symlink; a broken one is neither a file nor a directory.
            let Ok(meta) = fs::metadata(&path) else { continue };
            if meta.is_dir() {
                if name == "node_modules" || name == ".git" {
                    continue;
                }
                let real = fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
                if seen.insert(real) {
                    queue.push_back(path);
                }
            } else if meta.is_file() && want(&name) {
                out.push(path);
            }
        }
    }
    out
}

/// The path of `path` below `root`, with `/` between its parts.
fn relative(path: &Path, root: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

/// Every SKILL.md under `root`, in discovery order.
fn skill_files(root: &Path) -> Vec<PathBuf> {
    let mut files = walk(root, |n| n == "SKILL.md");
    files.sort_by_cached_key(|p| {
        let rel = relative(p, root);
        (rel.split('/').count(), rel)
    });
    files
}

/// The files beside a skill (every file below `dir` but a `SKILL.md`), sorted by their
/// path below `dir` and then cut to `limit` when it is positive.
pub(crate) fn sample_files(dir: &Path, limit: i64) -> Vec<PathBuf> {
    let mut files = walk(dir, |n| n != "SKILL.md");
    files.sort_by_cached_key(|p| relative(p, dir));
    if let Ok(n) = usize::try_from(limit) {
        if n > 0 {
            files.truncate(n);
        }
    }
    files
}

/// A file's text as Python's text mode reads it: UTF-8, with `\r\n` and `\r` read as `\n`.
fn read_text(path: &Path) -> Result<String, String> {
    let bytes = fs::read(path).map_err(|e| e.to_string())?;
    let text = String::from_utf8(bytes).map_err(|e| format!("not UTF-8 text: {e}"))?;
    Ok(if text.contains('\r') { text.replace("\r\n", "\n").replace('\r', "\n") } else { text })
}

/// The skills (and refusals) of one skills directory, as `dir` was given.
pub(crate) fn candidates(dir: &Path, warnings: &mut Vec<Warning>) -> Vec<Candidate> {
    let root = absolute(dir);
    if !root.is_dir() {
        warnings.push(Warning {
            code: "skills_dir_not_found",
            message: format!("[toolnexus] skills dir not found: {}", dir.display()),
        });
        return Vec::new();
    }
    let mut out = Vec::new();
    for file in skill_files(&root) {
        let location = file.to_string_lossy().into_owned();
        let skip = |reason, detail: String| Candidate::Skip(SkillSkip { location: location.clone(), reason, detail });
        let text = match read_text(&file) {
            Ok(t) => t,
            Err(detail) => {
                out.push(skip(SkipReason::Unreadable, detail));
                continue;
            }
        };
        let fm = frontmatter::parse(&text);
        if fm.malformed {
            out.push(skip(SkipReason::MalformedFrontmatter, fm.detail));
            continue;
        }
        match fm.name.filter(|n| !n.is_empty()) {
            None => out.push(skip(SkipReason::MissingName, fm.detail)),
            Some(name) => out.push(Candidate::Skill(SkillInfo {
                name,
                description: fm.description,
                location,
                content: fm.content,
                origin: SkillOrigin::Directory,
                resources: Vec::new(),
                base: None,
            })),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_normalises_like_abspath() {
        assert_eq!(absolute(Path::new("/a/./b/../c/")), PathBuf::from("/a/c"));
        assert_eq!(absolute(Path::new("/..")), PathBuf::from("/"));
        assert!(absolute(Path::new("x")).is_absolute());
    }
}
