//! What a run reports as it goes: the client's `on_metric` callable as the engine's metric
//! sink, a stream's event callable, and the engine's registry as
//! `toolnexus.client.MetricsRegistry`.

use engine::metrics::{MetricEvent, OnMetric};
use engine::{OnStreamEvent, StreamEvent};
use pyo3::prelude::*;

use crate::convert::{from_py, to_py};
use crate::error;

/// A host callable receiving events (the client's `on_metric`, a stream's queue), each as the
/// engine's dict. A callable that raises is reported through `sys.unraisablehook` and the run
/// goes on: an observer cannot fail a run.
pub struct PySink {
    pub func: Py<PyAny>,
}

impl PySink {
    fn send(&self, event: serde_json::Value) {
        Python::attach(|py| {
            let called = to_py(py, &event).and_then(|ev| self.func.call1(py, (ev,)));
            if let Err(e) = called {
                e.write_unraisable(py, Some(self.func.bind(py)));
            }
        });
    }
}

impl OnMetric for PySink {
    fn on_metric(&self, event: &MetricEvent) {
        self.send(event.to_json());
    }
}

impl OnStreamEvent for PySink {
    fn on_event(&self, event: StreamEvent) {
        self.send(event.to_json());
    }
}

/// The cumulative Prometheus registry every client keeps, for a host that feeds one itself.
#[pyclass(frozen, module = "toolnexus._native", name = "MetricsRegistry")]
pub struct PyMetricsRegistry(engine::metrics::MetricsRegistry);

#[pymethods]
impl PyMetricsRegistry {
    #[new]
    fn new() -> Self {
        PyMetricsRegistry(engine::metrics::MetricsRegistry::new())
    }

    /// Folds in one event, a dict as `on_metric` receives it.
    fn record(&self, py: Python<'_>, event: Bound<'_, PyAny>) -> PyResult<()> {
        let ev = error::map(py, MetricEvent::from_json(&from_py(&event)?))?;
        self.0.record(&ev);
        Ok(())
    }

    /// The Prometheus text exposition.
    fn render(&self) -> String {
        self.0.render()
    }
}
