//! The crossing between the engine's tokio threads and the caller's asyncio loop.
//!
//! A run's future is polled on the caller's asyncio loop thread, inside the library's tokio
//! runtime context ([`RunTask`]): the engine's work runs there in short polls, host callbacks
//! (tools, `wait_for`, hooks, transports) are called inline, and only socket readiness and
//! timers, driven by the runtime's own threads, wake the task: it is queued on the loop's
//! [`LoopWaker`], which the loop drains on its own thread. A host call that does not finish at
//! once answers through a oneshot (`_complete` / `_fail`) from its Task later. The GIL is never
//! held across an await: a poll returns to the loop whenever the engine waits. The runtime is
//! the library's own, rebuilt in a forked child.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Wake, Waker};

use engine::{CancellationToken, Error, ErrorKind};
use pyo3::exceptions::{PyBaseException, PyStopIteration};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyString, PyTuple, PyType, PyWeakrefMethods, PyWeakrefReference};
use tokio::runtime::Runtime;
use tokio::sync::oneshot;

use crate::error::{to_py_err, PyHostError};
use crate::wakeup::Wakeup;

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
        let waiting = pending().as_mut().and_then(|m| m.remove(&self.0)).is_some();
        if waiting {
            // The engine gave up on the call (its run ended: a deadline, a cancel, another
            // call's failure): the Task driving the host's coroutine must not run on by itself.
            Python::try_attach(|py| {
                if let Ok(abandon) = crate::host::bridge_fn(py, "abandon") {
                    if let Err(e) = abandon.call1(py, (self.0,)) {
                        e.write_unraisable(py, None);
                    }
                }
            });
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

/// Calls `func(*args)` and waits for its value. Runs are polled on their event loop's thread
/// (see [`RunTask`]), so the call happens right here. A coroutine is stepped at once, like an
/// eager task: most host calls finish without suspending and then cost no Task, no token and no
/// further turn of the loop. One that really waits goes on as a Task (`_bridge.continue_task`)
/// that completes a token later. A Python exception is a host error carrying it unchanged.
pub async fn call_py(func: Py<PyAny>, args: Py<PyTuple>) -> Result<Py<PyAny>, Error> {
    let out = call_py_inner(func, args).await;
    // The engine checks its token before every request, so firing it here is enough.
    Python::attach(RunCancel::fire_if_set);
    out
}

async fn call_py_inner(func: Py<PyAny>, args: Py<PyTuple>) -> Result<Py<PyAny>, Error> {
    let started = Python::attach(|py| start_call(py, func, args));
    let rx = match started {
        Started::Done(v) => return Ok(v),
        Started::Failed(e) => return Err(Python::attach(|py| PyHostError::wrap(py, e))),
        Started::Later(rx, token) => (rx, Forget(token)),
    };
    match rx.0.await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Python::attach(|py| PyHostError::wrap(py, e))),
        Err(_) => Err(Error::new(ErrorKind::Cancelled, "the event loop dropped the call")),
    }
}

enum Started {
    Done(Py<PyAny>),
    Failed(PyErr),
    Later(oneshot::Receiver<Result<Py<PyAny>, PyErr>>, u64),
}

fn start_call(py: Python<'_>, func: Py<PyAny>, args: Py<PyTuple>) -> Started {
    let out = match func.call1(py, args.bind(py)) {
        Ok(out) => out.into_bound(py),
        Err(e) => return Started::Failed(e),
    };
    let awaitable = if out.is_instance(coroutine_type(py)).unwrap_or(false) {
        match out.call_method1("send", (py.None(),)) {
            Err(e) if e.is_instance_of::<PyStopIteration>(py) => {
                return match e.value(py).getattr("value") {
                    Ok(v) => Started::Done(v.unbind()),
                    Err(e) => Started::Failed(e),
                };
            }
            Err(e) => return Started::Failed(e),
            // It is waiting on `yielded`: a Task takes it from here.
            Ok(yielded) => match crate::host::bridge_fn(py, "finish").and_then(|f| f.call1(py, (&out, yielded))) {
                Ok(finisher) => finisher.into_bound(py),
                Err(e) => return Started::Failed(e),
            },
        }
    } else if out.hasattr("__await__").unwrap_or(false) {
        out
    } else {
        return Started::Done(out.unbind());
    };
    let token = NEXT.fetch_add(1, Ordering::Relaxed);
    let (tx, rx) = oneshot::channel();
    pending().get_or_insert_with(HashMap::new).insert(token, tx);
    match crate::host::bridge_fn(py, "continue_task").and_then(|f| f.call1(py, (awaitable, token))) {
        Ok(_) => Started::Later(rx, token),
        Err(e) => {
            drop(Forget(token));
            Started::Failed(e)
        }
    }
}

