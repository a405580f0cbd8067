//! The crossing between the engine's tokio threads and the caller's asyncio loop.
//!
//! A run's future is polled on the caller's asyncio loop thread, inside the library's tokio
//! runtime context ([`RunTask`]): the engine's work runs there in short polls, host callbacks
//! (tools, `wait_for`, hooks, transports) are called inline, and only socket readiness and
//! timers, driven by the runtime's own threads, wake the task by scheduling its next poll with
//! `call_soon_threadsafe`. Host calls answer through a oneshot (`_complete` / `_fail`), at once
//! or, for a coroutine that really waits, from its Task later. The GIL is never held across an
//! await: a poll returns to the loop whenever the engine waits. The runtime is the library's
//! own, rebuilt in a forked child.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use engine::{CancellationToken, Error, ErrorKind};
use pyo3::exceptions::PyBaseException;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use serde_json::Value;
use tokio::runtime::Runtime;
use tokio::sync::oneshot;

use crate::convert::to_py;
use crate::error::{to_py_err, PyHostError};

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

/// Calls `func(*args)` through `_bridge.dispatch` and waits for its value. Runs are polled on
/// their event loop's thread (see [`RunTask`]), so the call happens right here; a coroutine is
/// stepped at once, and only one that really waits goes on as a Task that completes the token
/// later. A Python exception is a host error carrying it unchanged.
pub async fn call_py(func: Py<PyAny>, args: Py<PyTuple>) -> Result<Py<PyAny>, Error> {
    let token = NEXT.fetch_add(1, Ordering::Relaxed);
    let (tx, rx) = oneshot::channel();
    pending().get_or_insert_with(HashMap::new).insert(token, tx);
    let _forget = Forget(token);
    Python::attach(|py| -> PyResult<()> {
        crate::host::bridge_fn(py, "dispatch")?.call1(py, (func, args, token))?;
        Ok(())
    })
    .map_err(|e| Python::attach(|py| PyHostError::wrap(py, e)))?;
    match rx.await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Python::attach(|py| PyHostError::wrap(py, e))),
        Err(_) => Err(Error::new(ErrorKind::Cancelled, "the event loop dropped the call")),
    }
}

type RunFuture = Pin<Box<dyn Future<Output = Result<Value, Error>> + Send>>;

/// A run driven by its caller's event loop: polled on the loop's thread (inside the library's
/// runtime context, so its sockets and timers live on the runtime's reactor), and woken by
/// scheduling another poll there. Host callbacks therefore run inline, on the loop, with no
/// thread hop; only I/O readiness and timers cross from the runtime's threads.
#[pyclass(frozen, module = "toolnexus._native", name = "RunHandle")]
pub struct RunTask {
    fut: Mutex<Option<RunFuture>>,
    waker: Mutex<Option<Waker>>,
    scheduled: AtomicBool,
    event_loop: Py<PyAny>,
    future: Py<PyAny>,
    cancel: CancellationToken,
}

struct TaskWaker {
    task: Py<RunTask>,
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let task = self.task.get();
        if task.scheduled.swap(true, Ordering::AcqRel) {
            return;
        }
        Python::attach(|py| {
            // A closed loop has nobody left to run for.
            if let Ok(poll) = self.task.getattr(py, "_poll") {
                let _ = task.event_loop.call_method1(py, "call_soon_threadsafe", (poll,));
            }
        });
    }
}

#[pymethods]
impl RunTask {
    /// Aborts the run (its in-flight request included); it ends with RunCancelled.
    fn cancel(&self) {
        self.cancel.cancel();
    }

    fn _poll(slf: Py<Self>, py: Python<'_>) {
        RunTask::poll_now(&slf, py);
    }
}

impl RunTask {
    /// Starts `fut` for `event_loop`, settling `future` (an asyncio future) with its outcome.
    pub fn start(
        py: Python<'_>,
        event_loop: Py<PyAny>,
        future: Py<PyAny>,
        cancel: CancellationToken,
        fut: impl Future<Output = Result<Value, Error>> + Send + 'static,
    ) -> PyResult<Py<RunTask>> {
        let task = Py::new(
            py,
            RunTask {
                fut: Mutex::new(Some(Box::pin(fut))),
                waker: Mutex::new(None),
                scheduled: AtomicBool::new(false),
                event_loop,
                future,
                cancel,
            },
        )?;
        let waker = Waker::from(Arc::new(TaskWaker { task: task.clone_ref(py) }));
        *task.get().waker.lock().unwrap_or_else(|p| p.into_inner()) = Some(waker);
        RunTask::poll_now(&task, py);
        Ok(task)
    }

    fn poll_now(slf: &Py<Self>, py: Python<'_>) {
        let task = slf.get();
        task.scheduled.store(false, Ordering::Release);
        let Some(waker) = task.waker.lock().unwrap_or_else(|p| p.into_inner()).clone() else { return };
        let rt = match runtime() {
            Ok(rt) => rt,
            Err(e) => return task.settle(py, Err(Error::new(ErrorKind::Internal, e.to_string()))),
        };
        let mut slot = task.fut.lock().unwrap_or_else(|p| p.into_inner());
        let Some(fut) = slot.as_mut() else { return };
        let _in_runtime = rt.enter();
        let out = match fut.as_mut().poll(&mut Context::from_waker(&waker)) {
            Poll::Pending => return,
            Poll::Ready(out) => out,
        };
        // Done: drop the future and the waker (which refers back to this task) before settling.
        *slot = None;
        drop(slot);
        task.waker.lock().unwrap_or_else(|p| p.into_inner()).take();
        task.settle(py, out);
    }

    fn settle(&self, py: Python<'_>, out: Result<Value, Error>) {
        let settle = || -> PyResult<()> {
            let (ok, value) = match out {
                Ok(v) => (true, to_py(py, &v)?.unbind()),
                Err(e) => (false, to_py_err(py, e).into_value(py).into_any()),
            };
            crate::host::bridge_fn(py, "resolve")?.call1(py, (self.future.clone_ref(py), ok, value))?;
            Ok(())
        };
        if let Err(e) = settle() {
            e.write_unraisable(py, None);
        }
    }
}
