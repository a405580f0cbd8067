//! A SKILL.md's `---`-fenced YAML front matter: `name` and `description`, and the body.
//!
//! As upstream reads it: a real YAML parser first ([`super::yaml`], PyYAML's semantics), and
//! only when YAML refuses the block (or builds a non-mapping, or a `name`/`description` that
//! is not a scalar) a line-wise read that rescues those two keys from column-0 `key: value`
//! lines, refusing any value that opens a YAML construct (`| > & * [ { !`) rather than
//! guessing. A file is malformed only when YAML refused it and no name was rescued.

use std::panic::{catch_unwind, AssertUnwindSafe};

use super::yaml::{self, Py};
use crate::pystr::{splitlines, strip};

/// What a SKILL.md says about itself.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Frontmatter {
    /// `name`, when present as a scalar (possibly empty).
    pub name: Option<String>,
    /// `description`, when present as a scalar.
    pub description: Option<String>,
    /// The text after the closing fence (the whole text without front matter).
    pub content: String,
    /// Fences present, YAML refused the block, and no name could be rescued.
    pub malformed: bool,
    /// The YAML parser's own message when it refused the block (empty otherwise).
    pub detail: String,
}

/// The two keys a skill reads.
const KEYS: [&str; 2] = ["name", "description"];

/// A value opening one of these starts a YAML construct the line-wise read does not
/// implement: it takes nothing rather than garbage.
const OPENERS: [char; 7] = ['|', '>', '&', '*', '[', '{', '!'];

/// Splits `text` at its fences, as upstream's `^---\r?\n(.*?)\r?\n---\r?\n?(.*)$` does:
/// the block ends at the first `\n---` after the opening line (the fence need not end its
/// line), and one line break after it is dropped.
fn fences(text: &str) -> Option<(&str, &str)> {
    let open = if text.starts_with("---\n") {
        4
    } else if text.starts_with("---\r\n") {
        5
    } else {
        return None;
    };
    let at = text[open..].find("\n---")? + open;
    let block_end = if at > open && text.as_bytes()[at - 1] == b'\r' { at - 1 } else { at };
    let body = &text[at + 4..];
    let body = body.strip_prefix('\r').unwrap_or(body);
    let body = body.strip_prefix('\n').unwrap_or(body);
    Some((&text[open..block_end], body))
}

/// Reads a SKILL.md's text. Never panics, whatever the bytes.
pub(crate) fn parse(text: &str) -> Frontmatter {
    let Some((block, body)) = fences(text) else {
        return Frontmatter { content: text.to_string(), ..Frontmatter::default() };
    };
    let mut fm = Frontmatter { content: body.to_string(), ..Frontmatter::default() };
    let parsed = match catch_unwind(AssertUnwindSafe(|| yaml::safe_load(block))) {
        Ok(r) => r,
        Err(_) => Err("the YAML parser failed".to_string()),
    };
    let mut rescue = true;
    match parsed {
        Err(e) => fm.detail = e.replace('\n', " ").trim().to_string(),
        Ok(Some(Py::Map(pairs))) => {
            let mut wrong = false;
            for key in KEYS {
                // A mapping keeps the last value of a repeated key.
                let Some((_, v)) = pairs.iter().rev().find(|(k, _)| k.is_str(key)) else { continue };
                match v.scalar_text() {
                    Some(t) => *field(&mut fm, key) = Some(strip(&t).to_string()),
                    None => wrong = true,
                }
            }
            rescue = wrong;
        }
        Ok(_) => {}
    }
    if rescue {
        for (key, value) in line_wise(block) {
            field(&mut fm, key).get_or_insert(value);
        }
    }
    fm.malformed = !fm.detail.is_empty() && fm.name.as_deref().is_none_or(str::is_empty);
    fm
}

fn field<'a>(fm: &'a mut Frontmatter, key: &str) -> &'a mut Option<String> {
    if key == "name" {
        &mut fm.name
    } else {
        &mut fm.description
    }
}

/// `name` and `description` from column-0 `key: value` lines, first one winning.
fn line_wise(block: &str) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    for line in splitlines(block) {
        for key in KEYS {
            let Some(rest) = line.strip_prefix(key).and_then(|r| r.strip_prefix(':')) else { continue };
            if out.iter().any(|(k, _)| *k == key) {
                continue;
            }
            let value = strip(rest.trim_start_matches([' ', '\t']));
            if value.is_empty() || value.starts_with(OPENERS) {
                continue;
            }
            out.push((key, unquote(value).to_string()));
        }
    }
    out
}