fn coroutine_type(py: Python<'_>) -> &Bound<'_, PyType> {
    static CORO: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    CORO.get_or_init(py, || {
        py.import("types")
            .and_then(|t| t.getattr("CoroutineType"))
            .and_then(|t| t.cast_into::<PyType>().map_err(Into::into))
            .map(Bound::unbind)
            .unwrap_or_else(|_| py.get_type::<PyTuple>().unbind())
    })
    .bind(py)
}

/// The caller's `cancel` event of the run being polled on this thread. The engine checks its
/// own token between steps, but the event only reaches that token through a watcher Task the
/// loop runs later: a callback that sets the event and returns at once would let the run go
/// on (one more request) first. So each host callback, when it completes, looks at the event
/// itself and fires the token (see [`call_py`]), as the published package checks it before
/// every request.
struct RunCancel {
    event: Py<PyAny>,
    token: CancellationToken,
}

thread_local! {
    static POLLED: RefCell<Option<RunCancel>> = const { RefCell::new(None) };
}

impl RunCancel {
    /// Fires the polled run's token if its event is set.
    fn fire_if_set(py: Python<'_>) {
        let current = POLLED.with(|p| p.borrow().as_ref().map(|c| (c.event.clone_ref(py), c.token.clone())));
        // Read outside the borrow: `is_set` is the host's object and may run any code.
        let Some((event, token)) = current else { return };
        if event.call_method0(py, intern!(py, "is_set")).and_then(|v| v.is_truthy(py)).unwrap_or(false) {
            token.cancel();
        }
    }
}

/// Makes a run the polled one on this thread for as long as it lives, restoring the one before
/// (a tool may run a toolkit call, itself a run, inside another run's poll).
struct Polling(Option<RunCancel>);

impl Polling {
    fn enter(py: Python<'_>, task: &TaskInner) -> Polling {
        let event = task.cancel_event.as_ref().and_then(|e| e.get(py));
        let this = event.map(|event| RunCancel { event, token: task.cancel.clone() });
        Polling(POLLED.with(|p| p.replace(this)))
    }
}

impl Drop for Polling {
    fn drop(&mut self) {
        let before = self.0.take();
        POLLED.with(|p| *p.borrow_mut() = before);
    }
}

/// A run's future and its outcome.
type RunFuture = Pin<Box<dyn Future<Output = Result<Outcome, Error>> + Send>>;

/// Builds a Python object from an engine value, under the GIL, once the future is done.
pub type MakePy = Box<dyn FnOnce(Python<'_>) -> PyResult<Py<PyAny>> + Send>;

/// What a run's future gives the Python side.
pub enum Outcome {
    /// JSON text, decoded by `json.loads` on the Python side.
    Text(String),
    /// An object (a toolkit, an MCP source or server), made under the GIL.
    Object(MakePy),
}

/// Wakes one event loop from any thread without the GIL: a woken run is queued here and, when
/// the queue was empty, its [`Wakeup`] fd, which the loop watches (`loop.add_reader`), is
/// signalled. The loop then drains the queue and polls each run, on its own thread.
#[pyclass(frozen, module = "toolnexus._native", name = "LoopWaker")]
pub struct LoopWaker {
    queue: Arc<WakeQueue>,
    /// The loop it wakes, weakly: the package keeps one waker per loop, keyed weakly by it.
    event_loop: Py<PyWeakrefReference>,
}

impl LoopWaker {
    /// The loop this waker serves, unless it is gone.
    pub fn event_loop<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyAny>> {
        self.event_loop.bind(py).upgrade()
    }
}

struct WakeQueue {
    ready: Mutex<Vec<Arc<TaskInner>>>,
    wakeup: Wakeup,
}

impl WakeQueue {
    fn push(&self, task: Arc<TaskInner>) {
        let was_empty = {
            let mut ready = self.ready.lock().unwrap_or_else(|p| p.into_inner());
            ready.push(task);
            ready.len() == 1
        };
        if was_empty {
            // One signal per empty-to-queued transition.
            self.wakeup.signal();
        }
    }
}

#[pymethods]
impl LoopWaker {
    #[new]
    fn new(py: Python<'_>, event_loop: Bound<'_, PyAny>) -> PyResult<Py<LoopWaker>> {
        let wakeup = Wakeup::new()?;
        let fd = wakeup.fd();
        let queue = Arc::new(WakeQueue { ready: Mutex::new(Vec::new()), wakeup });
        let weak_loop = PyWeakrefReference::new(&event_loop)?.unbind();
        let waker = Py::new(py, LoopWaker { queue, event_loop: weak_loop })?;
        event_loop.call_method1("add_reader", (fd, waker.getattr(py, "_ready")?))?;
        Ok(waker)
    }

    fn _ready(&self, py: Python<'_>) {
        self.queue.wakeup.drain();
        let ready = std::mem::take(&mut *self.queue.ready.lock().unwrap_or_else(|p| p.into_inner()));
        for task in ready {
            task.poll_now(py);
        }
    }
}

/// A run driven by its caller's event loop: polled on the loop's thread (inside the library's
/// runtime context, so its sockets and timers live on the runtime's reactor), and woken through
/// the loop's [`LoopWaker`]. Host callbacks therefore run inline, on the loop, with no thread
/// hop; only I/O readiness and timers cross from the runtime's threads, without the GIL.
///
/// The handle owns the run: wakers hold it weakly, so a handle dropped before the run ends
/// (its awaiting task gone, its loop closed) drops the run with it, connection included.
#[pyclass(frozen, module = "toolnexus._native", name = "RunHandle")]
pub struct RunTask {
    inner: Arc<TaskInner>,
}

struct TaskInner {
    fut: Mutex<Option<RunFuture>>,
    waker: Mutex<Option<Waker>>,
    scheduled: AtomicBool,
    /// Where the outcome goes.
    sink: Sink,
    cancel: CancellationToken,
    /// The caller's `cancel` event (an `asyncio.Event`), if it passed one; weakly, as
    /// `future`: the client's watcher Task waits on it and holds this run's handle. Only an
    /// object without weak references is held strongly.
    cancel_event: Option<EventRef>,
    queue: Arc<WakeQueue>,
}

/// Where a run's outcome goes.
pub enum Sink {
    /// An asyncio future, held weakly: its awaiting task holds it (and, through its
    /// coroutine, this run's handle), so a strong reference would make a cycle the garbage
    /// collector cannot see through.
    Future(Py<PyWeakrefReference>),
    /// An engine task waiting on another thread (a tool call hopped onto the loop).
    Rust(Mutex<Option<oneshot::Sender<Result<String, Error>>>>),
}

/// How a run holds its caller's cancel event.
enum EventRef {
    Weak(Py<PyWeakrefReference>),
    Strong(Py<PyAny>),
}

impl EventRef {
    fn new(event: Bound<'_, PyAny>) -> EventRef {
        match PyWeakrefReference::new(&event) {
            Ok(weak) => EventRef::Weak(weak.unbind()),
            Err(_) => EventRef::Strong(event.unbind()),
        }
    }

    /// The event, unless it is gone (then nobody can set it any more).
    fn get(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        match self {
            EventRef::Weak(w) => w.bind(py).upgrade().map(Bound::unbind),
            EventRef::Strong(e) => Some(e.clone_ref(py)),
        }
    }
}

struct TaskWaker(Weak<TaskInner>);

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if let Some(task) = self.0.upgrade() {
            if !task.scheduled.swap(true, Ordering::AcqRel) {
                task.queue.push(task.clone());
            }
        }
    }
}

