//! The cumulative Prometheus registry (SPEC §8) and its text exposition, rendered by hand in
//! upstream's exact layout: six metrics in a fixed order, HELP and TYPE lines always present,
//! samples sorted by their label text, the fixed duration buckets, and a trailing newline.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;

use super::event::MetricEvent;
use super::jsnum::js_number;

/// The duration buckets of both histograms, in seconds, with their `le` labels.
const BUCKETS: [(f64, &str); 10] = [
    (0.05, "0.05"),
    (0.1, "0.1"),
    (0.25, "0.25"),
    (0.5, "0.5"),
    (1.0, "1"),
    (2.5, "2.5"),
    (5.0, "5"),
    (10.0, "10"),
    (30.0, "30"),
    (60.0, "60"),
];

#[derive(Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        self.sum += seconds;
        self.count += 1;
        for (slot, (bound, _)) in self.counts.iter_mut().zip(BUCKETS) {
            if seconds <= bound {
                *slot += 1;
            }
        }
    }
}

/// Rendered label text (`k="v",k="v"`) to value: sorting the text is upstream's sample order.
type Counter = BTreeMap<String, f64>;
type Histograms = BTreeMap<String, Histogram>;

#[derive(Default)]
struct Series {
    llm_requests: Counter,
    llm_tokens: Counter,
    llm_duration: Histograms,
    tool_calls: Counter,
    tool_duration: Histograms,
    run_errors: Counter,
    /// Where an event's label text is written before it is looked up.
    key: String,
}

/// Counters and histograms fed by metric events. Every [`crate::Client`] keeps one (see
/// [`crate::Client::metrics`]); a host may also build one and feed it events itself.
#[derive(Default)]
pub struct MetricsRegistry {
    series: Mutex<Series>,
}

/// Writes the label text of `pairs` into `out`, replacing what it held.
fn labels<'o>(out: &'o mut String, pairs: &[(&str, &str)]) -> &'o str {
    out.clear();
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(k);
        out.push_str("=\"");
        if v.bytes().any(|b| matches!(b, b'\\' | b'"' | b'\n')) {
            for c in v.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '"' => out.push_str("\\\""),
                    '\n' => out.push_str("\\n"),
                    c => out.push(c),
                }
            }
        } else {
            out.push_str(v);
        }
        out.push('"');
    }
    out
}

/// Applies `f` to the series under `key`, which is copied only the first time it is seen.
fn update<V: Default>(series: &mut BTreeMap<String, V>, key: &str, f: impl FnOnce(&mut V)) {
    match series.get_mut(key) {
        Some(v) => f(v),
        None => f(series.entry(key.to_owned()).or_default()),
    }
}

fn add(counter: &mut Counter, key: &str, by: f64) {
    update(counter, key, |v| *v += by);
}

fn observe(series: &mut Histograms, key: &str, seconds: f64) {
    update(series, key, |h| h.observe(seconds));
}

fn bool_str(b: bool) -> &'static str {
    if b {
        "true"
    } else {
        "false"
    }
}

impl MetricsRegistry {
    /// An empty registry.
    pub fn new() -> MetricsRegistry {
        MetricsRegistry::default()
    }

    /// Folds one event in.
    pub fn record(&self, event: &MetricEvent) {
        let mut guard = self.series.lock().unwrap_or_else(|p| p.into_inner());
        let Series { llm_requests, llm_tokens, llm_duration, tool_calls, tool_duration, run_errors, key } = &mut *guard;
        match event {
            MetricEvent::Llm(e) => {
                let status = if e.ok { "ok" } else { "error" };
                add(llm_requests, labels(key, &[("model", &e.model), ("status", status)]), 1.0);
                if e.ok {
                    add(llm_tokens, labels(key, &[("type", "prompt")]), e.prompt_tokens as f64);
                    add(llm_tokens, labels(key, &[("type", "completion")]), e.completion_tokens as f64);
                }
                observe(llm_duration, labels(key, &[("model", &e.model)]), e.ms / 1000.0);
            }
            MetricEvent::Tool(e) => {
                let pairs = [
                    ("tool", e.tool.as_str()),
                    ("source", &e.source),
                    ("is_error", bool_str(e.is_error)),
                    ("pending", bool_str(e.pending)),
                ];
                add(tool_calls, labels(key, &pairs), 1.0);
                observe(tool_duration, labels(key, &[("tool", &e.tool)]), e.ms / 1000.0);
            }
            MetricEvent::Run(e) => {
                if e.error.is_some() {
                    add(run_errors, labels(key, &[("model", &e.model)]), 1.0);
                }
            }
        }
    }

