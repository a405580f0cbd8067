//! PyYAML's scalar constructors: how `SafeLoader` turns a scalar's text into a value.
//! Plain scalars go through its YAML 1.1 implicit resolvers (`yes` is `True`, `0x1F` and
//! `1:30` are integers, `1.0` a float, `2024-01-02` a date), quoted and block scalars are
//! strings, and an explicit tag picks its constructor, which may refuse the text.

use saphyr_parser::ScalarStyle;

use super::yaml::{no_constructor, Py, CORE};

/// A scalar's value: plain (or `!`-tagged) scalars by PyYAML's implicit resolvers, other
/// styles as strings, explicit tags by their constructor.
pub(super) fn resolve_scalar(v: &str, style: ScalarStyle, tag: Option<String>) -> Result<Py, String> {
    let Some(tag) = tag else {
        return if matches!(style, ScalarStyle::Plain) { implicit(v) } else { Ok(Py::Str(v.to_string())) };
    };
    match tag.strip_prefix(CORE) {
        Some("str") => Ok(Py::Str(v.to_string())),
        Some("int") => construct_int(v).map(Py::Int),
        Some("float") => construct_float(v).map(Py::Float),
        Some("bool") => match v.to_lowercase().as_str() {
            "yes" | "true" | "on" => Ok(Py::Bool(true)),
            "no" | "false" | "off" => Ok(Py::Bool(false)),
            _ => Err(format!("invalid boolean {v:?}")),
        },
        Some("null") => Ok(Py::None),
        Some("timestamp") => match timestamp(v, false) {
            Some(Ok(())) => Ok(Py::Opaque),
            Some(Err(e)) => Err(e),
            None => Err(format!("invalid timestamp {v:?}")),
        },
        Some("binary") => binary(v).map(|()| Py::Opaque),
        Some(kind @ ("map" | "seq" | "set" | "omap" | "pairs")) => {
            Err(format!("expected a {} node, but found scalar", if kind == "seq" { "sequence" } else { "mapping" }))
        }
        _ => Err(no_constructor(&tag)),
    }
}

/// PyYAML's implicit resolvers (YAML 1.1), in their order.
fn implicit(v: &str) -> Result<Py, String> {
    match v {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Py::None),
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => return Ok(Py::Bool(true)),
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => return Ok(Py::Bool(false)),
        "<<" => return Ok(Py::Merge),
        "=" => return Ok(Py::Eq),
        _ => {}
    }
    if is_float(v) {
        return construct_float(v).map(Py::Float);
    }
    if is_int(v) {
        return construct_int(v).map(Py::Int);
    }
    match timestamp(v, true) {
        Some(Ok(())) => Ok(Py::Opaque),
        Some(Err(e)) => Err(e),
        None => Ok(Py::Str(v.to_string())),
    }
}

/// A cursor over ASCII text, for the resolvers' patterns.
struct Cur<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cur<'_> {
    fn eat(&mut self, f: impl Fn(u8) -> bool) -> bool {
        if self.b.get(self.i).is_some_and(|&c| f(c)) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn eat_all(&mut self, f: impl Fn(u8) -> bool) -> usize {
        let start = self.i;
        while self.eat(&f) {}
        self.i - start
    }
    fn lit(&mut self, s: &str) -> bool {
        if self.b[self.i..].starts_with(s.as_bytes()) {
            self.i += s.len();
            true
        } else {
            false
        }
    }
    fn done(&self) -> bool {
        self.i == self.b.len()
    }
    fn sign(&mut self) {
        self.eat(|c| c == b'-' || c == b'+');
    }
    /// `(?::[0-5]?[0-9])+`: at least one sexagesimal group.
    fn sexagesimal(&mut self) -> bool {
        let mut groups = 0;
        while self.b.get(self.i) == Some(&b':') {
            let save = self.i;
            self.i += 1;
            let two = matches!(self.b.get(self.i), Some(b'0'..=b'5'))
                && self.b.get(self.i + 1).is_some_and(u8::is_ascii_digit);
            if two {
                self.i += 2;
            } else if !self.eat(|c| c.is_ascii_digit()) {
                self.i = save;
                break;
            }
            groups += 1;
        }
        groups > 0
    }
}

