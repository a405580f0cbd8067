//! # toolnexus-inbox
//!
//! The approvals inbox: a small local web server that lists the runs waiting in a
//! conversation store (each halted on a pending [`toolnexus::Request`]) and resumes them
//! from the page: approve, decline with a reason, or answer with text. Resuming is the
//! engine's own [`Client::ask_with_answer`] with an Answer built by
//! [`toolnexus::answer_output`] or [`toolnexus::answer_declined`]; the list is the store's
//! [`toolnexus::memory::ConversationStore::pending_runs`]. The inbox adds no agent-loop rule.
//!
//! ```no_run
//! # async fn demo(client: toolnexus::Client, toolkit: toolnexus::Toolkit) -> toolnexus::Result<()> {
//! let inbox = toolnexus_inbox::serve(client, Some(toolkit), toolnexus_inbox::InboxOptions::default()).await?;
//! println!("approvals inbox: {}", inbox.url());
//! // ... until the user is done (the CLI waits for Ctrl-C).
//! inbox.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! Security (README.md): loopback by default; any other address needs a token, which every
//! request must carry; forms carry a per-server CSRF token; POST is the only state change.

mod auth;
mod page;
mod server;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use toolnexus::{Client, Error, ErrorKind, Result, Toolkit};

pub use auth::random_token;

/// The shortest access token [`serve`] accepts.
pub const MIN_TOKEN_LEN: usize = 16;

/// Where the inbox listens and who may use it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InboxOptions {
    /// The address to bind; `127.0.0.1:0` (loopback, a free port) by default.
    pub addr: SocketAddr,
    /// The access token every request must carry (`?token=` once, then a cookie, or an
    /// `Authorization: Bearer` header). Required when `addr` is not a loopback address;
    /// optional on loopback. At least [`MIN_TOKEN_LEN`] characters of `A-Z a-z 0-9 - _ . ~`.
    pub token: Option<String>,
}

impl Default for InboxOptions {
    fn default() -> InboxOptions {
        InboxOptions { addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)), token: None }
    }
}

/// A running inbox. Dropping it stops the server; [`Inbox::shutdown`] also waits for the
/// requests in flight (a resume in progress finishes first).
pub struct Inbox {
    addr: SocketAddr,
    url: String,
    cancel: CancellationToken,
    tracker: TaskTracker,
}

impl Inbox {
    /// The address the server is bound to (with the real port when `0` was asked).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's URL, with `?token=` when the inbox needs a token: the link to open. It
    /// holds the token, so show it to the user only.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Stops accepting connections and waits until the requests in flight are answered.
    pub async fn shutdown(self) {
        self.cancel.cancel();
        self.tracker.close();
        self.tracker.wait().await;
    }
}

impl Drop for Inbox {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// Starts the inbox over `client`'s conversation store, resuming runs with `client` and
/// `toolkit`: the same model, key, store and tools as the runs that halted.
///
/// Fails when the store does not record pending runs (a host store with only get/save),
/// when `opts.addr` is not loopback and no token is given, when the token is malformed, or
/// when the address cannot be bound.
pub async fn serve(client: Client, toolkit: Option<Toolkit>, opts: InboxOptions) -> Result<Inbox> {
    if !client.conversation_store().records_runs() {
        return Err(Error::invalid(format!(
            "the inbox needs a store that records pending runs (SQLite, PostgreSQL or in-memory), not a {:?} store",
            client.conversation_store().kind()
        )));
    }
    if let Some(t) = &opts.token {
        auth::check_token_shape(t)?;
    } else if !opts.addr.ip().is_loopback() {
        return Err(Error::invalid(format!(
            "refusing to serve the inbox on {} without a token: only a loopback address may go without one",
            opts.addr
        )));
    }
    let listener = TcpListener::bind(opts.addr)
        .await
        .map_err(|e| Error::new(ErrorKind::Network, format!("cannot bind the inbox to {}: {e}", opts.addr)))?;
    let addr = listener
        .local_addr()
        .map_err(|e| Error::new(ErrorKind::Network, format!("cannot read the inbox's address: {e}")))?;
    let url = match &opts.token {
        Some(t) => format!("http://{}/?token={t}", auth::url_host(addr)),
        None => format!("http://{}/", auth::url_host(addr)),
    };
    let state = Arc::new(server::State::new(client, toolkit, addr, opts.token, auth::random_token()?));
    let cancel = CancellationToken::new();
    let tracker = TaskTracker::new();
    tracker.spawn(server::accept_loop(listener, state, cancel.clone(), tracker.clone()));
    Ok(Inbox { addr, url, cancel, tracker })
}
