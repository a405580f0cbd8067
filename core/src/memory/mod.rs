//! Conversation memory: where `ask(id)` keeps each conversation between runs, and where a run
//! that halted (`status: "pending"`) waits until an answer resumes it, possibly in another
//! process.
//!
//! A store's upstream contract is two methods, [`ConversationStore::get`] and
//! [`ConversationStore::save`]: any host object with them works. The built-in stores
//! ([`InMemoryConversationStore`], [`SqliteConversationStore`], [`PostgresConversationStore`])
//! also record what a run is
//! pending on and lock a conversation while a run uses it, which makes resumes exactly-once:
//! two resumes of one run never both proceed, and a second, different answer to a request
//! already answered is a [`crate::ErrorKind::Conflict`] error.

mod in_memory;
#[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
mod lock;
#[cfg(feature = "postgres")]
mod postgres;
mod record;
#[cfg(feature = "sqlite")]
mod sqlite;

use futures_util::future::BoxFuture;
use serde_json::Value;

pub use in_memory::InMemoryConversationStore;
#[cfg(feature = "postgres")]
pub use postgres::PostgresConversationStore;
pub(crate) use record::now_ms;
pub use record::{PendingRun, StoredRun};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteConversationStore;

use crate::error::{Error, Result};

/// What a store's methods return.
pub type StoreFuture<'a, T> = BoxFuture<'a, Result<T>>;

/// Holds a conversation for one run: released by [`RunLock::release`], or when dropped (and,
/// for the built-in stores shared between processes, when the process holding it dies).
pub struct RunLock {
    #[allow(dead_code)]
    guard: Option<Box<dyn Send>>,
    release: Option<BoxFuture<'static, ()>>,
}

impl RunLock {
    /// A lock that holds nothing: a store that does not lock.
    pub fn none() -> RunLock {
        RunLock { guard: None, release: None }
    }

    /// A lock released when `guard` is dropped.
    pub fn holding(guard: impl Send + 'static) -> RunLock {
        RunLock { guard: Some(Box::new(guard)), release: None }
    }

    /// A lock released by running `release` (or, if the lock is dropped instead, by dropping
    /// it): for a lock whose release is a round trip the next holder must not race.
    pub fn releasing(release: impl std::future::Future<Output = ()> + Send + 'static) -> RunLock {
        RunLock { guard: None, release: Some(Box::pin(release)) }
    }

    /// Lets go of the conversation, waiting until another run can take it.
    pub async fn release(mut self) {
        if let Some(r) = self.release.take() {
            r.await;
        }
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

    /// What the store is: `"memory"`, `"sqlite"` and `"postgres"` for the engine's, `"host"`
    /// (the default) for any other.
    fn kind(&self) -> &'static str {
        "host"
    }

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

/// Opens the store `spec` names: a `postgres://` or `postgresql://` URL is a
/// [`PostgresConversationStore`], anything else the path of a [`SqliteConversationStore`].
pub fn open(spec: &str) -> Result<std::sync::Arc<dyn ConversationStore>> {
    if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
        #[cfg(feature = "postgres")]
        return Ok(std::sync::Arc::new(PostgresConversationStore::open(spec)?));
        #[cfg(not(feature = "postgres"))]
        return Err(Error::invalid("this build has no PostgreSQL store"));
    }
    #[cfg(feature = "sqlite")]
    return Ok(std::sync::Arc::new(SqliteConversationStore::open(spec)?));
    #[cfg(not(feature = "sqlite"))]
    Err(Error::invalid("this build has no SQLite store"))
}

/// The message of the conflict a second run of a held conversation gets.
pub(crate) fn in_use(id: &str) -> Error {
    Error::conflict(format!("conversation {id:?} is in use by another run"))
}
