//! The mount layer: hiding `read_deny` paths, making existing `write_deny` paths read-only,
//! and a private `/dev/shm`.
//!
//! Contract: [`apply`] runs inside the helper's own mount namespace (after
//! [`userns::enter`](super::userns::enter)) and changes nothing outside it: the whole tree is
//! made private first, so no mount propagates back to the machine.
//!
//! - A hidden directory is covered by an empty read-only tmpfs with mode 000 (listing it or
//!   opening anything in it fails with EACCES for a non-root user; root sees it empty).
//! - A hidden file is covered by `/dev/null` bound read-only and `nodev`, so opening it fails
//!   with EACCES for everyone.
//! - A protected (`write_deny`) path that exists is bound onto itself read-only (EROFS for
//!   writes, EBUSY for rename and unlink). Each directory between its writable root and it is
//!   bound onto itself read-write ("pinned"), so that it cannot be renamed away and replaced
//!   by a fresh, writable copy (`mv .claude x && mkdir .claude`).
//! - Protected paths that do not exist are returned to the caller, which undoes their
//!   creation after the command ([`MissingGuard`](crate::MissingGuard)); a missing name in a
//!   writable directory cannot be reserved without creating it on the machine.
//!
//! Symlinks are followed: a protected or hidden symlink protects or hides its target.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use nix::mount::{MsFlags, mount};
use nix::sys::statvfs::{FsFlags, statvfs};

use crate::error::{Layer, SandboxError};
use crate::policy::Policy;
use crate::timing::Timing;

/// What the mount layer did.
#[derive(Debug, Default)]
pub(crate) struct MountOutcome {
    /// `write_deny` paths that did not exist: their creation is undone after the command.
    pub missing_protected: Vec<PathBuf>,
    /// Whether `/dev/shm` is a private tmpfs (then it is writable).
    pub private_shm: bool,
    /// How many mounts were made.
    pub mounts: usize,
}

/// Applies the mount layer for `policy`; `roots` are the canonical writable roots.
pub(crate) fn apply(policy: &Policy, roots: &[PathBuf], timing: &mut Timing) -> Result<MountOutcome, SandboxError> {
    let mut outcome = MountOutcome::default();
    mount(None::<&str>, "/", None::<&str>, MsFlags::MS_REC | MsFlags::MS_PRIVATE, None::<&str>)
        .map_err(|e| SandboxError::os(Layer::Mounts, "cannot make the mount tree private", e))?;
    timing.mark("mount:private");

    if Path::new("/dev/shm").is_dir() {
        let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
        mount(Some("tmpfs"), "/dev/shm", Some("tmpfs"), flags, Some("mode=1777"))
            .map_err(|e| SandboxError::os(Layer::Mounts, "cannot mount a private /dev/shm", e))?;
        outcome.private_shm = true;
        outcome.mounts += 1;
        timing.mark("mount:/dev/shm");
    }

    let mut protected = Vec::new();
    for path in &policy.write_deny {
        match path.symlink_metadata() {
            Ok(_) => protected.push(canonical(path)?),
            Err(_) => outcome.missing_protected.push(path.clone()),
        }
    }
    let pins = pins(&protected, roots);
    timing.mark("mount:plan");
    for dir in by_depth(pins) {
        bind(&dir, &dir, false)?;
        outcome.mounts += 1;
        timing.mark_with(|| format!("mount:pin:{}", dir.display()));
    }
    for path in by_depth(protected.into_iter().collect()) {
        bind(&path, &path, true)?;
        outcome.mounts += 1;
        timing.mark_with(|| format!("mount:protect:{}", path.display()));
    }

    let mut hidden = BTreeSet::new();
    for path in &policy.read_deny {
        if path.symlink_metadata().is_ok() {
            hidden.insert(canonical(path)?);
        }
    }
    for path in by_depth(hidden) {
        hide(&path)?;
        outcome.mounts += 1;
        timing.mark_with(|| format!("mount:hide:{}", path.display()));
    }
    Ok(outcome)
}

fn canonical(path: &Path) -> Result<PathBuf, SandboxError> {
    path.canonicalize().map_err(|source| SandboxError::Path { path: path.to_owned(), source })
}

/// The directories strictly between each protected path and the writable root holding it.
fn pins(protected: &[PathBuf], roots: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut pins = BTreeSet::new();
    for path in protected {
        let Some(root) = roots.iter().filter(|root| path.starts_with(root)).max_by_key(|root| root.as_os_str().len())
        else {
            continue;
        };
        let mut dir = path.parent();
        while let Some(current) = dir {
            if current == root.as_path() || !current.starts_with(root) {
                break;
            }
            pins.insert(current.to_owned());
            dir = current.parent();
        }
    }
    pins
}

/// Shallowest first, so a deeper mount lands on top of a shallower one.
fn by_depth(paths: BTreeSet<PathBuf>) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = paths.into_iter().collect();
    paths.sort_by_key(|path| path.components().count());
    paths
}

fn bind(source: &Path, target: &Path, read_only: bool) -> Result<(), SandboxError> {
    let what = if read_only { "cannot make read-only" } else { "cannot pin" };
    let fail = |e: nix::errno::Errno| SandboxError::os(Layer::Mounts, format!("{what} {}", target.display()), e);
    mount(Some(source), target, None::<&str>, MsFlags::MS_BIND | MsFlags::MS_REC, None::<&str>).map_err(fail)?;
    if read_only {
        remount_read_only(target, MsFlags::empty()).map_err(fail)?;
    }
    Ok(())
}

/// Remounts the bind mount at `target` read-only, keeping the flags the kernel locks for a
/// mount inherited from a more privileged namespace (changing them would fail with EPERM).
fn remount_read_only(target: &Path, extra: MsFlags) -> nix::Result<()> {
    let current = statvfs(target)?.flags();
    let mut flags = MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | extra;
    for (st, ms) in [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if current.contains(st) {
            flags |= ms;
        }
    }
    mount(None::<&str>, target, None::<&str>, flags, None::<&str>)
}

fn hide(path: &Path) -> Result<(), SandboxError> {
    let fail = |e: nix::errno::Errno| SandboxError::os(Layer::Mounts, format!("cannot hide {}", path.display()), e);
    if path.is_dir() {
        let flags = MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
        mount(Some("tmpfs"), path, Some("tmpfs"), flags, Some("mode=000,size=4k,nr_inodes=1")).map_err(fail)
    } else {
        mount(Some("/dev/null"), path, None::<&str>, MsFlags::MS_BIND, None::<&str>).map_err(fail)?;
        remount_read_only(path, MsFlags::MS_NODEV | MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC).map_err(fail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_are_the_directories_between_root_and_protected_path() {
        let roots = vec![PathBuf::from("/w"), PathBuf::from("/w/sub")];
        let protected =
            vec![PathBuf::from("/w/.claude/hooks"), PathBuf::from("/w/sub/a/b/.mcp.json"), "/elsewhere/x".into()];
        let pins: Vec<PathBuf> = pins(&protected, &roots).into_iter().collect();
        assert_eq!(pins, vec![PathBuf::from("/w/.claude"), "/w/sub/a".into(), "/w/sub/a/b".into()]);
    }

    #[test]
    fn deeper_paths_are_mounted_last() {
        let paths: BTreeSet<PathBuf> = ["/a/b/c", "/a", "/z/y"].into_iter().map(PathBuf::from).collect();
        assert_eq!(by_depth(paths), vec![PathBuf::from("/a"), "/z/y".into(), "/a/b/c".into()]);
    }
}
