//! Idle keep-alive connections, per origin, and the buffered reader that parses HTTP/1.1
//! responses off them.
//!
//! Two rules keep a pooled connection from ever handing one request another's answer:
//! a connection is reused only while nothing is waiting on it (a server that sent a `408`
//! and closed, or stray bytes after a response, leave it readable), and only by the process
//! that opened it (after a `fork` the child inherits the sockets, and parent and child would
//! read each other's responses off them).

use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

/// A byte stream: plain TCP or TLS over TCP.
pub(super) enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl Stream {
    fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(s) => s.get_ref().0,
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// Where a connection goes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Origin {
    pub tls: bool,
    pub host: String,
    pub port: u16,
}

/// How long an idle connection is kept.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Idle connections kept per origin. Every connection a burst of concurrent requests opened
/// is worth keeping: one dropped here is a TCP (and TLS) handshake for the next burst, which
/// cost the 100-runs-at-once bench more than anything else when this was 16. The cap only
/// bounds the descriptors a process holds idle against one origin.
const MAX_IDLE: usize = 256;

/// A connection's read buffer: what one read asks for.
const READ_BUFFER: usize = 16 * 1024;
/// The most read buffer an idle connection keeps.
const MAX_IDLE_BUFFER: usize = 4 * READ_BUFFER;

/// An open connection with its read buffer. The reading is generic over the byte source so
/// the same code can be fed from memory (the fuzz targets); the pool only holds [`Stream`]s.
pub(super) struct Conn<S = Stream> {
    pub io: S,
    buf: Vec<u8>,
    pos: usize,
    idle_since: Instant,
}

impl<S> Conn<S> {
    pub fn new(io: S) -> Conn<S> {
        Conn { io, buf: Vec::with_capacity(READ_BUFFER), pos: 0, idle_since: Instant::now() }
    }

    /// The unread buffered bytes.
    pub fn buffered(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// Marks `n` buffered bytes as read.
    pub fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.buf.len());
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        }
    }
}

impl Conn<Stream> {
    /// Whether an idle connection may carry the next request: nothing buffered, and nothing
    /// readable on the socket (no bytes, no end of stream). The socket is asked directly, not
    /// through the reactor's cached readiness, which may not have seen the bytes yet. On TLS
    /// any pending record counts (a close alert or a stray response: either way, not clean).
    fn is_clean(&self) -> bool {
        if !self.buffered().is_empty() {
            return false;
        }
        let mut probe = [std::mem::MaybeUninit::<u8>::uninit(); 1];
        match socket2::SockRef::from(self.io.tcp()).peek(&mut probe) {
            Err(e) => e.kind() == io::ErrorKind::WouldBlock,
            Ok(_) => false,
        }
    }
}

impl<S: AsyncRead + Unpin> Conn<S> {
    /// Reads more bytes into the buffer; `Ok(0)` at end of stream.
    pub async fn fill(&mut self) -> std::io::Result<usize> {
        if self.pos > 0 && self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        }
        self.buf.reserve(READ_BUFFER);
        self.io.read_buf(&mut self.buf).await
    }

    /// Takes one CRLF-terminated line (without the CRLF) of at most `max` bytes. Too long is
    /// decided by the line alone, however its bytes were split into reads.
    pub async fn take_line(&mut self, max: usize) -> std::io::Result<Vec<u8>> {
        loop {
            let end = self.buffered().windows(2).position(|w| w == b"\r\n");
            // Before its CRLF has arrived, a line's last buffered byte may be the CR.
            if end.map_or(self.buffered().len() > max.saturating_add(1), |i| i > max) {
                return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "line too long"));
            }
            if let Some(i) = end {
                let line = self.buffered()[..i].to_vec();
                self.consume(i + 2);
                return Ok(line);
            }
            if self.fill().await? == 0 {
                return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "connection closed mid-line"));
            }
        }
    }
}

