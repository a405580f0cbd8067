//! Driving a run on the caller's thread (`tn_client_run_here`): the thread polls the run and
//! parks between polls. Its sockets and timers stay on the runtime's reactor, whose threads
//! unpark it; the callbacks the run makes while it is polled are made right here.
//!
//! Measured against the same run spawned on the runtime and awaited (bench/peers, the Go
//! binding): a host whose callbacks are costly to enter from a thread it did not start (Go) is
//! spared a hop between threads per callback. Letting this thread also wait on the run's
//! sockets itself (poll(2) instead of the reactor) was tried and measured no faster.

use std::cell::Cell;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use crate::guard::Result;

thread_local! {
    /// How many runs this thread is driving (a callback of one may drive another).
    static DRIVING: Cell<usize> = const { Cell::new(0) };
}

/// Whether this thread is driving a run: the runtime context it is in is its own, entered by
/// [`block_here`], not a runtime thread's.
pub(crate) fn driving() -> bool {
    DRIVING.with(Cell::get) > 0
}

/// Counts this thread as driving one more run while it lives.
struct Driving;

impl Driving {
    fn enter() -> Driving {
        DRIVING.with(|d| d.set(d.get() + 1));
        Driving
    }
}

impl Drop for Driving {
    fn drop(&mut self) {
        DRIVING.with(|d| d.set(d.get() - 1));
    }
}

/// Polls `fut` on the calling thread until it finishes, inside the runtime's context (what it
/// spawns, its timers and its connects live there).
pub(crate) fn block_here<T>(fut: impl Future<Output = T>) -> Result<T> {
    crate::runtime::check_not_reentrant()?;
    let _in_runtime = crate::runtime::runtime()?.enter();
    let _driving = Driving::enter();
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    loop {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return Ok(out);
        }
        // A wake between the poll and here left the token set: park returns at once.
        std::thread::park();
    }
}

/// Wakes the thread parked in [`block_here`].
struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}
