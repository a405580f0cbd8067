//! PyYAML's `yaml.safe_load`, as far as a skill's front matter needs it.
//!
//! Upstream reads front matter with PyYAML, and which files it accepts, and what their
//! scalars say, is part of its output: a refused block falls back to a line-wise read
//! (`frontmatter.rs`), and `str(value)` of what YAML built is the description. So on top of
//! a real YAML parser (saphyr-parser, which yields events), this module builds values the way
//! PyYAML's `SafeLoader` does: YAML 1.1 plain-scalar resolution (`yes`/`On` → `True`, `0x1F`
//! and `1:30` → integers, `1.0` → a float, dates), `<<` merges, explicit tags, and PyYAML's
//! refusals (a tab outside quoted and block scalars and comments, special characters, a
//! second document, a tag it has no constructor for, a collection as a key, an impossible
//! date). Every refusal is an error with a message; nothing here panics on any input.

use std::collections::HashMap;
use std::rc::Rc;

use saphyr_parser::{Event, Parser, ScalarStyle, Span, Tag};

use super::scalar::resolve_scalar;

/// A value as PyYAML's safe loader builds it, reduced to what front matter needs.
#[derive(Clone, Debug)]
pub(crate) enum Py {
    /// `str`.
    Str(String),
    /// `int`, as the decimal text Python prints.
    Int(String),
    /// `float`.
    Float(f64),
    /// `bool`.
    Bool(bool),
    /// `None`.
    None,
    /// A date, datetime or bytes: hashable, but not a scalar front matter keeps.
    Opaque,
    /// A sequence node.
    Seq(Rc<Vec<Py>>),
    /// A mapping node, its merges applied.
    Map(Rc<Vec<(Py, Py)>>),
    /// A collection still being built (an alias to an ancestor).
    Building,
    /// The plain scalar `<<` (only meaningful as a key).
    Merge,
    /// The plain scalar `=` (only meaningful as a key).
    Eq,
}

impl Py {
    /// `str(value)` for the scalars front matter keeps (`str`, `int`, `float`, `bool`).
    pub(crate) fn scalar_text(&self) -> Option<String> {
        match self {
            Py::Str(s) | Py::Int(s) => Some(s.clone()),
            Py::Float(f) => Some(crate::pystr::float_repr(*f)),
            Py::Bool(true) => Some("True".into()),
            Py::Bool(false) => Some("False".into()),
            _ => None,
        }
    }

    /// Whether this is the string `key`.
    pub(crate) fn is_str(&self, key: &str) -> bool {
        matches!(self, Py::Str(s) if s == key)
    }
}

/// Most key/value pairs merges may copy in one document: a merge of merges grows
/// geometrically, and PyYAML would run out of memory where this refuses.
const MERGE_BUDGET: usize = 100_000;

/// Deepest nesting accepted (PyYAML stops at Python's recursion limit).
const MAX_DEPTH: usize = 500;