/// The value without one pair of matching outer quotes.
fn unquote(v: &str) -> &str {
    let v = strip(v);
    let mut chars = v.chars();
    match (chars.next(), chars.next_back()) {
        (Some(a), Some(b)) if a == b && (a == '"' || a == '\'') => &v[1..v.len() - 1],
        _ => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fm(text: &str) -> (Option<String>, Option<String>, bool) {
        let f = parse(text);
        (f.name, f.description, f.malformed)
    }

    fn some(name: &str, desc: Option<&str>) -> (Option<String>, Option<String>, bool) {
        (Some(name.into()), desc.map(String::from), false)
    }

    #[test]
    fn fences_split_as_upstreams_pattern() {
        assert_eq!(fences("---\nname: x\n---\nbody"), Some(("name: x", "body")));
        assert_eq!(fences("---\n\n---\nbody"), Some(("", "body")));
        assert_eq!(fences("---\nname: x\n---title\n"), Some(("name: x", "title\n")));
        assert_eq!(fences("---\n---\nname: x\n---\nb"), Some(("---\nname: x", "b")));
        assert_eq!(fences("---\nname: x\r\n---\r\nb"), Some(("name: x", "b")));
        assert_eq!(fences("---\nname: x\nno closing"), None);
        assert_eq!(fences("# no fences"), None);
        assert_eq!(fences("\u{feff}---\nname: x\n---\n"), None);
    }

    #[test]
    fn block_scalars_and_quotes_resolve() {
        assert_eq!(fm("---\nname: s\ndescription: >\n  a folded\n  text.\n---\n"), some("s", Some("a folded text.")));
        assert_eq!(fm("---\nname: s\ndescription: |\n  one\n  two\n---\n"), some("s", Some("one\ntwo")));
        assert_eq!(fm("---\nname: s\ndescription:\n---\n"), some("s", None));
        assert_eq!(fm("---\nname: 12\ndescription: yes\n---\n"), some("12", Some("True")));
    }

    #[test]
    fn a_refused_block_is_rescued_line_wise() {
        let colon = "---\nname: c\ndescription: Work. Trigger on: it.\n---\nbody";
        assert_eq!(fm(colon), some("c", Some("Work. Trigger on: it.")));
        assert!(!parse(colon).detail.is_empty());
        assert_eq!(fm("---\nname: b\ndescription: [unterminated, flow\n---\n"), some("b", None));
        assert_eq!(fm("---\nname: t\ndescription: tab\n\tbad: value\n---\n"), some("t", Some("tab")));
        assert_eq!(fm("---\nname: s\ndescription: \"unterminated\n---\nbody\n"), some("s", Some("\"unterminated")));
        assert_eq!(parse("---\nname: s\ndescription: \"unterminated\n---\nbody\n").content, "body\n");
    }

    #[test]
    fn malformed_only_without_a_rescued_name() {
        assert_eq!(fm("---\n: [unclosed\n---\nbody\n"), (None, None, true));
        assert_eq!(fm("---\nname: [unclosed\n---\nbody"), (None, None, true));
        assert_eq!(fm("---\ndescription: no name\n---\nbody"), (None, Some("no name".into()), false));
        assert_eq!(fm("no front matter"), (None, None, false));
    }

    #[test]
    fn non_scalar_name_is_rescued_or_dropped() {
        // `name` a list: YAML accepted it, the line-wise read refuses the `[` opener.
        assert_eq!(fm("---\nname: [a, b]\ndescription: d\n---\n"), (None, Some("d".into()), false));
        // `description: null`: YAML gives None, the line-wise read takes the text.
        assert_eq!(fm("---\nname: n\ndescription: null\n---\n"), some("n", Some("null")));
    }

    /// Characters that mean something to YAML, and a few that do not.
    const ALPHABET: &[char] = &[
        '-', ':', '?', '{', '}', '[', ']', ',', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', '\t', ' ', ' ',
        '\n', '\n', '\r', '\\', '<', '=', '~', '.', '+', '_', 'a', 'n', 'e', 'x', '0', '1', '9', 'é', '\u{2028}',
        '\u{85}', '\u{7f}', '\u{feff}',
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// No input makes the YAML layer (outside the parser's own guard) or the fences panic.
        #[test]
        fn nothing_panics(picks in proptest::collection::vec(0..ALPHABET.len(), 0..120)) {
            let block: String = picks.iter().map(|&i| ALPHABET[i]).collect();
            let _ = yaml::safe_load(&block);
            let _ = parse(&format!("---\n{block}\n---\nbody"));
            let _ = parse(&block);
        }
    }
}
