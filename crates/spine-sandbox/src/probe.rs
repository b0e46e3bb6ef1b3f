//! What this kernel offers: [`probe`] and [`probe_with`] give [`Capabilities`] for
//! `spine doctor` and for honest one-line warnings.
//!
//! Contract: probing changes nothing in the calling process. Landlock's ABI is asked of the
//! kernel; seccomp is read from `/proc/self/status` and `/proc/sys/kernel/seccomp`; user
//! namespaces from the sysctls that forbid them (`kernel.unprivileged_userns_clone`,
//! `user.max_user_namespaces`, `kernel.apparmor_restrict_unprivileged_userns`) and, with
//! [`probe_with`], by a real trial: the helper is started with [`PROBE_ARGUMENT`] and, in
//! that fresh process, enters a user, mount and network namespace, makes the mount tree
//! private and brings the loopback up: the same steps as [`confine`](crate::confine). An
//! AppArmor policy that lets the namespace be created but not used fails there too.

use std::fs;
use std::process::{ExitCode, Stdio};

use serde::Serialize;

use crate::helper::Helper;
use crate::run::PROBE_ARGUMENT;

/// Whether one feature is usable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "detail", rename_all = "snake_case")]
pub enum Support {
    /// Usable (the detail says what was checked).
    Available(String),
    /// Not usable, and why.
    Unavailable(String),
    /// Nothing proves it either way (e.g. the trial was not run), and what is known.
    Unknown(String),
}

impl Support {
    /// Whether the feature is usable.
    pub fn is_available(&self) -> bool {
        matches!(self, Self::Available(_))
    }

    fn word(&self) -> &str {
        match self {
            Self::Available(detail) | Self::Unavailable(detail) | Self::Unknown(detail) => detail,
        }
    }
}

/// What this kernel offers the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Capabilities {
    /// The kernel release (`uname -r`).
    pub kernel: String,
    /// The Landlock ABI version, 0 when there is none.
    pub landlock_abi: i32,
    /// Landlock.
    pub landlock: Support,
    /// Seccomp filters.
    pub seccomp: Support,
    /// Unprivileged user namespaces (with mount and network namespaces in them).
    pub user_namespaces: Support,
}

impl Capabilities {
    /// One line: `landlock v7, seccomp, user namespaces` or what is missing and why.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        parts.push(match &self.landlock {
            Support::Available(_) => format!("landlock v{}", self.landlock_abi),
            other => format!("no landlock ({})", other.word()),
        });
        parts.push(if self.seccomp.is_available() {
            "seccomp".to_owned()
        } else {
            format!("no seccomp ({})", self.seccomp.word())
        });
        parts.push(match &self.user_namespaces {
            Support::Available(_) => "user namespaces".to_owned(),
            Support::Unavailable(why) => format!("no user namespaces ({why})"),
            Support::Unknown(why) => format!("user namespaces untested ({why})"),
        });
        parts.join(", ")
    }

    /// Whether every layer is there: a strict policy can be enforced.
    pub fn is_complete(&self) -> bool {
        self.landlock.is_available() && self.seccomp.is_available() && self.user_namespaces.is_available()
    }
}

/// The kernel's offer, without starting a process: user namespaces are judged from the
/// sysctls only (at best [`Support::Unknown`] when nothing forbids them).
pub fn probe() -> Capabilities {
    let (landlock_abi, landlock) = landlock();
    let user_namespaces = match userns_sysctls() {
        Some(why) => Support::Unavailable(why),
        None => Support::Unknown("allowed by the sysctls, not tried".into()),
    };
    Capabilities { kernel: kernel_release(), landlock_abi, landlock, seccomp: seccomp(), user_namespaces }
}

/// [`probe`], plus a real trial of the namespaces in a fresh helper process.
pub fn probe_with(helper: &Helper) -> Capabilities {
    let mut capabilities = probe();
    if let Support::Unavailable(_) = capabilities.user_namespaces {
        return capabilities;
    }
    let mut command = helper.command_for([PROBE_ARGUMENT]);
    command.stdin(Stdio::null());
    capabilities.user_namespaces = match command.output() {
        Ok(output) if output.status.success() => {
            Support::Available("entered user, mount and network namespaces".into())
        }
        Ok(output) => {
            let said = String::from_utf8_lossy(&output.stderr);
            let line = said.lines().last().unwrap_or("the trial failed").trim_start_matches("spine sandbox: ");
            Support::Unavailable(line.to_owned())
        }
        Err(error) => Support::Unknown(format!("cannot start the helper: {error}")),
    };
    capabilities
}

fn kernel_release() -> String {
    fs::read_to_string("/proc/sys/kernel/osrelease").map(|s| s.trim().to_owned()).unwrap_or_else(|_| "unknown".into())
}

#[cfg(target_os = "linux")]
fn landlock() -> (i32, Support) {
    match crate::linux::ruleset::kernel_abi() {
        (abi, None) if abi > 0 => (abi, Support::Available(format!("ABI {abi}"))),
        (_, why) => (0, Support::Unavailable(why.unwrap_or("unknown").to_owned())),
    }
}

#[cfg(not(target_os = "linux"))]
fn landlock() -> (i32, Support) {
    (0, Support::Unavailable("not Linux".into()))
}

fn seccomp() -> Support {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    if !status.lines().any(|line| line.starts_with("Seccomp:")) {
        return Support::Unavailable("the kernel is built without seccomp".into());
    }
    match fs::read_to_string("/proc/sys/kernel/seccomp/actions_avail") {
        Ok(actions) if actions.split_whitespace().any(|action| action == "errno") => {
            Support::Available("filters with errno actions".into())
        }
        Ok(actions) => Support::Unavailable(format!("no errno action (actions: {})", actions.trim())),
        Err(_) => Support::Available("seccomp present (actions not listed)".into()),
    }
}

/// Why the sysctls forbid unprivileged user namespaces, if they do.
fn userns_sysctls() -> Option<String> {
    let read = |path: &str| fs::read_to_string(path).ok().map(|value| value.trim().to_owned());
    if read("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0") {
        return Some("kernel.unprivileged_userns_clone is 0".into());
    }
    if read("/proc/sys/user/max_user_namespaces").as_deref() == Some("0") {
        return Some("user.max_user_namespaces is 0".into());
    }
    if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").as_deref() == Some("1")
        && !nix::unistd::geteuid().is_root()
    {
        return Some("kernel.apparmor_restrict_unprivileged_userns is 1 (AppArmor)".into());
    }
    None
}

/// The helper's side of the trial ([`PROBE_ARGUMENT`]): exit 0 when the namespaces work.
pub(crate) fn trial_main() -> ExitCode {
    match trial() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("spine sandbox: {}", error.one_line());
            ExitCode::FAILURE
        }
    }
}

#[cfg(target_os = "linux")]
fn trial() -> Result<(), crate::SandboxError> {
    let mut timing = crate::timing::Timing::default();
    crate::linux::userns::enter(&mut timing)?;
    crate::linux::mounts::apply(&crate::Policy::default(), &[], &mut timing)?;
    crate::linux::netns::enter(true, &mut timing)
}

#[cfg(not(target_os = "linux"))]
fn trial() -> Result<(), crate::SandboxError> {
    Err(crate::SandboxError::UnsupportedOs)
}
