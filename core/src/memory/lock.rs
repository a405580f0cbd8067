//! Conversation locks: ids held by runs of this process, and (for a store shared between
//! processes) a byte-range lock per id on a lock file, which the kernel releases when the
//! process holding it dies, so a crash never leaves a conversation locked.
//!
//! POSIX record locks belong to the process, not to a file descriptor: a second lock of the
//! same range from this process would succeed, and closing any descriptor of the file drops
//! them all. So each lock file is opened once per process ([`shared`]) and never closed, and
//! the in-process set decides between this process's own runs.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use super::{in_use, RunLock};
use crate::error::{Error, Result};

/// The ids held by runs of this process.
#[derive(Default)]
pub(crate) struct Held(Mutex<HashSet<String>>);

/// Releases its id from [`Held`] when dropped.
struct HeldId(Arc<Held>, String);

impl Drop for HeldId {
    fn drop(&mut self) {
        self.0 .0.lock().unwrap_or_else(|p| p.into_inner()).remove(&self.1);
    }
}

impl Held {
    /// Takes `id`, or a conflict when a run of this process holds it.
    pub(crate) fn take(self: &Arc<Self>, id: &str) -> Result<RunLock> {
        let mut held = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if !held.insert(id.to_string()) {
            return Err(in_use(id));
        }
        Ok(RunLock::holding(HeldId(self.clone(), id.to_string())))
    }
}

/// One lock file, opened once for the whole process.
pub(crate) struct LockFile {
    held: Arc<Held>,
    #[cfg(unix)]
    file: std::fs::File,
}

/// The process's one [`LockFile`] at `path`.
pub(crate) fn shared(path: &Path) -> Result<Arc<LockFile>> {
    static FILES: OnceLock<Mutex<HashMap<PathBuf, Arc<LockFile>>>> = OnceLock::new();
    let mut files = FILES.get_or_init(Mutex::default).lock().unwrap_or_else(|p| p.into_inner());
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| Error::invalid(format!("cannot open the lock file {}: {e}", path.display())))?;
    let key = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if let Some(existing) = files.get(&key) {
        return Ok(existing.clone());
    }
    #[cfg(not(unix))]
    drop(file);
    let lock = Arc::new(LockFile {
        held: Arc::default(),
        #[cfg(unix)]
        file,
    });
    files.insert(key, lock.clone());
    Ok(lock)
}

impl LockFile {
    /// Takes `id` for this process, then across processes; a conflict when either holds it.
    pub(crate) fn take(self: &Arc<Self>, id: &str) -> Result<RunLock> {
        let local = self.held.take(id)?;
        #[cfg(unix)]
        {
            let offset = range_of(id);
            if !self.set(libc::F_WRLCK as libc::c_short, offset)? {
                return Err(in_use(id));
            }
            Ok(RunLock::holding((local, RangeLock { file: self.clone(), offset })))
        }
        #[cfg(not(unix))]
        Ok(local)
    }

    /// `fcntl(F_SETLK)` on the one byte at `offset`: `false` when another process holds it.
    #[cfg(unix)]
    fn set(&self, kind: libc::c_short, offset: i64) -> Result<bool> {
        use std::os::fd::AsRawFd;
        // SAFETY: flock is plain data; every field fcntl reads is set below.
        let mut fl: libc::flock = unsafe { std::mem::zeroed() };
        fl.l_type = kind;
        fl.l_whence = libc::SEEK_SET as libc::c_short;
        fl.l_start = offset as libc::off_t;
        fl.l_len = 1;
        // SAFETY: the descriptor is open for the life of `self`, and `fl` outlives the call.
        let rc = unsafe { libc::fcntl(self.file.as_raw_fd(), libc::F_SETLK, &fl) };
        if rc == 0 {
            return Ok(true);
        }
        let err = std::io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EACCES) | Some(libc::EAGAIN) => Ok(false),
            _ => Err(Error::invalid(format!("cannot lock a conversation: {err}"))),
        }
    }
}

/// Unlocks its byte when dropped.
#[cfg(unix)]
struct RangeLock {
    file: Arc<LockFile>,
    offset: i64,
}

#[cfg(unix)]
impl Drop for RangeLock {
    fn drop(&mut self) {
        let _ = self.file.set(libc::F_UNLCK as libc::c_short, self.offset);
    }
}

/// The byte that stands for `id` (and its PostgreSQL advisory lock key): FNV-1a, the same in
/// every build of the library (a process built by another Rust version must pick the same
/// one), kept within a signed 62 bits.
pub(crate) fn range_of(id: &str) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h >> 2) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_id_is_a_conflict_until_released() {
        let held = Arc::new(Held::default());
        let first = held.take("a").unwrap();
        assert_eq!(held.take("a").err().map(|e| e.kind()), Some(crate::ErrorKind::Conflict));
        let _other = held.take("b").unwrap();
        drop(first);
        assert!(held.take("a").is_ok());
    }

    #[test]
    fn the_byte_of_an_id_is_fixed() {
        // Pinned: another build of the library must lock the same byte for the same id.
        assert_eq!(range_of(""), (0xcbf2_9ce4_8422_2325u64 >> 2) as i64);
        assert_eq!(range_of("a"), (0xaf63_dc4c_8601_ec8cu64 >> 2) as i64);
    }
}
