//! The client options as plain JSON: the one reader every binding hands the user's options
//! to, so a bad option is the same error, naming the option, in every language.
//!
//! Keys are the engine's snake_case names, or their camelCase spelling (`timeoutMs`), so a
//! binding hands over what its user wrote and every error names the option as written.
//! Numbers may arrive as integers or as floats (JS has only the latter): a count must be a
//! whole number, a duration in milliseconds may be fractional and is rounded up. `null` means
//! "not given". An unknown key is an error, so a misspelt option never goes unnoticed.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::options::{ClientOptions, Style, FORBIDDEN_PARAMS};
use crate::error::{Error, Result};
use crate::spec_json::{camel_case, snake_case};
use crate::types::json_type;
use crate::warning::{Parsed, Warning};

/// Every key [`ClientOptions::from_json`] reads.
pub const CLIENT_OPTION_KEYS: [&str; 18] = [
    "base_url",
    "style",
    "model",
    "api_key",
    "require_api_key",
    "headers",
    "system_prompt",
    "max_turns",
    "retries",
    "retry_base_ms",
    "retryable_statuses",
    "max_retry_after_ms",
    "timeout_ms",
    "max_tokens",
    "request_params",
    "store",
    "on_unsupported_part",
    "max_part_bytes",
];

/// The options by engine name, each with the name its user wrote, and whether the user
/// writes camelCase (so an option they left out is named their way too).
struct Reader<'a>(HashMap<String, (&'a str, &'a Value)>, bool);

impl<'a> Reader<'a> {
    fn new(o: &'a Map<String, Value>) -> Result<Reader<'a>> {
        let mut by_name = HashMap::with_capacity(o.len());
        let camel = o.keys().any(|k| k.bytes().any(|b| b.is_ascii_uppercase()));
        for (written, v) in o {
            let name = snake_case(written);
            if !CLIENT_OPTION_KEYS.contains(&name.as_str()) {
                return Err(Error::invalid(format!("unknown client option {written:?}")));
            }
            if let Some((first, _)) = by_name.insert(name, (written.as_str(), v)) {
                return Err(Error::invalid(format!("client option {written:?} is given twice (also as {first:?})")));
            }
        }
        Ok(Reader(by_name, camel))
    }

    fn get(&self, k: &str) -> Option<&'a Value> {
        self.0.get(k).map(|(_, v)| *v).filter(|v| !v.is_null())
    }

    /// The option as its user wrote it.
    fn written(&self, k: &str) -> String {
        match self.0.get(k) {
            Some((w, _)) => w.to_string(),
            None if self.1 => camel_case(k),
            None => k.to_string(),
        }
    }

    fn wrong(&self, k: &str, want: &str, got: &Value) -> Error {
        Error::invalid(format!("option {:?} must be {want}, got {}", self.written(k), describe(got)))
    }

    fn string(&self, k: &str) -> Result<Option<String>> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.wrong(k, "a string", v)),
        }
    }

    fn required(&self, k: &str) -> Result<String> {
        self.string(k)?.ok_or_else(|| Error::invalid(format!("option {:?} is required", self.written(k))))
    }

    fn count(&self, k: &str) -> Result<Option<u32>> {
        let Some(v) = self.get(k) else { return Ok(None) };
        let want = "a whole number from 0 to 4294967295";
        let n = v.as_f64().filter(|n| n.fract() == 0.0 && *n >= 0.0 && *n <= f64::from(u32::MAX));
        match n {
            Some(n) => Ok(Some(n as u32)),
            None => Err(self.wrong(k, want, v)),
        }
    }

    fn millis(&self, k: &str) -> Result<Option<u64>> {
        let Some(v) = self.get(k) else { return Ok(None) };
        if let Some(n) = v.as_u64() {
            return Ok(Some(n));
        }
        // 2^53: past it a float no longer counts single milliseconds.
        match v.as_f64().filter(|n| n.is_finite() && *n >= 0.0 && *n <= 9_007_199_254_740_992.0) {
            Some(n) => Ok(Some(n.ceil() as u64)),
            None => Err(self.wrong(k, "a non-negative number of milliseconds", v)),
        }
    }

    fn object(&self, k: &str) -> Result<Option<&Map<String, Value>>> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::Object(m)) => Ok(Some(m)),
            Some(v) => Err(self.wrong(k, "an object", v)),
        }
    }
}

