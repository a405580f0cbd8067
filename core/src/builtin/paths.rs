//! Where a built-in's path lands: relative to the configured base directory (or the
//! process's working directory), and, when confined (`root`, or upstream's
//! `base_dir` + `confine_to_base_dir`), never outside it.
//!
//! Confinement resolves the real path before any access, one component at a time the way
//! the kernel does (a symlink is followed where it stands, `..` climbs from its real
//! parent, a dangling symlink is followed to where it would create the file), and refuses a
//! path whose real form leaves the root. The file is then opened at that real path without
//! following a final symlink, and the opened file's own path (`/proc/self/fd` on Linux) is
//! checked again before a byte is read or written: a symlink swapped in after the check
//! still cannot lead outside.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};

use super::py;

/// Most symlinks followed while resolving one path (Linux's own limit).
const MAX_HOPS: usize = 40;

/// How the tools map paths onto the filesystem.
#[derive(Clone, Debug, Default)]
pub(crate) struct Fs {
    /// What a relative path means; `None`: the process working directory.
    base: Option<PathBuf>,
    /// When set, the name of the option that confines (`root` or `baseDir`, as messages name it).
    confine: Option<&'static str>,
}

/// A path a tool was given, mapped.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    /// The path as upstream names it in messages: joined onto the base when relative.
    pub shown: PathBuf,
    /// The path accessed: `shown`, or its real path when confined.
    pub real: PathBuf,
    /// The real path of the root, when confined.
    root: Option<PathBuf>,
}

impl Fs {
    pub(crate) fn new(base: Option<PathBuf>, confine: Option<&'static str>) -> Fs {
        Fs { base, confine }
    }

    /// The real path of the root, when confined.
    fn confined_root(&self) -> Result<Option<PathBuf>, String> {
        if self.confine.is_none() {
            return Ok(None);
        }
        let base = self.base.as_deref().unwrap_or(Path::new("."));
        real_path(&py::absolute(base)).map(Some).map_err(|e| py::os_error(&e, base))
    }

    fn outside(&self, p: &str) -> String {
        let base = self.base.as_deref().unwrap_or(Path::new("")).display().to_string();
        format!("{p} resolves outside {} {base}", self.confine.unwrap_or("root"))
    }

    /// The directory the tools work in when given none: the base (its real path when
    /// confined), or `None` for the process working directory.
    pub(crate) fn dir(&self) -> Result<Option<Target>, String> {
        let Some(base) = self.base.clone() else { return Ok(None) };
        let root = self.confined_root()?;
        let real = root.clone().unwrap_or_else(|| base.clone());
        Ok(Some(Target { shown: base, real, root }))
    }

    /// Maps `p` (as the model wrote it); the error is the message a tool prefixes with its name.
    pub(crate) fn resolve(&self, p: &str) -> Result<Target, String> {
        let given = Path::new(p);
        let shown = match &self.base {
            Some(base) if !given.is_absolute() => base.join(given),
            _ => given.to_path_buf(),
        };
        let Some(root) = self.confined_root()? else {
            return Ok(Target { real: shown.clone(), shown, root: None });
        };
        let real = real_path(&py::absolute(&shown)).map_err(|e| py::os_error(&e, &shown))?;
        if !real.starts_with(&root) {
            return Err(self.outside(p));
        }
        Ok(Target { shown, real, root: Some(root) })
    }

    /// Checks that an opened file is inside the root; `p` is the path as given, for the message.
    fn check_opened(&self, t: &Target, file: &File, p: &str) -> Result<(), String> {
        let Some(root) = &t.root else { return Ok(()) };
        let actual = opened_path(file).map_or_else(|| real_path(&t.real), Ok);
        if actual.is_ok_and(|a| a.starts_with(root)) {
            Ok(())
        } else {
            Err(self.outside(p))
        }
    }

    /// Reads a file's bytes; `p` is the path as given.
    pub(crate) fn read(&self, t: &Target, p: &str) -> Result<Vec<u8>, String> {
        let mut file =
            open(&t.real, OpenOptions::new().read(true), t.root.is_some()).map_err(|e| py::os_error(&e, &t.shown))?;
        self.check_opened(t, &file, p)?;
        let mut buf = Vec::new();
        file.read_to_end(&mut buf).map_err(|e| py::os_error(&e, &t.shown))?;
        Ok(buf)
    }

