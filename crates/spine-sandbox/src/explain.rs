//! Explaining a denial: [`explain`] turns an errno and the path or operation that failed
//! into `Operation not permitted (sandbox: write outside the workspace)`.
//!
//! Contract: the explanation comes from the policy alone (the kernel does not say which
//! layer refused), so it is a diagnosis: `None` when the errno is not one the sandbox causes
//! or when the policy would have allowed the operation (then the sandbox is not the cause).
//! Paths are compared as given and, when they resolve, canonicalised (the policy's paths
//! too), so a symlink into a protected place is explained like the place itself.

use std::path::{Path, PathBuf};

use nix::libc;

use crate::policy::{Network, Policy};

/// What the command tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation<'a> {
    /// Opening, listing or executing `path`.
    Read(&'a Path),
    /// Creating, writing, renaming or removing `path`.
    Write(&'a Path),
    /// Opening a network connection or creating an IP socket.
    Connect,
    /// Binding or listening on a port.
    Bind,
    /// Creating or connecting to a unix socket (at `path` when known).
    UnixSocket(Option<&'a Path>),
    /// A system call the sandbox forbids, by name (`ptrace`, `mount`, `unshare`…).
    Syscall(&'a str),
}

/// `ERRNO-TEXT (sandbox: REASON)` when the policy explains the failure.
pub fn explain(policy: &Policy, errno: i32, operation: Operation<'_>) -> Option<String> {
    let text = match errno {
        libc::EACCES => "Permission denied",
        libc::EPERM => "Operation not permitted",
        libc::EROFS => "Read-only file system",
        libc::EBUSY => "Device or resource busy",
        libc::ENETUNREACH => "Network is unreachable",
        libc::ECONNREFUSED => "Connection refused",
        _ => return None,
    };
    let reason = reason(policy, errno, operation)?;
    Some(format!("{text} (sandbox: {reason})"))
}

fn reason(policy: &Policy, errno: i32, operation: Operation<'_>) -> Option<String> {
    let network_errno = matches!(errno, libc::EPERM | libc::EACCES | libc::ENETUNREACH | libc::ECONNREFUSED);
    match operation {
        Operation::Read(path) => {
            let denied = beneath_any(path, &policy.read_deny)?;
            Some(format!("{} is hidden from commands", denied.display()))
        }
        Operation::Write(path) => {
            if let Some(denied) = beneath_any(path, &policy.read_deny) {
                return Some(format!("{} is hidden from commands", denied.display()));
            }
            if let Some(protected) = beneath_any(path, &policy.write_deny) {
                return Some(format!("{} is protected and read-only", protected.display()));
            }
            if writable(policy, path) {
                return None;
            }
            if path.starts_with("/tmp") || path.starts_with("/var/tmp") {
                return Some("write outside the workspace; the shared temp directory is read-only, use $TMPDIR".into());
            }
            Some("write outside the workspace".into())
        }
        Operation::Connect if network_errno => match &policy.network {
            Network::Off => Some("network access is off".into()),
            Network::Proxy { port, .. } => Some(format!("only the proxy at 127.0.0.1:{port} is reachable")),
            Network::Full => None,
        },
        Operation::Bind if network_errno && policy.network.is_restricted() && !policy.allow_local_binding => {
            Some("binding ports is not allowed".into())
        }
        Operation::UnixSocket(path) if network_errno && !policy.allow_all_unix_sockets => {
            let allowed = path.is_some_and(|path| beneath_any(path, &policy.allow_unix_sockets).is_some());
            (!allowed).then(|| "unix sockets are not allowed".into())
        }
        Operation::Syscall(name) if errno == libc::EPERM => Some(format!("{name} is not allowed")),
        _ => None,
    }
}

fn writable(policy: &Policy, path: &Path) -> bool {
    if policy.is_writable(path) {
        return true;
    }
    let resolved = resolve(path);
    policy.write_allow.iter().any(|root| resolved.starts_with(resolve(root)))
}

/// The entry of `list` that `path` is (or is beneath), lexically or once resolved.
fn beneath_any<'a>(path: &Path, list: &'a [PathBuf]) -> Option<&'a PathBuf> {
    let resolved = resolve(path);
    list.iter().find(|entry| path.starts_with(entry) || resolved.starts_with(resolve(entry)))
}

/// `path` canonicalised, or its nearest existing ancestor canonicalised and the rest joined.
fn resolve(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut current = path;
    loop {
        if let Ok(canonical) = current.canonicalize() {
            return rest.iter().rev().fold(canonical, |acc, part| acc.join(part));
        }
        match (current.parent(), current.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                current = parent;
            }
            _ => return path.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::ProxyUpstream;

    fn policy() -> Policy {
        Policy {
            read_deny: vec!["/home/u/.ssh".into()],
            write_allow: vec!["/work/repo".into(), "/tmp/spine-7".into()],
            write_deny: vec!["/work/repo/.git/hooks".into()],
            ..Policy::default()
        }
    }

    #[test]
    fn writes_are_explained_by_the_rule_that_refused_them() {
        let p = policy();
        let outside = explain(&p, libc::EACCES, Operation::Write(Path::new("/etc/passwd")));
        assert_eq!(outside.as_deref(), Some("Permission denied (sandbox: write outside the workspace)"));
        let tmp = explain(&p, libc::EACCES, Operation::Write(Path::new("/tmp/outside")));
        assert_eq!(
            tmp.as_deref(),
            Some(
                "Permission denied (sandbox: write outside the workspace; the shared temp directory is read-only, use $TMPDIR)"
            )
        );
        let hook = explain(&p, libc::EROFS, Operation::Write(Path::new("/work/repo/.git/hooks/pre-commit")));
        assert_eq!(
            hook.as_deref(),
            Some("Read-only file system (sandbox: /work/repo/.git/hooks is protected and read-only)")
        );
        assert_eq!(explain(&p, libc::EACCES, Operation::Write(Path::new("/work/repo/src/main.rs"))), None);
        assert_eq!(explain(&p, libc::EACCES, Operation::Write(Path::new("/tmp/spine-7/x"))), None);
        assert_eq!(explain(&p, libc::ENOENT, Operation::Write(Path::new("/etc/passwd"))), None);
    }

    #[test]
    fn reads_network_and_syscalls_are_explained() {
        let p = policy();
        let ssh = explain(&p, libc::EACCES, Operation::Read(Path::new("/home/u/.ssh/id_ed25519")));
        assert_eq!(ssh.as_deref(), Some("Permission denied (sandbox: /home/u/.ssh is hidden from commands)"));
        assert_eq!(explain(&p, libc::EACCES, Operation::Read(Path::new("/etc/hosts"))), None);
        let off = explain(&p, libc::EPERM, Operation::Connect);
        assert_eq!(off.as_deref(), Some("Operation not permitted (sandbox: network access is off)"));
        let proxy =
            Policy { network: Network::Proxy { http: ProxyUpstream::Unix("/s".into()), port: 3128 }, ..p.clone() };
        let via = explain(&proxy, libc::ENETUNREACH, Operation::Connect);
        assert_eq!(
            via.as_deref(),
            Some("Network is unreachable (sandbox: only the proxy at 127.0.0.1:3128 is reachable)")
        );
        assert_eq!(explain(&Policy { network: Network::Full, ..p.clone() }, libc::EPERM, Operation::Connect), None);
        let ptrace = explain(&p, libc::EPERM, Operation::Syscall("ptrace"));
        assert_eq!(ptrace.as_deref(), Some("Operation not permitted (sandbox: ptrace is not allowed)"));
        let unix = explain(&p, libc::EPERM, Operation::UnixSocket(Some(Path::new("/run/docker.sock"))));
        assert_eq!(unix.as_deref(), Some("Operation not permitted (sandbox: unix sockets are not allowed)"));
    }
}
