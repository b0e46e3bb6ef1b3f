//! The layers of confinement ([`Layer`]) and why confining failed ([`SandboxError`]).
//!
//! Contract: every error names the [`Layer`] it belongs to ([`SandboxError::layer`]), keeps
//! the OS or library error as its `source`, and [`SandboxError::one_line`] renders the whole
//! chain on one line for the helper's `spine sandbox:` message.

use std::fmt;
use std::io;
use std::path::PathBuf;

use serde::Serialize;

/// One layer of confinement, as named in profiles, errors and warnings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// A user namespace (and the mount namespace created with it): the base of the mount
    /// and network layers, and the end of the helper's privileges outside.
    UserNamespace,
    /// Mounts hiding `read_deny` paths and making existing `write_deny` paths read-only.
    Mounts,
    /// Undoing the creation of `write_deny` paths that did not exist.
    ProtectedPaths,
    /// A network namespace with only a loopback interface.
    NetworkNamespace,
    /// The forwarder from the sandbox's loopback to spine's proxy.
    ProxyBridge,
    /// Landlock: writes outside the writable roots, TCP ports, scopes.
    Landlock,
    /// Landlock's TCP port rules (ABI 4).
    LandlockNetwork,
    /// Landlock's scoping of abstract unix sockets and signals (ABI 6).
    LandlockScopes,
    /// Landlock's per-path rules for connecting to unix sockets (ABI 9).
    LandlockUnixSockets,
    /// `PR_SET_NO_NEW_PRIVS`.
    NoNewPrivs,
    /// The seccomp filter.
    Seccomp,
}

impl Layer {
    /// The short name used in profiles and messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::UserNamespace => "userns",
            Self::Mounts => "mounts",
            Self::ProtectedPaths => "protected-paths",
            Self::NetworkNamespace => "netns",
            Self::ProxyBridge => "proxy-bridge",
            Self::Landlock => "landlock",
            Self::LandlockNetwork => "landlock-net",
            Self::LandlockScopes => "landlock-scopes",
            Self::LandlockUnixSockets => "landlock-unix",
            Self::NoNewPrivs => "no_new_privs",
            Self::Seccomp => "seccomp",
        }
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why [`confine`](crate::confine) could not confine the process.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// The kernel (or its configuration) does not offer a layer the policy needs, and the
    /// policy is not best-effort.
    #[error("{layer}: unavailable: {reason}")]
    Unavailable {
        /// The missing layer.
        layer: Layer,
        /// What the kernel said, in words.
        reason: String,
    },
    /// Namespaces can only be entered by a single-threaded process.
    #[error("userns: the helper has {threads} threads; confine() must run before any thread starts")]
    NotSingleThreaded {
        /// How many threads the process had.
        threads: usize,
    },
    /// A namespace or mount step failed.
    #[error("{layer}: {what}")]
    Os {
        /// The layer the step belongs to.
        layer: Layer,
        /// The step, in words (with the path when there is one).
        what: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// A path named by the policy could not be opened for a Landlock rule.
    #[cfg(target_os = "linux")]
    #[error("landlock: cannot open {}", path.display())]
    LandlockPath {
        /// The path.
        path: PathBuf,
        /// The library's error.
        #[source]
        source: landlock::PathFdError,
    },
    /// Building or enforcing the Landlock ruleset failed.
    #[cfg(target_os = "linux")]
    #[error("landlock: cannot restrict the helper")]
    Landlock(#[source] landlock::RulesetError),
    /// Building the seccomp filter failed.
    #[cfg(target_os = "linux")]
    #[error("seccomp: cannot build the filter")]
    SeccompBuild(#[source] seccompiler::BackendError),
    /// Installing the seccomp filter failed.
    #[cfg(target_os = "linux")]
    #[error("seccomp: cannot install the filter")]
    Seccomp(#[source] seccompiler::Error),
    /// This operating system has no sandbox implementation.
    #[error("sandboxing is only implemented on Linux")]
    UnsupportedOs,
    /// A path given to the helper does not exist or could not be resolved.
    #[error("cannot resolve {}", path.display())]
    Path {
        /// The path.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

impl SandboxError {
    /// The layer this error belongs to.
    pub fn layer(&self) -> Layer {
        match self {
            Self::Unavailable { layer, .. } | Self::Os { layer, .. } => *layer,
            Self::NotSingleThreaded { .. } | Self::UnsupportedOs => Layer::UserNamespace,
            #[cfg(target_os = "linux")]
            Self::LandlockPath { .. } | Self::Landlock(_) => Layer::Landlock,
            #[cfg(target_os = "linux")]
            Self::SeccompBuild(_) | Self::Seccomp(_) => Layer::Seccomp,
            Self::Path { .. } => Layer::Mounts,
        }
    }

    /// The error and its sources, joined with `: ` on one line.
    pub fn one_line(&self) -> String {
        error_chain(self)
    }

    pub(crate) fn os(layer: Layer, what: impl Into<String>, source: impl Into<io::Error>) -> Self {
        Self::Os { layer, what: what.into(), source: source.into() }
    }
}

/// `error: source: source…` on one line.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_names_the_layer_and_keeps_the_source() {
        let error =
            SandboxError::os(Layer::Mounts, "cannot hide /home/u/.ssh", io::Error::from_raw_os_error(nix::libc::EPERM));
        assert_eq!(error.layer(), Layer::Mounts);
        let line = error.one_line();
        assert!(line.starts_with("mounts: cannot hide /home/u/.ssh: Operation not permitted"), "{line}");
        let unavailable =
            SandboxError::Unavailable { layer: Layer::Landlock, reason: "not built into the kernel".into() };
        assert_eq!(unavailable.one_line(), "landlock: unavailable: not built into the kernel");
    }
}
