//! The fleet store: conversations in PostgreSQL, for runs that outgrow one machine.
//!
//! Data goes through one shared connection (opened on first use, the table made if missing).
//! A run holds its conversation with a session advisory lock on a connection of its own,
//! closed when the run lets go: the database serialises concurrent runs of one conversation,
//! and a process that dies drops its connection and with it the lock.

use std::str::FromStr;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::OnceCell;
use tokio_postgres::config::SslMode;
use tokio_postgres::{Client, Config, NoTls};

use super::lock::range_of;
use super::record::{messages_from_text, messages_text, now_ms};
use super::{in_use, ConversationStore, PendingRun, RunLock, StoreFuture, StoredRun};
use crate::error::{Error, ErrorKind, Result};
use crate::types::{Answer, Request};

/// Made under a transaction-wide advisory lock: two first connections racing on `CREATE
/// TABLE IF NOT EXISTS` would otherwise collide in the catalog.
const SCHEMA: &str = "BEGIN;
SELECT pg_advisory_xact_lock(7453010373645889569);
CREATE TABLE IF NOT EXISTS toolnexus_conversations (
    id TEXT PRIMARY KEY,
    messages TEXT NOT NULL,
    pending TEXT,
    answer TEXT,
    since_ms BIGINT,
    updated_ms BIGINT NOT NULL
);
COMMIT;";

/// Conversations in a PostgreSQL database, named by a `postgres://` URL (or a libpq
/// key=value string). Connects on first use, with TLS as the URL's `sslmode` says (`prefer`,
/// the default, uses it when the server offers it; `require` insists; `disable` never), the
/// server checked against the platform's trust store.
pub struct PostgresConversationStore {
    config: Config,
    /// Where the database is, for errors: never the password.
    shown: String,
    data: OnceCell<Client>,
    /// Lock sessions no run holds, unlocked, kept for the next run (a connection per run
    /// otherwise: a connect costs more than the rest of a resume).
    idle: Arc<Mutex<Vec<Client>>>,
}

/// Idle lock sessions kept at most.
const IDLE_SESSIONS: usize = 16;

impl PostgresConversationStore {
    /// A store for the database at `url`; a URL that does not parse is an
    /// [`ErrorKind::InvalidArgument`] error (which never repeats the URL: it may hold a
    /// password).
    pub fn open(url: &str) -> Result<PostgresConversationStore> {
        let config = Config::from_str(url)
            .map_err(|_| Error::invalid("the PostgreSQL store's URL does not parse (it is not repeated here)"))?;
        let shown = describe(&config);
        Ok(PostgresConversationStore { config, shown, data: OnceCell::new(), idle: Arc::default() })
    }

    async fn connect(&self) -> Result<Client> {
        let failed = |e| self.failed("cannot connect to", &e);
        if self.config.get_ssl_mode() == SslMode::Disable {
            let (client, conn) = self.config.connect(NoTls).await.map_err(failed)?;
            tokio::spawn(conn);
            return Ok(client);
        }
        // sslmode prefer (the default) or require, over the platform's trust store.
        let tls = tokio_postgres_rustls::MakeRustlsConnect::new(crate::transport::tls::client_config()?);
        let (client, conn) = self.config.connect(tls).await.map_err(failed)?;
        tokio::spawn(conn);
        Ok(client)
    }

    async fn data(&self) -> Result<&Client> {
        self.data
            .get_or_try_init(|| async {
                let client = self.connect().await?;
                client.batch_execute(SCHEMA).await.map_err(|e| self.failed("cannot create the table in", &e))?;
                Ok(client)
            })
            .await
    }

    fn failed(&self, what: &str, e: &tokio_postgres::Error) -> Error {
        // The server's reason, or the driver's: neither repeats the connection's password.
        let why = match e.as_db_error() {
            Some(db) => format!("{} ({})", db.message(), db.code().code()),
            None => e.to_string(),
        };
        Error::new(ErrorKind::Store, format!("{what} the PostgreSQL store {}: {why}", self.shown))
    }
}

impl PostgresConversationStore {
    fn keep(&self, session: Client) {
        keep(&self.idle, session);
    }
}

/// Keeps an unlocked session for the next run, unless enough are kept.
fn keep(idle: &Mutex<Vec<Client>>, session: Client) {
    let mut idle = idle.lock().unwrap_or_else(|p| p.into_inner());
    if idle.len() < IDLE_SESSIONS {
        idle.push(session);
    }
}

