//! `onMetric`, a stream's events and a client's warnings: each reaches the host's function on the JS thread, in
//! order and before the Promise of its run settles (they share the runs' delivery queue, see
//! `keepalive.rs`), as the JS port's event objects (camelCase keys).

use std::sync::Arc;

use engine::metrics::{MetricEvent, OnMetric};
use napi::bindgen_prelude::{Function, FunctionRef};
use napi::Env;

use crate::convert::Json;
use crate::keepalive::Queue;

type Sink = FunctionRef<Json, ()>;

/// A host function receiving events: the client's `onMetric`, or a stream's consumer.
pub struct JsSink {
    func: Arc<Sink>,
    queue: Queue,
    /// Names the function in the warning for what it threw.
    what: &'static str,
}

impl JsSink {
    /// Must run on the JS thread.
    pub fn new(env: &Env, f: Function<'_, Json, ()>, what: &'static str) -> napi::Result<JsSink> {
        Ok(JsSink { func: Arc::new(f.create_ref()?), queue: Queue::of(env)?, what })
    }

    fn send(&self, event: serde_json::Value) {
        let (func, what) = (self.func.clone(), self.what);
        self.queue.send(Box::new(move |env| {
            let called = func.borrow_back(env).and_then(|f| f.call(Json(event)));
            // An observer cannot fail the run: what it threw becomes a process warning.
            if let Err(e) = called {
                let w =
                    engine::Warning { code: "metric_sink_failed", message: format!("[toolnexus] {what} threw: {e}") };
                let _ = crate::warning::emit(env, &[w]);
            }
        }));
    }
}

impl OnMetric for JsSink {
    fn on_metric(&self, event: &MetricEvent) {
        self.send(event.to_json_camel());
    }
}

impl engine::OnStreamEvent for JsSink {
    fn on_event(&self, event: engine::StreamEvent) {
        self.send(event.to_json_camel());
    }
}

/// The client's warnings (a tool's content part sent as its placeholder) as process warnings,
/// emitted on the JS thread like the other `ToolnexusWarning`s.
pub struct JsWarnings {
    queue: Queue,
}

impl JsWarnings {
    /// Must run on the JS thread.
    pub fn new(env: &Env) -> napi::Result<JsWarnings> {
        Ok(JsWarnings { queue: Queue::of(env)? })
    }
}

impl engine::OnWarning for JsWarnings {
    fn on_warning(&self, warning: &engine::Warning) {
        let w = warning.clone();
        self.queue.send(Box::new(move |env| {
            let _ = crate::warning::emit(env, &[w]);
        }));
    }
}
