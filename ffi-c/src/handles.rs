//! Opaque handles. A handle is a number dressed as a pointer, used only as a key into a
//! registry of live objects: the library never dereferences a pointer a caller hands back, so
//! a freed, foreign or mistyped handle is an error code instead of undefined behaviour.
//! Numbers are never reused, so a stale handle cannot reach an object created after it was
//! freed (an allocator would hand the freed address straight to the next handle).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use engine::{CancellationToken, Error, ErrorKind, Toolkit};

use crate::client::ClientHandle;
use crate::guard::Result;

/// What a handle refers to.
#[derive(Clone)]
pub(crate) enum Object {
    Toolkit(Arc<Toolkit>),
    Client(Arc<ClientHandle>),
    Cancel(CancellationToken),
    McpServer(Arc<tokio::sync::Mutex<engine::mcp::McpServer>>),
    Store(Arc<dyn engine::memory::ConversationStore>),
}

impl Object {
    fn noun(&self) -> &'static str {
        match self {
            Object::Toolkit(_) => "tn_toolkit",
            Object::Client(_) => "tn_client",
            Object::Cancel(_) => "tn_cancel",
            Object::McpServer(_) => "tn_mcp_server",
            Object::Store(_) => "tn_store",
        }
    }
}

static LIVE: Mutex<Option<HashMap<usize, Object>>> = Mutex::new(None);

/// The first handle number: far above where user-space allocations live on 64-bit systems,
/// so a foreign pointer is unlikely to match a live handle; steps keep handles aligned.
const FIRST_KEY: usize = 1 << (usize::BITS - 4);
const KEY_STEP: usize = 16;
static NEXT_KEY: AtomicUsize = AtomicUsize::new(FIRST_KEY);

/// Registers `obj` and returns its new handle. Refused once the numbers run out (only
/// reachable on a 32-bit target, after some 250 million handles): a number is never reused.
pub(crate) fn register<T>(obj: Object) -> Result<*mut T> {
    let key = NEXT_KEY
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |k| k.checked_add(KEY_STEP))
        .map_err(|_| Error::new(ErrorKind::Internal, "no handle numbers left in this process"))?;
    let mut g = LIVE.lock().unwrap_or_else(|p| p.into_inner());
    g.get_or_insert_with(HashMap::new).insert(key, obj);
    Ok(std::ptr::without_provenance_mut(key))
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
    // The object (possibly the last reference to a client and its host user data) is dropped
    // outside the registry lock: its finalizer may call back into the library.
    drop(removed);
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

pub(crate) fn mcp_server<T>(ptr: *const T) -> Result<Arc<tokio::sync::Mutex<engine::mcp::McpServer>>> {
    match lookup(ptr, "tn_mcp_server")? {
        Object::McpServer(s) => Ok(s),
        _ => Err(Error::invalid("expected a tn_mcp_server")),
    }
}

pub(crate) fn store<T>(ptr: *const T) -> Result<Arc<dyn engine::memory::ConversationStore>> {
    match lookup(ptr, "tn_store")? {
        Object::Store(s) => Ok(s),
        _ => Err(Error::invalid("expected a tn_store")),
    }
}
