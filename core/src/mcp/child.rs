//! The child processes of stdio servers, and the promise that none outlives its source.
//!
//! Each server runs as the leader of its own process group, so killing the group reaches
//! whatever it started (`npx` starts `node`). [`ChildGroup`] kills the group when dropped,
//! synchronously, without needing a runtime: a source dropped without `close()` leaves
//! nothing running. On Linux the child also gets a parent-death signal, for the exits no
//! destructor sees (a crash, `SIGKILL`, `std::process::exit`).
//!
//! That signal fires when the *thread* that forked the child ends, not the process. Servers
//! are therefore spawned from one engine thread that lives as long as the process, never
//! from the caller's thread (a binding's caller thread, or a runtime's blocking thread that
//! exits when idle, would take the server down with it).

use std::collections::VecDeque;
use std::io;
use std::process::Stdio;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use rmcp::transport::TokioChildProcess;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::ChildStderr;
use tokio::sync::oneshot;

use super::config::StdioServer;

/// The most of a server's stderr kept to explain a failure.
const STDERR_TAIL: usize = 2048;

/// A server's process group, killed when this is dropped (or [`ChildGroup::kill`] is called).
#[derive(Debug)]
pub(crate) struct ChildGroup {
    pgid: Option<u32>,
}

impl ChildGroup {
    /// The leader's pid (the group id), while the group has not been killed.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.pgid
    }

    /// Sends `SIGKILL` to the whole group, once.
    pub(crate) fn kill(&mut self) {
        let Some(pgid) = self.pgid.take() else { return };
        #[cfg(unix)]
        if let Ok(pgid) = libc::pid_t::try_from(pgid) {
            // A group id of 0 or 1 would be our own group or init's; a child's is never either.
            if pgid > 1 {
                // SAFETY: killpg has no memory effects; a group that is gone answers ESRCH.
                unsafe {
                    libc::killpg(pgid, libc::SIGKILL);
                }
            }
        }
        #[cfg(not(unix))]
        let _ = pgid;
    }
}

impl Drop for ChildGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The last bytes a server wrote to stderr, for the message when it fails to start.
#[derive(Clone, Debug, Default)]
pub(crate) struct StderrTail(Arc<Mutex<VecDeque<u8>>>);

impl StderrTail {
    fn drain(&self, stderr: ChildStderr) {
        let tail = self.0.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let Ok(mut t) = tail.lock() else { return };
                t.extend(line.bytes().chain(std::iter::once(b'\n')));
                let excess = t.len().saturating_sub(STDERR_TAIL);
                t.drain(..excess);
            }
        });
    }

    /// The kept text, trimmed (it may start mid-character after the cut).
    pub(crate) fn text(&self) -> String {
        let bytes: Vec<u8> = self.0.lock().map(|t| t.iter().copied().collect()).unwrap_or_default();
        String::from_utf8_lossy(&bytes).trim().to_string()
    }
}

/// A started server: the transport rmcp drives, the group guard, and its stderr.
pub(crate) struct Spawned {
    pub(crate) process: TokioChildProcess,
    pub(crate) group: ChildGroup,
    pub(crate) stderr: StderrTail,
}

type Job = Box<dyn FnOnce() + Send>;

/// The thread every server is forked from (see the module docs), started on first use, and
/// again in a forked child (which has none of its parent's threads).
fn spawner() -> Option<mpsc::Sender<Job>> {
    static SPAWNER: Mutex<Option<(u32, mpsc::Sender<Job>)>> = Mutex::new(None);
    let mut slot = SPAWNER.lock().ok()?;
    let pid = crate::process_id();
    if let Some((owner, tx)) = slot.as_ref() {
        if *owner == pid {
            return Some(tx.clone());
        }
    }
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("toolnexus-mcp-spawn".into())
        .spawn(move || rx.into_iter().for_each(|job| job()))
        .ok()?;
    *slot = Some((pid, tx.clone()));
    Some(tx)
}

/// Starts `server` with piped stdio, in a new process group, the engine's environment plus
/// the server's own, in its `cwd`.
pub(crate) async fn spawn(server: &StdioServer) -> io::Result<Spawned> {
    let mut cmd = tokio::process::Command::new(&server.command);
    cmd.args(&server.args).envs(server.env.iter().map(|(k, v)| (k, v)));
    if let Some(cwd) = &server.cwd {
        cmd.current_dir(cwd);
    }
    #[cfg(unix)]
    cmd.process_group(0);
    #[cfg(target_os = "linux")]
    set_parent_death_signal(&mut cmd);

    let handle = tokio::runtime::Handle::current();
    let (tx, rx) = oneshot::channel();
    let job: Job = Box::new(move || {
        // tokio registers the child with the runtime's process driver, so enter it here.
        let _runtime = handle.enter();
        let started = TokioChildProcess::builder(cmd).stderr(Stdio::piped()).spawn().map(|(process, stderr)| {
            let group = ChildGroup { pgid: process.id() };
            (process, group, stderr)
        });
        // Unsent (the caller gave up): dropped here, which kills the group.
        let _ = tx.send(started);
    });
    match spawner() {
        Some(s) => s.send(job).map_err(|_| io::Error::other("the MCP spawner thread is gone"))?,
        None => job(),
    }
    let (process, group, stderr) = rx.await.map_err(|_| io::Error::other("the MCP spawner thread is gone"))??;
    let tail = StderrTail::default();
    if let Some(stderr) = stderr {
        tail.drain(stderr);
    }
    Ok(Spawned { process, group, stderr: tail })
}

#[cfg(target_os = "linux")]
fn set_parent_death_signal(cmd: &mut tokio::process::Command) {
    // The spawner thread's process: if it died between fork and prctl, the signal would never
    // come, so the child checks its parent is still this one.
    let parent = libc::pid_t::try_from(std::process::id()).unwrap_or(0);
    // SAFETY: the closure runs in the child between fork and exec and calls only
    // async-signal-safe functions (prctl, getppid), allocating nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(io::Error::other("the parent exited during spawn"));
            }
            Ok(())
        });
    }
}
