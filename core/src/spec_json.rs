//! Reading a source's settings from plain JSON (a skill source, an HTTP tool), as every
//! binding hands them over: snake_case keys or their camelCase spelling, `null` for "not
//! given", every wrong type an [`crate::ErrorKind::InvalidArgument`] error naming the key
//! as its user wrote it.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::types::json_type;

/// `timeoutMs` → `timeout_ms` (the client options are read by the same rule).
pub(crate) fn snake_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `timeout_ms` → `timeoutMs`: an engine name as the JS and Go ports spell it.
pub fn camel_case(name: &str) -> String {
    let mut parts = name.split('_');
    let mut out = parts.next().unwrap_or("").to_string();
    for p in parts {
        let mut c = p.chars();
        if let Some(first) = c.next() {
            out.push(first.to_ascii_uppercase());
            out.push_str(c.as_str());
        }
    }
    out
}

/// The keys of one settings object, by their snake_case name.
pub(crate) struct Fields<'a> {
    what: &'static str,
    keys: HashMap<String, (&'a str, &'a Value)>,
}

impl<'a> Fields<'a> {
    /// The settings `what` (named in errors) from `v`, which must be an object. Of its keys
    /// only `known` are read; with `strict`, any other is an error.
    pub(crate) fn new(what: &'static str, v: &'a Value, known: &[&str], strict: bool) -> Result<Fields<'a>> {
        let o: &Map<String, Value> =
            v.as_object().ok_or_else(|| Error::invalid(format!("{what} must be an object, got {}", json_type(v))))?;
        let mut keys = HashMap::new();
        for (written, value) in o {
            let name = snake_case(written);
            if !known.contains(&name.as_str()) {
                if strict {
                    return Err(Error::invalid(format!("unknown {what} key {written:?}")));
                }
                continue;
            }
            if let Some((first, _)) = keys.insert(name, (written.as_str(), value)) {
                return Err(Error::invalid(format!("{what} key {written:?} is given twice (also as {first:?})")));
            }
        }
        Ok(Fields { what, keys })
    }

    /// The value of `k`, unless absent or `null`.
    pub(crate) fn get(&self, k: &str) -> Option<&'a Value> {
        self.keys.get(k).map(|(_, v)| *v).filter(|v| !v.is_null())
    }

    fn written(&self, k: &str) -> String {
        self.keys.get(k).map_or_else(|| k.to_string(), |(w, _)| w.to_string())
    }

    /// `k` as its user wrote it, with what it belongs to: `skills option key "skillSampleLimit"`.
    pub(crate) fn named(&self, k: &str) -> String {
        format!("{} key {:?}", self.what, self.written(k))
    }

    /// The error for `k` holding `got` where `want` was expected.
    pub(crate) fn wrong(&self, k: &str, want: &str, got: &Value) -> Error {
        Error::invalid(format!("{} key {:?} must be {want}, got {}", self.what, self.written(k), json_type(got)))
    }

    pub(crate) fn string(&self, k: &str) -> Result<Option<String>> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.wrong(k, "a string", v)),
        }
    }

    pub(crate) fn required(&self, k: &str) -> Result<String> {
        self.string(k)?.ok_or_else(|| Error::invalid(format!("{} key {:?} is required", self.what, self.written(k))))
    }

    /// An array of strings.
    pub(crate) fn strings(&self, k: &str) -> Result<Option<Vec<String>>> {
        let Some(v) = self.get(k) else { return Ok(None) };
        let bad = || self.wrong(k, "an array of strings", v);
        let arr = v.as_array().ok_or_else(bad)?;
        arr.iter().map(|s| s.as_str().map(String::from).ok_or_else(bad)).collect::<Result<_>>().map(Some)
    }

    /// A string or an array of strings, as an array.
    pub(crate) fn string_or_strings(&self, k: &str) -> Result<Option<Vec<String>>> {
        match self.get(k) {
            Some(Value::String(s)) => Ok(Some(vec![s.clone()])),
            Some(v @ Value::Array(_)) => {
                let bad = || self.wrong(k, "a string or an array of strings", v);
                let arr = v.as_array().ok_or_else(bad)?;
                arr.iter().map(|s| s.as_str().map(String::from).ok_or_else(bad)).collect::<Result<_>>().map(Some)
            }
            Some(v) => Err(self.wrong(k, "a string or an array of strings", v)),
            None => Ok(None),
        }
    }

    /// A whole number (an integer, or a float without fraction as JS sends it).
    pub(crate) fn int(&self, k: &str) -> Result<Option<i64>> {
        let Some(v) = self.get(k) else { return Ok(None) };
        if let Some(n) = v.as_i64() {
            return Ok(Some(n));
        }
        match v.as_f64().filter(|n| n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0) {
            Some(n) => Ok(Some(n as i64)),
            None => Err(self.wrong(k, "a whole number", v)),
        }
    }

    /// A finite number.
    pub(crate) fn number(&self, k: &str) -> Result<Option<f64>> {
        let Some(v) = self.get(k) else { return Ok(None) };
        v.as_f64().filter(|n| n.is_finite()).map(Some).ok_or_else(|| self.wrong(k, "a finite number", v))
    }

    /// A boolean.
    pub(crate) fn flag(&self, k: &str) -> Result<Option<bool>> {
        let Some(v) = self.get(k) else { return Ok(None) };
        v.as_bool().map(Some).ok_or_else(|| self.wrong(k, "a boolean", v))
    }

    /// A whole number of at least 0.
    pub(crate) fn count(&self, k: &str) -> Result<Option<u64>> {
        match self.int(k)? {
            Some(n) if n < 0 => Err(self.wrong(k, "a whole number of at least 0", self.get(k).unwrap_or(&Value::Null))),
            n => Ok(n.map(|n| n as u64)),
        }
    }

    /// An object (`want`) whose values are each `item_want`, read by `item`, in order.
    pub(crate) fn map_of<T>(
        &self,
        k: &str,
        want: &str,
        item_want: &str,
        item: impl Fn(&Value) -> Option<T>,
    ) -> Result<Option<Vec<(String, T)>>> {
        let Some(v) = self.get(k) else { return Ok(None) };
        let o = v.as_object().ok_or_else(|| self.wrong(k, want, v))?;
        let mut out = Vec::with_capacity(o.len());
        for (name, value) in o {
            // The value may be a secret (a header): the error names the entry, never the value.
            let t = item(value).ok_or_else(|| {
                Error::invalid(format!(
                    "{} key {:?}: the value of {name:?} must be {item_want}, got {}",
                    self.what,
                    self.written(k),
                    json_type(value)
                ))
            })?;
            out.push((name.clone(), t));
        }
        Ok(Some(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn camel_and_snake_read_alike_and_errors_name_the_key_as_written() {
        let v = json!({"timeoutMs": 5, "name": "n"});
        let f = Fields::new("HTTP tool", &v, &["timeout_ms", "name"], true).unwrap();
        assert_eq!(f.int("timeout_ms").unwrap(), Some(5));
        let v = json!({"timeoutMs": "5"});
        let f = Fields::new("HTTP tool", &v, &["timeout_ms"], true).unwrap();
        let e = f.int("timeout_ms").unwrap_err();
        assert_eq!(e.message(), "HTTP tool key \"timeoutMs\" must be a whole number, got string");
        assert!(Fields::new("HTTP tool", &json!({"nope": 1}), &["name"], true).is_err());
        assert!(Fields::new("skills", &json!({"nope": 1}), &["name"], false).is_ok());
        assert!(Fields::new("skills", &json!({"a_b": 1, "aB": 2}), &["a_b"], false).is_err());
    }

    #[test]
    fn map_values_are_checked_without_showing_them() {
        let v = json!({"headers": {"Authorization": 5}});
        let f = Fields::new("HTTP tool", &v, &["headers"], true).unwrap();
        let e = f.map_of("headers", "an object of strings", "a string", |v| v.as_str().map(String::from)).unwrap_err();
        assert_eq!(
            e.message(),
            "HTTP tool key \"headers\": the value of \"Authorization\" must be a string, got number"
        );
    }
}