fn describe(v: &Value) -> String {
    match v {
        // As its user wrote it: a JS `-1` arrives as the float -1.0.
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
            _ => format!("{n}"),
        },
        Value::Bool(b) => format!("{b}"),
        other => json_type(other).to_string(),
    }
}

impl ClientOptions {
    /// Reads the plain options from `json`, a JSON object of the keys in
    /// [`CLIENT_OPTION_KEYS`]; host callables (transport, `wait_for`, hooks, ...) are set on
    /// the result by the binding (`on_metric` among them, and a host's own `store`; a `store`
    /// here is a SQLite path or a `postgres://` URL, see [`crate::memory::open`]). Every problem is an [`crate::ErrorKind::InvalidArgument`] error
    /// naming the option; a `request_params` key the engine owns (`messages`, `tools`,
    /// `stream`) is dropped with a warning, as upstream does, and so is every option this
    /// build does not implement yet.
    pub fn from_json(json: &Value) -> Result<Parsed<ClientOptions>> {
        let o = json
            .as_object()
            .ok_or_else(|| Error::invalid(format!("client options must be an object, got {}", describe(json))))?;
        let r = Reader::new(o)?;
        let mut warnings = Vec::new();
        let mut opts =
            ClientOptions::new(r.required("base_url")?, Style::parse(&r.required("style")?)?, r.required("model")?);
        opts.api_key = r.string("api_key")?;
        if let Some(v) = r.get("require_api_key") {
            opts.require_api_key = v.as_bool().ok_or_else(|| r.wrong("require_api_key", "a boolean", v))?;
        }
        opts.system_prompt = r.string("system_prompt")?;
        if let Some(h) = r.object("headers")? {
            opts.headers = h
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k.clone(), s.clone())),
                    // The value may be a secret: the error names the header, never the value.
                    other => Err(Error::invalid(format!(
                        "option {:?}: the value of {k:?} must be a string, got {}",
                        r.written("headers"),
                        json_type(other)
                    ))),
                })
                .collect::<Result<_>>()?;
        }
        if let Some(n) = r.count("max_turns")? {
            opts.max_turns = n;
        }
        if let Some(n) = r.count("retries")? {
            opts.retries = n;
        }
        if let Some(n) = r.millis("retry_base_ms")? {
            opts.retry_base_ms = n;
        }
        if let Some(n) = r.millis("max_retry_after_ms")? {
            opts.max_retry_after_ms = n;
        }
        opts.timeout_ms = r.millis("timeout_ms")?;
        if let Some(n) = r.count("max_tokens")? {
            opts.max_tokens = n;
        }
        if let Some(v) = r.get("retryable_statuses") {
            let bad = || r.wrong("retryable_statuses", "an array of HTTP statuses (100 to 599)", v);
            let arr = v.as_array().ok_or_else(bad)?;
            opts.retryable_statuses = arr
                .iter()
                .map(|s| s.as_f64().filter(|n| n.fract() == 0.0 && (100.0..=599.0).contains(n)).map(|n| n as u16))
                .collect::<Option<_>>()
                .ok_or_else(bad)?;
        }
        if let Some(p) = r.object("request_params")? {
            let mut params = p.clone();
            for k in FORBIDDEN_PARAMS {
                if params.remove(k).is_some() {
                    warnings.push(Warning::ignored_request_param(&r.written("request_params"), k));
                }
            }
            opts.request_params = Some(params);
        }
        opts.max_part_bytes = r.millis("max_part_bytes")?;
        if let Some(mode) = r.string("on_unsupported_part")? {
            opts.on_unsupported_part = Some(
                super::options::UnsupportedPart::parse(&mode)
                    .map_err(|_| r.wrong("on_unsupported_part", "\"error\" or \"text\"", &Value::String(mode)))?,
            );
        }
        if let Some(spec) = r.string("store")? {
            // A path or a postgres:// URL; a host's own store object is set by its binding.
            opts.store = Some(crate::memory::open(&spec)?);
        }
        opts.validate()?;
        Ok(Parsed { value: opts, warnings })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> Value {
        json!({"base_url": "http://127.0.0.1:9/v1", "style": "openai", "model": "m"})
    }

    fn with(k: &str, v: Value) -> Value {
        let mut o = base();
        o[k] = v;
        o
    }

    #[test]
    fn defaults_are_the_engines() {
        let p = ClientOptions::from_json(&base()).unwrap();
        let d = ClientOptions::new("http://127.0.0.1:9/v1", Style::OpenAi, "m");
        assert_eq!(
            (p.value.max_turns, p.value.retries, p.value.retry_base_ms),
            (d.max_turns, d.retries, d.retry_base_ms)
        );
        assert_eq!((p.value.timeout_ms, p.value.max_tokens), (None, d.max_tokens));
        assert!(p.warnings.is_empty());
    }

    #[test]
    fn every_bad_value_is_an_error_naming_the_option() {
        for (k, v) in [
            ("timeout_ms", json!(-1)),
            ("timeout_ms", json!("5")),
            ("max_turns", json!(-1)),
            ("max_turns", json!(1.5)),
            ("retries", json!(true)),
            ("retry_base_ms", json!(f64::MAX)),
            ("retryable_statuses", json!([70000])),
            ("retryable_statuses", json!("429")),
            ("headers", json!({"x": 5})),
            ("headers", json!([])),
            ("request_params", json!(3)),
            ("style", json!("gemini")),
            ("model", json!(7)),
            ("nope", json!(1)),
        ] {
            let e = ClientOptions::from_json(&with(k, v.clone())).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument, "{k}={v}");
            assert!(e.message().contains(k) || k == "style", "{k}={v}: {}", e.message());
        }
        assert!(ClientOptions::from_json(&json!([])).is_err());
    }

    #[test]
    fn floats_from_js_are_read() {
        let p = ClientOptions::from_json(&with("timeout_ms", json!(2.5))).unwrap();
        assert_eq!(p.value.timeout_ms, Some(3));
        let p = ClientOptions::from_json(&with("max_turns", json!(3.0))).unwrap();
        assert_eq!(p.value.max_turns, 3);
    }

    #[test]
    fn owned_request_params_warn_and_part_options_are_read() {
        let mut o = with("request_params", json!({"tools": [], "seed": 7}));
        o["max_part_bytes"] = json!(10);
        o["on_unsupported_part"] = json!("text");
        let p = ClientOptions::from_json(&o).unwrap();
        assert_eq!(p.value.request_params, json!({"seed": 7}).as_object().cloned());
        assert_eq!(
            (p.value.max_part_bytes, p.value.on_unsupported_part),
            (Some(10), Some(super::super::options::UnsupportedPart::Text))
        );
        let codes: Vec<_> = p.warnings.iter().map(|w| w.code).collect();
        assert_eq!(codes, ["ignored_request_param"]);
        o["on_unsupported_part"] = json!("drop");
        assert!(ClientOptions::from_json(&o).unwrap_err().message().contains("\"on_unsupported_part\" must be"));
        assert!(p.warnings[0].message.contains("request_params key \"tools\" is not allowed"));
    }

    #[test]
    fn camel_case_names_are_read_and_errors_name_the_option_as_written() {
        let o = json!({"baseUrl": "http://h/v1", "style": "openai", "model": "m", "timeoutMs": 5, "maxTurns": 2});
        let p = ClientOptions::from_json(&o).unwrap();
        assert_eq!((p.value.timeout_ms, p.value.max_turns), (Some(5), 2));
        let mut bad = o.clone();
        bad["timeoutMs"] = json!(-1);
        assert!(ClientOptions::from_json(&bad).unwrap_err().message().contains("\"timeoutMs\""));
        bad = o.clone();
        bad["timeout_ms"] = json!(1);
        assert!(ClientOptions::from_json(&bad).unwrap_err().message().contains("given twice"));
        assert_eq!(
            ClientOptions::from_json(&json!({"style": "openai", "model": "m", "maxTurns": 1})).unwrap_err().message(),
            "option \"baseUrl\" is required"
        );
        bad = o;
        bad["maxTurn"] = json!(1);
        assert_eq!(ClientOptions::from_json(&bad).unwrap_err().message(), "unknown client option \"maxTurn\"");
    }

    #[test]
    fn header_errors_never_show_the_value() {
        let e = ClientOptions::from_json(&with("headers", json!({"x-key": ["sk-secret"]}))).unwrap_err();
        assert!(!e.message().contains("sk-secret"));
    }
}
