//! Confinement for the programs spine runs on the model's behalf.
//!
//! Spine starts each command through a re-exec helper, `spine __sandbox ENCODED-POLICY --
//! PROGRAM ARGS…` ([`Helper`] builds that line). The helper is a fresh, single-threaded
//! process: it confines itself with [`confine`], then runs the command as its child, which
//! inherits every layer, and exits like it ([`run_confined`], behind [`helper_main`]).
//!
//! # Layers, in the order they are applied
//!
//! 1. **User and mount namespace** (`userns`): the uid and gid map to themselves; the helper
//!    can mount inside, and a helper started by root loses root's power outside.
//! 2. **Mounts**: each `read_deny` directory is covered by an empty tmpfs (mode 000), each
//!    file by `/dev/null` (`nodev`, so opening it fails with EACCES); each existing
//!    `write_deny` path is bound read-only onto itself, the directories between it and its
//!    writable root pinned (bound onto themselves) so they cannot be renamed away; a private
//!    tmpfs on `/dev/shm`.
//! 3. **Protected paths that do not exist yet**: a name in a writable directory cannot be
//!    reserved without creating a placeholder on the machine (seen by the user and by
//!    concurrent sandboxes, which break when one removes it), so their creation is undone:
//!    after the command exits the helper removes whatever appeared at those paths and says
//!    so on stderr. Limit: during the command, and for a background process that outlives
//!    it, the path can exist.
//! 4. **Network namespace** for [`Network::Off`] and [`Network::Proxy`]: only a loopback
//!    (up when the command may use IP). For `Proxy`, a bridge thread started before the
//!    namespace (so it stays in the machine's) accepts on `127.0.0.1:PORT` inside and
//!    forwards each connection to spine's proxy (TCP or unix socket); the command gets
//!    `HTTP_PROXY` and friends pointing there. Not made when seccomp alone keeps the command
//!    off every network: network off, no local binding, no unix socket allowed, and Landlock
//!    scoping abstract unix sockets (ABI 6); seccomp then also refuses `bind` and netlink,
//!    which the namespace would have confined (Landlock goes before it in that case).
//! 5. **Landlock**: read everything, write only beneath `write_allow` and the terminal
//!    devices ([`WRITABLE_DEVICES`]); TCP connect limited to the bridge port (ABI 4); signals
//!    and abstract unix sockets scoped to the sandbox (ABI 6); unix socket paths limited to
//!    `allow_unix_sockets` (ABI 9). Root is confined like anyone.
//! 6. **No privileges at exec**: `SECBIT_NOROOT` (a root command gets no capabilities) and
//!    `no_new_privs` (no setuid, no file capabilities).
//! 7. **Seccomp**: EPERM for ptrace, mounts, namespaces, kernel attack surface, and socket
//!    families the policy excludes; ENOSYS for `clone3`, whose flags it cannot read. One
//!    filter, whose front decides most system calls by number in a few instructions.
//!
//! A layer the kernel lacks fails [`confine`] with an error naming it, unless the policy is
//! [`best_effort`](Policy::best_effort); [`Applied`] says what is in force
//! ([`Applied::profile`]: `workspace-write,net=off,landlock-v7,seccomp,userns`). [`probe()`]
//! and [`probe_with`] tell what this kernel offers; [`explain()`] turns a denial into a
//! sentence for the model. With [`TIMING_VARIABLE`] in its environment, the helper prints
//! what each of its phases cost.

// Unit tests link the dev-dependencies of every other target too; the lint checks the
// library's own list (see the workspace Cargo.toml).
#![cfg_attr(test, allow(unused_crate_dependencies))]
#![warn(missing_docs)]

pub mod applied;
pub mod error;
pub mod explain;
pub mod helper;
#[cfg(target_os = "linux")]
pub mod launcher;
#[cfg(target_os = "linux")]
pub(crate) mod linux;
pub mod policy;
pub mod probe;
pub mod protected;
pub mod run;
pub(crate) mod timing;

pub use applied::{Applied, Missing};
pub use error::{Layer, SandboxError};
pub use explain::{Operation, explain};
pub use helper::{Helper, SPINE_SUBCOMMAND};
pub use policy::{Network, Policy, PolicyError, ProxyUpstream, WRITABLE_DEVICES};
pub use probe::{Capabilities, Support, probe, probe_with};
pub use protected::MissingGuard;
pub use run::{helper_main, run_confined};
pub use timing::TIMING_VARIABLE;

/// Confines the calling process (and what it starts afterwards) to `policy`.
///
/// Must be called while the process has a single thread, before any runtime or thread
/// starts, and only once; it cannot be undone.
#[cfg(target_os = "linux")]
pub fn confine(policy: &Policy) -> Result<Applied, SandboxError> {
    linux::confine::confine(policy, &mut timing::Timing::default())
}

/// Confinement is only implemented on Linux.
#[cfg(not(target_os = "linux"))]
pub fn confine(_policy: &Policy) -> Result<Applied, SandboxError> {
    Err(SandboxError::UnsupportedOs)
}
