//! The invariant: whatever mix of suspensions, declines, relays, errors and bad arguments
//! came before, every request sent to the provider answers each tool call with exactly one
//! result, in call order, and a halted run always resumes to completion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{json, Value};
use toolnexus::relay::{is_relay_request, relay_answer, relay_calls_of, RelayResult};
use toolnexus::scripted::{ScriptedReply, ScriptedTransport};
use toolnexus::{
    answer_declined, answer_output, pending, Answer, Client, ClientOptions, Error, PendingSpec, Request, RunStatus,
    Style, Tool, ToolResult, Toolkit,
};

#[derive(Clone, Debug)]
struct Spec {
    anthropic: bool,
    inline: bool,
    turns: Vec<Vec<u8>>,
    answers: Vec<u8>,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(prop::collection::vec(0u8..8, 1..5), 1..4),
        prop::collection::vec(0u8..3, 16),
    )
        .prop_map(|(anthropic, inline, turns, answers)| Spec { anthropic, inline, turns, answers })
}

/// Answer choice `n`: 0 ok, 1 declined, 2 no answer (inline) / declined (durable).
fn answer_for(req: &Request, n: u8) -> Option<Answer> {
    match n {
        0 if is_relay_request(req) => {
            let results = relay_calls_of(req)
                .into_iter()
                .map(|c| RelayResult { id: c.id.clone(), output: format!("host ran {}", c.name), is_error: false })
                .collect::<Vec<_>>();
            Some(relay_answer(&req.id, &results))
        }
        0 => Some(answer_output(&req.id, "yes")),
        1 => Some(answer_declined(&req.id, "declined")),
        _ => None,
    }
}

fn suspending(name: &str, always: bool) -> Tool {
    Tool::from_sync(name, "", json!({"type": "object"}), move |_, ctx| {
        if ctx.answer.is_some() && !always {
            return Ok(ToolResult::ok("resumed"));
        }
        Ok(pending(PendingSpec {
            id: Some(format!("p-{}", ctx.call_id)),
            kind: "approval".into(),
            prompt: "ok?".into(),
            ..Default::default()
        }))
    })
}

fn toolkit() -> Toolkit {
    Toolkit::new(vec![
        Tool::from_sync("ok", "", json!({"type": "object"}), |_, _| Ok(ToolResult::ok("fine"))),
        Tool::from_sync("err", "", json!({"type": "object"}), |_, _| Ok(ToolResult::error("bad"))),
        Tool::from_sync("fail", "", json!({"type": "object"}), |_, _| Err(Error::host("thrown".into()))),
        suspending("suspend", false),
        suspending("suspend_always", true),
        Tool::relay("relay", "", None),
        Tool::relay("relay2", "", None),
    ])
    .unwrap()
}

/// (tool name, arguments) for behaviour code `b`.
fn call_of(b: u8) -> (&'static str, &'static str) {
    match b {
        0 => ("ok", "{}"),
        1 => ("err", "{}"),
        2 => ("fail", "{}"),
        3 => ("suspend", "{}"),
        4 => ("suspend_always", "{}"),
        5 => ("relay", "{\"x\":1}"),
        6 => ("ghost", "{}"),
        _ => ("ok", "{bad"),
    }
}

fn replies(spec: &Spec) -> Vec<ScriptedReply> {
    let mut out = Vec::new();
    for (t, turn) in spec.turns.iter().enumerate() {
        let calls: Vec<(String, &str, &str)> = turn
            .iter()
            .enumerate()
            .map(|(i, &b)| {
                let (name, args) = call_of(b);
                // A second relay tool makes some turns carry two relay calls.
                let name = if b == 5 && i % 2 == 1 { "relay2" } else { name };
                (format!("c{t}_{i}"), name, args)
            })
            .collect();
        out.push(if spec.anthropic {
            let c: Vec<(&str, &str, Value)> = calls
                .iter()
                .map(|(id, n, a)| (id.as_str(), *n, serde_json::from_str(a).unwrap_or(json!("not an object"))))
                .collect();
            ScriptedReply::anthropic_calls(&c)
        } else {
            let c: Vec<(&str, &str, &str)> = calls.iter().map(|(id, n, a)| (id.as_str(), *n, *a)).collect();
            ScriptedReply::openai_calls(&c)
        });
    }
    out.push(if spec.anthropic { ScriptedReply::anthropic_text("end") } else { ScriptedReply::openai_text("end") });
    out
}