/// `yaml.safe_load(text)`: the document's value (`None` for an empty stream), or the
/// reason PyYAML refuses it.
pub(crate) fn safe_load(text: &str) -> Result<Option<Py>, String> {
    check_printable(text)?;
    let mut relaxed: Option<String> = None;
    let mut fixed = Vec::new();
    loop {
        let src = relaxed.as_deref().unwrap_or(text);
        let mut events = Vec::new();
        let mut failed = None;
        for item in Parser::new_from_str(src) {
            match item {
                Ok(ev) => events.push(ev),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        let Some(e) = failed else {
            check_pyyaml_layout(src, &events)?;
            let mut c = Composer::default();
            for (ev, _) in events {
                c.event(ev)?;
            }
            return Ok(c.root);
        };
        // PyYAML does not check the indentation of a quoted scalar's continuation lines
        // (YAML 1.2 wants them indented under their key): indenting them changes nothing
        // in the value, since folding drops a line's leading white space.
        let at = e.marker().index();
        if e.info() != "invalid indentation in quoted scalar" || fixed.contains(&at) || fixed.len() > 64 {
            return Err(e.to_string());
        }
        match indent_quoted(src, at) {
            Some(next) => {
                fixed.push(at);
                relaxed = Some(next);
            }
            None => return Err(e.to_string()),
        }
    }
}

/// `text` with each continuation line of the quoted scalar opening at character `at`
/// indented to the opening quote's column; `None` when there is nothing to indent, the
/// scalar never closes, or a line in it is a document marker (which PyYAML refuses too).
fn indent_quoted(text: &str, at: usize) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    let quote = *chars.get(at).filter(|c| **c == '"' || **c == '\'')?;
    let column = at - chars[..at].iter().rposition(|c| *c == '\n').map_or(0, |p| p + 1);
    let pad = " ".repeat(column.max(1));
    let mut out: String = chars[..=at].iter().collect();
    let mut i = at + 1;
    let mut changed = false;
    while i < chars.len() {
        let c = chars[i];
        if quote == '"' && c == '\\' {
            out.extend(&chars[i..(i + 2).min(chars.len())]);
            i += 2;
            continue;
        }
        if c == quote {
            if quote == '\'' && chars.get(i + 1) == Some(&'\'') {
                out.push_str("''");
                i += 2;
                continue;
            }
            out.extend(&chars[i..]);
            return changed.then_some(out);
        }
        out.push(c);
        if c == '\n' {
            let marker: String = chars[i + 1..(i + 4).min(chars.len())].iter().collect();
            let after = chars.get(i + 4);
            if (marker == "---" || marker == "...") && after.is_none_or(|c| c.is_whitespace()) {
                return None;
            }
            out.push_str(&pad);
            changed = true;
        }
        i += 1;
    }
    None
}

/// PyYAML's reader refuses these anywhere in the stream.
fn check_printable(text: &str) -> Result<(), String> {
    for c in text.chars() {
        let u = c as u32;
        let ok = matches!(u, 0x09 | 0x0A | 0x0D | 0x20..=0x7E | 0x85 | 0xA0..=0xD7FF | 0xE000..=0xFFFD | 0x10000..);
        if !ok {
            return Err(format!("unacceptable character #x{u:04x}: special characters are not allowed"));
        }
    }
    Ok(())
}

/// Where PyYAML's scanner is stricter than YAML 1.2 (and saphyr):
/// - it never skips a tab between tokens: a tab stands only inside a quoted or block
///   scalar, or in a comment;
/// - `\u{85}`, `\u{2028}` and `\u{2029}` are line breaks to it: outside a quoted scalar
///   or a comment they end lines YAML 1.2 reads as one (refused here rather than re-read);
/// - an anchor or alias name is letters, digits, `-` and `_`, and an anchor is defined once.
fn check_pyyaml_layout(text: &str, events: &[(Event<'_>, Span)]) -> Result<(), String> {
    let breaks = ['\u{85}', '\u{2028}', '\u{2029}'];
    if !text.contains(['\t', '&', '*', ':']) && !text.contains(breaks) {
        return Ok(());
    }
    let chars: Vec<char> = text.chars().collect();
    // Every scalar's character range, and whether it is quoted or a block scalar.
    let spans: Vec<(usize, usize, ScalarStyle)> = events
        .iter()
        .filter_map(|(ev, span)| match ev {
            Event::Scalar(_, style, _, _) => Some((span.start.index(), span.end.index(), *style)),
            _ => None,
        })
        .collect();
    // Scalars come in document order and never overlap: a binary search finds the one at `i`.
    let covering = |i: usize| {
        let at = spans.partition_point(|(start, _, _)| *start <= i);
        at.checked_sub(1).map(|k| spans[k]).filter(|(_, end, _)| i < *end).map(|(_, _, style)| style)
    };
    let quoted = |st: Option<ScalarStyle>| matches!(st, Some(ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted));
    let mut in_comment = false;
    for (i, &c) in chars.iter().enumerate() {
        match c {
            // PyYAML ends a comment at a Unicode line break too (YAML 1.2 reads on: what
            // follows in the same line is then lost to it, a rare gap accepted here).
            '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}' if in_comment => in_comment = false,
            '\n' | '\r' => in_comment = false,
            '#' if !in_comment && (i == 0 || matches!(chars[i - 1], ' ' | '\t' | '\n' | '\r')) => {
                in_comment = covering(i).is_none();
            }
            '\t' if !in_comment && !covering(i).is_some_and(|st| !matches!(st, ScalarStyle::Plain)) => {
                return Err("found character '\\t' that cannot start any token".into());
            }
            c if breaks.contains(&c) && !quoted(covering(i)) => {
                return Err(format!("found line break U+{:04X} where YAML 1.2 sees none", c as u32));
            }
            _ => {}
        }
    }
    // `: value` with no key: PyYAML has no empty implicit key (an explicit `? ` one is fine).
    // Each mapping frame knows whether its next node is a key.
    let mut frames: Vec<Option<bool>> = Vec::new();
    for (ev, span) in events {
        let is_node =
            matches!(ev, Event::Scalar(..) | Event::Alias(_) | Event::SequenceStart(..) | Event::MappingStart(..));
        let mut is_key = false;
        if let (true, Some(Some(next_is_key))) = (is_node, frames.last_mut()) {
            is_key = *next_is_key;
            *next_is_key = !*next_is_key;
        }
        match ev {
            Event::Scalar(v, ScalarStyle::Plain, 0, None) if is_key && v.is_empty() => {
                let at = span.start.index();
                if span.end.index() == at
                    && chars.get(at) == Some(&':')
                    && chars[..at].iter().rev().find(|c| !c.is_whitespace()) != Some(&'?')
                {
                    return Err("while parsing a mapping: expected a key before ':'".into());
                }
            }
            Event::SequenceStart(..) => frames.push(None),
            Event::MappingStart(..) => frames.push(Some(true)),
            Event::SequenceEnd | Event::MappingEnd => {
                frames.pop();
            }
            _ => {}
        }
    }
    let mut anchors = std::collections::HashSet::new();
    for (ev, span) in events {
        let (sigil, defines) = match ev {
            Event::Scalar(_, _, a, _) | Event::SequenceStart(a, _) | Event::MappingStart(a, _) if *a > 0 => ('&', true),
            Event::Alias(_) => ('*', false),
            _ => continue,
        };
        let Some(name) = property_name(&chars, span.start.index(), sigil) else { continue };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return Err(format!("while scanning an anchor: invalid name {name:?}"));
        }
        if defines && !anchors.insert(name.clone()) {
            return Err(format!("found duplicate anchor {name:?}"));
        }
    }
    Ok(())
}

/// The anchor (`&`) or alias (`*`) name of the node whose properties start at `at`.
fn property_name(chars: &[char], mut at: usize, sigil: char) -> Option<String> {
    if chars.get(at) == Some(&'!') && sigil == '&' {
        while chars.get(at).is_some_and(|c| !c.is_whitespace()) {
            at += 1;
        }
        while chars.get(at).is_some_and(|c| *c == ' ' || *c == '\t') {
            at += 1;
        }
    }
    if chars.get(at) != Some(&sigil) {
        return None;
    }
    let name = chars[at + 1..].iter().take_while(|c| !c.is_whitespace() && !",[]{}".contains(**c)).collect();
    Some(name)
}

enum Frame {
    Seq { anchor: usize, tag: Option<String>, items: Vec<Py> },
    Map { anchor: usize, pairs: Vec<(Py, Py)>, key: Option<Py> },
}

#[derive(Default)]
struct Composer {
    anchors: HashMap<usize, Py>,
    stack: Vec<Frame>,
    documents: usize,
    root: Option<Py>,
    merged: usize,
}

pub(super) fn no_constructor(tag: &str) -> String {
    format!("could not determine a constructor for the tag '{tag}'")
}

/// The tag's full name; `None` for no tag or the non-specific `!`.
fn tag_name(tag: Option<&Tag>) -> Option<String> {
    let full = format!("{}{}", tag?.handle, tag?.suffix);
    (full != "!").then_some(full)
}

/// The core schema's tag prefix (`!!`).
pub(super) const CORE: &str = "tag:yaml.org,2002:";

impl Composer {
    fn event(&mut self, ev: Event<'_>) -> Result<(), String> {
        match ev {
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err("expected a single document in the stream".into());
                }
            }
            Event::Alias(id) => {
                let v = self.anchors.get(&id).cloned().ok_or("found undefined alias")?;
                self.push(v)?;
            }
            Event::Scalar(value, style, anchor, tag) => {
                let v = resolve_scalar(&value, style, tag_name(tag.as_deref()))?;
                if anchor > 0 {
                    self.anchors.insert(anchor, v.clone());
                }
                self.push(v)?;
            }
            Event::SequenceStart(anchor, tag) => {
                let tag = tag_name(tag.as_deref());
                if let Some(t) = &tag {
                    if !["seq", "omap", "pairs"].iter().any(|k| t.strip_prefix(CORE) == Some(k)) {
                        return Err(no_constructor(t));
                    }
                }
                self.open(anchor, Frame::Seq { anchor, tag, items: Vec::new() })?;
            }
            Event::MappingStart(anchor, tag) => {
                let tag = tag_name(tag.as_deref());
                if let Some(t) = &tag {
                    if !["map", "set"].iter().any(|k| t.strip_prefix(CORE) == Some(k)) {
                        return Err(no_constructor(t));
                    }
                }
                self.open(anchor, Frame::Map { anchor, pairs: Vec::new(), key: None })?;
            }
            Event::SequenceEnd => {
                let Some(Frame::Seq { anchor, tag, items }) = self.stack.pop() else {
                    return Err("unbalanced sequence".into());
                };
                if tag.is_some_and(|t| t != format!("{CORE}seq")) {
                    // !!omap and !!pairs: a sequence of one-pair mappings.
                    let ok = items.iter().all(|i| matches!(i, Py::Map(p) if p.len() == 1));
                    if !ok {
                        return Err("while constructing an ordered map: expected a single mapping item".into());
                    }
                }
                self.close(anchor, Py::Seq(Rc::new(items)))?;
            }
            Event::MappingEnd => {
                let Some(Frame::Map { anchor, pairs, .. }) = self.stack.pop() else {
                    return Err("unbalanced mapping".into());
                };
                let map = self.flatten(pairs)?;
                self.close(anchor, map)?;
            }
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => {}
        }
        Ok(())
    }

    fn open(&mut self, anchor: usize, frame: Frame) -> Result<(), String> {
        if self.stack.len() >= MAX_DEPTH {
            return Err("maximum nesting depth exceeded".into());
        }
        if anchor > 0 {
            self.anchors.insert(anchor, Py::Building);
        }
        self.stack.push(frame);
        Ok(())
    }

    fn close(&mut self, anchor: usize, v: Py) -> Result<(), String> {
        if anchor > 0 {
            self.anchors.insert(anchor, v.clone());
        }
        self.push(v)
    }

    /// Places a finished node: the document, a sequence item, a mapping key or value.
    fn push(&mut self, v: Py) -> Result<(), String> {
        let as_value = |v: Py| match v {
            Py::Merge => Err(no_constructor("tag:yaml.org,2002:merge")),
            Py::Eq => Err(no_constructor("tag:yaml.org,2002:value")),
            v => Ok(v),
        };
        match self.stack.last_mut() {
            None => self.root = Some(as_value(v)?),
            Some(Frame::Seq { items, .. }) => items.push(as_value(v)?),
            Some(Frame::Map { key, pairs, .. }) => match key.take() {
                // PyYAML turns a `=` key into the string "=".
                None => *key = Some(if matches!(v, Py::Eq) { Py::Str("=".into()) } else { v }),
                Some(k) => pairs.push((k, as_value(v)?)),
            },
        }
        Ok(())
    }

    /// PyYAML's `flatten_mapping` and its hashable-key check: each `<<` value's pairs
    /// (a mapping, or the mappings of a sequence, the first one winning) go before the
    /// mapping's own pairs, which win over them.
    fn flatten(&mut self, pairs: Vec<(Py, Py)>) -> Result<Py, String> {
        let mut merged: Vec<(Py, Py)> = Vec::new();
        let mut own = Vec::with_capacity(pairs.len());
        let bad_merge =
            || "while constructing a mapping: expected a mapping or list of mappings for merging".to_string();
        for (k, v) in pairs {
            if !matches!(k, Py::Merge) {
                if matches!(k, Py::Seq(_) | Py::Map(_) | Py::Building) {
                    return Err("while constructing a mapping: found unhashable key".into());
                }
                own.push((k, v));
                continue;
            }
            let sources: Vec<Rc<Vec<(Py, Py)>>> = match v {
                Py::Map(p) => vec![p],
                Py::Seq(items) => {
                    let mut subs = Vec::with_capacity(items.len());
                    for item in items.iter().rev() {
                        match item {
                            Py::Map(p) => subs.push(p.clone()),
                            _ => return Err(bad_merge()),
                        }
                    }
                    subs
                }
                _ => return Err(bad_merge()),
            };
            for p in sources {
                self.merged += p.len();
                if self.merged > MERGE_BUDGET {
                    return Err("too many merged keys".into());
                }
                merged.extend(p.iter().cloned());
            }
        }
        merged.extend(own);
        Ok(Py::Map(Rc::new(merged)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pyyaml_refusals_are_errors() {
        for src in [
            "a: <<",
            "a: =",
            "a: !foo x",
            "a: 2024-02-30",
            "a: 0000-01-01",
            "key:\tvalue",
            "a: b\n\tc: d",
            "a: 0b_",
            "a: !!binary abc",
            "a: 1\n...\nb: 2",
            "a: \u{7f}",
            "? [1]\n: 2",
            "a: !!omap [a]",
            "a: [x,\ty]",
            "a: !!int",
            "a: !!bool 1",
            "a: !!timestamp x",
            "a: 2001-12-14 21:59:43.10 +24",
            "a: *nope",
            "a: b: c",
            "a: &x 1\nb: &x 2",
            "a: &a.b 1",
            "a: x\u{2028}y",
            "a: 1\n: 2",
            "- : x",
            "{: v}",
            "a: 'x\n...\n'",
        ] {
            assert!(safe_load(src).is_err(), "{src:?} should be refused");
        }
    }

    #[test]
    fn tabs_in_quoted_block_and_comment_are_fine() {
        for src in
            ["a: \"x\ty\"", "a: |\n  x\tq\n", "a: b # c\td", "? \n: v", "a: 'x\ny'", "m:\n  a: \"x\ny \\\"z\"\nb: 1"]
        {
            assert!(safe_load(src).is_ok(), "{src:?}");
        }
    }

    #[test]
    fn merges_put_own_keys_last() {
        let Ok(Some(Py::Map(p))) = safe_load("<<: {name: x, description: d}\nname: y") else { panic!() };
        let name = p.iter().rev().find(|(k, _)| k.is_str("name")).and_then(|(_, v)| v.scalar_text());
        assert_eq!(name.as_deref(), Some("y"));
        assert!(safe_load("a: &x [*x]").is_ok());
        assert!(safe_load("&x {<<: *x}").is_err());
        assert!(safe_load("=: 1").is_ok());
    }

    #[test]
    fn a_merge_bomb_is_refused_not_built() {
        let mut doc = String::from("a0: &a0 {k: v, l: w}\n");
        for i in 1..40 {
            let prev = format!("*a{}", i - 1);
            doc.push_str(&format!("a{i}: &a{i} {{<<: [{prev}, {prev}, {prev}]}}\n"));
        }
        assert!(safe_load(&doc).is_err());
    }
}
