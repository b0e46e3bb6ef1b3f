//! Resolution beneath the root's descriptor: `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`
//! (retried on `EAGAIN`), or, once the kernel answered `ENOSYS`, a walk of one component at a
//! time with `O_NOFOLLOW` that refuses every symlink and `..`.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use super::Workspace;

/// How often an `openat2` that failed with `EAGAIN` (a concurrent rename somewhere on the
/// system, which `RESOLVE_BENEATH` cannot rule out) is tried again.
const EAGAIN_RETRIES: usize = 64;

/// Set once the kernel answered `ENOSYS` to `openat2`: from then on the walk is used.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// How paths are resolved beneath the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strategy {
    /// `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`: in-workspace symlinks work.
    Openat2,
    /// `openat(O_NOFOLLOW)` component by component: every symlink is refused.
    Walk,
}

impl Workspace {
    /// Opens `rel` beneath the root whose descriptor is `root` with the given strategy
    /// (`ENOSYS` switches to the walk).
    pub(super) fn open_rel(
        root: BorrowedFd<'_>,
        rel: &Path,
        flags: OFlags,
        mode: Mode,
        strategy: Strategy,
    ) -> Result<OwnedFd, Errno> {
        let rel = if rel.as_os_str().is_empty() { Path::new(".") } else { rel };
        match strategy {
            Strategy::Openat2 => {
                let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
                for _ in 0..EAGAIN_RETRIES {
                    match rustix::fs::openat2(root, rel, flags, mode, resolve) {
                        Err(Errno::AGAIN) => continue,
                        Err(Errno::NOSYS) => {
                            NO_OPENAT2.store(true, Ordering::Relaxed);
                            return walk(root, rel, flags, mode);
                        }
                        other => return other,
                    }
                }
                Err(Errno::AGAIN)
            }
            Strategy::Walk => walk(root, rel, flags, mode),
        }
    }

    /// Opens (creating what is missing) the directory `rel` beneath the root whose descriptor
    /// is `root`; returns its descriptor. Each missing component is made with `mkdirat` on its
    /// parent's descriptor.
    pub(super) fn create_dirs(root: BorrowedFd<'_>, rel: &Path, strategy: Strategy) -> Result<OwnedFd, Errno> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let mut prefix = PathBuf::new();
        let mut current = Self::open_rel(root, Path::new("."), flags, Mode::empty(), strategy)?;
        for component in rel.components() {
            let name = match component {
                Component::Normal(name) => name,
                Component::CurDir => continue,
                Component::ParentDir | Component::RootDir | Component::Prefix(_) => return Err(Errno::XDEV),
            };
            prefix.push(name);
            current = match Self::open_rel(root, &prefix, flags, Mode::empty(), strategy) {
                Ok(fd) => fd,
                Err(Errno::NOENT) => {
                    match rustix::fs::mkdirat(&current, name, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(e),
                    }
                    Self::open_rel(root, &prefix, flags, Mode::empty(), strategy)?
                }
                Err(e) => return Err(e),
            };
        }
        Ok(current)
    }
}

/// The strategy in force: `openat2` until the kernel said it lacks it.
pub(super) fn strategy() -> Strategy {
    if NO_OPENAT2.load(Ordering::Relaxed) { Strategy::Walk } else { Strategy::Openat2 }
}

/// The fallback: walks `rel` from `root` one component at a time, each with `O_NOFOLLOW`
/// (a symlink anywhere is `ELOOP`); `..` is refused (`EXDEV`).
pub(crate) fn walk(root: BorrowedFd<'_>, rel: &Path, flags: OFlags, mode: Mode) -> Result<OwnedFd, Errno> {
    let mut names = Vec::new();
    for component in rel.components() {
        match component {
            Component::Normal(name) => names.push(name),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => return Err(Errno::XDEV),
        }
    }
    let Some((last, dirs)) = names.split_last() else {
        return rustix::fs::openat(root, ".", flags, mode);
    };
    // `O_PATH | O_NOFOLLOW` opens a symlink itself instead of following it; its type, read
    // from the descriptor, decides.
    let dir_flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut current: Option<OwnedFd> = None;
    for name in dirs {
        let at = current.as_ref().map_or(root, AsFd::as_fd);
        let fd = rustix::fs::openat(at, *name, dir_flags, Mode::empty())?;
        match FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode) {
            FileType::Directory => current = Some(fd),
            FileType::Symlink => return Err(Errno::LOOP),
            _ => return Err(Errno::NOTDIR),
        }
    }
    let at = current.as_ref().map_or(root, AsFd::as_fd);
    let fd = match rustix::fs::openat(at, *last, flags | OFlags::NOFOLLOW, mode) {
        Ok(fd) => fd,
        // `O_DIRECTORY | O_NOFOLLOW` on a symlink says ENOTDIR; it is a refused link.
        Err(Errno::NOTDIR)
            if rustix::fs::statat(at, *last, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink) =>
        {
            return Err(Errno::LOOP);
        }
        Err(e) => return Err(e),
    };
    if flags.contains(OFlags::PATH) && FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode) == FileType::Symlink {
        return Err(Errno::LOOP);
    }
    Ok(fd)
}
