//! Any JSON a host may hand back as an Answer or a Request, through the engine's readers and
//! the vocabulary built on them (suspensions, relay answers).
//!
//! Checked: a malformed value is an invalid-argument error; a well-formed one has a normal
//! form with only the pinned keys and no `null`s, which reads back as the same value, and is
//! a fixed point as text too (a host that stores the JSON and reads it back gets the same
//! bytes); a suspension carries its Request unchanged; a relay answer carries every result.
#![no_main]

use serde_json::Value;
use toolnexus::relay::{relay_answer, relay_calls_of, RelayResult};
use toolnexus::{answer_output_of, pending, pending_of, suspend, Answer, ErrorKind, PendingSpec, Request};

fn normal_form(v: &Value, keys: &[&str]) {
    let o = v.as_object().unwrap_or_else(|| panic!("a normal form that is not an object: {v}"));
    for (k, x) in o {
        assert!(keys.contains(&k.as_str()), "key {k:?} in the normal form {v}");
        assert!(!x.is_null(), "a null {k:?} in the normal form {v}");
    }
}

fn text_fixed_point<T>(v: &Value, read: impl Fn(&Value) -> toolnexus::Result<T>, write: impl Fn(&T) -> Value) {
    let text = v.to_string();
    let reread: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let again = write(&read(&reread).unwrap_or_else(|e| panic!("the normal form {text} is refused: {e}"))).to_string();
    assert_eq!(text, again, "the normal form changes when read back from its text");
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(v) = serde_json::from_slice::<Value>(data) else { return };

    match Answer::from_json(&v) {
        Ok(a) => {
            let j = a.to_json();
            normal_form(&j, &["id", "ok", "data", "reason"]);
            assert_eq!(Answer::from_json(&j).ok(), Some(a.clone()));
            text_fixed_point(&j, Answer::from_json, Answer::to_json);
            let out = answer_output_of(&a);
            assert_eq!(out, a.data.as_ref().and_then(|d| d.get("output")).and_then(Value::as_str));
        }
        Err(e) => assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}"),
    }

    match Request::from_json(&v) {
        Ok(r) => {
            let j = r.to_json();
            normal_form(&j, &["id", "kind", "prompt", "url", "data", "expiresAt"]);
            assert_eq!(Request::from_json(&j).ok(), Some(r.clone()));
            text_fixed_point(&j, Request::from_json, Request::to_json);
            assert_eq!(pending_of(&suspend(r.clone())), Some(r.clone()), "a suspension lost its Request");
            let spec = PendingSpec {
                id: Some(r.id.clone()),
                kind: r.kind.clone(),
                prompt: r.prompt.clone(),
                url: r.url.clone(),
                data: r.data.clone(),
                expires_at: r.expires_at.clone(),
            };
            let raised = pending_of(&pending(spec)).unwrap_or_else(|| panic!("pending() without a Request"));
            assert!(!raised.id.is_empty());
            if !r.id.is_empty() {
                assert_eq!(raised, r);
            }
            let _ = relay_calls_of(&r);
        }
        Err(e) => assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}"),
    }

    if let Ok(results) = serde_json::from_value::<Vec<RelayResult>>(v) {
        let a = relay_answer("relay-1", &results);
        let back = Answer::from_json(&a.to_json()).unwrap_or_else(|e| panic!("a relay answer is refused: {e}"));
        let carried = back.data.as_ref().and_then(|d| d.get("results")).and_then(Value::as_array).map(Vec::len);
        assert_eq!(carried, Some(results.len()), "a relay answer lost results");
    }
});
