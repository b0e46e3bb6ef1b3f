//! Entering a user namespace and a mount namespace, with the current uid and gid mapped to
//! themselves.
//!
//! Contract: [`enter`] is called once, by a single-threaded process. Afterwards the process
//! holds every capability inside its new user namespace (so it may mount) and none outside
//! it: a helper started by root loses root's power over the machine (modules, raw devices,
//! other namespaces), while files keep their owners since the ids map to themselves. Only
//! the caller's own uid and gid are mapped (a process cannot map more for itself), so files
//! of other users appear owned by `nobody` inside.

use std::fs;
use std::io;

use nix::sched::{CloneFlags, unshare};
use nix::unistd::{getegid, geteuid};

use crate::error::{Layer, SandboxError};
use crate::timing::Timing;

/// The number of threads of this process, from `/proc/self/status`.
pub(crate) fn thread_count() -> io::Result<usize> {
    let status = fs::read_to_string("/proc/self/status")?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("Threads:"))
        .and_then(|count| count.trim().parse().ok())
        .ok_or_else(|| io::Error::other("no Threads: line in /proc/self/status"))
}

/// Enters a new user namespace and a new mount namespace, mapping the effective uid and gid
/// to themselves.
pub(crate) fn enter(timing: &mut Timing) -> Result<(), SandboxError> {
    let threads = thread_count().map_err(|e| SandboxError::os(Layer::UserNamespace, "cannot count threads", e))?;
    if threads > 1 {
        return Err(SandboxError::NotSingleThreaded { threads });
    }
    let uid = geteuid().as_raw();
    let gid = getegid().as_raw();
    unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS)
        .map_err(|errno| SandboxError::Unavailable { layer: Layer::UserNamespace, reason: unshare_reason(errno) })?;
    timing.mark("userns.unshare");
    write_map("/proc/self/setgroups", "deny")?;
    write_map("/proc/self/uid_map", &format!("{uid} {uid} 1"))?;
    write_map("/proc/self/gid_map", &format!("{gid} {gid} 1"))?;
    timing.mark("userns.maps");
    Ok(())
}

fn write_map(path: &str, contents: &str) -> Result<(), SandboxError> {
    fs::write(path, contents)
        .map_err(|e| SandboxError::os(Layer::UserNamespace, format!("cannot write {contents:?} to {path}"), e))
}

/// Why `unshare(CLONE_NEWUSER)` failed, in words that point at the knob to turn.
pub(crate) fn unshare_reason(errno: nix::errno::Errno) -> String {
    match errno {
        nix::errno::Errno::EPERM => {
            "the kernel refuses unprivileged user namespaces (kernel.unprivileged_userns_clone=0, an AppArmor or \
             SELinux policy, or a container's seccomp profile)"
                .to_owned()
        }
        nix::errno::Errno::ENOSPC => "the user namespace limit is reached (user.max_user_namespaces)".to_owned(),
        nix::errno::Errno::EINVAL => "the process is multi-threaded or the kernel lacks CONFIG_USER_NS".to_owned(),
        other => format!("unshare(CLONE_NEWUSER|CLONE_NEWNS) failed: {}", io::Error::from(other)),
    }
}
