//! Race-free file access beneath the workspace root: the enforcement of the boundary.
//!
//! Contract:
//! - Every open starts from the root directory's descriptor (held by the [`Workspace`]) and
//!   resolves the path relative to it with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`.
//!   The kernel refuses, atomically with the open, any resolution that would leave the root
//!   (`..` above it, an absolute symlink, a relative symlink climbing out, `/proc` magic links):
//!   a symlink swapped in between a check and the open cannot lead outside.
//! - **Symlinks that stay inside the workspace keep working** (as they did before): the kernel
//!   follows them only while the resolution stays beneath the root, which is race-free. A
//!   dangling symlink is followed for a create only when its target lies beneath the root.
//! - Where the kernel lacks `openat2` (`ENOSYS`, Linux before 5.6) the path is walked one
//!   component at a time with `openat(O_NOFOLLOW)` and `mkdirat`; this fallback **refuses
//!   every symlink** on the way (it cannot tell a safe one from a swapped one), and `..`.
//! - What was opened is checked by its descriptor (`fstat`), never by name again: Read, Edit
//!   and Write accept regular files only. Files are opened `O_NONBLOCK`, so a FIFO refuses
//!   instead of blocking.
//! - An escape attempt (`EXDEV` from `RESOLVE_BENEATH`, `ELOOP` from a refused symlink) is
//!   [`OpenError::Escape`], which tools report as a workspace-boundary `permission_denied`.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use thiserror::Error;

use super::Workspace;

/// How often an `openat2` that failed with `EAGAIN` (a concurrent rename somewhere on the
/// system, which `RESOLVE_BENEATH` cannot rule out) is tried again.
const EAGAIN_RETRIES: usize = 64;

/// Set once the kernel answered `ENOSYS` to `openat2`: from then on the walk is used.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// Distinguishes temporary files of concurrent atomic replaces.
static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// What a file is opened for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenFor {
    /// An existing regular file, read-only.
    Read,
    /// An existing regular file, read and written in place.
    ReadWrite,
    /// A regular file written from its start and truncated; created, with missing parent
    /// directories, when absent.
    Replace,
    /// A regular file appended to; created, with missing parent directories, when absent.
    Append,
}

/// Whether the file was there before the open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// It existed.
    Existed,
    /// This open created it.
    Created,
}

/// How paths are resolved beneath the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strategy {
    /// `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`: in-workspace symlinks work.
    Openat2,
    /// `openat(O_NOFOLLOW)` component by component: every symlink is refused.
    Walk,
}

/// What kind of entry a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symlink (only reported by listings, which do not follow links).
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

impl EntryKind {
    fn from_file_type(t: FileType) -> Self {
        match t {
            FileType::RegularFile => EntryKind::File,
            FileType::Directory => EntryKind::Directory,
            FileType::Symlink => EntryKind::Symlink,
            FileType::Fifo
            | FileType::Socket
            | FileType::CharacterDevice
            | FileType::BlockDevice
            | FileType::Unknown => EntryKind::Other,
        }
    }
}

/// Why a race-free open failed.
#[derive(Debug, Error)]
pub enum OpenError {
    /// The resolution would leave the workspace (`..` above the root, a symlink pointing out,
    /// or — on kernels without `openat2` — any symlink).
    #[error("{path} is outside the workspace {root} (a symlink or `..` on the way leads out)")]
    Escape {
        /// The path as given.
        path: PathBuf,
        /// The workspace root.
        root: PathBuf,
    },
    /// Nothing at the path.
    #[error("{path} does not exist")]
    NotFound {
        /// The path.
        path: PathBuf,
    },
    /// A directory where a file was wanted.
    #[error("{path} is a directory")]
    IsDirectory {
        /// The path.
        path: PathBuf,
    },
    /// Not a directory where one was wanted (also: a file in the middle of the path).
    #[error("{path} is not a directory")]
    NotDirectory {
        /// The path.
        path: PathBuf,
    },
    /// A FIFO, socket or device where a regular file was wanted.
    #[error("{path} is not a regular file")]
    NotRegular {
        /// The path.
        path: PathBuf,
    },
    /// Any other I/O error.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
}

/// Opens the root directory (`O_PATH`: no read permission needed, only a starting point).
pub(crate) fn open_root(root: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(root, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?)
}

