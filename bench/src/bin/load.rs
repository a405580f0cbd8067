//! `load`: many concurrent runs with tools and suspensions in one process, in rounds, against
//! `load-mock`: half the runs resolve their approval inline (`wait_for`), half halt and are
//! resumed (`run_with_answer`). Every result is checked; after each round it prints one JSON
//! line with the round's time and the process's resident memory, so growth over rounds shows.
//!
//! ```text
//! load --mock PATH [--runs 1000] [--rounds 10]
//! ```

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use toolnexus::{answer_output, pending, Client, ClientOptions, PendingSpec, Style, Tool, ToolResult, Toolkit};

fn toolkit() -> toolnexus::Result<Toolkit> {
    let add = Tool::from_sync("add", "Add.", json!({"type": "object"}), |args, _| {
        let sum = args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0);
        Ok(ToolResult::ok(sum.to_string()))
    });
    let approve = Tool::from_sync("approve", "Ask for approval.", json!({"type": "object"}), |_, ctx| {
        Ok(match ctx.answer {
            Some(_) => ToolResult::ok("approved"),
            None => pending(PendingSpec {
                id: Some(format!("ap-{}", ctx.call_id)),
                kind: "approval".into(),
                prompt: "Approve?".into(),
                ..Default::default()
            }),
        })
    });
    Toolkit::new(vec![add, approve])
}

fn rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap_or("");
    line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0)
}

async fn one(inline: &Client, durable: &Client, tk: &Toolkit, i: usize) -> Result<(), String> {
    let prompt = format!("run-{i}");
    let want = format!("done: {prompt}");
    let (r, mut records) = if i.is_multiple_of(2) {
        (inline.run(&prompt, Some(tk)).await.map_err(|e| e.to_string())?, Vec::new())
    } else {
        let halted = durable.run(&prompt, Some(tk)).await.map_err(|e| e.to_string())?;
        let req = halted.pending.ok_or("no pending")?;
        let answer = answer_output(&req.id, "yes");
        let resumed =
            durable.run_with_answer(Some(tk), halted.messages, &req, &answer).await.map_err(|e| e.to_string())?;
        (resumed, halted.tool_calls)
    };
    // The halted run ran `add`; its resume re-ran `approve` with the answer.
    records.extend(r.tool_calls.iter().cloned());
    let outputs: Vec<&str> = records.iter().map(|c| c.output.as_str()).collect();
    let ok = r.text == want && outputs.last() == Some(&"approved") && outputs.first() == Some(&"3");
    if ok {
        Ok(())
    } else {
        Err(format!("run {i}: text {:?}, outputs {outputs:?}", r.text))
    }
}

fn flag(args: &[String], name: &str, default: usize) -> usize {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let mock =
        args.iter().position(|a| a == "--mock").and_then(|i| args.get(i + 1)).ok_or("--mock PATH is required")?;
    let (runs, rounds) = (flag(&args, "--runs", 1000), flag(&args, "--rounds", 10));
    let mut child =
        Command::new(mock).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().map_err(|e| e.to_string())?;
    let mut port = String::new();
    BufReader::new(child.stdout.take().ok_or("no stdout")?).read_line(&mut port).map_err(|e| e.to_string())?;
    let base = format!("http://127.0.0.1:{}/v1", port.trim());
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| e.to_string())?;
    rt.block_on(async {
        let mut o = ClientOptions::new(base, Style::OpenAi, "m");
        o.api_key = Some("k".into());
        let durable = Arc::new(Client::new(o.clone()).map_err(|e| e.to_string())?);
        o.wait_for = Some(Arc::new(|req: toolnexus::Request| async move { Ok(Some(answer_output(&req.id, "yes"))) }));
        let inline = Arc::new(Client::new(o).map_err(|e| e.to_string())?);
        let tk = Arc::new(toolkit().map_err(|e| e.to_string())?);
        for round in 0..rounds {
            let started = Instant::now();
            let tasks: Vec<_> = (0..runs)
                .map(|i| {
                    let (inline, durable, tk) = (inline.clone(), durable.clone(), tk.clone());
                    tokio::spawn(async move { one(&inline, &durable, &tk, i).await })
                })
                .collect();
            let mut failed = 0;
            let mut first_error = None;
            for t in tasks {
                match t.await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => {
                        failed += 1;
                        first_error.get_or_insert(e);
                    }
                    Err(e) => {
                        failed += 1;
                        first_error.get_or_insert(e.to_string());
                    }
                }
            }
            let line = json!({"lang": "rust", "round": round, "runs": runs, "failed": failed,
                "ms": started.elapsed().as_secs_f64() * 1e3, "rss_kb": rss_kb()});
            println!("{line}");
            if failed > 0 {
                let first = first_error.unwrap_or_default();
                return Err(format!("round {round}: {failed} of {runs} runs were wrong; the first: {first}"));
            }
        }
        Ok::<(), String>(())
    })?;
    let _ = child.kill();
    Ok(())
}
