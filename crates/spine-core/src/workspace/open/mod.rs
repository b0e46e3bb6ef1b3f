//! Race-free file access beneath the workspace roots: the enforcement of the boundary.
//!
//! Contract:
//! - Every open starts from the descriptor of one root directory (held by the [`Workspace`]):
//!   a relative path is beneath the primary root, an absolute one beneath the (outermost) root
//!   that lexically contains it — a path under no root is [`OpenError::Escape`] — and the path
//!   is resolved relative to that descriptor with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`.
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
//!
//! This module holds the public operations; `beneath` resolves a path under the root's
//! descriptor (`openat2`, or the component walk).

mod beneath;
#[cfg(test)]
mod tests;

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;
use thiserror::Error;

pub(crate) use beneath::Strategy;
use beneath::strategy;

use super::Workspace;

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

/// What kind of entry a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory (a file operation on it is [`OpenError::IsDirectory`]).
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
    /// or — on kernels without `openat2` — any symlink), or the path lies under no root.
    #[error("{path} is outside the workspace {} (a symlink or `..` on the way leads out)", super::show_roots(roots))]
    Escape {
        /// The path as given.
        path: PathBuf,
        /// The workspace roots, the primary root first.
        roots: Vec<PathBuf>,
    },
    /// Nothing at the path.
    #[error("{path} does not exist")]
    NotFound {
        /// The path as given.
        path: PathBuf,
    },
    /// A directory where a file was wanted.
    #[error("{path} is a directory")]
    IsDirectory {
        /// The path as given.
        path: PathBuf,
    },
    /// Not a directory where one was wanted (also: a file in the middle of the path).
    #[error("{path} is not a directory")]
    NotDirectory {
        /// The path as given.
        path: PathBuf,
    },
    /// A FIFO, socket or device where a regular file was wanted.
    #[error("{path} is not a regular file")]
    NotRegular {
        /// The path as given.
        path: PathBuf,
    },
    /// Any other I/O error.
    #[error("{path}: {source}")]
    Io {
        /// The path as given.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: io::Error,
    },
}

/// Opens the root directory (`O_PATH`: no read permission needed, only a starting point).
pub(crate) fn open_root(root: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(root, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?)
}

/// Reads the regular file `name` beneath the directory `dir`, which is opened as given, not
/// canonicalised (for one file of a directory found by listing, where a [`Workspace`] would
/// first cost a `realpath`). `name` is resolved as a workspace path is: a link leading out of
/// `dir` is refused.
pub fn read_beneath(dir: &Path, name: &Path) -> io::Result<Vec<u8>> {
    let root = open_root(dir)?;
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = Workspace::open_rel(root.as_fd(), name, flags, Mode::empty(), strategy()).map_err(|e| match e {
        Errno::XDEV | Errno::LOOP => io::Error::other(format!(
            "{} is outside {} (a symlink or `..` on the way leads out)",
            name.display(),
            dir.display()
        )),
        other => other.into(),
    })?;
    let mut file = File::from(fd);
    if !file.metadata()?.is_file() {
        return Err(io::Error::other(format!("{} is not a regular file", name.display())));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

impl Workspace {
    /// The primary root directory's descriptor.
    pub fn root_fd(&self) -> BorrowedFd<'_> {
        self.primary().fd.as_fd()
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
        let (root, rel) = self.relative(path)?;
        let (Some(name), parent) = (rel.file_name(), rel.parent().unwrap_or(Path::new(""))) else {
            return Err(OpenError::IsDirectory { path: path.to_path_buf() });
        };
        let dir = Self::create_dirs(root, parent, strategy()).map_err(|e| self.map(path, e))?;
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
        let (root, rel) = self.relative(path)?;
        Self::create_dirs(root, &rel, strategy()).map(drop).map_err(|e| self.map(path, e))
    }

    /// What the path names, following symlinks only while they stay beneath the root.
    pub fn kind(&self, path: &Path) -> Result<EntryKind, OpenError> {
        let (root, rel) = self.relative(path)?;
        let fd = Self::open_rel(root, &rel, OFlags::PATH | OFlags::CLOEXEC, Mode::empty(), strategy())
            .map_err(|e| self.map(path, e))?;
        let stat = rustix::fs::fstat(&fd).map_err(|e| self.map(path, e))?;
        Ok(EntryKind::from_file_type(FileType::from_raw_mode(stat.st_mode)))
    }

    /// The entries of a directory beneath the root (names and kinds, links not followed;
    /// `.` and `..` left out), in no particular order.
    pub fn list_dir(&self, path: &Path) -> Result<Vec<(OsString, EntryKind)>, OpenError> {
        let (root, rel) = self.relative(path)?;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = Self::open_rel(root, &rel, flags, Mode::empty(), strategy()).map_err(|e| self.map(path, e))?;
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
        let (root, rel) = self.relative(path)?;
        let map = |e: Errno| self.map(path, e);
        let (fd, presence) = match how {
            OpenFor::Read | OpenFor::ReadWrite => {
                let access = if how == OpenFor::Read { OFlags::RDONLY } else { OFlags::RDWR };
                let flags = access | OFlags::NONBLOCK | OFlags::CLOEXEC;
                (Self::open_rel(root, &rel, flags, Mode::empty(), strategy).map_err(map)?, Presence::Existed)
            }
            OpenFor::Replace | OpenFor::Append => {
                if let Some(parent) = rel.parent().filter(|p| !p.as_os_str().is_empty()) {
                    Self::create_dirs(root, parent, strategy).map_err(map)?;
                }
                let mut flags = OFlags::WRONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
                if how == OpenFor::Append {
                    flags |= OFlags::APPEND;
                }
                match Self::open_rel(root, &rel, flags, Mode::empty(), strategy) {
                    Ok(fd) => (fd, Presence::Existed),
                    Err(Errno::NOENT) => {
                        let fd =
                            Self::open_rel(root, &rel, flags | OFlags::CREATE, Mode::from_raw_mode(0o666), strategy)
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

    /// The root to open beneath and the path relative to it: a relative path is relative to
    /// the primary root; an absolute path must lie lexically under a root (the outermost one
    /// that contains it is used).
    fn relative(&self, path: &Path) -> Result<(BorrowedFd<'_>, PathBuf), OpenError> {
        if !path.is_absolute() {
            return Ok((self.root_fd(), path.to_path_buf()));
        }
        let escape = || OpenError::Escape { path: path.to_path_buf(), roots: self.root_paths() };
        let root = self.root_index(path).map(|i| &self.roots[i]).ok_or_else(escape)?;
        let rel = path.strip_prefix(&root.path).map_err(|_| escape())?;
        Ok((root.fd.as_fd(), rel.to_path_buf()))
    }

    fn map(&self, path: &Path, errno: Errno) -> OpenError {
        let path = path.to_path_buf();
        match errno {
            Errno::XDEV | Errno::LOOP => OpenError::Escape { path, roots: self.root_paths() },
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
