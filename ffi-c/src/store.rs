//! `tn_store`: conversation stores (in memory, SQLite, or the host's own over a callback),
//! attached to a client with `tn_client_with_store`. Runs name a conversation with `"id"` in
//! their `input_json`.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use engine::memory::{ConversationStore, InMemoryConversationStore, StoreFuture};
use engine::Error;
use serde_json::{json, Value};

use crate::client::{tn_client, ClientHandle};
use crate::guard::{call, in_json, in_str, quietly, write_out, Result};
use crate::handles::{self, Object};
use crate::host::{host_json, tn_free_fn, HostData};
use crate::runtime::block_on;

/// An opaque conversation store (`tn_store_new_memory`, `tn_store_open_sqlite`,
/// `tn_store_new_host`), released by `tn_store_free`; clients using it keep it alive.
pub struct tn_store {
    _private: [u8; 0],
}

/// A host's conversation store: `op` is `"get"` with `request_json` `{"id"}` (complete with
/// the transcript, a JSON array, or `null` when there is none) or `"save"` with `{"id",
/// "messages"}` (complete with `null`). An error status fails the run with its message. Such
/// a store keeps transcripts only: resuming a run by id needs its pending Request.
pub type tn_store_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, op: *const c_char, request_json: *const c_char, token: u64)>;

/// A host's conversation store: `store` is called for every read and write.
#[repr(C)]
pub struct tn_store_callbacks {
    /// Handed back to `store`.
    pub user_data: *mut c_void,
    /// Called once with `user_data` when the store is freed and no client uses it any more.
    pub free_user_data: tn_free_fn,
    /// Reads and writes transcripts; must not be NULL.
    pub store: tn_store_fn,
}

struct CStore {
    data: Arc<HostData>,
    f: unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char, u64),
}

impl ConversationStore for CStore {
    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<Vec<Value>>> {
        let request = json!({"id": id}).to_string();
        Box::pin(async move {
            match host_json(&self.data, self.f, "get", request, "the conversation store").await? {
                Value::Null => Ok(None),
                Value::Array(m) => Ok(Some(m)),
                _ => Err(Error::host("the conversation store's get must complete with an array or null".into())),
            }
        })
    }

    fn save<'a>(&'a self, id: &'a str, messages: Vec<Value>) -> StoreFuture<'a, ()> {
        let request = json!({"id": id, "messages": messages}).to_string();
        Box::pin(async move {
            host_json(&self.data, self.f, "save", request, "the conversation store").await?;
            Ok(())
        })
    }
}

fn register(store: Arc<dyn ConversationStore>, out: *mut *mut tn_store) -> Result<()> {
    let handle = handles::register(Object::Store(store))?;
    // SAFETY: the callers checked `out` is not NULL.
    unsafe { *out = handle };
    Ok(())
}

/// Registers the store `make` opens from the string argument `what`.
fn open(
    arg: *const c_char,
    what: &str,
    out: *mut *mut tn_store,
    make: impl FnOnce(&str) -> Result<Arc<dyn ConversationStore>>,
) -> Result<()> {
    check_out(out)?;
    register(make(in_str(arg, what)?)?, out)
}

fn check_out<T>(out: *mut *mut T) -> Result<()> {
    if out.is_null() {
        return Err(Error::invalid("out is NULL"));
    }
    Ok(())
}

/// Makes an in-memory store: conversations live as long as the store. It records pending
/// runs and locks a conversation while a run uses it (a second run of it is
/// `TN_ERR_CONFLICT`). Added in ABI version 4.
///
/// # Safety
/// `out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_store_new_memory(out: *mut *mut tn_store, error_out: *mut *mut c_char) -> i32 {
    call(error_out, || {
        check_out(out)?;
        register(Arc::new(InMemoryConversationStore::new()), out)
    })
}

/// Opens (creating when missing) the SQLite store at `path` (UTF-8; `":memory:"` for a
/// private database). Processes of one machine may share the file: a run holds its
/// conversation with a lock the system drops if the process dies, a second run of it is
/// `TN_ERR_CONFLICT`, and a resume of a request already answered differently is too. A file
/// that cannot be opened is `TN_ERR_STORE`. Added in ABI version 4.
///
/// # Safety
/// `path` is a NUL-terminated string; `out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_store_open_sqlite(
    path: *const c_char,
    out: *mut *mut tn_store,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || open(path, "path", out, |p| Ok(Arc::new(engine::memory::SqliteConversationStore::open(p)?))))
}

