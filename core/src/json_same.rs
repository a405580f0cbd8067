//! Whether JSON text reads as a [`Value`], without building one from it. A run that leaves
//! the caller's own history out of its result ([`crate::Client::run_eliding_text`]) compares
//! the result's leading messages with the text the history crossed as, instead of with a copy
//! of the history kept for that: for a long transcript the copy and its drop cost more than
//! the walk over the text.
//!
//! Text and value are the same when the text's objects have the value's keys in the same
//! order, its strings unescape to the value's and its numbers read as the value's
//! ([`crate::json_read::parse_json`] of the text would give the value). Anything this does
//! not read the common way (a surrogate escape, a key given twice) counts as different, which
//! only hands back the engine's copy of a message that may have been the caller's.

use crate::json_scan::{next_escape, number_end, skip_ws, unescape};
use serde_json::Value;

/// How many of `messages`, from the first, are the elements of the JSON array `array`, in
/// order.
pub(crate) fn same_prefix(array: &str, messages: &[Value]) -> usize {
    let mut c = Cursor { text: array, bytes: array.as_bytes(), at: 0 };
    if !c.eat(b'[') {
        return 0;
    }
    let mut n = 0;
    for m in messages {
        if (n > 0 && !c.eat(b',')) || !c.same(m) {
            break;
        }
        n += 1;
    }
    n
}

/// Whether two numbers are the same value of the same kind: `Value`'s own `==` takes a float
/// -0.0 for 0.0, which serde_json writes otherwise.
pub(crate) fn same_number(a: &Value, b: &Value) -> bool {
    a == b && a.as_f64().map(f64::to_bits) == b.as_f64().map(f64::to_bits)
}

