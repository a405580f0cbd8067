//! Scenario logic shared by the server and the floor client.
//!
//! Everything here is a pure function of the request transcript: the server keeps
//! no per-conversation state, so any number of concurrent clients work.

use std::borrow::Cow;

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// turn 1: two parallel tool calls (get_weather + add); turn 2: final text.
    Weather,
    /// K sequential turns with one `add` call each, then final text.
    Chain(usize),
    /// turn 1: one `approve` call (the tool a library suspends on); turn 2: final text.
    Approve,
}

#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub kind: Kind,
    /// history-N: the transcript must carry at least this many messages.
    pub min_messages: usize,
    /// How many prior (history) messages a client should send.
    pub history: usize,
    /// concurrent-N: one timed unit is N runs at once.
    pub concurrency: usize,
    /// `stream`: the client asks for server-sent events.
    pub stream: bool,
    /// suspend: one timed unit is two runs (the inline one, and the halt plus its resume,
    /// which together send the same two requests).
    pub runs_per_unit: usize,
}

pub const MAX_CHAIN: usize = 100;
pub const MAX_HISTORY: usize = 100_000;
pub const MAX_CONCURRENCY: usize = 1000;

impl Scenario {
    pub fn parse(name: &str) -> Option<Scenario> {
        let mut sc = Scenario {
            name: name.to_string(),
            kind: Kind::Weather,
            min_messages: 1,
            history: 0,
            concurrency: 1,
            stream: false,
            runs_per_unit: 1,
        };
        match name {
            "stream" => sc.stream = true,
            "suspend" => {
                sc.kind = Kind::Approve;
                sc.runs_per_unit = 2;
            }
            _ => {}
        }
        if let Some(n) = name.strip_prefix("concurrent-") {
            sc.concurrency = n.parse().ok().filter(|n| (1..=MAX_CONCURRENCY).contains(n))?;
        }
        if sc.stream || sc.kind == Kind::Approve || sc.concurrency > 1 {
            return Some(sc);
        }
        let (kind, history) = if name == "weather" {
            (Kind::Weather, 0)
        } else if let Some(k) = name.strip_prefix("chain-") {
            let k: usize = k.parse().ok()?;
            if k == 0 || k > MAX_CHAIN {
                return None;
            }
            (Kind::Chain(k), 0)
        } else if let Some(n) = name.strip_prefix("history-") {
            let n: usize = n.parse().ok()?;
            if n > MAX_HISTORY {
                return None;
            }
            (Kind::Weather, n)
        } else {
            return None;
        };
        Some(Scenario { kind, min_messages: history + 1, history, ..sc })
    }

    /// Expected (llm requests, tool calls) of one complete run.
    pub fn expected(&self) -> (usize, usize) {
        match self.kind {
            Kind::Weather => (2, 2),
            Kind::Chain(k) => (k + 1, k),
            Kind::Approve => (2, 1),
        }
    }

    pub fn prompt(&self) -> &'static str {
        match self.kind {
            Kind::Weather => "What is the weather in Paris, and what is 2+2?",
            Kind::Chain(_) => "Add the numbers step by step using the add tool.",
            Kind::Approve => "Deploy the release once it is approved.",
        }
    }
}

/// What the model "says" next.
pub enum Action {
    Tools(Vec<ToolCall>),
    Final(String),
}

pub struct ToolCall {
    pub id: String,
    pub name: &'static str,
    /// JSON-encoded arguments, exactly as they go on the wire.
    pub args: String,
}

