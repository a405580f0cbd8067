//! Conversation memory: where `ask(id)` keeps each conversation between runs, and where a run
//! that halted (`status: "pending"`) waits until an answer resumes it, possibly in another
//! process.
//!
//! A store's upstream contract is two methods, [`ConversationStore::get`] and
//! [`ConversationStore::save`]: any host object with them works. The built-in stores
//! ([`InMemoryConversationStore`], [`SqliteConversationStore`]) also record what a run is
//! pending on and lock a conversation while a run uses it, which makes resumes exactly-once:
//! two resumes of one run never both proceed, and a second, different answer to a request
//! already answered is a [`crate::ErrorKind::Conflict`] error.

mod in_memory;
mod lock;
mod record;
#[cfg(feature = "sqlite")]
mod sqlite;

use futures_util::future::BoxFuture;
use serde_json::Value;

pub use in_memory::InMemoryConversationStore;
pub(crate) use record::now_ms;
pub use record::{PendingRun, StoredRun};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteConversationStore;

use crate::error::{Error, Result};

/// What a store's methods return.
pub type StoreFuture<'a, T> = BoxFuture<'a, Result<T>>;

/// Holds a conversation for one run; released when dropped (and, for the built-in stores
/// shared between processes, when the process holding it dies).
pub struct RunLock(#[allow(dead_code)] Option<Box<dyn Send + Sync>>);

impl RunLock {
    /// A lock that holds nothing: a store that does not lock.
    pub fn none() -> RunLock {
        RunLock(None)
    }

    /// A lock released when `guard` is dropped.
    pub fn holding(guard: impl Send + Sync + 'static) -> RunLock {
        RunLock(Some(Box::new(guard)))
    }
}

/// Where conversations are remembered, keyed by a conversation id.
///
/// `get` and `save` are upstream's whole contract. The other methods have defaults built on
/// them, for a store that keeps transcripts only; a store that overrides them and returns
/// `true` from [`ConversationStore::records_runs`] gets exactly-once resumes.
pub trait ConversationStore: Send + Sync {
    /// The transcript stored for `id`, or `None` when there is none.
    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<Vec<Value>>>;

    /// Stores `messages` as the transcript of `id`, replacing what was there.
    fn save<'a>(&'a self, id: &'a str, messages: Vec<Value>) -> StoreFuture<'a, ()>;

    /// Whether this store records pending requests and locks conversations
    /// ([`ConversationStore::lock`], [`ConversationStore::load`], [`ConversationStore::store`]
    /// and [`ConversationStore::pending_runs`] are its own).
    fn records_runs(&self) -> bool {
        false
    }

    /// Takes `id` for one run, or fails at once with a [`crate::ErrorKind::Conflict`] error
    /// when another run holds it. The default holds nothing.
    fn lock<'a>(&'a self, id: &'a str) -> StoreFuture<'a, RunLock> {
        let _ = id;
        Box::pin(async { Ok(RunLock::none()) })
    }

    /// The whole record of `id`. The default reads the transcript alone.
    fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<StoredRun>> {
        Box::pin(async move { Ok(self.get(id).await?.map(StoredRun::transcript)) })
    }

    /// Replaces the record of `id`. The default keeps the transcript alone.
    fn store<'a>(&'a self, id: &'a str, run: StoredRun) -> StoreFuture<'a, ()> {
        self.save(id, run.messages)
    }

    /// Every conversation waiting on a request, oldest first.
    fn pending_runs(&self) -> StoreFuture<'_, Vec<PendingRun>> {
        Box::pin(async { Err(Error::invalid("this conversation store does not record pending runs")) })
    }
}

/// The message of the conflict a second run of a held conversation gets.
pub(crate) fn in_use(id: &str) -> Error {
    Error::conflict(format!("conversation {id:?} is in use by another run"))
}
