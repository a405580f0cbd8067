//! Parses JSON text into the [`Value`] `serde_json::from_str` gives for it, faster for what
//! crosses from a binding: a run's input carries the whole transcript as text (Node's
//! `JSON.stringify`, the C ABI's `input_json`), mostly long plain strings, which this scans
//! sixteen bytes at a time ([`crate::json_scan`]), with no visitor between the bytes and the
//! value. What it does not read the common way (an error, a surrogate escape, a key that
//! starts with `$`, nesting past [`MAX_DEPTH`]) sends the whole text to serde_json, and a
//! number other than a short integer is serde_json's reading of that number's text, so values
//! and error messages are serde_json's own. fuzz/src/reply.rs checks the two agree.

use std::ops::Range;

use crate::json_scan::{next_escape, number_end, skip_ws, unescape};
use serde_json::{Map, Number, Value};

/// Deeper than this, the document is left to serde_json (whose own limit is 128).
const MAX_DEPTH: u32 = 100;

/// `text` as a [`Value`]: exactly `serde_json::from_str::<Value>(text)`, value and error alike.
pub fn parse_json(text: &str) -> serde_json::Result<Value> {
    match read(text) {
        Some(v) => Ok(v),
        None => serde_json::from_str(text),
    }
}

/// [`parse_json`], and where in `text` the value of the top-level object's member `key` is
/// (of a key given twice, the last, whose value the object keeps). The span is `None` when
/// there is no such member, and when serde_json read the text.
pub fn parse_json_member(text: &str, key: &str) -> serde_json::Result<(Value, Option<Range<usize>>)> {
    let mut r = Reader::new(text, Some(key));
    match r.document() {
        Some(v) => Ok((v, r.span)),
        None => serde_json::from_str(text).map(|v| (v, None)),
    }
}

/// `text` as a [`Value`], or `None` where serde_json is to read it.
fn read(text: &str) -> Option<Value> {
    Reader::new(text, None).document()
}