/// `steps` = assistant tool-call turns since the last plain user message;
/// `results` = tool outputs since that message, in transcript order.
pub fn decide(sc: &Scenario, steps: usize, results: &[String], anthropic: bool) -> Action {
    let pre = if anthropic { "toolu" } else { "call" };
    match sc.kind {
        Kind::Weather if steps == 0 => Action::Tools(vec![
            ToolCall { id: format!("{pre}_w1_0"), name: "get_weather", args: r#"{"city":"Paris"}"#.into() },
            ToolCall { id: format!("{pre}_w1_1"), name: "add", args: r#"{"a":2,"b":2}"#.into() },
        ]),
        Kind::Approve if steps == 0 => Action::Tools(vec![ToolCall {
            id: format!("{pre}_a1_0"),
            name: "approve",
            args: r#"{"action":"deploy"}"#.into(),
        }]),
        Kind::Chain(k) if steps < k => Action::Tools(vec![ToolCall {
            id: format!("{pre}_c{}_0", steps + 1),
            name: "add",
            args: format!(r#"{{"a":{},"b":1}}"#, steps + 1),
        }]),
        _ => {
            let mut s = format!("FINAL {}: ", sc.name);
            for (i, r) in results.iter().enumerate() {
                if i > 0 {
                    s.push_str(" | ");
                }
                let cut: String = r.chars().take(80).collect();
                s.push_str(&cut);
            }
            Action::Final(s)
        }
    }
}

/// Text of an OpenAI content value (string, null, or list of text parts).
pub fn openai_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("")
        }
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// One transcript message, parsed without allocating: content stays raw JSON and is only
/// decoded for the few messages after the last user prompt (history-N stays cheap).
#[derive(Deserialize)]
pub struct Msg<'a> {
    #[serde(borrow)]
    pub role: Cow<'a, str>,
    #[serde(default, borrow)]
    pub content: Option<&'a RawValue>,
    #[serde(default)]
    pub tool_calls: Option<Vec<IgnoredAny>>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow)]
    ty: Cow<'a, str>,
    #[serde(default, borrow)]
    content: Option<&'a RawValue>,
}

fn raw_text(raw: Option<&RawValue>) -> String {
    match raw {
        None => String::new(),
        Some(r) => serde_json::from_str::<Value>(r.get()).map(|v| openai_text(&v)).unwrap_or_default(),
    }
}

/// Content blocks of an Anthropic message; empty for plain string content.
fn blocks<'a>(m: &Msg<'a>) -> Vec<Block<'a>> {
    match m.content {
        Some(r) if r.get().trim_start().starts_with('[') => serde_json::from_str(r.get()).unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// (steps, tool results) of an OpenAI chat transcript.
pub fn openai_state(messages: &[Msg]) -> (usize, Vec<String>) {
    let start = messages.iter().rposition(|m| m.role == "user").map(|i| i + 1).unwrap_or(0);
    let mut steps = 0;
    let mut results = Vec::new();
    for m in &messages[start..] {
        match m.role.as_ref() {
            "assistant" if m.tool_calls.as_ref().is_some_and(|c| !c.is_empty()) => steps += 1,
            "tool" => results.push(raw_text(m.content)),
            _ => {}
        }
    }
    (steps, results)
}

/// (steps, tool results) of an Anthropic messages transcript.
pub fn anthropic_state(messages: &[Msg]) -> (usize, Vec<String>) {
    let is_plain_user = |m: &Msg| m.role == "user" && !blocks(m).iter().any(|b| b.ty == "tool_result");
    let start = messages.iter().rposition(is_plain_user).map(|i| i + 1).unwrap_or(0);
    let mut steps = 0;
    let mut results = Vec::new();
    for m in &messages[start..] {
        let bs = blocks(m);
        match m.role.as_ref() {
            "assistant" if bs.iter().any(|b| b.ty == "tool_use") => steps += 1,
            "user" => results.extend(bs.iter().filter(|b| b.ty == "tool_result").map(|b| raw_text(b.content))),
            _ => {}
        }
    }
    (steps, results)
}

/// The trivial in-process tools, as every runner implements them.
pub fn run_tool(name: &str, args: &Value) -> String {
    match name {
        "get_weather" => format!("Sunny, 22C in {}", args.get("city").and_then(Value::as_str).unwrap_or("?")),
        "add" => {
            let a = args.get("a").and_then(Value::as_i64).unwrap_or(0);
            let b = args.get("b").and_then(Value::as_i64).unwrap_or(0);
            (a + b).to_string()
        }
        "approve" => format!("approved: {}", args.get("action").and_then(Value::as_str).unwrap_or("?")),
        _ => format!("unknown tool {name}"),
    }
}

/// Deterministic prior transcript for history-N (same text in every runner).
pub fn history_text(i: usize) -> String {
    format!("Earlier message {i}: {}", FILLER)
}

pub const FILLER: &str = "The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog.";

pub fn history_role(i: usize) -> &'static str {
    if i % 2 == 0 {
        "user"
    } else {
        "assistant"
    }
}

