//! Runs (and `execute`s) as JS Promises, and what keeps Node's event loop alive while they are
//! in flight.
//!
//! The JS port keeps the loop alive only through handles of its own: the socket of a model
//! request in flight and the timer of a retry's backoff (its `timeoutMs` timer is unref'd). A
//! run waiting on a promise of the host's (a tool, a hook, `waitFor`, `fetch`) holds nothing:
//! whatever that promise waits on keeps the process up, or nothing does and the process exits.
//! napi's `spawn_future` holds a ref'd handle for the whole life of the future instead, so a
//! script that left a run or an `execute` waiting on a promise that never settles did not exit.
//!
//! Here the Promise of each run is settled through one threadsafe function per JS environment,
//! ref'd exactly while some run is working: started and not waiting on a host promise, or
//! cancelled by its signal and winding down. The engine's side knows its run by id (a tokio
//! task-local, read by `call.rs` when it calls the host); every count lives on the JS thread,
//! where the promises settle, so the loop is kept alive before the engine resumes.
//!
//! This assumes the engine does no I/O of its own while the same run waits on a host promise:
//! tools, hooks and `waitFor` run between model requests, and `fetch` is itself a host promise.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use engine::ErrorKind;
use napi::bindgen_prelude::{FunctionCallContext, PromiseRaw, ToNapiValue};
use napi::threadsafe_function::{ThreadsafeCallContext, ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{sys, Env, Status};

/// What a run's future produced, on its way to the JS thread.
type Outcome = Box<dyn Any + Send>;
/// Turns a run's outcome into the value its Promise resolves with (or the error it rejects with).
type Settle = Box<dyn FnOnce(&Env, Outcome) -> napi::Result<sys::napi_value>>;

/// Carries outcomes to the JS thread; ref'd only while a run is working.
type Deliver = ThreadsafeFunction<Delivery, (), (), Status, false, false>;

enum Delivery {
    /// Run `id`'s outcome; `None`: the future was dropped without one (a panic, the runtime
    /// shutting down).
    Outcome { id: u64, outcome: Option<Outcome> },
    /// Work for the JS thread that must come in order with the runs' outcomes: a run's metric
    /// events reach the host before its Promise settles.
    Task(Task),
}

/// See [`Delivery::Task`].
pub type Task = Box<dyn FnOnce(&Env) + Send>;

/// Queues `task` for the JS thread behind everything sent so far (a run's metric events
/// before its outcome). Dropped silently once the environment is closing.
#[derive(Clone)]
pub struct Queue(Arc<Deliver>);

impl Queue {
    /// This environment's queue. Must run on the JS thread.
    pub fn of(env: &Env) -> napi::Result<Queue> {
        match RUNS.with(|r| r.borrow().as_ref().map(|r| r.deliver.clone())) {
            Some(d) => Ok(Queue(d)),
            None => {
                let d = first_use(env)?;
                // Made for a client, not a run: nothing works yet, so it must not hold the
                // process open (a run refs it when it starts).
                update(env, |_| {});
                Ok(Queue(d))
            }
        }
    }

    pub fn send(&self, task: Task) {
        let _ = self.0.call(Delivery::Task(task), ThreadsafeFunctionCallMode::NonBlocking);
    }
}

tokio::task_local! {
    /// The run a future belongs to.
    static RUN: u64;
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// This thread's JS environment's runs (a worker has its own).
    static RUNS: RefCell<Option<Runs>> = const { RefCell::new(None) };
}

struct Runs {
    deliver: Arc<Deliver>,
    referred: bool,
    /// Runs in flight that are working (see [`Entry::working`]).
    working: usize,
    entries: HashMap<u64, Entry>,
}

struct Entry {
    deferred: sys::napi_deferred,
    settle: Settle,
    /// Host promises of this run not settled yet.
    waiting: u32,
    /// Its signal aborted it: the engine is winding it down.
    cancelled: bool,
}

impl Entry {
    fn working(&self) -> bool {
        self.cancelled || self.waiting == 0
    }
}

/// A new run id, for [`spawn`] and [`cancelled`].
pub fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// The run the calling future belongs to, if any.
pub fn current() -> Option<u64> {
    RUN.try_with(|id| *id).ok()
}

/// Runs `work` on napi's tokio runtime as run `id`; the returned Promise settles with
/// `settle(outcome)` on the JS thread. Must run on the JS thread.
pub fn spawn<'e, T, V, F, S>(env: &'e Env, id: u64, work: F, settle: S) -> napi::Result<PromiseRaw<'e, V>>
where
    T: Send + 'static,
    V: ToNapiValue,
    F: Future<Output = T> + Send + 'static,
    S: FnOnce(&Env, T) -> napi::Result<V> + 'static,
{
    let deliver = match RUNS.with(|r| r.borrow().as_ref().map(|r| r.deliver.clone())) {
        Some(d) => d,
        None => first_use(env)?,
    };
    let mut deferred = std::ptr::null_mut();
    let mut promise = std::ptr::null_mut();
    // SAFETY: on the JS thread of `env`.
    napi::check_status!(unsafe { sys::napi_create_promise(env.raw(), &mut deferred, &mut promise) })?;
    let settle: Settle = Box::new(move |env, outcome| {
        let outcome = outcome.downcast::<T>().map_err(|_| napi::Error::from_reason("run outcome of another type"))?;
        let value = settle(env, *outcome)?;
        // SAFETY: on the JS thread of `env`.
        unsafe { V::to_napi_value(env.raw(), value) }
    });
    update(env, |runs| {
        runs.entries.insert(id, Entry { deferred, settle, waiting: 0, cancelled: false });
        runs.working += 1;
    });
    let settler = Settler { id, deliver: Some(deliver) };
    napi::bindgen_prelude::spawn(RUN.scope(id, async move {
        let out = work.await;
        settler.send(Box::new(out));
    }));
    Ok(PromiseRaw::new(env.raw(), promise))
}

