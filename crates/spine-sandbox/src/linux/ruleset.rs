//! The Landlock layer: read everywhere, write only beneath the writable roots and the
//! terminal devices; TCP ports, signal and abstract-socket scoping, unix socket paths.
//!
//! Contract: [`restrict`] enforces one ruleset on the calling thread (and so on everything
//! it starts afterwards), with `no_new_privs` set. Landlock only ever adds permissions
//! beneath a rule, so protected paths inside writable roots are the mount layer's job. The
//! features are asked for by the kernel's ABI: what the running kernel lacks is returned as
//! missing layers (fs rules need ABI 1, TCP ports ABI 4, scopes ABI 6, unix socket paths
//! ABI 9) instead of being silently dropped. Root is confined like anyone: Landlock does not
//! care about capabilities or file ownership.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope,
};

use crate::error::{Layer, SandboxError};
use crate::policy::WRITABLE_DEVICES;

/// The newest ABI whose filesystem rights this crate was tested with.
const FS_ABI: ABI = ABI::V8;

/// What to enforce.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// Canonical writable roots.
    pub writable: Vec<PathBuf>,
    /// `Some(paths)`: connecting to pathname unix sockets is allowed only for these paths.
    pub unix_sockets: Option<Vec<PathBuf>>,
    /// `Some`: TCP is handled; only these connect ports are allowed (and binding is too
    /// when `bind` is true).
    pub tcp: Option<Tcp>,
    /// Refuse connecting to abstract unix sockets created outside the sandbox.
    pub scope_abstract_unix: bool,
}

/// The TCP part of a [`Plan`].
#[derive(Debug, Default)]
pub(crate) struct Tcp {
    /// Ports the command may connect to.
    pub connect: Vec<u16>,
    /// Whether the command may bind any port.
    pub bind: bool,
}

/// What was enforced.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// The kernel's Landlock ABI.
    pub abi: i32,
    /// Features of the plan the kernel lacks: the layer and why.
    pub missing: Vec<(Layer, String)>,
}

/// Enforces `plan` on the calling thread; `abi` is the kernel's Landlock ABI (0: none).
pub(crate) fn restrict(plan: &Plan, abi: i32) -> Result<Outcome, SandboxError> {
    if abi < 1 {
        return Err(SandboxError::Unavailable {
            layer: Layer::Landlock,
            reason: "the kernel has no Landlock (needs Linux 5.13 with landlock in the lsm= list)".into(),
        });
    }
    let mut missing = Vec::new();
    let mut handled_fs = AccessFs::from_all(FS_ABI);
    let unix = plan.unix_sockets.as_ref().filter(|_| {
        let enforce = abi >= 9;
        if !enforce {
            missing.push((Layer::LandlockUnixSockets, format!("needs Landlock ABI 9, the kernel has {abi}")));
        }
        enforce
    });
    if unix.is_some() {
        handled_fs |= AccessFs::ResolveUnix;
    }
    let mut ruleset = Ruleset::default().set_compatibility(CompatLevel::BestEffort).handle_access(handled_fs)?;
    if let Some(tcp) = &plan.tcp {
        if abi >= 4 {
            let mut handled = BitFlags::from(AccessNet::ConnectTcp);
            if !tcp.bind {
                handled |= AccessNet::BindTcp;
            }
            ruleset = ruleset.handle_access(handled)?;
        } else {
            missing.push((Layer::LandlockNetwork, format!("TCP rules need Landlock ABI 4, the kernel has {abi}")));
        }
    }
    if abi >= 6 {
        let mut scopes = BitFlags::from(Scope::Signal);
        if plan.scope_abstract_unix {
            scopes |= Scope::AbstractUnixSocket;
        }
        ruleset = ruleset.scope(scopes)?;
    } else {
        missing.push((
            Layer::LandlockScopes,
            format!("signal and socket scopes need Landlock ABI 6, the kernel has {abi}"),
        ));
    }

    let mut created = ruleset.create()?.add_rule(path_rule(Path::new("/"), AccessFs::from_read(FS_ABI))?)?;
    let writable = AccessFs::from_all(FS_ABI);
    for root in &plan.writable {
        created = created.add_rule(path_rule(root, writable)?)?;
    }
    created = add_devices(created)?;
    if let Some(sockets) = unix {
        for socket in sockets.iter().filter(|socket| socket.exists()) {
            created = created.add_rule(path_rule(socket, AccessFs::ResolveUnix)?)?;
        }
    }
    if let (Some(tcp), true) = (&plan.tcp, abi >= 4) {
        for port in &tcp.connect {
            created = created.add_rule(NetPort::new(*port, AccessNet::ConnectTcp))?;
        }
    }
    let status = created.no_new_privs(true).restrict_self()?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(SandboxError::Unavailable {
            layer: Layer::Landlock,
            reason: "the kernel accepted no rule of the ruleset".into(),
        });
    }
    Ok(Outcome { abi, missing })
}

fn add_devices(mut created: RulesetCreated) -> Result<RulesetCreated, SandboxError> {
    for device in WRITABLE_DEVICES.iter().map(Path::new) {
        let access = if device.is_dir() {
            AccessFs::from_all(FS_ABI)
        } else if device.exists() {
            AccessFs::from_file(FS_ABI)
        } else {
            continue;
        };
        created = created.add_rule(path_rule(device, access)?)?;
    }
    Ok(created)
}

fn path_rule(path: &Path, access: impl Into<BitFlags<AccessFs>>) -> Result<PathBeneath<PathFd>, SandboxError> {
    let fd = PathFd::new(path).map_err(|source| SandboxError::LandlockPath { path: path.to_owned(), source })?;
    Ok(PathBeneath::new(fd, access.into()))
}

impl From<landlock::RulesetError> for SandboxError {
    fn from(error: landlock::RulesetError) -> Self {
        Self::Landlock(error)
    }
}

/// The kernel's Landlock ABI version, 0 when Landlock is missing or disabled; with the reason
/// in words in the latter case.
pub(crate) fn kernel_abi() -> (i32, Option<&'static str>) {
    use landlock::{LandlockStatus, RestrictSelf};
    // No flags and no no_new_privs: this only asks the kernel for its ABI version.
    match RestrictSelf::default().no_new_privs(false).apply().map(|status| status.landlock) {
        Ok(LandlockStatus::Available { effective_abi, kernel_abi }) => {
            (kernel_abi.unwrap_or(effective_abi as i32), None)
        }
        Ok(LandlockStatus::NotEnabled) => (0, Some("Landlock is built in but not enabled (add landlock to lsm=)")),
        Ok(LandlockStatus::NotImplemented) => (0, Some("the kernel is built without Landlock")),
        Err(_) => (0, Some("the Landlock ABI query failed")),
    }
}