    /// Creates the parent directories of a file about to be written, as `os.makedirs`.
    pub(crate) fn make_parents(&self, t: &Target) -> Result<(), String> {
        let parent_of = |p: &Path| p.parent().map(Path::to_path_buf).unwrap_or_default();
        let shown_parent = parent_of(&py::abspath(&t.shown));
        let parent = if t.root.is_some() { parent_of(&t.real) } else { shown_parent.clone() };
        fs::create_dir_all(&parent).map_err(|e| py::os_error(&e, &shown_parent))
    }

    /// Replaces a file's content (creating the file), as `open(p, "w").write(...)`.
    pub(crate) fn write(&self, t: &Target, content: &[u8], p: &str) -> Result<(), String> {
        let err = |e: io::Error| py::os_error(&e, &t.shown);
        if t.root.is_none() {
            return fs::write(&t.real, content).map_err(err);
        }
        // Opened without truncating, so nothing is lost before the opened file is checked; a
        // file this call creates is created exclusively, so a refused one can be removed again.
        let existed = fs::symlink_metadata(&t.real).is_ok();
        let mut opts = OpenOptions::new();
        opts.write(true);
        if existed {
            opts.create(true);
        } else {
            opts.create_new(true);
        }
        let mut file = open(&t.real, &mut opts, true).map_err(err)?;
        if let Err(refused) = self.check_opened(t, &file, p) {
            if !existed {
                if let Some(actual) = opened_path(&file) {
                    let _ = fs::remove_file(actual);
                }
            }
            return Err(refused);
        }
        file.set_len(0).map_err(err)?;
        file.write_all(content).map_err(err)
    }

    /// Removes a file, as `os.remove`; a file already gone is not an error.
    pub(crate) fn remove(&self, t: &Target, p: &str) -> Result<(), String> {
        if let Some(root) = &t.root {
            // Resolved again at the last moment: the file removed is the one checked.
            let now = real_path(&t.real).ok();
            if now.as_ref() != Some(&t.real) || !t.real.starts_with(root) {
                return Err(self.outside(p));
            }
        }
        match fs::remove_file(&t.real) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(py::os_error(&e, &t.shown)),
            _ => Ok(()),
        }
    }

    /// Whether a directory met while walking may be read: inside the root when confined.
    pub(crate) fn may_walk(&self, t: &Target, dir: &Path) -> bool {
        match &t.root {
            None => true,
            Some(root) => fs::canonicalize(dir).is_ok_and(|real| real.starts_with(root)),
        }
    }

    /// Reads a file met while walking (`None` when it cannot be read or is outside the root).
    pub(crate) fn read_walked(&self, t: &Target, file: &Path) -> Option<Vec<u8>> {
        if t.root.is_none() {
            return fs::read(file).ok();
        }
        let mut f = open(file, OpenOptions::new().read(true), true).ok()?;
        let inside = opened_path(&f).map_or_else(|| real_path(file).ok(), Some)?;
        if !t.root.as_ref().is_some_and(|r| inside.starts_with(r)) {
            return None;
        }
        let mut buf = Vec::new();
        f.read_to_end(&mut buf).ok()?;
        Some(buf)
    }
}

fn open(path: &Path, opts: &mut OpenOptions, no_follow: bool) -> io::Result<File> {
    #[cfg(unix)]
    if no_follow {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NOFOLLOW);
    }
    #[cfg(not(unix))]
    let _ = no_follow;
    opts.open(path)
}

/// Where an open file really is, when the platform says.
fn opened_path(file: &File) -> Option<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        None
    }
}

enum Part {
    Root,
    Cur,
    Parent,
    Name(OsString),
}

fn parts(p: &Path) -> Vec<Part> {
    p.components()
        .map(|c| match c {
            Component::Prefix(_) | Component::RootDir => Part::Root,
            Component::CurDir => Part::Cur,
            Component::ParentDir => Part::Parent,
            Component::Normal(n) => Part::Name(n.to_os_string()),
        })
        .collect()
}

