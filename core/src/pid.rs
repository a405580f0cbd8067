//! This process's id without a system call per look. The engine asks it on every pooled
//! request (twice) and every C call, to notice that it is running in a forked child (whose
//! parent's threads and connections are not its own); glibc does not cache `getpid`. The id
//! is read once, and forgotten in each forked child by a `pthread_atfork` handler, so the
//! child reads its own on its next look.

#[cfg(unix)]
mod cached {
    use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};

    /// The id, or 0 when not read yet in this process.
    static PID: AtomicU32 = AtomicU32::new(0);

    /// Whether the fork handler is in place: only then may the id be kept.
    static HANDLER: AtomicU8 = AtomicU8::new(UNSET);
    const UNSET: u8 = 0;
    const SETTING: u8 = 1;
    const SET: u8 = 2;
    const REFUSED: u8 = 3;

    pub fn id() -> u32 {
        match PID.load(Ordering::Relaxed) {
            0 => read(),
            pid => pid,
        }
    }

    #[cold]
    fn read() -> u32 {
        // Never waits: a thread that finds the handler being registered (or a child forked
        // meanwhile) asks the system this once.
        if HANDLER.compare_exchange(UNSET, SETTING, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            // SAFETY: registers a handler that only stores to an atomic, async-signal-safe
            // as a forked child's first code must be. A failure (ENOMEM) leaves no handler.
            let done = unsafe { libc::pthread_atfork(None, None, Some(forget)) } == 0;
            HANDLER.store(if done { SET } else { REFUSED }, Ordering::Release);
        }
        let pid = std::process::id();
        // Stored only after the handler is in place: a fork after the store always runs it.
        if HANDLER.load(Ordering::Acquire) == SET {
            PID.store(pid, Ordering::Relaxed);
        }
        pid
    }

    extern "C" fn forget() {
        PID.store(0, Ordering::Relaxed);
    }
}

/// This process's id (`std::process::id()`), cheap to ask again; right in a forked child too.
pub fn process_id() -> u32 {
    #[cfg(unix)]
    return cached::id();
    #[cfg(not(unix))]
    std::process::id()
}

#[cfg(all(test, unix))]
mod tests {
    use super::process_id;

    #[test]
    fn the_id_is_the_processs_own() {
        assert_eq!(process_id(), std::process::id());
        assert_eq!(process_id(), std::process::id());
    }

    #[test]
    fn a_forked_child_sees_its_own_id() {
        let parent = process_id();
        // SAFETY: the child only calls async-signal-safe functions and the cached lookup
        // (an atomic load, then getpid), then leaves with _exit.
        let child = unsafe { libc::fork() };
        assert!(child >= 0, "fork failed");
        if child == 0 {
            let ok = process_id() != parent && process_id() == std::process::id();
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        assert_eq!(unsafe { libc::waitpid(child, &mut status, 0) }, child);
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the child saw its parent's id");
        assert_eq!(process_id(), parent);
    }
}