/// Makes a PostgreSQL store for the database at `url` (`postgres://user:pass@host:port/db`, or
/// libpq's key=value form), connected on first use (where a failure is `TN_ERR_STORE`); its
/// table is made if missing. Runs on many machines may share it: a run holds its conversation
/// with a lock the database drops if the process dies. A URL that does not parse is
/// `TN_ERR_INVALID_ARGUMENT`; no error repeats the URL's password. Added in ABI version 4.
///
/// # Safety
/// `url` is a NUL-terminated string; `out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_store_open_postgres(
    url: *const c_char,
    out: *mut *mut tn_store,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || open(url, "url", out, |u| Ok(Arc::new(engine::memory::PostgresConversationStore::open(u)?))))
}

/// Makes a store over the host's callback (see `tn_store_fn`). The library owns
/// `callbacks->user_data` from this call on, as `tn_client_new` does. Added in ABI version 4.
///
/// # Safety
/// `callbacks` is a readable struct; `out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_store_new_host(
    callbacks: *const tn_store_callbacks,
    out: *mut *mut tn_store,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        // SAFETY: NULL or readable, as documented.
        let cb = unsafe { callbacks.as_ref() }.ok_or_else(|| Error::invalid("callbacks is NULL"))?;
        let data = HostData::new(cb.user_data, cb.free_user_data);
        check_out(out)?;
        let f = cb.store.ok_or_else(|| Error::invalid("callbacks->store is NULL"))?;
        register(Arc::new(CStore { data, f }), out)
    })
}

/// Writes the transcript stored for `id` (a JSON array, or `null` when there is none) to
/// `*messages_out`. Blocks; refused with `TN_ERR_REENTRANT` inside a callback. Added in ABI
/// version 4.
///
/// # Safety
/// Pointers as documented; `messages_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_store_get(
    store: *const tn_store,
    id: *const c_char,
    messages_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let (store, id) = (handles::store(store)?, in_str(id, "id")?.to_string());
        let found = block_on(async move { store.get(&id).await })?;
        write_out(messages_out, "messages_out", found.map_or(Value::Null, Value::Array).to_string())
    })
}

/// Stores `messages_json` (a JSON array) as the transcript of `id`, replacing the record
/// (a pending request included). Blocks like `tn_store_get`. Added in ABI version 4.
///
/// # Safety
/// Pointers as documented.
#[no_mangle]
pub unsafe extern "C" fn tn_store_save(
    store: *const tn_store,
    id: *const c_char,
    messages_json: *const c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let (store, id) = (handles::store(store)?, in_str(id, "id")?.to_string());
        let Value::Array(messages) = in_json(messages_json, "messages_json")? else {
            return Err(Error::invalid("messages_json must be a JSON array"));
        };
        block_on(async move { store.save(&id, messages).await })
    })
}

/// Writes the conversations waiting on a request, oldest first, to `*runs_out`: a JSON array
/// of `{"id", "request", "since_ms"}` (milliseconds since the Unix epoch). A host store is
/// `TN_ERR_INVALID_ARGUMENT` (it records no requests). Blocks like `tn_store_get`. Added in
/// ABI version 4.
///
/// # Safety
/// Pointers as documented; `runs_out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_store_pending_runs(
    store: *const tn_store,
    runs_out: *mut *mut c_char,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        let store = handles::store(store)?;
        let runs = block_on(async move { store.pending_runs().await })?;
        let arr: Vec<Value> = runs.iter().map(|r| r.to_json()).collect();
        write_out(runs_out, "runs_out", Value::Array(arr).to_string())
    })
}

/// Releases a store handle; clients using the store keep it alive. NULL, or a handle already
/// freed, is ignored. Added in ABI version 4.
///
/// # Safety
/// `store` is NULL or a pointer this library returned.
#[no_mangle]
pub unsafe extern "C" fn tn_store_free(store: *mut tn_store) {
    quietly(|| handles::release(store, "tn_store"));
}

/// Makes `*out`, a client like `client` (same options, callbacks and metrics registry) that
/// remembers conversations in `store`. Free both clients. Added in ABI version 4.
///
/// # Safety
/// Pointers this library returned; `out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_client_with_store(
    client: *const tn_client,
    store: *const tn_store,
    out: *mut *mut tn_client,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        check_out(out)?;
        let (c, store) = (handles::client(client)?, handles::store(store)?);
        let handle = ClientHandle::derived(&c, c.client.with_store(store));
        let handle = handles::register(Object::Client(Arc::new(handle)))?;
        // SAFETY: checked non-NULL above.
        unsafe { *out = handle };
        Ok(())
    })
}

/// Writes a handle to the store `client` remembers conversations in (its own in-memory one
/// unless made by `tn_client_with_store`) to `*out`; free it with `tn_store_free`. Added in
/// ABI version 4.
///
/// # Safety
/// Pointers as documented; `out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn tn_client_store(
    client: *const tn_client,
    out: *mut *mut tn_store,
    error_out: *mut *mut c_char,
) -> i32 {
    call(error_out, || {
        check_out(out)?;
        register(handles::client(client)?.client.conversation_store().clone(), out)
    })
}