pub const APPROVE_DESC: &str = "Carry out an action once a human approves it.";

pub const SYSTEM_PROMPT: &str = "You are a helpful assistant.";

/// The tools a run of `kind` declares, as every runner declares them.
pub fn openai_tools(kind: Kind) -> Value {
    if kind == Kind::Approve {
        return json!([{"type": "function", "function": {"name": "approve", "description": APPROVE_DESC,
            "parameters": {"type": "object", "properties": {"action": {"type": "string"}}, "required": ["action"]}}}]);
    }
    json!([
        {"type": "function", "function": {"name": "get_weather", "description": "Get the current weather for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
        {"type": "function", "function": {"name": "add", "description": "Add two integers.",
            "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}}
    ])
}

pub fn anthropic_tools(kind: Kind) -> Value {
    if kind == Kind::Approve {
        return json!([{"name": "approve", "description": APPROVE_DESC,
            "input_schema": {"type": "object", "properties": {"action": {"type": "string"}}, "required": ["action"]}}]);
    }
    json!([
        {"name": "get_weather", "description": "Get the current weather for a city.",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
        {"name": "add", "description": "Add two integers.",
            "input_schema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_names() {
        assert_eq!(Scenario::parse("weather").unwrap().kind, Kind::Weather);
        assert_eq!(Scenario::parse("chain-5").unwrap().kind, Kind::Chain(5));
        let h = Scenario::parse("history-200").unwrap();
        assert_eq!((h.kind, h.history, h.min_messages), (Kind::Weather, 200, 201));
        assert!(Scenario::parse("chain-0").is_none());
        assert!(Scenario::parse("nope").is_none());
        let c = Scenario::parse("concurrent-100").unwrap();
        assert_eq!((c.kind, c.concurrency, c.history), (Kind::Weather, 100, 0));
        assert!(Scenario::parse("stream").unwrap().stream);
        let s = Scenario::parse("suspend").unwrap();
        assert_eq!((s.kind, s.runs_per_unit, s.expected()), (Kind::Approve, 2, (2, 1)));
        assert!(Scenario::parse("concurrent-0").is_none());
    }

    /// What the model says next to this transcript (parsed as the server parses it).
    fn next(sc: &Scenario, msgs: &[Value], anthropic: bool) -> (usize, Action) {
        let text = serde_json::to_string(msgs).unwrap();
        let parsed: Vec<Msg> = serde_json::from_str(&text).unwrap();
        let (steps, res) = if anthropic { anthropic_state(&parsed) } else { openai_state(&parsed) };
        (steps, decide(sc, steps, &res, anthropic))
    }

    #[test]
    fn weather_turns() {
        let sc = Scenario::parse("weather").unwrap();
        let mut msgs = vec![json!({"role": "system", "content": "s"}), json!({"role": "user", "content": "q"})];
        assert!(matches!(next(&sc, &msgs, false).1, Action::Tools(ref c) if c.len() == 2));
        msgs.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": "x"}]}));
        msgs.push(json!({"role": "tool", "tool_call_id": "x", "content": "Sunny"}));
        msgs.push(json!({"role": "tool", "tool_call_id": "y", "content": [{"type": "text", "text": "4"}]}));
        match next(&sc, &msgs, false).1 {
            Action::Final(t) => assert_eq!(t, "FINAL weather: Sunny | 4"),
            _ => panic!("expected final"),
        }
    }

    #[test]
    fn anthropic_chain() {
        let sc = Scenario::parse("chain-2").unwrap();
        let mut msgs = vec![json!({"role": "user", "content": "go"})];
        for step in 0..2 {
            let (steps, action) = next(&sc, &msgs, true);
            assert_eq!(steps, step);
            assert!(matches!(action, Action::Tools(_)));
            msgs.push(
                json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "add", "input": {}}]}),
            );
            msgs.push(
                json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "2"}]}),
            );
        }
        match next(&sc, &msgs, true).1 {
            Action::Final(t) => assert_eq!(t, "FINAL chain-2: 2 | 2"),
            _ => panic!("expected final"),
        }
    }
}
