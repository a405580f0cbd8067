//! `onMetric`: each engine metric event reaches the host's function on the JS thread, in
//! order and before the Promise of its run settles (they share the runs' delivery queue, see
//! `keepalive.rs`), as the JS port's event objects (camelCase keys).

use std::sync::Arc;

use engine::metrics::{MetricEvent, OnMetric};
use napi::bindgen_prelude::{Function, FunctionRef};
use napi::Env;

use crate::convert::Json;
use crate::keepalive::Queue;

type Sink = FunctionRef<Json, ()>;

/// The host's `onMetric`.
pub struct JsOnMetric {
    func: Arc<Sink>,
    queue: Queue,
}

impl JsOnMetric {
    /// Must run on the JS thread.
    pub fn new(env: &Env, f: Function<'_, Json, ()>) -> napi::Result<JsOnMetric> {
        Ok(JsOnMetric { func: Arc::new(f.create_ref()?), queue: Queue::of(env)? })
    }
}

impl OnMetric for JsOnMetric {
    fn on_metric(&self, event: &MetricEvent) {
        let func = self.func.clone();
        let event = event.to_json_camel();
        self.queue.send(Box::new(move |env| {
            let called = func.borrow_back(env).and_then(|f| f.call(Json(event)));
            // An observer cannot fail the run: what it threw becomes a process warning.
            if let Err(e) = called {
                let w =
                    engine::Warning { code: "metric_sink_failed", message: format!("[toolnexus] onMetric threw: {e}") };
                let _ = crate::warning::emit(env, &[w]);
            }
        }));
    }
}