impl Workspace {
    /// The root directory's descriptor.
    pub fn root_fd(&self) -> BorrowedFd<'_> {
        self.root_fd.as_fd()
    }

    /// Opens a file beneath the root for `how`, checking by descriptor that it is a regular
    /// file. `path` is absolute under the root (as [`Workspace::resolve`] returns it) or
    /// relative to the root.
    pub fn open_file(&self, path: &Path, how: OpenFor) -> Result<(File, Presence), OpenError> {
        self.open_file_with(path, how, strategy())
    }

    /// Reads a regular file beneath the root.
    pub fn read_file(&self, path: &Path) -> Result<Vec<u8>, OpenError> {
        let (mut file, _) = self.open_file(path, OpenFor::Read)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(|e| self.io(path, e))?;
        Ok(bytes)
    }

    /// Creates or replaces a regular file beneath the root (missing parents are created),
    /// writing through the opened descriptor.
    pub fn write_file(&self, path: &Path, content: &[u8]) -> Result<Presence, OpenError> {
        let (mut file, presence) = self.open_file(path, OpenFor::Replace)?;
        file.write_all(content).map_err(|e| self.io(path, e))?;
        Ok(presence)
    }

    /// Appends to a regular file beneath the root, creating it (and its parents) if needed.
    pub fn append_file(&self, path: &Path, content: &[u8]) -> Result<Presence, OpenError> {
        let (mut file, presence) = self.open_file(path, OpenFor::Append)?;
        file.write_all(content).map_err(|e| self.io(path, e))?;
        Ok(presence)
    }

    /// Rewrites an existing regular file in place through one descriptor: `update` gets the
    /// current bytes and returns the new ones with a value of its own (or an error of its
    /// own, which leaves the file as it was).
    pub fn update_file<T, E>(
        &self,
        path: &Path,
        update: impl FnOnce(Vec<u8>) -> Result<(Vec<u8>, T), E>,
    ) -> Result<Result<T, E>, OpenError> {
        let (mut file, _) = self.open_file(path, OpenFor::ReadWrite)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(|e| self.io(path, e))?;
        let (updated, value) = match update(bytes) {
            Ok(updated) => updated,
            Err(e) => return Ok(Err(e)),
        };
        file.set_len(0).map_err(|e| self.io(path, e))?;
        file.write_all_at(&updated, 0).map_err(|e| self.io(path, e))?;
        Ok(Ok(value))
    }

    /// Replaces a file atomically: a temporary file is written in the (race-free opened)
    /// parent directory, then renamed over the name with `renameat` on that directory's
    /// descriptor. Missing parents are created.
    pub fn replace_file_atomically(&self, path: &Path, content: &[u8]) -> Result<(), OpenError> {
        let rel = self.relative(path)?;
        let (Some(name), parent) = (rel.file_name(), rel.parent().unwrap_or(Path::new(""))) else {
            return Err(OpenError::IsDirectory { path: path.to_path_buf() });
        };
        let dir = self.create_dirs(parent, strategy()).map_err(|e| self.map(path, e))?;
        let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let mut tmp = OsString::from(".");
        tmp.push(name);
        tmp.push(format!(".tmp-{}-{n}", std::process::id()));
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&dir, tmp.as_os_str(), flags, Mode::from_raw_mode(0o666))
            .map_err(|e| self.map(path, e))?;
        let written = File::from(fd).write_all(content);
        let renamed = written
            .map_err(|e| self.io(path, e))
            .and_then(|()| rustix::fs::renameat(&dir, tmp.as_os_str(), &dir, name).map_err(|e| self.map(path, e)));
        if renamed.is_err() {
            let _ = rustix::fs::unlinkat(&dir, tmp.as_os_str(), rustix::fs::AtFlags::empty());
        }
        renamed
    }

    /// Creates a directory and its missing parents beneath the root (`mkdirat` on descriptors
    /// opened beneath the root).
    pub fn create_dir_all(&self, path: &Path) -> Result<(), OpenError> {
        let rel = self.relative(path)?;
        self.create_dirs(&rel, strategy()).map(drop).map_err(|e| self.map(path, e))
    }

    /// What the path names, following symlinks only while they stay beneath the root.
    pub fn kind(&self, path: &Path) -> Result<EntryKind, OpenError> {
        let rel = self.relative(path)?;
        let fd = self
            .open_rel(&rel, OFlags::PATH | OFlags::CLOEXEC, Mode::empty(), strategy())
            .map_err(|e| self.map(path, e))?;
        let stat = rustix::fs::fstat(&fd).map_err(|e| self.map(path, e))?;
        Ok(EntryKind::from_file_type(FileType::from_raw_mode(stat.st_mode)))
    }

    /// The entries of a directory beneath the root (names and kinds, links not followed;
    /// `.` and `..` left out), in no particular order.
    pub fn list_dir(&self, path: &Path) -> Result<Vec<(OsString, EntryKind)>, OpenError> {
        let rel = self.relative(path)?;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = self.open_rel(&rel, flags, Mode::empty(), strategy()).map_err(|e| self.map(path, e))?;
        let dir = rustix::fs::Dir::new(fd).map_err(|e| self.map(path, e))?;
        let mut entries = Vec::new();
        for entry in dir {
            let entry = entry.map_err(|e| self.map(path, e))?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            entries.push((OsStr::from_bytes(name).to_os_string(), EntryKind::from_file_type(entry.file_type())));
        }
        Ok(entries)
    }

    pub(crate) fn open_file_with(
        &self,
        path: &Path,
        how: OpenFor,
        strategy: Strategy,
    ) -> Result<(File, Presence), OpenError> {
        let rel = self.relative(path)?;
        let map = |e: Errno| self.map(path, e);
        let (fd, presence) = match how {
            OpenFor::Read | OpenFor::ReadWrite => {
                let access = if how == OpenFor::Read { OFlags::RDONLY } else { OFlags::RDWR };
                let flags = access | OFlags::NONBLOCK | OFlags::CLOEXEC;
                (self.open_rel(&rel, flags, Mode::empty(), strategy).map_err(map)?, Presence::Existed)
            }
            OpenFor::Replace | OpenFor::Append => {
                if let Some(parent) = rel.parent().filter(|p| !p.as_os_str().is_empty()) {
                    self.create_dirs(parent, strategy).map_err(map)?;
                }
                let mut flags = OFlags::WRONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
                if how == OpenFor::Append {
                    flags |= OFlags::APPEND;
                }
                match self.open_rel(&rel, flags, Mode::empty(), strategy) {
                    Ok(fd) => (fd, Presence::Existed),
                    Err(Errno::NOENT) => {
                        let fd = self
                            .open_rel(&rel, flags | OFlags::CREATE, Mode::from_raw_mode(0o666), strategy)
                            .map_err(map)?;
                        (fd, Presence::Created)
                    }
                    Err(e) => return Err(map(e)),
                }
            }
        };
        let stat = rustix::fs::fstat(&fd).map_err(map)?;
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => {}
            FileType::Directory => return Err(OpenError::IsDirectory { path: path.to_path_buf() }),
            _ => return Err(OpenError::NotRegular { path: path.to_path_buf() }),
        }
        let file = File::from(fd);
        if how == OpenFor::Replace {
            file.set_len(0).map_err(|e| self.io(path, e))?;
        }
        Ok((file, presence))
    }

    /// The path relative to the root: an absolute path must lie lexically under it.
    fn relative(&self, path: &Path) -> Result<PathBuf, OpenError> {
        if path.is_absolute() {
            path.strip_prefix(&self.root)
                .map(Path::to_path_buf)
                .map_err(|_| OpenError::Escape { path: path.to_path_buf(), root: self.root.clone() })
        } else {
            Ok(path.to_path_buf())
        }
    }

    /// Opens `rel` beneath the root with the given strategy (`ENOSYS` switches to the walk).
    fn open_rel(&self, rel: &Path, flags: OFlags, mode: Mode, strategy: Strategy) -> Result<OwnedFd, Errno> {
        let rel = if rel.as_os_str().is_empty() { Path::new(".") } else { rel };
        match strategy {
            Strategy::Openat2 => {
                let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
                for _ in 0..EAGAIN_RETRIES {
                    match rustix::fs::openat2(self.root_fd(), rel, flags, mode, resolve) {
                        Err(Errno::AGAIN) => continue,
                        Err(Errno::NOSYS) => {
                            NO_OPENAT2.store(true, Ordering::Relaxed);
                            return walk(self.root_fd(), rel, flags, mode);
                        }
                        other => return other,
                    }
                }
                Err(Errno::AGAIN)
            }
            Strategy::Walk => walk(self.root_fd(), rel, flags, mode),
        }
    }

    /// Opens (creating what is missing) the directory `rel` beneath the root; returns its
    /// descriptor. Each missing component is made with `mkdirat` on its parent's descriptor.
    fn create_dirs(&self, rel: &Path, strategy: Strategy) -> Result<OwnedFd, Errno> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let mut prefix = PathBuf::new();
        let mut current = self.open_rel(Path::new("."), flags, Mode::empty(), strategy)?;
        for component in rel.components() {
            let name = match component {
                Component::Normal(name) => name,
                Component::CurDir => continue,
                Component::ParentDir | Component::RootDir | Component::Prefix(_) => return Err(Errno::XDEV),
            };
            prefix.push(name);
            current = match self.open_rel(&prefix, flags, Mode::empty(), strategy) {
                Ok(fd) => fd,
                Err(Errno::NOENT) => {
                    match rustix::fs::mkdirat(&current, name, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(e),
                    }
                    self.open_rel(&prefix, flags, Mode::empty(), strategy)?
                }
                Err(e) => return Err(e),
            };
        }
        Ok(current)
    }

    fn map(&self, path: &Path, errno: Errno) -> OpenError {
        let path = path.to_path_buf();
        match errno {
            Errno::XDEV | Errno::LOOP => OpenError::Escape { path, root: self.root.clone() },
            Errno::NOENT => OpenError::NotFound { path },
            Errno::ISDIR => OpenError::IsDirectory { path },
            Errno::NOTDIR => OpenError::NotDirectory { path },
            // A FIFO opened for writing without a reader, or a device without its driver.
            Errno::NXIO | Errno::NODEV => OpenError::NotRegular { path },
            other => OpenError::Io { path, source: other.into() },
        }
    }

    fn io(&self, path: &Path, source: io::Error) -> OpenError {
        OpenError::Io { path: path.to_path_buf(), source }
    }
}