fn dig(c: u8) -> bool {
    c.is_ascii_digit()
}
fn dig_(c: u8) -> bool {
    c.is_ascii_digit() || c == b'_'
}

/// PyYAML's float pattern.
fn is_float(v: &str) -> bool {
    let b = v.as_bytes();
    let exp = |c: &mut Cur<'_>| {
        let save = c.i;
        if c.eat(|x| x == b'e' || x == b'E') && c.eat(|x| x == b'-' || x == b'+') && c.eat_all(dig) > 0 {
            return;
        }
        c.i = save;
    };
    // [-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?
    let mut c = Cur { b, i: 0 };
    c.sign();
    if c.eat(dig) {
        c.eat_all(dig_);
        if c.eat(|x| x == b'.') {
            c.eat_all(dig_);
            exp(&mut c);
            if c.done() {
                return true;
            }
        }
    }
    // \.[0-9][0-9_]*([eE][-+][0-9]+)?
    let mut c = Cur { b, i: 0 };
    if c.lit(".") && c.eat(dig) {
        c.eat_all(dig_);
        exp(&mut c);
        if c.done() {
            return true;
        }
    }
    // [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*
    let mut c = Cur { b, i: 0 };
    c.sign();
    if c.eat(dig) {
        c.eat_all(dig_);
        if c.sexagesimal() && c.eat(|x| x == b'.') {
            c.eat_all(dig_);
            if c.done() {
                return true;
            }
        }
    }
    // [-+]?\.(inf|Inf|INF) | \.(nan|NaN|NAN)
    let unsigned = v.strip_prefix(['-', '+']).unwrap_or(v);
    matches!(unsigned, ".inf" | ".Inf" | ".INF") || matches!(v, ".nan" | ".NaN" | ".NAN")
}

/// PyYAML's int pattern.
fn is_int(v: &str) -> bool {
    let b = v.as_bytes();
    let whole = |f: &dyn Fn(&mut Cur<'_>) -> bool| {
        let mut c = Cur { b, i: 0 };
        c.sign();
        f(&mut c) && c.done()
    };
    whole(&|c| c.lit("0b") && c.eat_all(|x| x == b'0' || x == b'1' || x == b'_') > 0)
        || whole(&|c| c.lit("0x") && c.eat_all(|x| x.is_ascii_hexdigit() || x == b'_') > 0)
        || whole(&|c| c.lit("0") && c.eat_all(|x| (b'0'..=b'7').contains(&x) || x == b'_') > 0)
        || whole(&|c| c.lit("0"))
        || whole(&|c| {
            let lead = c.eat(|x| (b'1'..=b'9').contains(&x));
            c.eat_all(dig_);
            lead && (c.done() || c.sexagesimal())
        })
}

/// An unsigned integer of any size, in base 10^9 limbs, least significant first.
struct Big(Vec<u64>);

const LIMB: u64 = 1_000_000_000;

impl Big {
    fn mul_add(&mut self, m: u64, a: u64) {
        let mut carry = a;
        for limb in &mut self.0 {
            let x = *limb * m + carry;
            *limb = x % LIMB;
            carry = x / LIMB;
        }
        while carry > 0 {
            self.0.push(carry % LIMB);
            carry /= LIMB;
        }
    }
    fn add(&mut self, other: &Big) {
        let mut carry = 0;
        for (i, &o) in other.0.iter().enumerate() {
            if i == self.0.len() {
                self.0.push(0);
            }
            let x = self.0[i] + o + carry;
            self.0[i] = x % LIMB;
            carry = x / LIMB;
        }
        let mut i = other.0.len();
        while carry > 0 {
            if i == self.0.len() {
                self.0.push(0);
            }
            let x = self.0[i] + carry;
            self.0[i] = x % LIMB;
            carry = x / LIMB;
            i += 1;
        }
    }
    /// `int(text, base)` for bare digits (no sign, no spaces).
    fn parse(text: &str, base: u32) -> Option<Big> {
        if text.is_empty() {
            return None;
        }
        let mut b = Big(Vec::new());
        for c in text.chars() {
            b.mul_add(u64::from(base), u64::from(c.to_digit(base)?));
        }
        Some(b)
    }
    fn is_zero(&self) -> bool {
        self.0.iter().all(|&l| l == 0)
    }
    fn text(&self) -> String {
        let mut limbs = self.0.iter().rev().skip_while(|&&l| l == 0);
        let Some(first) = limbs.next() else { return "0".into() };
        let mut s = first.to_string();
        for l in limbs {
            s.push_str(&format!("{l:09}"));
        }
        s
    }
}

