//! Observability (SPEC §8): one semantic event per model call (`llm`), per tool execution
//! (`tool`) and per run (`run`), handed to the host's [`OnMetric`] sink as they happen and
//! folded into each client's [`MetricsRegistry`], whose Prometheus text is the same bytes
//! upstream's ports render.

mod event;
mod jsnum;
mod registry;

use std::sync::Arc;

pub use event::{LlmMetric, MetricEvent, RunMetric, ToolMetric};
pub use jsnum::js_number;
pub use registry::MetricsRegistry;

/// The host's metric sink. Called synchronously, in order, on the thread driving the run:
/// keep it quick (hand the event off if it must do I/O). It cannot fail the run; a binding
/// reports a sink's own failure in its language's way.
pub trait OnMetric: Send + Sync {
    /// One event.
    fn on_metric(&self, event: &MetricEvent);
}

impl<F: Fn(&MetricEvent) + Send + Sync> OnMetric for F {
    fn on_metric(&self, event: &MetricEvent) {
        self(event)
    }
}

/// Where a run's events go: the client's registry, then the host's sink.
#[derive(Clone, Copy)]
pub(crate) struct Meter<'a> {
    pub registry: &'a MetricsRegistry,
    pub sink: Option<&'a Arc<dyn OnMetric>>,
}

impl Meter<'_> {
    pub fn emit(&self, event: MetricEvent) {
        self.registry.record(&event);
        if let Some(s) = self.sink {
            s.on_metric(&event);
        }
    }
}

/// Milliseconds since `start`, with the sub-millisecond part (upstream's Python reports a
/// float too; the JS port rounds to whole milliseconds).
pub(crate) fn ms_since(start: std::time::Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}