/// Run `run` waits on one more host promise. On the JS thread.
pub fn waiting(env: &Env, run: Option<u64>) {
    change(env, run, |e| e.waiting += 1);
}

/// One of run `run`'s host promises settled. On the JS thread.
pub fn resumed(env: &Env, run: Option<u64>) {
    change(env, run, |e| e.waiting = e.waiting.saturating_sub(1));
}

/// Run `id`'s signal aborted it: it works until it settles. On the JS thread.
pub fn cancelled(env: &Env, id: u64) {
    change(env, Some(id), |e| e.cancelled = true);
}

fn change(env: &Env, run: Option<u64>, f: impl FnOnce(&mut Entry)) {
    let Some(id) = run else { return };
    update(env, |runs| {
        if let Some(e) = runs.entries.get_mut(&id) {
            let before = e.working();
            f(e);
            match (before, e.working()) {
                (true, false) => runs.working -= 1,
                (false, true) => runs.working += 1,
                _ => {}
            }
        }
    });
}

/// Applies `f` to this thread's runs, then refs the delivery function when some run works
/// and unrefs it when none does. Calls no JS.
fn update(env: &Env, f: impl FnOnce(&mut Runs)) {
    RUNS.with(|r| {
        let mut r = r.borrow_mut();
        let Some(runs) = r.as_mut() else { return };
        f(runs);
        let want = runs.working > 0;
        if want == runs.referred || runs.deliver.aborted() {
            return;
        }
        let raw = runs.deliver.raw();
        // SAFETY: on the JS thread of `env`; the function is alive (not aborted).
        let status = unsafe {
            if want {
                sys::napi_ref_threadsafe_function(env.raw(), raw)
            } else {
                sys::napi_unref_threadsafe_function(env.raw(), raw)
            }
        };
        if status == sys::Status::napi_ok {
            runs.referred = want;
        }
    });
}

/// Creates this environment's delivery function (ref'd, as a run is about to start).
fn first_use(env: &Env) -> napi::Result<Arc<Deliver>> {
    let noop = env.create_function_from_closure::<(), (), _>("settleRun", |_: FunctionCallContext| Ok(()))?;
    let deliver: Deliver =
        noop.build_threadsafe_function::<Delivery>().weak::<false>().callee_handled::<false>().build_callback(
            |ctx: ThreadsafeCallContext<Delivery>| {
                match ctx.value {
                    Delivery::Outcome { id, outcome } => deliver_outcome(&ctx.env, id, outcome),
                    Delivery::Task(task) => task(&ctx.env),
                }
                Ok(())
            },
        )?;
    let deliver = Arc::new(deliver);
    RUNS.with(|r| {
        *r.borrow_mut() = Some(Runs { deliver: deliver.clone(), referred: true, working: 0, entries: HashMap::new() })
    });
    Ok(deliver)
}

/// Settles a run's Promise with its outcome. On the JS thread; never leaves an exception
/// pending (napi calls its no-op function next).
fn deliver_outcome(env: &Env, id: u64, outcome: Option<Outcome>) {
    let mut entry = None;
    update(env, |runs| {
        if let Some(e) = runs.entries.remove(&id) {
            if e.working() {
                runs.working -= 1;
            }
            entry = Some(e);
        }
    });
    let Some(entry) = entry else { return };
    let result = match outcome {
        Some(outcome) => (entry.settle)(env, outcome),
        None => {
            let e = engine::Error::new(ErrorKind::Internal, "the run ended without an outcome");
            Err(crate::error::to_js(env, e, None))
        }
    };
    let raw = env.raw();
    // SAFETY: on the JS thread of `env`; `entry.deferred` is settled exactly once, here.
    unsafe {
        let mut pending = false;
        sys::napi_is_exception_pending(raw, &mut pending);
        let outcome = if pending {
            let mut thrown = std::ptr::null_mut();
            sys::napi_get_and_clear_last_exception(raw, &mut thrown);
            Err(thrown)
        } else {
            result.map_err(|e| napi::Error::to_napi_value(raw, e).unwrap_or(std::ptr::null_mut()))
        };
        match outcome {
            Ok(v) => sys::napi_resolve_deferred(raw, entry.deferred, v),
            Err(v) => {
                let mut reason = v;
                if reason.is_null() {
                    sys::napi_get_undefined(raw, &mut reason);
                }
                sys::napi_reject_deferred(raw, entry.deferred, reason)
            }
        };
    }
}

/// Owned by a run's future: sends its outcome, or, dropped without one, says so.
struct Settler {
    id: u64,
    deliver: Option<Arc<Deliver>>,
}

impl Settler {
    fn send(mut self, outcome: Outcome) {
        if let Some(d) = self.deliver.take() {
            // Closing (the environment is going away): no Promise left to settle.
            let delivery = Delivery::Outcome { id: self.id, outcome: Some(outcome) };
            let _ = d.call(delivery, ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

impl Drop for Settler {
    fn drop(&mut self) {
        if let Some(d) = self.deliver.take() {
            let _ = d.call(Delivery::Outcome { id: self.id, outcome: None }, ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}
