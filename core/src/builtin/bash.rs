//! `bash`: one shell command, its stdout and stderr combined in one pipe, bounded by its
//! timeout. The command runs in a process group of its own, so stopping it stops everything
//! it started: on the timeout, when the run's token is cancelled, and when the run drops
//! the call (a run deadline, a cancelled run) — `SIGTERM` first, `SIGKILL` after
//! [`KILL_GRACE`] for whatever is still there.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::{builtin, err, py, Env};
use crate::tool::Tool;
use crate::types::{ToolContext, ToolResult};

/// The timeout when the call gives none.
const DEFAULT_TIMEOUT_MS: f64 = 60_000.0;
/// How long a job gets between "please stop" and "stop" (upstream's `KILL_GRACE_MS`).
const KILL_GRACE: Duration = Duration::from_millis(2000);
/// The longest timeout honoured (a larger one waits this long).
const MAX_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 3600);

pub(super) fn tool(env: &Arc<Env>) -> Tool {
    builtin(
        "bash",
        "Run a shell command and return its combined stdout+stderr. Non-zero exit is an error.",
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The shell command to run"},
                "workdir": {"type": "string", "description": "Working directory (default: process cwd)"},
                "timeout": {"type": "number", "description": "Timeout in milliseconds (default 60000)"},
                "description": {"type": "string", "description": "Human-readable description of the command"}
            },
            "required": ["command"],
            "additionalProperties": false
        }),
        env,
        |env, args, ctx| Box::pin(run(env, args, ctx)),
    )
}

async fn run(env: Arc<Env>, args: Value, ctx: ToolContext) -> ToolResult {
    let command = py::arg_text(&args, "command");
    if command.is_empty() {
        return err("bash", "command is required");
    }
    let argv = match &env.shell {
        Ok(argv) => argv.clone(),
        Err(e) => return err("bash", e),
    };
    let workdir = py::arg_text(&args, "workdir");
    let workdir = if workdir.is_empty() { env.fs.dir() } else { env.fs.resolve(&workdir).map(Some) };
    let workdir = match workdir {
        Ok(w) => w,
        Err(e) => return err("bash", e),
    };
    let timeout_ms = py::num(py::arg(&args, "timeout")).unwrap_or(DEFAULT_TIMEOUT_MS);
    let mut meta = Map::new();
    meta.insert("shell".into(), Value::String(argv.join(" ")));
    job::run(&argv, &command, workdir, timeout_ms, ctx, meta).await
}

#[cfg(unix)]
mod job {
    use std::io;
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::process::{ExitStatus, Stdio};
    use std::time::Duration;

    use serde_json::{Map, Value};
    use tokio::io::AsyncReadExt;
    use tokio::net::unix::pipe;
    use tokio::process::{Child, Command};

    use super::{KILL_GRACE, MAX_TIMEOUT};
    use crate::builtin::paths::Target;
    use crate::builtin::{err, py};
    use crate::types::{ToolContext, ToolResult};

    /// A pipe whose two ends close on `exec`, made atomically where the platform can, so a
    /// command spawned by another thread meanwhile cannot inherit this one's write end (and
    /// keep its reader waiting for an end of output that never comes).
    fn pipe_fds() -> io::Result<(OwnedFd, OwnedFd)> {
        let mut fds = [0 as libc::c_int; 2];
        #[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd", target_os = "netbsd"))]
        // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
        let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
        #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd", target_os = "netbsd")))]
        let rc = {
            // SAFETY: `fds` is a valid array of two ints for pipe to fill.
            let rc = unsafe { libc::pipe(fds.as_mut_ptr()) };
            for fd in fds {
                // SAFETY: fcntl on a descriptor pipe just returned.
                unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
            }
            rc
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: pipe returned two fresh descriptors that nothing else owns.
        Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
    }

    /// Sends `sig` to the process group `pgid`; whether it was delivered.
    fn signal_group(pgid: i32, sig: libc::c_int) -> bool {
        // SAFETY: kill has no memory effects; a negative pid names a process group.
        pgid > 0 && unsafe { libc::kill(-pgid, sig) } == 0
    }

    /// A running command: the group leader, the read end of its output, what it wrote so far.
    struct Job {
        child: Child,
        pgid: i32,
        output: pipe::Receiver,
        out: Vec<u8>,
        eof: bool,
        status: Option<ExitStatus>,
    }

    impl Job {
        fn done(&self) -> bool {
            self.eof && self.status.is_some()
        }

        /// Reads to the end of the output and waits for the leader. Cancel-safe: what was
        /// read stays in `out`, and a later call goes on from there.
        async fn finish(&mut self) {
            let mut buf = [0u8; 8192];
            while !self.eof {
                match self.output.read(&mut buf).await {
                    Ok(0) | Err(_) => self.eof = true,
                    Ok(n) => self.out.extend_from_slice(&buf[..n]),
                }
            }
            if self.status.is_none() {
                self.status = self.child.wait().await.ok();
            }
        }

        /// Whether anything of the group may still run: the output is open or the leader lives.
        fn live(&self) -> bool {
            !self.done()
        }

        /// `SIGTERM` to the group, `SIGKILL` after the grace to whatever is left; returns as
        /// soon as the job is gone. Whether a signal reached the group (`killedTree`).
        async fn stop(&mut self) -> bool {
            let mut killed = self.live() && signal_group(self.pgid, libc::SIGTERM);
            if tokio::time::timeout(KILL_GRACE, self.finish()).await.is_err() {
                killed = signal_group(self.pgid, libc::SIGKILL) || killed;
                // Bounded: a process that left the group may hold the output open for ever.
                let _ = tokio::time::timeout(KILL_GRACE, self.finish()).await;
            }
            killed
        }

        fn text(&self) -> String {
            String::from_utf8_lossy(&self.out).into_owned()
        }
    }

    /// Stops the job when the call is dropped before it finished (the run was cancelled or
    /// hit its deadline while the command ran).
    struct Guard(Option<Job>);

    impl Drop for Guard {
        fn drop(&mut self) {
            let Some(mut job) = self.0.take() else { return };
            if !job.live() {
                return;
            }
            signal_group(job.pgid, libc::SIGTERM);
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => {
                    handle.spawn(async move {
                        job.stop().await;
                    });
                }
                Err(_) => {
                    signal_group(job.pgid, libc::SIGKILL);
                }
            }
        }
    }