/// A read position in the text; every comparison moves it past what matched.
struct Cursor<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn skip_ws(&mut self) {
        self.at = skip_ws(self.bytes, self.at);
    }

    /// Whether the next byte after whitespace is `c`, consumed if so.
    fn eat(&mut self, c: u8) -> bool {
        self.skip_ws();
        let found = self.bytes.get(self.at) == Some(&c);
        self.at += usize::from(found);
        found
    }

    fn same(&mut self, v: &Value) -> bool {
        match v {
            Value::Null => self.word(b"null"),
            Value::Bool(true) => self.word(b"true"),
            Value::Bool(false) => self.word(b"false"),
            Value::Number(_) => self.number(v),
            Value::String(s) => self.eat(b'"') && self.string(s),
            Value::Array(items) => {
                self.eat(b'[')
                    && items.iter().enumerate().all(|(i, item)| (i == 0 || self.eat(b',')) && self.same(item))
                    && self.eat(b']')
            }
            Value::Object(map) => {
                self.eat(b'{')
                    && map.iter().enumerate().all(|(i, (k, item))| {
                        // serde_json reads an object whose first key is its raw-value token
                        // (`$serde_json::private::RawValue`) as another value.
                        !k.starts_with('$')
                            && (i == 0 || self.eat(b','))
                            && self.eat(b'"')
                            && self.string(k)
                            && self.eat(b':')
                            && self.same(item)
                    })
                    && self.eat(b'}')
            }
        }
    }

    fn word(&mut self, w: &[u8]) -> bool {
        self.skip_ws();
        let end = self.at + w.len();
        let found = self.bytes.get(self.at..end) == Some(w);
        if found {
            self.at = end;
        }
        found
    }

    /// Whether the number here reads as `v`: serde_json's reading of its text.
    fn number(&mut self, v: &Value) -> bool {
        self.skip_ws();
        let start = self.at;
        self.at = number_end(self.bytes, start);
        start < self.at && serde_json::from_str::<Value>(&self.text[start..self.at]).is_ok_and(|n| same_number(&n, v))
    }

    /// Whether the string whose opening quote was consumed unescapes to `s`.
    fn string(&mut self, s: &str) -> bool {
        let want = s.as_bytes();
        let end = self.at + want.len();
        // Most strings need no escape: then the text holds them as they are.
        if self.bytes.get(self.at..end) == Some(want)
            && self.bytes.get(end) == Some(&b'"')
            && next_escape(want, 0) == want.len()
        {
            self.at = end + 1;
            return true;
        }
        let mut k = 0;
        loop {
            let i = next_escape(self.bytes, self.at);
            let plain = &self.bytes[self.at..i];
            if want.get(k..k + plain.len()) != Some(plain) {
                return false;
            }
            k += plain.len();
            match self.bytes.get(i) {
                Some(b'"') => {
                    self.at = i + 1;
                    return k == want.len();
                }
                Some(b'\\') => {
                    let Some((c, len)) = unescape(self.bytes, i + 1) else { return false };
                    let mut buf = [0u8; 4];
                    let c = c.encode_utf8(&mut buf).as_bytes();
                    if want.get(k..k + c.len()) != Some(c) {
                        return false;
                    }
                    k += c.len();
                    self.at = i + 1 + len;
                }
                _ => return false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json_read::parse_json;
    use serde_json::json;

    /// What `same_prefix` must say: how many leading messages equal, keys in order, the
    /// elements serde_json reads from the text.
    fn expected(array: &str, messages: &[Value]) -> usize {
        let Ok(Value::Array(given)) = parse_json(array) else { return 0 };
        messages.iter().zip(&given).take_while(|(m, g)| m.to_string() == g.to_string() && *m == *g).count()
    }

    #[test]
    fn the_prefix_the_text_holds_is_counted() {
        let messages = [
            json!({"role": "system", "content": "Be brief.\n"}),
            json!({"role": "user", "content": "caf\u{e9} \"quoted\" \\ back / slash \u{1} \u{1f389}"}),
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "w", "arguments": "{\"city\":\"Paris\"}"}}]}),
            json!({"role": "tool", "tool_call_id": "c1", "content": "18", "n": [0, -7, 1.5, true, false, {}, []]}),
        ];
        let compact = serde_json::to_string(&messages).unwrap();
        assert_eq!(same_prefix(&compact, &messages), 4);
        assert_eq!(same_prefix(&serde_json::to_string_pretty(&messages).unwrap(), &messages), 4);
        // JavaScript's escapes for the same strings, which serde_json does not write.
        let js = compact.replace("é", "\\u00e9").replace("/ slash", "\\/ slash");
        assert_eq!(same_prefix(&js, &messages), 4, "{js}");
        assert_eq!(same_prefix(&compact, &messages[..2]), 2, "fewer messages than the text holds");
        assert_eq!(same_prefix("[]", &messages), 0);
    }

    #[test]
    fn a_changed_message_ends_the_prefix() {
        let given = [json!({"role": "user", "content": "a"}), json!({"role": "user", "content": "b"}), json!(1)];
        let text = serde_json::to_string(&given).unwrap();
        let changed = [json!({"role": "user", "content": "a"}), json!({"role": "user", "content": "B"}), json!(1)];
        assert_eq!(same_prefix(&text, &changed), 1);
        for other in [
            json!({"content": "a", "role": "user"}),
            json!({"role": "user", "content": "ab"}),
            json!({"role": "user", "content": ""}),
            json!({"role": "user"}),
            json!({"role": "user", "content": "a", "name": "x"}),
            json!({"role": "user", "content": ["a"]}),
            json!({"role": "user", "content": null}),
        ] {
            assert_eq!(same_prefix(&text, std::slice::from_ref(&other)), 0, "{other}");
        }
        assert_eq!(same_prefix("[1]", &[json!(1.0)]), 0, "an integer is not a float");
        assert_eq!(same_prefix("[1.0]", &[json!(1.0)]), 1);
        assert_eq!(same_prefix("[-0.0]", &[json!(0.0)]), 0, "a float's sign counts");
        assert_eq!(same_prefix("[-0]", &[json!(0.0)]), 0);
        assert_eq!(same_prefix("[0.0]", &[json!(-0.0)]), 0);
        assert_eq!(same_prefix("[-0]", &[json!(-0.0)]), 1);
        let raw = r#"[{"$serde_json::private::RawValue":"1"}]"#;
        assert_eq!(serde_json::from_str::<Value>(raw).unwrap(), json!([1]), "serde_json's raw-value token");
        assert_eq!(same_prefix(raw, &[json!({"$serde_json::private::RawValue": "1"})]), 0);
        // A string whose own bytes are those of another's escapes.
        assert_eq!(same_prefix(r#"["a\"b"]"#, &[json!("a\\\"b")]), 0);
        assert_eq!(same_prefix(r#"["a\nb"]"#, &[json!("a\\nb")]), 0);
        assert_eq!(same_prefix(r#"["a\nb"]"#, &[json!("a\nb")]), 1);
        assert_eq!(same_prefix(r#"[{"a":1,"a":1}]"#, &[json!({"a": 1})]), 0, "a key given twice counts as different");
        assert_eq!(
            same_prefix(r#"["\ud83c\udf89"]"#, &[json!("\u{1f389}")]),
            0,
            "surrogate escapes count as different"
        );
    }

    #[test]
    fn random_messages_and_their_changed_copies_agree_with_serde_json() {
        let mut next = crate::json_scan::xorshift(0x1319_8a2e_0370_7344);
        let pieces = ["a", " ", "\"", "\\", "\n", "\u{1}", "é", "日", "🎉", "/", "text of some length"];
        let text = |next: &mut dyn FnMut() -> u64| -> String {
            (0..next() % 10).map(|_| pieces[(next() % pieces.len() as u64) as usize]).collect()
        };
        for _ in 0..if cfg!(miri) { 20 } else { 1000 } {
            let given: Vec<Value> = (0..1 + next() % 5)
                .map(|_| json!({"role": "user", "content": text(&mut next), "n": [next() % 1000, (next() % 100) as f64 / 4.0]}))
                .collect();
            let array = serde_json::to_string(&given).unwrap();
            assert_eq!(same_prefix(&array, &given), given.len(), "{array}");
            // One message changed: a string's text or a number.
            let mut changed = given.clone();
            let i = (next() % given.len() as u64) as usize;
            if next().is_multiple_of(2) {
                changed[i]["content"] = json!(text(&mut next));
            } else {
                changed[i]["n"][0] = json!(next() % 3);
            }
            assert_eq!(same_prefix(&array, &changed), expected(&array, &changed), "{array} against {changed:?}");
        }
    }
}
