//! Opaque handles. A handle is a small allocation whose address is only ever used as a key
//! into a registry of live objects: the library never dereferences a pointer a caller hands
//! back, so a freed, foreign or mistyped handle is an error code instead of undefined behaviour.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use engine::{CancellationToken, Error, Toolkit};

use crate::client::ClientHandle;
use crate::guard::Result;

/// What a handle refers to.
#[derive(Clone)]
pub(crate) enum Object {
    Toolkit(Arc<Toolkit>),
    Client(Arc<ClientHandle>),
    Cancel(CancellationToken),
}

impl Object {
    fn noun(&self) -> &'static str {
        match self {
            Object::Toolkit(_) => "tn_toolkit",
            Object::Client(_) => "tn_client",
            Object::Cancel(_) => "tn_cancel",
        }
    }
}

static LIVE: Mutex<Option<HashMap<usize, Object>>> = Mutex::new(None);

/// The allocation behind a handle pointer; its address is the key.
struct Slot(#[allow(dead_code)] u8);

/// Registers `obj` and returns its new handle.
pub(crate) fn register<T>(obj: Object) -> *mut T {
    let ptr = Box::into_raw(Box::new(Slot(0)));
    let mut g = LIVE.lock().unwrap_or_else(|p| p.into_inner());
    g.get_or_insert_with(HashMap::new).insert(ptr as usize, obj);
    ptr.cast()
}

/// The object behind `ptr`, which must be a live handle of kind `noun`.
pub(crate) fn lookup<T>(ptr: *const T, noun: &str) -> Result<Object> {
    if ptr.is_null() {
        return Err(Error::invalid(format!("{noun} is NULL")));
    }
    let g = LIVE.lock().unwrap_or_else(|p| p.into_inner());
    match g.as_ref().and_then(|m| m.get(&(ptr as usize))) {
        Some(obj) if obj.noun() == noun => Ok(obj.clone()),
        Some(obj) => Err(Error::invalid(format!("expected a {noun}, got a {}", obj.noun()))),
        None => Err(Error::invalid(format!("{noun} is not a live handle (already freed, or not from this library)"))),
    }
}

/// Unregisters and frees `ptr` if it is a live handle of kind `noun`; anything else is ignored.
pub(crate) fn release<T>(ptr: *mut T, noun: &str) {
    if ptr.is_null() {
        return;
    }
    let removed = {
        let mut g = LIVE.lock().unwrap_or_else(|p| p.into_inner());
        match g.as_mut() {
            Some(m) if m.get(&(ptr as usize)).is_some_and(|o| o.noun() == noun) => m.remove(&(ptr as usize)),
            _ => None,
        }
    };
    if let Some(obj) = removed {
        // SAFETY: the address was registered by `register`, from `Box::into_raw(Box<Slot>)`,
        // and has just been removed from the registry, so it is freed exactly once.
        drop(unsafe { Box::from_raw(ptr.cast::<Slot>()) });
        drop(obj);
    }
}

pub(crate) fn toolkit<T>(ptr: *const T) -> Result<Arc<Toolkit>> {
    match lookup(ptr, "tn_toolkit")? {
        Object::Toolkit(t) => Ok(t),
        _ => Err(Error::invalid("expected a tn_toolkit")),
    }
}

pub(crate) fn client<T>(ptr: *const T) -> Result<Arc<ClientHandle>> {
    match lookup(ptr, "tn_client")? {
        Object::Client(c) => Ok(c),
        _ => Err(Error::invalid("expected a tn_client")),
    }
}

pub(crate) fn cancel<T>(ptr: *const T) -> Result<CancellationToken> {
    match lookup(ptr, "tn_cancel")? {
        Object::Cancel(c) => Ok(c),
        _ => Err(Error::invalid("expected a tn_cancel")),
    }
}