/// A cursor over the text; every method returns `None` for what it leaves to serde_json.
struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    depth: u32,
    /// The top-level member whose value's place in the text is wanted, and that place.
    watch: Option<&'a str>,
    span: Option<Range<usize>>,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str, watch: Option<&'a str>) -> Self {
        Reader { text, bytes: text.as_bytes(), at: 0, depth: 0, watch, span: None }
    }

    fn document(&mut self) -> Option<Value> {
        let v = self.value()?;
        self.skip_ws();
        (self.at == self.bytes.len()).then_some(v)
    }

    fn skip_ws(&mut self) {
        self.at = skip_ws(self.bytes, self.at);
    }

    /// The next byte after whitespace, consumed.
    fn next(&mut self) -> Option<u8> {
        self.skip_ws();
        let c = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(c)
    }

    fn value(&mut self) -> Option<Value> {
        match self.next()? {
            b'"' => self.string().map(Value::String),
            b'{' => self.object(),
            b'[' => self.array(),
            b't' => self.word(b"rue", Value::Bool(true)),
            b'f' => self.word(b"alse", Value::Bool(false)),
            b'n' => self.word(b"ull", Value::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn word(&mut self, rest: &[u8], v: Value) -> Option<Value> {
        let end = self.at + rest.len();
        (self.bytes.get(self.at..end)? == rest).then(|| {
            self.at = end;
            v
        })
    }

    fn number(&mut self) -> Option<Value> {
        let start = self.at - 1;
        let end = number_end(self.bytes, self.at);
        self.at = end;
        let span = &self.bytes[start..end];
        let (negative, digits) = match span.split_first() {
            Some((b'-', d)) => (true, d),
            _ => (false, span),
        };
        let plain = !digits.is_empty() && digits.len() <= 18 && digits.iter().all(u8::is_ascii_digit);
        if plain && (digits[0] != b'0' || digits.len() == 1) && !(negative && digits == b"0") {
            let n = digits.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'));
            return Some(Value::Number(if negative { Number::from(-(n as i64)) } else { Number::from(n) }));
        }
        // Fractions, exponents, long integers and whatever is malformed: serde_json's own
        // reading of the same text.
        match serde_json::from_str(&self.text[start..end]) {
            Ok(v @ Value::Number(_)) => Some(v),
            _ => None,
        }
    }

    /// A string's contents, the opening quote consumed.
    fn string(&mut self) -> Option<String> {
        let start = self.at;
        let i = next_escape(self.bytes, start);
        if self.bytes.get(i) == Some(&b'"') {
            self.at = i + 1;
            return Some(self.text[start..i].to_owned());
        }
        let mut out = String::with_capacity(i - start + 16);
        let mut from = start;
        let mut i = i;
        loop {
            out.push_str(&self.text[from..i]);
            match *self.bytes.get(i)? {
                b'"' => {
                    self.at = i + 1;
                    return Some(out);
                }
                b'\\' => {
                    let (c, len) = unescape(self.bytes, i + 1)?;
                    out.push(c);
                    from = i + 1 + len;
                }
                // A control byte inside a string: serde_json says why it is an error.
                _ => return None,
            }
            i = next_escape(self.bytes, from);
        }
    }

    fn array(&mut self) -> Option<Value> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        let mut items = Vec::new();
        self.skip_ws();
        if self.bytes.get(self.at) == Some(&b']') {
            self.at += 1;
        } else {
            loop {
                items.push(self.value()?);
                match self.next()? {
                    b',' => {}
                    b']' => break,
                    _ => return None,
                }
            }
        }
        self.depth -= 1;
        Some(Value::Array(items))
    }

    fn object(&mut self) -> Option<Value> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        let mut map = Map::new();
        match self.next()? {
            b'}' => {}
            b'"' => loop {
                let key = self.string()?;
                // serde_json reads an object whose first key is its raw-value token
                // (`$serde_json::private::RawValue`) as that value.
                if key.starts_with('$') || self.next()? != b':' {
                    return None;
                }
                self.skip_ws();
                let start = self.at;
                let v = self.value()?;
                if self.depth == 1 && self.watch == Some(key.as_str()) {
                    self.span = Some(start..self.at);
                }
                map.insert(key, v);
                match self.next()? {
                    b',' if self.next()? == b'"' => {}
                    b'}' => break,
                    _ => return None,
                }
            },
            _ => return None,
        }
        self.depth -= 1;
        Some(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Random cases; fewer under Miri, which runs them a thousand times slower.
    const ROUNDS: u32 = if cfg!(miri) { 40 } else { 2000 };

    /// `parse_json` gives what serde_json gives: the same value with its keys in the same
    /// order (the text it writes back), or the same error.
    fn agrees(text: &str) {
        match (parse_json(text), serde_json::from_str::<Value>(text)) {
            (Ok(ours), Ok(theirs)) => {
                assert_eq!(ours, theirs, "{text:?}");
                assert_eq!(ours.to_string(), theirs.to_string(), "{text:?}");
            }
            (Err(ours), Err(theirs)) => assert_eq!(ours.to_string(), theirs.to_string(), "{text:?}"),
            (ours, theirs) => panic!("{text:?}: ours {ours:?}, serde_json {theirs:?}"),
        }
    }

    #[test]
    fn documents_read_as_serde_json_reads_them() {
        let cases = [
            r#"{"role":"user","content":"hi"}"#,
            " [ 1 , -2 , 0 , -0 , 1.5 , 1e3 , -1E-3 , 123456789012345678 , 1234567890123456789 , 18446744073709551616 , -9223372036854775809 ] ",
            r#"{"a":{"b":[true,false,null,{}]},"c":[],"a":"dup, kept where it came first"}"#,
            r#""esc \" \\ \/ \b \f \n \r \t \u0000 \u001f \u00e9 \u65e5 \uFFFF end""#,
            r#""a surrogate pair, which serde_json reads: \ud83c\udf89""#,
            "\"\u{e9}\u{65e5}\u{1f389} plain multi-byte text of some length, more than sixteen bytes\"",
            r#"{"$serde_json::private::RawValue":"[1,2]"}"#,
            r##"{"x":1,"$ref":"#/defs/a"}"##,
            "", " ", "[", "]", "{", "}", "[1,]", "[,1]", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{,}", "{1:2}",
            "01", "-", "1.", ".5", "1e", "+1", "--1", "1-2", "0x10", "nul", "tru", "falsey", "null x", "[1 2]",
            "\"unterminated", "\"bad \\x escape\"", "\"\\u12\"", "\"\\uzzzz\"", "\"\\ud800\"", "\"\\udc00 lone\"",
            "\"\\ud83c\\u0041\"", "\"tab\tinside\"", "\"nl\ninside\"", "[\"a\"\"b\"]", "{\"a\":1 \"b\":2}",
            "\u{feff}{}", "[1]\n", "\r\n\t{}\t", "1e400", "-1e400", "4.9e-325", "0.1", "9007199254740993.0",
        ];
        for text in cases {
            agrees(text);
        }
    }

    #[test]
    fn a_transcript_is_read_without_serde_json() {
        let text = r#"[{"role":"system","content":"Be brief.\n"},{"role":"user","content":"caf\u00e9 \"quoted\""},
            {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",
            "function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
            {"role":"tool","tool_call_id":"c1","content":"18 C","n":[0,-7,42]}]"#;
        assert_eq!(read(text).map(|v| v.to_string()), Some(serde_json::from_str::<Value>(text).unwrap().to_string()));
    }

    #[test]
    fn a_member_is_found_where_the_object_has_it() {
        let text = r#"{"prompt":"hi", "history" : [{"role":"user","content":"a"}] ,"n":{"history":1},"history":[]}"#;
        let (v, span) = parse_json_member(text, "history").unwrap();
        assert_eq!(v, serde_json::from_str::<Value>(text).unwrap());
        assert_eq!(&text[span.unwrap()], "[]", "the last of a key given twice, not the nested one");
        let text = r#"{"prompt":"hi", "history" : [{"role":"user","content":"a"}] }"#;
        assert_eq!(&text[parse_json_member(text, "history").unwrap().1.unwrap()], r#"[{"role":"user","content":"a"}]"#);
        assert_eq!(parse_json_member(r#"{"prompt":"hi"}"#, "history").unwrap().1, None);
        assert_eq!(parse_json_member(r#"[{"history":[]}]"#, "history").unwrap().1, None, "not a top-level member");
        assert_eq!(parse_json_member(r#"{"history":[],"$x":1}"#, "history").unwrap().1, None, "read by serde_json");
        assert!(parse_json_member(r#"{"history":[}"#, "history").is_err());
    }

    #[test]
    fn nesting_reads_as_serde_json_reads_it_on_both_sides_of_its_limit() {
        for depth in [1, 99, 100, 101, 127, 128, 129, 200] {
            agrees(&format!("{}{}", "[".repeat(depth), "]".repeat(depth)));
            agrees(&format!("{}1{}", "{\"k\":".repeat(depth), "}".repeat(depth)));
        }
    }

    #[test]
    fn random_documents_and_their_damaged_copies_read_as_serde_json_reads_them() {
        let mut next = crate::json_scan::xorshift(0x243f_6a88_85a3_08d3);
        let pieces = ["a", " ", "\"", "\\", "\n", "\u{1}", "é", "日", "🎉", "\u{2028}", "text of some length"];
        for _ in 0..ROUNDS {
            let messages: Vec<Value> = (0..next() % 6)
                .map(|i| {
                    let text: String = (0..next() % 12).map(|_| pieces[(next() % pieces.len() as u64) as usize]).collect();
                    let n = next();
                    json!({"role": "user", "content": text, "n": [n, -((n >> 2) as i64), (n % 1000) as f64 / 7.0], "i": i})
                })
                .collect();
            let compact = serde_json::to_string(&messages).unwrap();
            let pretty = serde_json::to_string_pretty(&messages).unwrap();
            for text in [&compact, &pretty] {
                agrees(text);
                let bytes = text.as_bytes();
                // Cut at a random character boundary, and with one ASCII byte changed.
                let mut cut = (next() % (bytes.len() as u64 + 1)) as usize;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                agrees(&text[..cut]);
                let at = (next() % bytes.len() as u64) as usize;
                if bytes[at].is_ascii() {
                    let mut damaged = bytes.to_vec();
                    damaged[at] = b"{}[],:\"\\ 0-ex"[(next() % 13) as usize];
                    agrees(std::str::from_utf8(&damaged).unwrap());
                }
            }
        }
    }
}