/// `user@host:port/dbname`, without the password.
fn describe(c: &Config) -> String {
    let host = match c.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(tokio_postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = c.get_ports().first().copied().unwrap_or(5432);
    format!("{}@{host}:{port}/{}", c.get_user().unwrap_or("?"), c.get_dbname().unwrap_or("?"))
}

fn json_text<T: serde::Serialize>(v: &Option<T>) -> Option<String> {
    v.as_ref().map(|v| serde_json::to_string(v).unwrap_or_default())
}

fn parse<T>(text: Option<String>, read: fn(&Value) -> Result<T>) -> Result<Option<T>> {
    text.map(|t| serde_json::from_str::<Value>(&t).map_err(|_| Error::protocol("a stored row is not JSON")))
        .transpose()?
        .map(|v| read(&v))
        .transpose()
}

impl ConversationStore for PostgresConversationStore {
    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<Vec<Value>>> {
        Box::pin(async move { Ok(self.load(id).await?.map(|r| r.messages)) })
    }

    fn save<'a>(&'a self, id: &'a str, messages: Vec<Value>) -> StoreFuture<'a, ()> {
        self.store(id, StoredRun::transcript(messages))
    }

    fn kind(&self) -> &'static str {
        "postgres"
    }

    fn records_runs(&self) -> bool {
        true
    }

    fn lock<'a>(&'a self, id: &'a str) -> StoreFuture<'a, RunLock> {
        Box::pin(async move {
            let key = range_of(id);
            let reused = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop().filter(|c| !c.is_closed());
            let tried = match reused {
                // A kept session the server has since closed: a fresh one instead.
                Some(c) => match c.query_one("SELECT pg_try_advisory_lock($1)", &[&key]).await {
                    Ok(row) => Some((c, row)),
                    Err(_) => None,
                },
                None => None,
            };
            let (session, row) = match tried {
                Some(t) => t,
                None => {
                    let c = self.connect().await?;
                    let row = c
                        .query_one("SELECT pg_try_advisory_lock($1)", &[&key])
                        .await
                        .map_err(|e| self.failed("cannot lock a conversation in", &e))?;
                    (c, row)
                }
            };
            if !row.get::<_, bool>(0) {
                self.keep(session);
                return Err(in_use(id));
            }
            // Closing the session would release the lock too, but only once the server sees
            // it close: unlocking first means the next run, anywhere, finds it free. A lock
            // dropped instead (a cancelled run) drops its session, and the server lets go.
            let idle = self.idle.clone();
            Ok(RunLock::releasing(async move {
                if session.execute("SELECT pg_advisory_unlock($1)", &[&key]).await.is_ok() {
                    keep(&idle, session);
                }
            }))
        })
    }

    fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<StoredRun>> {
        Box::pin(async move {
            let c = self.data().await?;
            let row = c
                .query_opt(
                    "SELECT messages, pending, answer, since_ms FROM toolnexus_conversations WHERE id = $1",
                    &[&id],
                )
                .await
                .map_err(|e| self.failed("cannot read", &e))?;
            let Some(row) = row else { return Ok(None) };
            Ok(Some(StoredRun {
                messages: messages_from_text(&row.get::<_, String>(0))?,
                pending: parse(row.get(1), Request::from_json)?,
                answer: parse(row.get(2), Answer::from_json)?,
                since_ms: row.get::<_, Option<i64>>(3).map(|t| t.max(0) as u64),
            }))
        })
    }

    fn store<'a>(&'a self, id: &'a str, run: StoredRun) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let c = self.data().await?;
            let (messages, pending, answer) =
                (messages_text(&run.messages), json_text(&run.pending), json_text(&run.answer));
            let since = run.since_ms.map(|t| t as i64);
            c.execute(
                "INSERT INTO toolnexus_conversations (id, messages, pending, answer, since_ms, updated_ms)
                 VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (id) DO UPDATE SET messages = excluded.messages, pending = excluded.pending,
                   answer = excluded.answer, since_ms = excluded.since_ms, updated_ms = excluded.updated_ms",
                &[&id, &messages, &pending, &answer, &since, &(now_ms() as i64)],
            )
            .await
            .map_err(|e| self.failed("cannot write", &e))?;
            Ok(())
        })
    }

    fn pending_runs(&self) -> StoreFuture<'_, Vec<PendingRun>> {
        Box::pin(async move {
            let c = self.data().await?;
            let rows = c
                .query(
                    "SELECT id, pending, since_ms FROM toolnexus_conversations
                     WHERE pending IS NOT NULL ORDER BY since_ms, id",
                    &[],
                )
                .await
                .map_err(|e| self.failed("cannot read", &e))?;
            rows.into_iter()
                .map(|r| {
                    let request = parse(r.get(1), Request::from_json)?
                        .ok_or_else(|| Error::protocol("a pending row has no request"))?;
                    let since = r.get::<_, Option<i64>>(2).unwrap_or(0).max(0) as u64;
                    Ok(PendingRun { id: r.get(0), request, since_ms: since })
                })
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_shown_without_its_password() {
        let s = PostgresConversationStore::open("postgres://app:s3cret@db.example:6543/runs").unwrap();
        assert_eq!(s.shown, "app@db.example:6543/runs");
        let e = PostgresConversationStore::open("postgres://app:s3cret@[bad").err().unwrap();
        assert!(!e.message().contains("s3cret"));
    }
}
