//! Handing back only what a run added to the history its caller passed in. A binding holds
//! that history in its own language already: it converts the result's messages after the
//! kept count and puts the caller's own first `n` in front, so a long transcript crosses the
//! language boundary once per run, on the way in.
//!
//! A result's message is the caller's own when it holds the same keys in the same order with
//! the same values: `Value`'s own equality looks each key up in the other map, a SipHash per
//! key (DECISIONS.md, "Results leave out the history the caller passed"). That is stricter
//! only in key order: a message the engine rebuilt with its keys reordered counts as changed,
//! and is handed back as the engine holds it.

use serde_json::Value;

use super::{Client, RunInput};
use crate::error::Result;
use crate::types::RunResult;

impl Client {
    /// Runs `input` as [`Client::run_input`] does, then drops the result's leading messages
    /// that are `input.history`'s own, unchanged, and says how many went.
    pub async fn run_eliding(&self, input: RunInput<'_>) -> Result<(RunResult, usize)> {
        let given = input.history.clone();
        let mut r = self.run_input(input).await?;
        let kept = kept(&given, &r.messages);
        r.messages.drain(..kept);
        Ok((r, kept))
    }

    /// [`Client::run_eliding`] for a history that crossed as JSON text: `given` is the JSON
    /// array `input.history` was read from, and the result's messages are compared with it,
    /// instead of with a copy of the history made before the run (for a long transcript the
    /// copy and its drop cost more than the walk over the text, `crate::json_same`). A
    /// message the text does not hold, or holds in a way this walk does not read (a
    /// surrogate escape, a key given twice), counts as changed.
    pub async fn run_eliding_text(&self, input: RunInput<'_>, given: &str) -> Result<(RunResult, usize)> {
        let mut r = self.run_input(input).await?;
        let kept = crate::json_same::same_prefix(given, &r.messages);
        r.messages.drain(..kept);
        Ok((r, kept))
    }
}

/// How many leading messages of `messages` are those of `given`.
fn kept(given: &[Value], messages: &[Value]) -> usize {
    messages.iter().zip(given).take_while(|(m, g)| same(m, g)).count()
}

/// Whether `a` and `b` are equal with their objects' keys in the same order.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|((ka, va), (kb, vb))| ka == kb && same(va, vb))
        }
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b)),
        (Value::Number(_), Value::Number(_)) => crate::json_same::same_number(a, b),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_unchanged_prefix_is_kept() {
        let given = [json!({"role": "user", "content": "a"}), json!({"role": "user", "content": "b"})];
        let result = [given[0].clone(), json!({"role": "user", "content": "B"}), given[1].clone()];
        assert_eq!(kept(&given, &result), 1, "the second message differs from what was given");
        assert_eq!(kept(&given, &given), 2);
        assert_eq!(kept(&given, &given[..1]), 1, "a shorter result keeps what it has");
        assert_eq!(kept(&[], &given), 0);
        // Keys reordered: equal as values, handed back as the engine holds them.
        let reordered = [json!({"content": "a", "role": "user"})];
        assert_eq!(kept(&given, &reordered), 0);
        // Nested values, and keys reordered inside them.
        let call = |first: &str| match first {
            "id" => json!([{"id": "c1", "function": {"name": "w", "arguments": "{}"}}]),
            _ => json!([{"function": {"name": "w", "arguments": "{}"}, "id": "c1"}]),
        };
        let nested = [json!({"role": "assistant", "tool_calls": call("id")})];
        assert_eq!(kept(&nested, &nested), 1);
        assert_eq!(kept(&nested, &[json!({"role": "assistant", "tool_calls": call("function")})]), 0);
        let longer = json!({"role": "assistant", "tool_calls": [call("id")[0].clone(), 1]});
        assert_eq!(kept(&nested, &[longer]), 0);
        assert_eq!(kept(&[json!(1)], &[json!(1.0)]), 0, "an integer is not a float");
        assert_eq!(kept(&[json!(-0.0)], &[json!(0.0)]), 0, "nor is -0.0 the same as 0.0");
        assert_eq!(kept(&[json!(-0.0)], &[json!(-0.0)]), 1);
    }
}
