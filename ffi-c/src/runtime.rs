//! The library's own tokio runtime, the blocking bridge onto it, and completion tokens: the
//! way every host callback answers, from its own thread or any other, now or later.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use engine::{Error, ErrorKind};
use tokio::runtime::Runtime;
use tokio::sync::oneshot;

use crate::guard::Result;

/// The runtime of this process. In a forked child the parent's runtime threads do not exist,
/// so the child builds its own on first use; the inherited one is leaked, never dropped
/// (dropping would wait for those threads, and would deregister the parent's sockets from
/// the epoll set both processes share).
pub(crate) fn runtime() -> Result<&'static Runtime> {
    static RT: Mutex<Option<(u32, &'static Runtime)>> = Mutex::new(None);
    // The runtimes inherited from a parent: kept reachable, so leak checkers see them as
    // held on purpose.
    static INHERITED: Mutex<Vec<&'static Runtime>> = Mutex::new(Vec::new());
    let pid = engine::process_id();
    let mut g = RT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((owner, rt)) = *g {
        if owner == pid {
            return Ok(rt);
        }
        INHERITED.lock().unwrap_or_else(|p| p.into_inner()).push(rt);
    }
    let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).max(2);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name("toolnexus")
        .enable_all()
        .build()
        .map_err(|e| Error::new(ErrorKind::Internal, format!("cannot start the runtime: {e}")))?;
    let rt: &'static Runtime = Box::leak(Box::new(rt));
    *g = Some((pid, rt));
    Ok(rt)
}

/// Refuses a blocking call made on one of the library's own threads (inside a callback):
/// waiting there could starve the very task it waits for. A callback made on a thread driving
/// a run (`tn_client_run_here`) may block: that thread is the host's, and what the nested call
/// waits for runs elsewhere (or, driven here too, on this thread while the outer run waits).
pub(crate) fn check_not_reentrant() -> Result<()> {
    if tokio::runtime::Handle::try_current().is_ok() && !crate::here::driving() {
        return Err(Error::new(
            ErrorKind::Reentrant,
            "a blocking libtoolnexus call was made from inside a libtoolnexus callback; \
             complete the callback first or use the _async variant",
        ));
    }
    Ok(())
}

/// Runs `fut` on the runtime and blocks the calling thread until it finishes.
pub(crate) fn block_on<T: Send + 'static>(fut: impl Future<Output = Result<T>> + Send + 'static) -> Result<T> {
    check_not_reentrant()?;
    // Boxed first: a run's future can be many kilobytes, and each move on its way into the
    // task (into this block, into the task cell, onto the first poll) would copy all of it.
    let fut = Box::pin(fut);
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    runtime()?.spawn(async move {
        let _ = tx.send(fut.await);
    });
    rx.recv().map_err(|_| Error::new(ErrorKind::Internal, "the run ended without a result"))?
}

/// Spawns the future `make` builds. It is built only once the runtime is known to run, so a
/// future that reports its outcome when dropped (a done callback) never reports twice: once
/// for being dropped unspawned and again through the caller's error status.
pub(crate) fn spawn<F: Future<Output = ()> + Send + 'static>(make: impl FnOnce() -> F) -> Result<()> {
    runtime()?.spawn(make());
    Ok(())
}

/// What a host hands to `tn_complete`.
pub(crate) struct Completion {
    pub status: i32,
    pub payload: Option<String>,
    /// The host's own reference to its failure (`tn_complete_host_error`).
    pub host_ref: Option<u64>,
}

tokio::task_local! {
    /// The `user_data` of the async run being polled: the run a callback's token belongs to.
    static RUN_DATA: usize;
}

/// `fut` as the run whose callbacks report `run_data` (`tn_token_run_data`).
pub(crate) async fn with_run_data<T>(run_data: usize, fut: impl Future<Output = T>) -> T {
    RUN_DATA.scope(run_data, fut).await
}

/// A pending callback: where its completion goes, and the run it serves.
struct Waiter {
    tx: oneshot::Sender<Completion>,
    run_data: Option<usize>,
}

static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);
static WAITING: Mutex<Option<HashMap<u64, Waiter>>> = Mutex::new(None);

fn waiting() -> std::sync::MutexGuard<'static, Option<HashMap<u64, Waiter>>> {
    WAITING.lock().unwrap_or_else(|p| p.into_inner())
}

/// The run data of the run that issued the pending `token`, if any.
pub(crate) fn run_data_of(token: u64) -> Option<usize> {
    waiting().as_ref().and_then(|m| m.get(&token)).and_then(|w| w.run_data)
}

/// Forgets a token whose waiter went away (a cancelled run), so a late completion is refused.
struct Forget(u64);

impl Drop for Forget {
    fn drop(&mut self) {
        if let Some(m) = waiting().as_mut() {
            m.remove(&self.0);
        }
    }
}

/// Issues a token, lets `invoke` hand it to the host, and waits for the host's completion.
pub(crate) async fn host_call(invoke: impl FnOnce(u64)) -> Completion {
    let token = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
    let (tx, rx) = oneshot::channel();
    let run_data = RUN_DATA.try_with(|d| *d).ok();
    waiting().get_or_insert_with(HashMap::new).insert(token, Waiter { tx, run_data });
    let _forget = Forget(token);
    invoke(token);
    rx.await.unwrap_or(Completion {
        status: crate::status::TN_ERR_CANCELLED,
        payload: Some("the completion was dropped".into()),
        host_ref: None,
    })
}

/// Delivers a completion; an unknown, used or abandoned token is an error.
pub(crate) fn complete(token: u64, completion: Completion) -> Result<()> {
    let waiter = waiting().as_mut().and_then(|m| m.remove(&token));
    match waiter {
        Some(Waiter { tx, .. }) => {
            // The waiter may have gone between the lookup and now: that is a late completion.
            tx.send(completion).map_err(|_| Error::invalid(format!("completion token {token} is no longer awaited")))
        }
        None => {
            Err(Error::invalid(format!("completion token {token} is unknown, already completed, or its run has ended")))
        }
    }
}