#[pymethods]
impl RunTask {
    /// Aborts the run (its in-flight request included); it ends with RunCancelled.
    fn cancel(&self) {
        self.inner.cancel.cancel();
    }
}

impl RunTask {
    /// Starts `fut` on the loop `waker` serves, settling `future` (an asyncio future) with its
    /// outcome. The first poll happens now. `cancel` is the run's token, fired by
    /// [`RunTask::cancel`] and by host callbacks that complete once `cancel_event` is set.
    pub fn start(
        py: Python<'_>,
        waker: &LoopWaker,
        future: Py<PyAny>,
        cancel: CancellationToken,
        cancel_event: Option<Py<PyAny>>,
        fut: impl Future<Output = Result<String, Error>> + Send + 'static,
    ) -> PyResult<RunTask> {
        let sink = Sink::Future(PyWeakrefReference::new(future.bind(py))?.unbind());
        RunTask::start_with(py, waker, sink, cancel, cancel_event, async move { fut.await.map(Outcome::Text) })
    }

    /// [`RunTask::start`] for a future that makes a Python object: `future` gets the object.
    pub fn start_object(
        py: Python<'_>,
        waker: &LoopWaker,
        future: Py<PyAny>,
        cancel: CancellationToken,
        cancel_event: Option<Py<PyAny>>,
        fut: impl Future<Output = Result<MakePy, Error>> + Send + 'static,
    ) -> PyResult<RunTask> {
        let sink = Sink::Future(PyWeakrefReference::new(future.bind(py))?.unbind());
        RunTask::start_with(py, waker, sink, cancel, cancel_event, async move { fut.await.map(Outcome::Object) })
    }