/// Connections a forked child inherited: never used, never closed (see [`Idle::adopt`]).
static INHERITED: Mutex<Vec<HashMap<Origin, Vec<Conn>>>> = Mutex::new(Vec::new());

/// Idle connections by origin, owned by one process.
pub(super) struct Pool {
    idle: Mutex<Idle>,
}

struct Idle {
    /// The process the connections were opened in.
    pid: u32,
    by_origin: HashMap<Origin, Vec<Conn>>,
}

impl Default for Pool {
    fn default() -> Pool {
        Pool { idle: Mutex::new(Idle { pid: crate::process_id(), by_origin: HashMap::new() }) }
    }
}

impl Idle {
    /// After a fork, in the child: the inherited connections are the parent's. They are leaked,
    /// never used or closed here: dropping one would also deregister it from the reactor's
    /// epoll set, which parent and child share, and the parent would wait on it forever.
    fn adopt(&mut self) {
        let pid = crate::process_id();
        if self.pid != pid {
            let inherited = std::mem::take(&mut self.by_origin);
            self.pid = pid;
            // Kept reachable rather than forgotten, so leak checkers see them as held on purpose.
            INHERITED.lock().unwrap_or_else(|p| p.into_inner()).push(inherited);
        }
    }
}

impl Pool {
    /// The most recently used idle connection to `origin` that is live and clean, if any.
    pub fn take(&self, origin: &Origin) -> Option<Conn> {
        let mut g = self.idle.lock().ok()?;
        g.adopt();
        let list = g.by_origin.get_mut(origin)?;
        while let Some(c) = list.pop() {
            if c.idle_since.elapsed() < IDLE_TIMEOUT && c.is_clean() {
                return Some(c);
            }
        }
        None
    }

    /// Returns a connection that finished a response cleanly.
    pub fn put(&self, origin: &Origin, mut conn: Conn) {
        if !conn.buffered().is_empty() {
            return; // bytes nobody asked for: the connection is not in a known state
        }
        conn.idle_since = Instant::now();
        if conn.buf.capacity() > MAX_IDLE_BUFFER {
            // A long response grew it; kept idle, that would be held by every pooled connection.
            conn.buf = Vec::with_capacity(READ_BUFFER);
            conn.pos = 0;
        }
        if let Ok(mut g) = self.idle.lock() {
            g.adopt();
            let list = g.by_origin.entry(origin.clone()).or_default();
            list.retain(|c| c.idle_since.elapsed() < IDLE_TIMEOUT);
            if list.len() < MAX_IDLE {
                list.push(conn);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn connection(listener: &tokio::net::TcpListener) -> (Conn, TcpStream) {
        let addr = listener.local_addr().unwrap();
        let (client, server) = tokio::join!(TcpStream::connect(addr), listener.accept());
        (Conn::new(Stream::Plain(client.unwrap())), server.unwrap().0)
    }

    #[tokio::test]
    async fn idle_connections_are_kept_up_to_the_cap_with_a_bounded_buffer() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = Origin { tls: false, host: "127.0.0.1".into(), port: listener.local_addr().unwrap().port() };
        let pool = Pool::default();
        let (mut grown, _peer) = connection(&listener).await;
        grown.buf.reserve(1 << 20);
        pool.put(&origin, grown);
        let back = pool.take(&origin).expect("the idle connection");
        assert!(back.buf.capacity() <= MAX_IDLE_BUFFER, "{}", back.buf.capacity());

        // A burst's connections all stay idle, up to MAX_IDLE.
        let mut peers = Vec::new();
        for _ in 0..MAX_IDLE + 3 {
            let (conn, peer) = connection(&listener).await;
            peers.push(peer);
            pool.put(&origin, conn);
        }
        let mut kept = 0;
        while pool.take(&origin).is_some() {
            kept += 1;
        }
        assert_eq!(kept, MAX_IDLE);
    }
}