/// PyYAML's `construct_yaml_int`, as the decimal text Python prints.
fn construct_int(v: &str) -> Result<String, String> {
    let bad = || format!("invalid literal for int(): {v:?}");
    let s = v.replace('_', "");
    let (neg, s) = match s.as_bytes().first() {
        None => return Err(bad()),
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        Some(_) => (false, s.as_str()),
    };
    let n = if s == "0" {
        Big(Vec::new())
    } else if let Some(d) = s.strip_prefix("0b") {
        Big::parse(d, 2).ok_or_else(bad)?
    } else if let Some(d) = s.strip_prefix("0x") {
        Big::parse(d, 16).ok_or_else(bad)?
    } else if s.starts_with('0') {
        Big::parse(s, 8).ok_or_else(bad)?
    } else if s.contains(':') {
        let mut n = Big(Vec::new());
        for part in s.split(':') {
            n.mul_add(60, 0);
            n.add(&Big::parse(part, 10).ok_or_else(bad)?);
        }
        n
    } else {
        Big::parse(s, 10).ok_or_else(bad)?
    };
    Ok(if neg && !n.is_zero() { format!("-{}", n.text()) } else { n.text() })
}

/// PyYAML's `construct_yaml_float`.
fn construct_float(v: &str) -> Result<f64, String> {
    let bad = || format!("could not convert string to float: {v:?}");
    let s = v.replace('_', "").to_lowercase();
    let (sign, s) = match s.as_bytes().first() {
        None => return Err(bad()),
        Some(b'-') => (-1.0, &s[1..]),
        Some(b'+') => (1.0, &s[1..]),
        Some(_) => (1.0, s.as_str()),
    };
    if s == ".inf" {
        return Ok(sign * f64::INFINITY);
    }
    if s == ".nan" {
        return Ok(f64::NAN);
    }
    let float = |t: &str| t.trim_matches(crate::pystr::is_space).parse::<f64>().map_err(|_| bad());
    if s.contains(':') {
        let (mut value, mut base) = (0.0, 1.0);
        for part in s.split(':').rev() {
            value += float(part)? * base;
            base *= 60.0;
        }
        return Ok(sign * value);
    }
    Ok(sign * float(s)?)
}

