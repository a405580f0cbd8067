//! Awaiting a Promise a host callback returned. `index.js` registers one JS function,
//! `(promise, token) => promise.then(v => __settle(token, true, v), e => __settle(token, false, e))`,
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

use napi::bindgen_prelude::{Function, JsValue, Unknown};
use napi::{sys, Env, Status};
use napi_derive::napi;

/// How a promise ended, handed to its [`Settle`] on the JS thread.
pub enum Settled {
    Fulfilled(sys::napi_value),
    Rejected(sys::napi_value),
    /// It could not be awaited (its `then` threw, or the package entry registered no awaiter).
    Unawaitable(napi::Error),
}

/// What to do with a promise's settlement; run at most once, on the JS thread.
pub type Settle = Box<dyn FnOnce(&Env, Settled)>;

/// A token's contents: the settlement until it has run.
type Slot = Cell<Option<Settle>>;

thread_local! {
    /// The awaiter `index.js` registered in this thread's JS environment, and that environment.
    static AWAITER: Cell<Option<(sys::napi_env, sys::napi_ref)>> = const { Cell::new(None) };
    /// The slots of the tokens alive on this thread: `__settle` reads only an external it made
    /// (any other external would be another addon's memory).
    static LIVE: RefCell<HashSet<usize>> = RefCell::new(HashSet::new());
}

/// Receives the awaiter from `index.js`.
#[napi(js_name = "__registerAwaiter", skip_typescript)]
pub fn register_awaiter(env: Env, awaiter: Function<'_, Unknown<'_>, Unknown<'_>>) -> napi::Result<()> {
    let mut reference = ptr::null_mut();
    // SAFETY: on the JS thread with a live function of `env`. A registration replacing an
    // earlier one of the same environment (the entry loaded twice) releases that one.
    napi::check_status!(unsafe { sys::napi_create_reference(env.raw(), awaiter.raw(), 1, &mut reference) })?;
    if let Some((was_env, was)) = AWAITER.with(|a| a.replace(Some((env.raw(), reference)))) {
        if was_env == env.raw() {
            unsafe { sys::napi_delete_reference(env.raw(), was) };
        }
    }
    Ok(())
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
    let awaiter = AWAITER.with(Cell::get).filter(|(e, _)| *e == env.raw());
    let Some((_, reference)) = awaiter else {
        let e = napi::Error::from_reason("toolnexus: the package entry (index.js) registered no awaiter");
        settle(env, Settled::Unawaitable(e));
        return false;
    };
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
    match call_awaiter(env, reference, promise, token) {
        Ok(()) => true,
        Err(e) => {
            // SAFETY: the external owns the slot and lives at least until this call returns.
            if let Some(run) = unsafe { &*slot }.take() {
                run(env, Settled::Unawaitable(e));
            }
            false
        }
    }
}

/// `awaiter(promise, token)`; a throw becomes an `Err` and leaves no exception pending.
fn call_awaiter(
    env: &Env,
    reference: sys::napi_ref,
    promise: sys::napi_value,
    token: sys::napi_value,
) -> napi::Result<()> {
    let raw = env.raw();
    let (mut awaiter, mut undefined, mut out) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
    // SAFETY: on the JS thread with live values of `env`; `reference` is this env's.
    unsafe {
        napi::check_status!(sys::napi_get_reference_value(raw, reference, &mut awaiter))?;
        napi::check_status!(sys::napi_get_undefined(raw, &mut undefined))?;
        let args = [promise, token];
        let status = sys::napi_call_function(raw, undefined, awaiter, args.len(), args.as_ptr(), &mut out);
        napi::check_status!(status).map_err(|e| crate::call::take_exception(raw, e))
    }
}

unsafe extern "C" fn free_slot(_: sys::napi_env, data: *mut c_void, _: *mut c_void) {
    // A finalizer run as the thread ends may find its locals gone: the slot is freed anyway.
    let _ = LIVE.try_with(|l| l.borrow_mut().remove(&(data as usize)));
    // SAFETY: `data` is the slot `attach` gave this external; its finalizer runs once.
    drop(unsafe { Box::from_raw(data.cast::<Slot>()) });
}