/// Checks one transcript: each tool call answered once, in order, nothing stray.
fn check_balanced(messages: &[Value]) -> Result<(), String> {
    let mut i = 0;
    while i < messages.len() {
        let m = &messages[i];
        i += 1;
        let role = m["role"].as_str().unwrap_or("");
        if role == "tool" {
            return Err(format!("stray tool message at {}", i - 1));
        }
        if role == "user" {
            if let Some(blocks) = m["content"].as_array() {
                if blocks.iter().any(|b| b["type"] == "tool_result") {
                    return Err(format!("stray tool_result at {}", i - 1));
                }
            }
        }
        if role != "assistant" {
            continue;
        }
        let openai_ids: Vec<&str> =
            m["tool_calls"].as_array().map(|a| a.iter().filter_map(|c| c["id"].as_str()).collect()).unwrap_or_default();
        let anthropic_ids: Vec<&str> = m["content"]
            .as_array()
            .map(|a| a.iter().filter(|b| b["type"] == "tool_use").filter_map(|b| b["id"].as_str()).collect())
            .unwrap_or_default();
        if !openai_ids.is_empty() {
            for id in openai_ids {
                let r = messages.get(i).ok_or("missing tool message")?;
                if r["role"] != "tool" || r["tool_call_id"] != id {
                    return Err(format!("call {id} not answered in order at {i}: {r}"));
                }
                i += 1;
            }
        } else if !anthropic_ids.is_empty() {
            let r = messages.get(i).ok_or("missing tool_result turn")?;
            let got: Vec<&str> = r["content"]
                .as_array()
                .map(|a| a.iter().filter_map(|b| b["tool_use_id"].as_str()).collect())
                .unwrap_or_default();
            if r["role"] != "user" || got != anthropic_ids {
                return Err(format!("tool_use {anthropic_ids:?} answered by {got:?}"));
            }
            i += 1;
        }
    }
    Ok(())
}

async fn drive(spec: Spec) -> Result<(), String> {
    let transport = ScriptedTransport::new(replies(&spec));
    let style = if spec.anthropic { Style::Anthropic } else { Style::OpenAi };
    let mut o = ClientOptions::new("http://model.invalid", style, "m");
    o.api_key = Some("k".into());
    o.transport = Some(Arc::new(transport.clone()));
    let counter = Arc::new(AtomicUsize::new(0));
    let answers = spec.answers.clone();
    if spec.inline {
        let (c, a) = (counter.clone(), answers.clone());
        o.wait_for = Some(Arc::new(move |req: Request| {
            let n = a[c.fetch_add(1, Ordering::SeqCst) % a.len()];
            async move { Ok(answer_for(&req, n)) }
        }));
    }
    let client = Client::new(o).unwrap();
    let tk = toolkit();
    let mut result = client.run("go", Some(&tk)).await.map_err(|e| e.to_string())?;
    let mut resumes = 0;
    while result.status == RunStatus::Pending {
        resumes += 1;
        if resumes > 40 {
            return Err("did not finish after 40 resumes".into());
        }
        let req = result.pending.clone().unwrap();
        let n = answers[counter.fetch_add(1, Ordering::SeqCst) % answers.len()];
        let answer = answer_for(&req, n).unwrap_or_else(|| answer_declined(&req.id, "expired"));
        result = client.run_with_answer(Some(&tk), result.messages, &req, &answer).await.map_err(|e| e.to_string())?;
    }
    if result.status != RunStatus::Done || result.text != "end" {
        return Err(format!("ended {:?} with {:?}", result.status, result.text));
    }
    for (n, r) in transport.requests().iter().enumerate() {
        let msgs = r.body["messages"].as_array().cloned().unwrap_or_default();
        check_balanced(&msgs).map_err(|e| format!("request {n}: {e}"))?;
    }
    check_balanced(&result.messages).map_err(|e| format!("final transcript: {e}"))?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]
    #[test]
    fn every_request_is_balanced(spec in spec()) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let outcome = rt.block_on(drive(spec.clone()));
        prop_assert!(outcome.is_ok(), "{:?}: {}", spec, outcome.unwrap_err());
    }
}