/// A YAML 1.1 timestamp: `None` when `v` is not one (for the implicit resolver, whose
/// pattern is stricter for a bare date), else whether Python's `datetime` accepts it.
fn timestamp(v: &str, implicit: bool) -> Option<Result<(), String>> {
    let b = v.as_bytes();
    let mut c = Cur { b, i: 0 };
    let num = |c: &mut Cur<'_>, min: usize, max: usize| -> Option<u32> {
        let start = c.i;
        while c.i - start < max && c.eat(dig) {}
        (c.i - start >= min).then(|| v[start..c.i].parse().ok()).flatten()
    };
    let year = num(&mut c, 4, 4)?;
    let m_start = c.i;
    if !c.lit("-") {
        return None;
    }
    let month = num(&mut c, 1, 2)?;
    if !c.lit("-") {
        return None;
    }
    let day = num(&mut c, 1, 2)?;
    let date_len = c.i - m_start;
    let mut time = None;
    if !c.done() {
        if !(c.eat(|x| x == b'T' || x == b't') || c.eat_all(|x| x == b' ' || x == b'\t') > 0) {
            return None;
        }
        let hour = num(&mut c, 1, 2)?;
        if !c.lit(":") {
            return None;
        }
        let minute = num(&mut c, 2, 2)?;
        if !c.lit(":") {
            return None;
        }
        let second = num(&mut c, 2, 2)?;
        if c.lit(".") {
            c.eat_all(dig);
        }
        let save = c.i;
        c.eat_all(|x| x == b' ' || x == b'\t');
        let mut offset = 0;
        if !c.lit("Z") {
            if c.eat(|x| x == b'-' || x == b'+') {
                let h = num(&mut c, 1, 2)?;
                let m = if c.lit(":") { num(&mut c, 2, 2)? } else { 0 };
                offset = h * 60 + m;
            } else {
                c.i = save;
            }
        }
        if !c.done() {
            return None;
        }
        time = Some((hour, minute, second, offset));
    } else if implicit && date_len != 6 {
        // The implicit pattern wants `YYYY-MM-DD` for a bare date.
        return None;
    }
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return Some(Err("month must be in 1..12".into())),
    };
    if year == 0 {
        return Some(Err(format!("year {year} is out of range")));
    }
    if day == 0 || day > days {
        return Some(Err("day is out of range for month".into()));
    }
    if let Some((hour, minute, second, offset)) = time {
        if hour > 23 || minute > 59 || second > 59 {
            return Some(Err("time is out of range".into()));
        }
        if offset >= 24 * 60 {
            return Some(Err("offset must be strictly between -24 and 24 hours".into()));
        }
    }
    Some(Ok(()))
}

/// PyYAML's `construct_yaml_binary`: ASCII base64 with correct padding.
fn binary(v: &str) -> Result<(), String> {
    if !v.is_ascii() {
        return Err("failed to convert base64 data into ascii".into());
    }
    let data = v.bytes().filter(|c| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/').count();
    let pads = v.bytes().filter(|c| *c == b'=').count();
    match data % 4 {
        0 => Ok(()),
        2 if pads >= 2 => Ok(()),
        3 if pads >= 1 => Ok(()),
        _ => Err("failed to decode base64 data: Incorrect padding".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::yaml::safe_load;
    use super::*;

    fn value(text: &str) -> Result<Option<String>, String> {
        match safe_load(&format!("a: {text}"))? {
            Some(Py::Map(p)) => Ok(p.iter().find(|(k, _)| k.is_str("a")).and_then(|(_, v)| v.scalar_text())),
            other => Err(format!("not a mapping: {other:?}")),
        }
    }

    #[test]
    fn plain_scalars_resolve_as_pyyaml_does() {
        for (src, want) in [
            ("yes", Some("True")),
            ("Off", Some("False")),
            ("oN", Some("oN")),
            ("~", None),
            ("", None),
            ("0x_1F", Some("31")),
            ("1:30", Some("90")),
            ("190:20:30", Some("685230")),
            ("014", Some("12")),
            ("0o14", Some("0o14")),
            ("-0", Some("0")),
            ("1__0", Some("10")),
            ("99999999999999999999999", Some("99999999999999999999999")),
            ("0x123456789abcdef0123456789abcdef", Some("1512366075204170929049582354406559215")),
            ("1e3", Some("1e3")),
            ("1.e+3", Some("1000.0")),
            ("1:30.5", Some("90.5")),
            ("685.230_15e+03", Some("685230.15")),
            ("123456789012345678.0", Some("1.2345678901234568e+17")),
            ("0.00001", Some("1e-05")),
            ("-.inf", Some("-inf")),
            (".NaN", Some("nan")),
            ("12:60", Some("12:60")),
            ("0:30", Some("0:30")),
            ("2024-02-28", None),
            ("2024-1-1", Some("2024-1-1")),
            ("! 12", Some("12")),
            ("!!str 12", Some("12")),
            ("!!float 1", Some("1.0")),
            ("!!bool TRUE", Some("True")),
            ("!!null x", None),
            ("'yes'", Some("yes")),
        ] {
            assert_eq!(value(src), Ok(want.map(String::from)), "{src}");
        }
    }
}