/// The real path of an absolute path that need not exist: its existing part with every
/// symlink resolved where it stands (dangling ones too), the rest appended as written.
/// More than [`MAX_HOPS`] symlinks is `ELOOP`, as the kernel says.
pub(crate) fn real_path(abs: &Path) -> io::Result<PathBuf> {
    let mut todo: VecDeque<Part> = parts(abs).into();
    let mut out = PathBuf::from("/");
    // How many trailing components of `out` do not exist (no symlink can hide there).
    let mut missing = 0usize;
    let mut hops = 0usize;
    while let Some(part) = todo.pop_front() {
        match part {
            Part::Root => {
                out = PathBuf::from("/");
                missing = 0;
            }
            Part::Cur => {}
            Part::Parent => {
                out.pop();
                missing = missing.saturating_sub(1);
            }
            Part::Name(name) => {
                let next = out.join(&name);
                if missing > 0 {
                    out = next;
                    missing += 1;
                    continue;
                }
                match fs::symlink_metadata(&next) {
                    Ok(m) if m.file_type().is_symlink() => {
                        hops += 1;
                        if hops > MAX_HOPS {
                            return Err(too_many_links());
                        }
                        match fs::read_link(&next) {
                            // A relative target resolves from the link's own directory: `out`.
                            Ok(target) => {
                                for p in parts(&target).into_iter().rev() {
                                    todo.push_front(p);
                                }
                            }
                            Err(_) => {
                                out = next;
                                missing = 1;
                            }
                        }
                    }
                    Ok(_) => out = next,
                    Err(_) => {
                        out = next;
                        missing = 1;
                    }
                }
            }
        }
    }
    Ok(out)
}

fn too_many_links() -> io::Error {
    #[cfg(unix)]
    return io::Error::from_raw_os_error(libc::ELOOP);
    #[cfg(not(unix))]
    return io::Error::other("too many levels of symbolic links");
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use super::*;

    struct Dir(PathBuf);

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn temp(tag: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("tn-paths-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(d.join("root/d")).unwrap();
        fs::create_dir_all(d.join("outside")).unwrap();
        Dir(d.canonicalize().unwrap())
    }

    /// The directory a checked path runs through is swapped for a symlink out of the root
    /// between the check and the access: the access is still refused.
    #[test]
    fn a_symlink_swapped_in_after_the_check_is_refused() {
        let d = temp("swap");
        fs::write(d.0.join("root/d/f.txt"), "inside").unwrap();
        fs::write(d.0.join("outside/f.txt"), "outside").unwrap();
        let fs_ = Fs::new(Some(d.0.join("root")), Some("root"));
        let old = fs_.resolve("d/f.txt").unwrap();
        let new = fs_.resolve("d/new.txt").unwrap();
        fs::rename(d.0.join("root/d"), d.0.join("root/was-d")).unwrap();
        std::os::unix::fs::symlink(d.0.join("outside"), d.0.join("root/d")).unwrap();

        let refused = format!("d/f.txt resolves outside root {}", d.0.join("root").display());
        assert_eq!(fs_.read(&old, "d/f.txt").unwrap_err(), refused);
        assert_eq!(fs_.write(&old, b"pwned", "d/f.txt").unwrap_err(), refused);
        assert_eq!(fs::read_to_string(d.0.join("outside/f.txt")).unwrap(), "outside", "not truncated");
        assert!(fs_.write(&new, b"x", "d/new.txt").is_err());
        assert!(!d.0.join("outside/new.txt").exists(), "a file created outside is removed again");
        assert!(fs_.remove(&old, "d/f.txt").is_err());
        assert!(d.0.join("outside/f.txt").exists());
    }

    #[test]
    fn real_paths_resolve_symlinks_where_they_stand() {
        let d = temp("real");
        std::os::unix::fs::symlink(d.0.join("outside"), d.0.join("root/l")).unwrap();
        std::os::unix::fs::symlink("../outside/x", d.0.join("root/rel")).unwrap();
        std::os::unix::fs::symlink("loop", d.0.join("root/loop")).unwrap();
        let real = |p: &str| real_path(&d.0.join(p)).unwrap();
        assert_eq!(real("root/l/a/../b"), d.0.join("outside/b"));
        assert_eq!(real("root/l/.."), d.0.clone());
        assert_eq!(real("root/rel"), d.0.join("outside/x"), "a dangling link is followed");
        assert_eq!(real("root/none/../l"), d.0.join("outside"), "`..` after a missing name");
        assert_eq!(real_path(&d.0.join("root/loop")).unwrap_err().raw_os_error(), Some(libc::ELOOP));
    }
}