/// The strategy in force: `openat2` until the kernel said it lacks it.
fn strategy() -> Strategy {
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

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    struct Fixture {
        _inside: tempfile::TempDir,
        outside: tempfile::TempDir,
        ws: Workspace,
    }

    fn fixture() -> Fixture {
        let inside = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(outside.path().join("secret"), "outside secret").expect("write");
        let ws = Workspace::new(inside.path()).expect("workspace");
        std::fs::create_dir(ws.root().join("dir")).expect("mkdir");
        std::fs::write(ws.root().join("dir/file"), "inside").expect("write");
        Fixture { _inside: inside, outside, ws }
    }

    fn is_escape<T: std::fmt::Debug>(r: Result<T, OpenError>) -> bool {
        matches!(r, Err(OpenError::Escape { .. }))
    }

    fn read(f: &Fixture, rel: &str, strategy: Strategy) -> Result<String, OpenError> {
        let (mut file, _) = f.ws.open_file_with(Path::new(rel), OpenFor::Read, strategy)?;
        let mut s = String::new();
        file.read_to_string(&mut s).expect("read");
        Ok(s)
    }

    #[test]
    fn open_beneath_reads_a_file_by_absolute_or_relative_path() {
        let f = fixture();
        assert_eq!(read(&f, "dir/file", Strategy::Openat2).expect("read"), "inside");
        assert_eq!(f.ws.read_file(&f.ws.root().join("dir/file")).expect("read"), b"inside");
        assert_eq!(read(&f, "dir/file", Strategy::Walk).expect("read"), "inside");
    }

    #[test]
    fn dotdot_above_the_root_is_an_escape() {
        let f = fixture();
        assert!(is_escape(read(&f, "../x", Strategy::Openat2)));
        assert!(is_escape(read(&f, "dir/../../x", Strategy::Openat2)));
        assert!(is_escape(read(&f, "../x", Strategy::Walk)));
        assert!(is_escape(f.ws.read_file(Path::new("/etc/passwd"))));
    }

    #[test]
    fn absolute_symlink_out_is_an_escape() {
        let f = fixture();
        symlink(f.outside.path().join("secret"), f.ws.root().join("abs")).expect("link");
        assert!(is_escape(read(&f, "abs", Strategy::Openat2)));
        assert!(is_escape(read(&f, "abs", Strategy::Walk)));
    }

    #[test]
    fn relative_symlink_out_is_an_escape() {
        let f = fixture();
        let target = PathBuf::from("..").join(f.outside.path().file_name().expect("name")).join("secret");
        symlink(&target, f.ws.root().join("rel")).expect("link");
        assert!(is_escape(read(&f, "rel", Strategy::Openat2)));
        assert!(is_escape(read(&f, "rel", Strategy::Walk)));
    }

    #[test]
    fn symlink_in_the_middle_leading_out_is_an_escape() {
        let f = fixture();
        symlink(f.outside.path(), f.ws.root().join("mid")).expect("link");
        assert!(is_escape(read(&f, "mid/secret", Strategy::Openat2)));
        assert!(is_escape(read(&f, "mid/secret", Strategy::Walk)));
        let write = f.ws.open_file_with(Path::new("mid/new"), OpenFor::Replace, Strategy::Openat2);
        assert!(is_escape(write));
        let write = f.ws.open_file_with(Path::new("mid/sub/new"), OpenFor::Replace, Strategy::Walk);
        assert!(is_escape(write));
        assert!(!f.outside.path().join("new").exists());
        assert!(!f.outside.path().join("sub").exists());
    }

    #[test]
    fn in_workspace_symlinks_work_with_openat2_and_are_refused_by_the_walk() {
        let f = fixture();
        symlink("dir", f.ws.root().join("inlink")).expect("link");
        symlink("../dir/file", f.ws.root().join("dir/filelink")).expect("link");
        assert_eq!(read(&f, "inlink/file", Strategy::Openat2).expect("read"), "inside");
        assert_eq!(read(&f, "dir/filelink", Strategy::Openat2).expect("read"), "inside");
        assert!(is_escape(read(&f, "inlink/file", Strategy::Walk)));
        assert!(is_escape(read(&f, "dir/filelink", Strategy::Walk)));
    }

    #[test]
    fn dangling_symlink_out_refuses_a_write_and_creates_nothing_outside() {
        let f = fixture();
        let target = f.outside.path().join("landed");
        symlink(&target, f.ws.root().join("dangling")).expect("link");
        assert!(is_escape(f.ws.open_file_with(Path::new("dangling"), OpenFor::Replace, Strategy::Openat2)));
        assert!(is_escape(f.ws.open_file_with(Path::new("dangling"), OpenFor::Replace, Strategy::Walk)));
        assert!(!target.exists());
        // A dangling link whose target is inside is created through (as before).
        symlink("dir/made", f.ws.root().join("inside_dangling")).expect("link");
        f.ws.write_file(Path::new("inside_dangling"), b"x").expect("write");
        assert_eq!(std::fs::read(f.ws.root().join("dir/made")).expect("read"), b"x");
    }

    #[test]
    fn fifo_is_refused_without_blocking() {
        let f = fixture();
        rustix::fs::mknodat(f.ws.root_fd(), "fifo", FileType::Fifo, Mode::from_raw_mode(0o644), 0).expect("mkfifo");
        for strategy in [Strategy::Openat2, Strategy::Walk] {
            let r = f.ws.open_file_with(Path::new("fifo"), OpenFor::Read, strategy);
            assert!(matches!(r, Err(OpenError::NotRegular { .. })), "{r:?}");
            let w = f.ws.open_file_with(Path::new("fifo"), OpenFor::Replace, strategy);
            assert!(matches!(w, Err(OpenError::NotRegular { .. })), "{w:?}");
        }
    }

    #[test]
    fn directories_are_refused_for_files_and_missing_files_are_not_found() {
        let f = fixture();
        assert!(matches!(f.ws.read_file(Path::new("dir")), Err(OpenError::IsDirectory { .. })));
        assert!(matches!(f.ws.write_file(Path::new("dir"), b"x"), Err(OpenError::IsDirectory { .. })));
        assert!(matches!(f.ws.read_file(Path::new("nope")), Err(OpenError::NotFound { .. })));
    }

    #[test]
    fn write_creates_parents_beneath_and_reports_presence() {
        let f = fixture();
        for strategy in [Strategy::Openat2, Strategy::Walk] {
            let path = format!("{strategy:?}/a/b/c.txt");
            let (mut file, presence) =
                f.ws.open_file_with(Path::new(&path), OpenFor::Replace, strategy).expect("create");
            file.write_all(b"long content").expect("write");
            assert_eq!(presence, Presence::Created);
            let (mut file, presence) =
                f.ws.open_file_with(Path::new(&path), OpenFor::Replace, strategy).expect("replace");
            file.write_all(b"short").expect("write");
            assert_eq!(presence, Presence::Existed);
            assert_eq!(std::fs::read(f.ws.root().join(&path)).expect("read"), b"short");
        }
    }

    #[test]
    fn atomic_replace_and_update_go_through_descriptors() {
        let f = fixture();
        f.ws.replace_file_atomically(Path::new("m/n/key.md"), b"one").expect("replace");
        f.ws.replace_file_atomically(Path::new("m/n/key.md"), b"two").expect("replace");
        assert_eq!(f.ws.read_file(Path::new("m/n/key.md")).expect("read"), b"two");
        let names: Vec<_> = f.ws.list_dir(Path::new("m/n")).expect("list").into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, vec![OsString::from("key.md")]);
        let r: Result<usize, ()> =
            f.ws.update_file(Path::new("m/n/key.md"), |b| Ok(([b, b"!".to_vec()].concat(), 1))).expect("open");
        assert_eq!(r, Ok(1));
        assert_eq!(f.ws.read_file(Path::new("m/n/key.md")).expect("read"), b"two!");
        symlink(f.outside.path(), f.ws.root().join("m/out")).expect("link");
        assert!(is_escape(f.ws.replace_file_atomically(Path::new("m/out/key.md"), b"x")));
        assert!(!f.outside.path().join("key.md").exists());
    }
}
