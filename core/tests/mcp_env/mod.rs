//! What core/tests/mcp.rs runs against, installed from the pins in tests/mcp/ on first use:
//! the npm servers (`npm ci` into tests/mcp/node_modules, redone when package-lock.json
//! changes) and the official Python SDK (a venv under the cargo target dir, filled with
//! `pip install --require-hashes`, redone when requirements.txt changes).
//!
//! A missing `node`/`npm` or `python3` skips the tests that need it, loudly (straight to
//! stderr, which the test harness does not capture); under CI (`CI` set) it fails instead,
//! since CI installs both (tests/setup.sh).
#![allow(dead_code)]

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// tests/mcp/ in the repository.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp")
}

fn skip_or_fail(what: &str, why: &str) {
    if std::env::var_os("CI").is_some() {
        panic!("MCP tests: {why} (CI installs it: tests/setup.sh)");
    }
    let _ = writeln!(
        std::io::stderr(),
        "\n*** SKIPPING the MCP tests that need {what}: {why}. CI runs them (tests/setup.sh installs it). ***\n"
    );
}

fn have(cmd: &str) -> bool {
    Command::new(cmd).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The npm servers.
pub struct Node {
    pub everything: PathBuf,
    pub filesystem: PathBuf,
}

/// The npm servers, installed on first use; `None` (after a loud skip) without node and npm.
pub fn node() -> Option<&'static Node> {
    static NODE: OnceLock<Option<Node>> = OnceLock::new();
    NODE.get_or_init(|| {
        if !have("node") || !have("npm") {
            skip_or_fail("node and npm", "node or npm is not installed");
            return None;
        }
        let dir = fixtures();
        let lock = std::fs::read(dir.join("package-lock.json")).expect("tests/mcp/package-lock.json");
        let stamp = dir.join("node_modules/.toolnexus-installed-lock.json");
        if std::fs::read(&stamp).ok().as_deref() != Some(lock.as_slice()) {
            run(
                Command::new("npm")
                    .args(["ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"])
                    .current_dir(&dir),
                "npm ci in tests/mcp",
            );
            std::fs::write(&stamp, &lock).expect("write the npm stamp");
        }
        let scope = dir.join("node_modules/@modelcontextprotocol");
        Some(Node {
            everything: scope.join("server-everything/dist/index.js"),
            filesystem: scope.join("server-filesystem/dist/index.js"),
        })
    })
    .as_ref()
}

/// The venv's python, with the official `mcp` package.
pub fn python() -> Option<&'static PathBuf> {
    static PY: OnceLock<Option<PathBuf>> = OnceLock::new();
    PY.get_or_init(|| {
        let base = std::env::var("PYTHON")
            .ok()
            .filter(|p| have(p))
            .or_else(|| ["python3.11", "python3"].into_iter().find(|p| have(p)).map(str::to_string));
        let Some(base) = base else {
            skip_or_fail("python3", "python3 is not installed");
            return None;
        };
        let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-venv");
        let python = venv.join("bin/python");
        let wanted = std::fs::read(fixtures().join("requirements.txt")).expect("tests/mcp/requirements.txt");
        let stamp = venv.join("toolnexus-requirements.txt");
        if std::fs::read(&stamp).ok().as_deref() != Some(wanted.as_slice()) {
            if !python.exists() {
                run(Command::new(&base).arg("-m").arg("venv").arg(&venv), "python3 -m venv");
            }
            run(
                Command::new(&python)
                    .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--require-hashes", "-r"])
                    .arg(fixtures().join("requirements.txt")),
                "pip install tests/mcp/requirements.txt",
            );
            std::fs::write(&stamp, &wanted).expect("write the venv stamp");
        }
        Some(python)
    })
    .as_ref()
}

/// A fixture script's path.
pub fn script(name: &str) -> String {
    fixtures().join(name).to_string_lossy().into_owned()
}

/// A free loopback port (bound then released: the server about to use it binds it again).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port")
}

/// A server process a test started; killed when dropped.
pub struct Server {
    child: Child,
    pub url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `cmd` (which listens on `port`) and waits until the port accepts connections.
pub fn start_http(mut cmd: Command, port: u16) -> Server {
    let child =
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("start the HTTP server");
    let mut server = Server { child, url: format!("http://127.0.0.1:{port}/mcp") };
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
        if let Ok(Some(status)) = server.child.try_wait() {
            panic!("the HTTP server exited before listening: {status}");
        }
        assert!(Instant::now() < deadline, "the HTTP server did not listen on {port} within 20 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}

/// Whether `pid` is a live process (a zombie counts as gone: it runs nothing).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        // The state follows the parenthesised command name.
        Ok(stat) => {
            stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next()).is_some_and(|s| s != 'Z')
        }
    }
}

/// The pids of live processes whose command line contains `marker`.
pub fn processes_with(marker: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).replace('\0', " ").contains(marker))
        })
        .filter(|pid| alive(*pid))
        .collect()
}

/// Waits up to 3 s for `done`.
pub fn eventually(done: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(3);
    while !done() {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// A marker unique to this test process and call, for finding its processes again.
pub fn marker(tag: &str) -> String {
    static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    format!("tnmcp-{tag}-{}-{}", std::process::id(), SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}