    fn spawn(argv: &[String], command: &str, workdir: Option<&Target>) -> io::Result<Job> {
        let (read, write) = pipe_fds()?;
        let write_err = write.try_clone()?;
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .arg(command)
            .stdin(Stdio::null())
            .stdout(Stdio::from(write))
            .stderr(Stdio::from(write_err))
            .process_group(0);
        if let Some(dir) = workdir {
            cmd.current_dir(&dir.real);
        }
        let child = cmd.spawn()?;
        // The parent's copies of the write end go with `cmd`, so the output ends when the
        // group's last writer does.
        drop(cmd);
        let pgid = child.id().and_then(|id| i32::try_from(id).ok()).unwrap_or(0);
        let output = pipe::Receiver::from_owned_fd(read)?;
        Ok(Job { child, pgid, output, out: Vec::new(), eof: false, status: None })
    }

    pub(super) async fn run(
        argv: &[String],
        command: &str,
        workdir: Option<Target>,
        timeout_ms: f64,
        ctx: ToolContext,
        mut meta: Map<String, Value>,
    ) -> ToolResult {
        if argv.is_empty() {
            return err("bash", "the shell is empty");
        }
        let mut guard = match spawn(argv, command, workdir.as_ref()) {
            Ok(job) => Guard(Some(job)),
            Err(e) => {
                // Which path failed: the working directory if it is not one, else the shell.
                let named = match &workdir {
                    Some(w) if !w.real.is_dir() => w.shown.clone(),
                    _ => argv[0].clone().into(),
                };
                return err("bash", py::os_error(&e, &named));
            }
        };
        let Some(job) = guard.0.as_mut() else { return err("bash", "the command did not start") };
        let limit = Duration::try_from_secs_f64(timeout_ms.max(0.0) / 1000.0).unwrap_or(MAX_TIMEOUT).min(MAX_TIMEOUT);
        enum End {
            Finished,
            TimedOut,
            Cancelled,
        }
        let end = tokio::select! {
            () = job.finish() => End::Finished,
            () = tokio::time::sleep(limit) => End::TimedOut,
            () = ctx.cancel.cancelled() => End::Cancelled,
        };
        let result = match end {
            End::Finished => {
                let out = job.text();
                let code = job.status.map_or(-1, exit_code);
                meta.insert("exitCode".into(), code.into());
                if code == 0 {
                    ToolResult { output: out, is_error: false, metadata: Some(meta), parts: None }
                } else {
                    let output = format!("{out}\nbash: command exited with code {code}");
                    ToolResult { output, is_error: true, metadata: Some(meta), parts: None }
                }
            }
            End::TimedOut | End::Cancelled => {
                let killed = job.stop().await;
                let out = job.text();
                let output = match end {
                    End::TimedOut => {
                        meta.insert("timedOut".into(), true.into());
                        format!("bash: command timed out after {}ms\n{out}", py::int(timeout_ms))
                    }
                    _ => {
                        meta.insert("cancelled".into(), true.into());
                        format!("bash: command cancelled\n{out}")
                    }
                };
                meta.insert("killedTree".into(), killed.into());
                ToolResult { output, is_error: true, metadata: Some(meta), parts: None }
            }
        };
        guard.0 = None;
        result
    }

    /// The exit code as Python reports it: the code, or minus the signal that ended it.
    fn exit_code(status: ExitStatus) -> i64 {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(c), _) => i64::from(c),
            (None, Some(s)) => -i64::from(s),
            (None, None) => -1,
        }
    }
}

#[cfg(not(unix))]
mod job {
    use serde_json::{Map, Value};

    use crate::builtin::err;
    use crate::builtin::paths::Target;
    use crate::types::{ToolContext, ToolResult};

    pub(super) async fn run(
        _argv: &[String],
        _command: &str,
        _workdir: Option<Target>,
        _timeout_ms: f64,
        _ctx: ToolContext,
        _meta: Map<String, Value>,
    ) -> ToolResult {
        err("bash", "not available on this platform")
    }
}
