//! The async variants' one way of ending: the work runs on the library's runtime as the run
//! whose callbacks report the caller's `user_data` (`tn_token_run_data`), and `done` fires
//! exactly once, with the outcome or, if the work is dropped unfinished, `TN_ERR_CANCELLED`.

use std::any::Any;
use std::ffi::{c_char, c_void};
use std::future::Future;

use engine::Error;

use crate::guard::{c_arg, Result};
use crate::here::block_here;
use crate::runtime::{spawn, with_run_data};
use crate::status::{error_json, status_of, TN_ERR_CANCELLED, TN_OK};

/// Called once when an async call ends: `status` is `TN_OK` with the call's result JSON, or an
/// error status with the error JSON. The strings are valid only during the call.
pub type tn_done_fn = Option<unsafe extern "C" fn(user_data: *mut c_void, status: i32, json: *const c_char)>;

/// Fires `done` exactly once: with the outcome, or with `TN_ERR_CANCELLED` if the work is
/// dropped unfinished (the runtime shutting down).
struct Done {
    f: unsafe extern "C" fn(*mut c_void, i32, *const c_char),
    user_data: *mut c_void,
    fired: bool,
    /// What the work uses (its client, its toolkit), let go only after `done` ran: a host that
    /// freed their handles meanwhile gets its finalizers after its `done`, never before.
    keep: Option<Box<dyn Any + Send>>,
}

// SAFETY: the header requires the done callback and its user_data to be usable from any thread.
unsafe impl Send for Done {}

impl Done {
    fn fire(&mut self, status: i32, json: String) {
        if std::mem::replace(&mut self.fired, true) {
            return;
        }
        let json = c_arg(json);
        // SAFETY: the host's callback with its own user_data; `json` outlives the call.
        unsafe { (self.f)(self.user_data, status, json.as_ptr()) };
        drop(self.keep.take());
    }
}

impl Done {
    fn report<T>(&mut self, out: Result<T>, render: fn(&T) -> String) {
        match out {
            Ok(r) => self.fire(TN_OK, render(&r)),
            Err(e) => self.fire(status_of(e.kind()), error_json(&e)),
        }
    }
}

impl Drop for Done {
    fn drop(&mut self) {
        let e = Error::new(engine::ErrorKind::Cancelled, "the call was dropped before it finished");
        self.fire(TN_ERR_CANCELLED, error_json(&e));
    }
}

/// Where an async call's work runs.
#[derive(Clone, Copy)]
pub(crate) enum Drive {
    /// Spawned on the runtime: the call returns at once.
    Spawn,
    /// Polled on the calling thread ([`block_here`]): the call returns after `done`.
    Here,
}

/// Starts `work` as `drive` says, reporting to `done` with `render`ed success. The `Done` is
/// made only once the work is under way (inside the spawned task, or after driving it here),
/// so a call refused before it starts (a failure to spawn, a reentrant call driven here) is
/// reported once, by the return status, and never also through `done`.
pub(crate) fn start_async<T: 'static, F>(
    drive: Drive,
    work: F,
    keep: Box<dyn Any + Send>,
    render: fn(&T) -> String,
    done: tn_done_fn,
    user_data: *mut c_void,
) -> Result<()>
where
    F: Future<Output = Result<T>> + Send + 'static,
{
    let f = done.ok_or_else(|| Error::invalid("done is NULL"))?;
    let run_data = user_data as usize;
    let done = move || Done { f, user_data, fired: false, keep: Some(keep) };
    match drive {
        Drive::Here => {
            let out = block_here(with_run_data(run_data, work))?;
            done().report(out, render);
            Ok(())
        }
        Drive::Spawn => {
            // Boxed first, as in `runtime::block_on`: the moves into the task then copy a pointer.
            let work = Box::pin(work);
            spawn(move || {
                let mut done = done();
                async move { done.report(with_run_data(run_data, work).await, render) }
            })
        }
    }
}