    /// The Prometheus text exposition: valid (HELP and TYPE lines only) before any event.
    pub fn render(&self) -> String {
        let s = self.series.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = String::new();
        counter(&mut out, "toolnexus_llm_requests_total", "Total LLM requests.", &s.llm_requests);
        counter(&mut out, "toolnexus_llm_tokens_total", "Total tokens, by type.", &s.llm_tokens);
        histogram(
            &mut out,
            "toolnexus_llm_request_duration_seconds",
            "LLM request duration in seconds.",
            &s.llm_duration,
        );
        counter(&mut out, "toolnexus_tool_calls_total", "Total tool calls.", &s.tool_calls);
        histogram(&mut out, "toolnexus_tool_duration_seconds", "Tool execution duration in seconds.", &s.tool_duration);
        counter(&mut out, "toolnexus_run_errors_total", "Total run errors.", &s.run_errors);
        out
    }
}

fn head(out: &mut String, name: &str, help: &str, kind: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// `name{labels} value`, or `name value` without labels.
fn sample(out: &mut String, name: &str, labels: &str, value: &str) {
    if labels.is_empty() {
        let _ = writeln!(out, "{name} {value}");
    } else {
        let _ = writeln!(out, "{name}{{{labels}}} {value}");
    }
}

fn counter(out: &mut String, name: &str, help: &str, series: &Counter) {
    head(out, name, help, "counter");
    for (key, v) in series {
        sample(out, name, key, &js_number(*v));
    }
}

fn histogram(out: &mut String, name: &str, help: &str, series: &Histograms) {
    head(out, name, help, "histogram");
    let bucket = format!("{name}_bucket");
    for (key, h) in series {
        let sep = if key.is_empty() { "" } else { "," };
        for (n, (_, le)) in h.counts.iter().zip(BUCKETS) {
            sample(out, &bucket, &format!("{key}{sep}le=\"{le}\""), &n.to_string());
        }
        sample(out, &bucket, &format!("{key}{sep}le=\"+Inf\""), &h.count.to_string());
        sample(out, &format!("{name}_sum"), key, &js_number(h.sum));
        sample(out, &format!("{name}_count"), key, &h.count.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{LlmMetric, RunMetric, ToolMetric};

    #[test]
    fn labels_are_escaped_and_empty_series_render_heads_only() {
        assert_eq!(labels(&mut String::new(), &[("tool", "a\"b\\c\nd")]), r#"tool="a\"b\\c\nd""#);
        assert_eq!(labels(&mut "old".to_string(), &[("a", "x"), ("b", "")]), r#"a="x",b="""#);
        let empty = MetricsRegistry::new().render();
        assert_eq!(empty.lines().count(), 12);
        assert!(empty.lines().all(|l| l.starts_with("# ")) && empty.ends_with("counter\n"));
    }

    #[test]
    fn a_failed_call_counts_no_tokens_and_a_failed_run_counts_once() {
        let r = MetricsRegistry::new();
        r.record(&MetricEvent::Llm(LlmMetric {
            model: "m".into(),
            ok: false,
            ms: 70.0,
            prompt_tokens: 9,
            completion_tokens: 9,
            parts: Vec::new(),
        }));
        r.record(&MetricEvent::Tool(ToolMetric {
            tool: "t".into(),
            source: "mcp".into(),
            is_error: false,
            ms: 0.0,
            pending: true,
        }));
        let run = |error: Option<&str>| {
            MetricEvent::Run(RunMetric {
                model: "m".into(),
                turns: 1,
                tool_calls: 0,
                total_tokens: 0,
                ms: 1.0,
                error: error.map(String::from),
            })
        };
        r.record(&run(Some("boom")));
        r.record(&run(None));
        let text = r.render();
        assert!(text.contains("toolnexus_llm_requests_total{model=\"m\",status=\"error\"} 1\n"));
        assert!(!text.contains("toolnexus_llm_tokens_total{"));
        assert!(text.contains("toolnexus_llm_request_duration_seconds_bucket{model=\"m\",le=\"0.05\"} 0\n"));
        assert!(text.contains("toolnexus_llm_request_duration_seconds_sum{model=\"m\"} 0.07\n"));
        assert!(text
            .contains("toolnexus_tool_calls_total{tool=\"t\",source=\"mcp\",is_error=\"false\",pending=\"true\"} 1\n"));
        assert!(
            text.ends_with("# TYPE toolnexus_run_errors_total counter\ntoolnexus_run_errors_total{model=\"m\"} 1\n")
        );
    }
}
