//! Awaiting a Promise a host callback returned. `index.js` registers one JS function
//! (`helpers.rs`), `(promise, token) => promise.then(v => __settle(token, true, v), e => __settle(token, false, e))`,
//! and every promise goes through it with a token: an external holding what to do when the
//! promise settles. Measured (callgrind, the Node bench runner's weather run, two promised tool
//! results per unit): two napi handler functions made per promise, as before, cost about 16k
//! instructions each promise; with this awaiter the process runs 318k instructions per unit
//! instead of 353k.
//!
//! A promise collected unsettled takes its token with it: the external's finalizer drops the
//! settlement unrun, so the call's receiver waits for ever, as an `await` on it would in JS.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::ffi::c_void;
use std::ptr;

use napi::bindgen_prelude::{JsValue, Unknown};
use napi::{sys, Env, Status};
use napi_derive::napi;

use crate::helpers::Helper;

/// How a promise ended, handed to its [`Settle`] on the JS thread.
pub enum Settled {
    Fulfilled(sys::napi_value),
    Rejected(sys::napi_value),
    /// It could not be awaited (its `then` threw, or the package entry registered no helpers).
    Unawaitable(napi::Error),
}

/// What to do with a promise's settlement; run at most once, on the JS thread.
pub type Settle = Box<dyn FnOnce(&Env, Settled)>;

/// A token's contents: the settlement until it has run.
type Slot = Cell<Option<Settle>>;

thread_local! {
    /// The slots of the tokens alive on this thread: `__settle` reads only an external it made
    /// (any other external would be another addon's memory).
    static LIVE: RefCell<HashSet<usize>> = RefCell::new(HashSet::new());
}

/// Settles the promise `token` stands for; the awaiter's handlers call it. A token already
/// settled, or not one of ours, is ignored.
#[napi(js_name = "__settle", skip_typescript)]
pub fn settle(env: Env, token: Unknown<'_>, fulfilled: bool, value: Unknown<'_>) {
    let mut data = ptr::null_mut();
    // SAFETY: on the JS thread with a live value; a value that is no external fails the call.
    let status = unsafe { sys::napi_get_value_external(env.raw(), token.raw(), &mut data) };
    if status != Status::Ok as i32 || !LIVE.with(|l| l.borrow().contains(&(data as usize))) {
        return;
    }
    // SAFETY: `data` is a live slot `attach` made: its finalizer has not run (it would have
    // removed it from LIVE).
    let slot = unsafe { &*data.cast::<Slot>() };
    if let Some(run) = slot.take() {
        run(&env, if fulfilled { Settled::Fulfilled(value.raw()) } else { Settled::Rejected(value.raw()) });
    }
}

/// Hands `promise` to the awaiter with a token for `settle`, and says whether it is now
/// awaited. If not, `settle` has been given [`Settled::Unawaitable`] already.
pub fn attach(env: &Env, promise: sys::napi_value, settle: Settle) -> bool {
    let slot: *mut Slot = Box::into_raw(Box::new(Cell::new(Some(settle))));
    let mut token = ptr::null_mut();
    // SAFETY: on the JS thread; from here the external's finalizer owns `slot`.
    let status =
        unsafe { sys::napi_create_external(env.raw(), slot.cast(), Some(free_slot), ptr::null_mut(), &mut token) };
    if status != Status::Ok as i32 {
        // SAFETY: no external was made, so nothing else holds the slot.
        let slot = unsafe { Box::from_raw(slot) };
        if let Some(run) = slot.take() {
            run(
                env,
                Settled::Unawaitable(napi::Error::new(Status::GenericFailure, "toolnexus: no token for a promise")),
            );
        }
        return false;
    }
    LIVE.with(|l| l.borrow_mut().insert(slot as usize));
    match crate::helpers::call(env.raw(), Helper::Await, &[promise, token]) {
        Ok(_) => true,
        Err(e) => {
            // SAFETY: the external owns the slot and lives at least until this call returns.
            if let Some(run) = unsafe { &*slot }.take() {
                run(env, Settled::Unawaitable(e));
            }
            false
        }
    }
}

unsafe extern "C" fn free_slot(_: sys::napi_env, data: *mut c_void, _: *mut c_void) {
    // A finalizer run as the thread ends may find its locals gone: the slot is freed anyway.
    let _ = LIVE.try_with(|l| l.borrow_mut().remove(&(data as usize)));
    // SAFETY: `data` is the slot `attach` gave this external; its finalizer runs once.
    drop(unsafe { Box::from_raw(data.cast::<Slot>()) });
}
