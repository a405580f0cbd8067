//! Idle keep-alive connections, per origin, and the buffered reader that parses HTTP/1.1
//! responses off them.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};

/// A byte stream: plain TCP or TLS.
pub(super) trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

/// Where a connection goes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Origin {
    pub tls: bool,
    pub host: String,
    pub port: u16,
}

/// How long an idle connection is kept.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Idle connections kept per origin.
const MAX_IDLE: usize = 16;

/// An open connection with its read buffer.
pub(super) struct Conn {
    pub io: Box<dyn Io>,
    buf: Vec<u8>,
    pos: usize,
    idle_since: Instant,
}

impl Conn {
    pub fn new(io: Box<dyn Io>) -> Conn {
        Conn { io, buf: Vec::with_capacity(16 * 1024), pos: 0, idle_since: Instant::now() }
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

    /// Reads more bytes into the buffer; `Ok(0)` at end of stream.
    pub async fn fill(&mut self) -> std::io::Result<usize> {
        if self.pos > 0 && self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        }
        self.buf.reserve(16 * 1024);
        self.io.read_buf(&mut self.buf).await
    }

    /// Takes exactly `n` bytes, reading as needed; errors at a premature end of stream.
    pub async fn take_exact(&mut self, n: usize, out: &mut Vec<u8>) -> std::io::Result<()> {
        let mut need = n;
        loop {
            let have = self.buffered().len().min(need);
            out.extend_from_slice(&self.buffered()[..have]);
            self.consume(have);
            need -= have;
            if need == 0 {
                return Ok(());
            }
            if self.fill().await? == 0 {
                return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "connection closed mid-body"));
            }
        }
    }

    /// Takes one CRLF-terminated line (without the CRLF), up to `max` bytes.
    pub async fn take_line(&mut self, max: usize) -> std::io::Result<Vec<u8>> {
        loop {
            if let Some(i) = self.buffered().windows(2).position(|w| w == b"\r\n") {
                let line = self.buffered()[..i].to_vec();
                self.consume(i + 2);
                return Ok(line);
            }
            if self.buffered().len() > max {
                return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "line too long"));
            }
            if self.fill().await? == 0 {
                return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "connection closed mid-line"));
            }
        }
    }
}

/// Idle connections by origin.
#[derive(Default)]
pub(super) struct Pool {
    idle: Mutex<HashMap<Origin, Vec<Conn>>>,
}

impl Pool {
    /// The most recently used live idle connection to `origin`, if any.
    pub fn take(&self, origin: &Origin) -> Option<Conn> {
        let mut g = self.idle.lock().ok()?;
        let list = g.get_mut(origin)?;
        while let Some(c) = list.pop() {
            if c.idle_since.elapsed() < IDLE_TIMEOUT {
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
        if let Ok(mut g) = self.idle.lock() {
            let list = g.entry(origin.clone()).or_default();
            list.retain(|c| c.idle_since.elapsed() < IDLE_TIMEOUT);
            if list.len() < MAX_IDLE {
                list.push(conn);
            }
        }
    }
}
