//! The crossing between the engine's tokio threads and the caller's asyncio loop.
//!
//! A run is spawned on the library's runtime with the caller's loop in a task-local. When the
//! engine needs the host (a tool, `wait_for`, a hook, a transport), it schedules a call on that
//! loop with `call_soon_threadsafe` and awaits a oneshot that the Python side completes
//! (`_complete` / `_fail`). The GIL is taken only to schedule and to convert, never across an
//! await. The runtime is the library's own, rebuilt in a forked child.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use engine::{Error, ErrorKind};
use pyo3::exceptions::PyBaseException;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use tokio::runtime::Runtime;
use tokio::sync::oneshot;

use crate::error::PyHostError;

static RUNTIME: Mutex<Option<Arc<Runtime>>> = Mutex::new(None);

/// The library's runtime, built on first use (and again after a fork).
pub fn runtime() -> PyResult<Arc<Runtime>> {
    let mut g = RUNTIME.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(rt) = g.as_ref() {
        return Ok(rt.clone());
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("toolnexus")
        .enable_all()
        .build()
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(format!("toolnexus: cannot start the runtime: {e}")))?;
    let rt = Arc::new(rt);
    *g = Some(rt.clone());
    Ok(rt)
}

/// Called in a forked child: the parent's runtime threads do not exist here, so its runtime is
/// abandoned (never dropped: dropping would wait for them, and would deregister the parent's
/// sockets from the epoll set both processes share) and the next run builds a new one; the
/// pooled connections and pending calls belonged to the parent too.
#[pyfunction]
pub fn _after_fork_child() {
    let old = RUNTIME.lock().unwrap_or_else(|p| p.into_inner()).take();
    std::mem::forget(old);
    engine::Http1Transport::abandon_shared();
    let stale = PENDING.lock().unwrap_or_else(|p| p.into_inner()).take();
    std::mem::forget(stale);
}

/// The caller's event loop and the Python dispatcher, for the run in progress.
pub struct LoopRef {
    pub event_loop: Py<PyAny>,
    pub dispatch: Py<PyAny>,
}

tokio::task_local! {
    pub static LOOP: Arc<LoopRef>;
}

type Sender = oneshot::Sender<Result<Py<PyAny>, PyErr>>;

static NEXT: AtomicU64 = AtomicU64::new(1);
static PENDING: Mutex<Option<HashMap<u64, Sender>>> = Mutex::new(None);

fn pending() -> std::sync::MutexGuard<'static, Option<HashMap<u64, Sender>>> {
    PENDING.lock().unwrap_or_else(|p| p.into_inner())
}

struct Forget(u64);

impl Drop for Forget {
    fn drop(&mut self) {
        if let Some(m) = pending().as_mut() {
            m.remove(&self.0);
        }
    }
}

/// The Python side reports a value for `token`.
#[pyfunction]
pub fn _complete(token: u64, value: Py<PyAny>) {
    if let Some(tx) = pending().as_mut().and_then(|m| m.remove(&token)) {
        let _ = tx.send(Ok(value));
    }
}

/// The Python side reports an exception for `token`.
#[pyfunction]
pub fn _fail(token: u64, exc: Bound<'_, PyBaseException>) {
    if let Some(tx) = pending().as_mut().and_then(|m| m.remove(&token)) {
        let _ = tx.send(Err(PyErr::from_value(exc.into_any())));
    }
}

/// Calls `func(*args)` on the run's event loop (awaiting it there if it is a coroutine) and
/// waits for its value. A Python exception is a host error carrying it unchanged.
pub async fn call_py(func: Py<PyAny>, args: Py<PyTuple>) -> Result<Py<PyAny>, Error> {
    let lp = LOOP
        .try_with(|l| l.clone())
        .map_err(|_| Error::new(ErrorKind::Internal, "a host call was made outside of a run"))?;
    let token = NEXT.fetch_add(1, Ordering::Relaxed);
    let (tx, rx) = oneshot::channel();
    pending().get_or_insert_with(HashMap::new).insert(token, tx);
    let _forget = Forget(token);
    Python::attach(|py| {
        lp.event_loop
            .call_method1(py, "call_soon_threadsafe", (lp.dispatch.clone_ref(py), func, args, token))
            .map(|_| ())
    })
    .map_err(|e| Python::attach(|py| PyHostError::wrap(py, e)))?;
    match rx.await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Python::attach(|py| PyHostError::wrap(py, e))),
        Err(_) => Err(Error::new(ErrorKind::Cancelled, "the event loop dropped the call")),
    }
}

/// Spawns `fut` on the runtime with `lp` as its loop, and hands its outcome to `deliver`
/// (called with the GIL held) when it ends.
pub fn spawn_run<T: Send + 'static>(
    lp: Arc<LoopRef>,
    fut: impl Future<Output = Result<T, Error>> + Send + 'static,
    deliver: impl FnOnce(Python<'_>, &Arc<LoopRef>, Result<T, Error>) + Send + 'static,
) -> PyResult<()> {
    let rt = runtime()?;
    rt.spawn(async move {
        let out = LOOP.scope(lp.clone(), fut).await;
        Python::attach(|py| deliver(py, &lp, out));
    });
    Ok(())
}
