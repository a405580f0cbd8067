//! The embedded store: one SQLite file, shared safely by the processes of one machine.
//!
//! WAL lets readers and the writer proceed together and a busy timeout makes writers wait
//! their turn rather than fail; a run holds its conversation with a lock on a file beside
//! the database (`<path>.lock`), which the kernel drops if the process dies.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value;

use super::lock::{shared, Held, LockFile};
use super::record::{messages_from_text, messages_text};
use super::{ConversationStore, PendingRun, RunLock, StoreFuture, StoredRun};
use crate::error::{Error, ErrorKind, Result};
use crate::types::{Answer, Request};

/// How long a write waits for another process's write to finish.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS toolnexus_conversations (
    id TEXT PRIMARY KEY,
    messages TEXT NOT NULL,
    pending TEXT,
    answer TEXT,
    since_ms INTEGER,
    updated_ms INTEGER NOT NULL
)";

/// Conversations in one SQLite file. Several stores, in one process or several, may open
/// the same file; a conversation is held by one run at a time across all of them.
pub struct SqliteConversationStore {
    inner: Arc<Inner>,
}

struct Inner {
    conn: Mutex<Connection>,
    locks: Locks,
    path: PathBuf,
}

enum Locks {
    File(Arc<LockFile>),
    Private(Arc<Held>),
}

impl SqliteConversationStore {
    /// Opens (creating when missing) the store at `path`; `":memory:"` is a private
    /// database that lives as long as the store.
    pub fn open(path: impl AsRef<Path>) -> Result<SqliteConversationStore> {
        let path = path.as_ref().to_path_buf();
        let shown = path.display().to_string();
        let fail =
            |e: rusqlite::Error| Error::new(ErrorKind::Store, format!("cannot open the SQLite store {shown}: {e}"));
        let conn = Connection::open(&path).map_err(fail)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(fail)?;
        let private = path.as_os_str() == ":memory:";
        if !private {
            conn.pragma_update(None, "journal_mode", "wal").map_err(fail)?;
        }
        conn.execute_batch(SCHEMA).map_err(fail)?;
        let locks = if private {
            Locks::Private(Arc::default())
        } else {
            let mut lock_path = path.clone().into_os_string();
            lock_path.push(".lock");
            Locks::File(shared(Path::new(&lock_path))?)
        };
        Ok(SqliteConversationStore { inner: Arc::new(Inner { conn: Mutex::new(conn), locks, path }) })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Runs `f` on the connection off the async threads.
    fn blocking<'a, T: Send + 'static>(
        &'a self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> StoreFuture<'a, T> {
        let inner = self.inner.clone();
        Box::pin(async move {
            let task = tokio::task::spawn_blocking(move || {
                let conn = inner.conn.lock().unwrap_or_else(|p| p.into_inner());
                f(&conn)
            });
            match task.await {
                Ok(r) => r.map_err(sqlite_error),
                Err(_) => Err(Error::new(ErrorKind::Store, "the SQLite store's worker failed")),
            }
        })
    }
}

/// Busy past the timeout is a conflict (another process kept writing); the rest is the
/// store failing.
fn sqlite_error(e: rusqlite::Error) -> Error {
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseBusy) | Some(rusqlite::ErrorCode::DatabaseLocked) => {
            Error::conflict(format!("the SQLite store stayed busy for {} s: {e}", BUSY_TIMEOUT.as_secs()))
        }
        _ => Error::new(ErrorKind::Store, format!("SQLite store: {e}")),
    }
}

fn json_text<T: serde::Serialize>(v: &Option<T>) -> Option<String> {
    v.as_ref().map(|v| serde_json::to_string(v).unwrap_or_default())
}

/// A row back into a record; a row the library did not write is a protocol error.
fn record_of(
    messages: String,
    pending: Option<String>,
    answer: Option<String>,
    since: Option<i64>,
) -> Result<StoredRun> {
    let parse = |t: &str| serde_json::from_str::<Value>(t).map_err(|_| Error::protocol("a stored row is not JSON"));
    Ok(StoredRun {
        messages: messages_from_text(&messages)?,
        pending: pending.as_deref().map(parse).transpose()?.map(|v| Request::from_json(&v)).transpose()?,
        answer: answer.as_deref().map(parse).transpose()?.map(|v| Answer::from_json(&v)).transpose()?,
        since_ms: since.map(|t| t.max(0) as u64),
    })
}

impl ConversationStore for SqliteConversationStore {
    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<Vec<Value>>> {
        Box::pin(async move { Ok(self.load(id).await?.map(|r| r.messages)) })
    }

    fn save<'a>(&'a self, id: &'a str, messages: Vec<Value>) -> StoreFuture<'a, ()> {
        self.store(id, StoredRun::transcript(messages))
    }

    fn kind(&self) -> &'static str {
        "sqlite"
    }

    fn records_runs(&self) -> bool {
        true
    }

    fn lock<'a>(&'a self, id: &'a str) -> StoreFuture<'a, RunLock> {
        let taken = match &self.inner.locks {
            Locks::File(f) => f.take(id),
            Locks::Private(h) => h.take(id),
        };
        Box::pin(async move { taken })
    }

    fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<StoredRun>> {
        let key = id.to_string();
        let read = self.blocking(move |c| {
            c.query_row(
                "SELECT messages, pending, answer, since_ms FROM toolnexus_conversations WHERE id = ?1",
                params![key],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()
        });
        Box::pin(async move {
            match read.await? {
                Some((m, p, a, s)) => Ok(Some(record_of(m, p, a, s)?)),
                None => Ok(None),
            }
        })
    }

    fn store<'a>(&'a self, id: &'a str, run: StoredRun) -> StoreFuture<'a, ()> {
        let key = id.to_string();
        let messages = messages_text(&run.messages);
        let (pending, answer) = (json_text(&run.pending), json_text(&run.answer));
        let since = run.since_ms.map(|t| t as i64);
        let now = super::record::now_ms() as i64;
        self.blocking(move |c| {
            c.execute(
                "INSERT INTO toolnexus_conversations (id, messages, pending, answer, since_ms, updated_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT(id) DO UPDATE SET messages = excluded.messages, pending = excluded.pending,
                   answer = excluded.answer, since_ms = excluded.since_ms, updated_ms = excluded.updated_ms",
                params![key, messages, pending, answer, since, now],
            )
            .map(|_| ())
        })
    }

    fn pending_runs(&self) -> StoreFuture<'_, Vec<PendingRun>> {
        let read = self.blocking(|c| {
            let mut stmt = c.prepare(
                "SELECT id, pending, since_ms FROM toolnexus_conversations
                 WHERE pending IS NOT NULL ORDER BY since_ms, id",
            )?;
            let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get(2)?)))?;
            rows.collect::<rusqlite::Result<Vec<(String, String, Option<i64>)>>>()
        });
        Box::pin(async move {
            read.await?
                .into_iter()
                .map(|(id, pending, since)| {
                    let rec = record_of("[]".into(), Some(pending), None, since)?;
                    let request = rec.pending.ok_or_else(|| Error::protocol("a pending row has no request"))?;
                    Ok(PendingRun { id, request, since_ms: rec.since_ms.unwrap_or(0) })
                })
                .collect()
        })
    }
}