    /// [`RunTask::start`] settling `sink`.
    pub fn start_with(
        py: Python<'_>,
        waker: &LoopWaker,
        sink: Sink,
        cancel: CancellationToken,
        cancel_event: Option<Py<PyAny>>,
        fut: impl Future<Output = Result<Outcome, Error>> + Send + 'static,
    ) -> PyResult<RunTask> {
        // An event set before the run starts: the engine sees a cancelled token and sends nothing.
        if let Some(event) = &cancel_event {
            if event.call_method0(py, intern!(py, "is_set"))?.is_truthy(py)? {
                cancel.cancel();
            }
        }
        let inner = Arc::new(TaskInner {
            fut: Mutex::new(Some(Box::pin(fut))),
            waker: Mutex::new(None),
            scheduled: AtomicBool::new(false),
            sink,
            cancel,
            cancel_event: cancel_event.map(|e| EventRef::new(e.into_bound(py))),
            queue: waker.queue.clone(),
        });
        *inner.waker.lock().unwrap_or_else(|p| p.into_inner()) =
            Some(Waker::from(Arc::new(TaskWaker(Arc::downgrade(&inner)))));
        inner.poll_now(py);
        Ok(RunTask { inner })
    }
}

impl TaskInner {
    fn poll_now(&self, py: Python<'_>) {
        self.scheduled.store(false, Ordering::Release);
        let Some(waker) = self.waker.lock().unwrap_or_else(|p| p.into_inner()).clone() else { return };
        let rt = match runtime() {
            Ok(rt) => rt,
            Err(e) => return self.settle(py, Err(Error::new(ErrorKind::Internal, e.to_string()))),
        };
        let mut slot = self.fut.lock().unwrap_or_else(|p| p.into_inner());
        let Some(fut) = slot.as_mut() else { return };
        let _in_runtime = rt.enter();
        let polling = Polling::enter(py, self);
        let polled = fut.as_mut().poll(&mut Context::from_waker(&waker));
        drop(polling);
        let out = match polled {
            Poll::Pending => return,
            Poll::Ready(out) => out,
        };
        // Done: drop the future and the waker before settling.
        *slot = None;
        drop(slot);
        self.waker.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.settle(py, out);
    }

    fn settle(&self, py: Python<'_>, out: Result<Outcome, Error>) {
        let future = match &self.sink {
            Sink::Rust(tx) => {
                if let Some(tx) = tx.lock().unwrap_or_else(|p| p.into_inner()).take() {
                    let _ = tx.send(out.and_then(|o| match o {
                        Outcome::Text(text) => Ok(text),
                        Outcome::Object(_) => Err(Error::new(ErrorKind::Internal, "an object for an engine task")),
                    }));
                }
                return;
            }
            Sink::Future(future) => future,
        };
        // Nobody is left to read the outcome when the future is gone.
        let Some(future) = future.bind(py).upgrade() else { return };
        let settle = || -> PyResult<()> {
            let (ok, value) = match out {
                Ok(Outcome::Text(text)) => (true, PyString::new(py, &text).into_any().unbind()),
                Ok(Outcome::Object(make)) => match make(py) {
                    Ok(obj) => (true, obj),
                    Err(e) => (false, e.into_value(py).into_any()),
                },
                Err(e) => (false, to_py_err(py, e).into_value(py).into_any()),
            };
            crate::host::bridge_fn(py, "resolve")?.call1(py, (future, ok, value))?;
            Ok(())
        };
        if let Err(e) = settle() {
            e.write_unraisable(py, None);
        }
    }
}
