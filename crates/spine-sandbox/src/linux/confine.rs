//! [`confine`]: the helper confines itself, layer by layer, in the one order that works.
//!
//! Contract: called once by the single-threaded helper before it starts the command. The
//! order is forced by the kernel: the user namespace first (it needs a single thread and
//! gives the capabilities the mounts need), the mounts, the proxy bridge's connector thread
//! (it must stay in the machine's network namespace), the network namespace, the bridge's
//! listener (inside it), then Landlock, the end of root's capabilities at exec, and seccomp
//! last (it forbids `mount` and `unshare`). A layer the policy cannot be honoured without
//! fails the call with [`SandboxError::Unavailable`] naming it, unless the policy is
//! best-effort; hardening layers (Landlock scopes) are only ever reported as missing.

use std::path::PathBuf;

use rustix::thread::{CapabilitiesSecureBits, set_capabilities_secure_bits};

use super::bridge::Bridge;
use super::ruleset::{self, Plan, Tcp};
use super::seccomp::{self, Inet, SocketRules};
use super::{mounts, netns, userns};
use crate::applied::{Applied, Missing};
use crate::error::{Layer, SandboxError};
use crate::policy::{Network, Policy};
use crate::protected::MissingGuard;

/// Confines the calling process (and what it starts afterwards) to `policy`.
///
/// Must be called while the process has a single thread (before any runtime or thread is
/// started), and only once. See the crate documentation for each layer.
pub(crate) fn confine(policy: &Policy) -> Result<Applied, SandboxError> {
    let mut state = State { policy, applied: Applied::new(policy) };
    let roots: Vec<PathBuf> = policy.write_allow.iter().filter_map(|root| root.canonicalize().ok()).collect();
    let needs_mounts = !policy.read_deny.is_empty() || policy.write_deny.iter().any(|p| p.symlink_metadata().is_ok());

    let userns = match userns::enter() {
        Ok(()) => state.active(Layer::UserNamespace),
        Err(error @ SandboxError::NotSingleThreaded { .. }) => return Err(error),
        Err(error) => {
            state.fail(Layer::UserNamespace, error, needs_mounts)?;
            false
        }
    };

    let mut missing_protected: Vec<PathBuf> = MissingGuard::before(policy).paths().to_vec();
    let mut private_shm = false;
    if userns {
        match mounts::apply(policy, &roots) {
            Ok(outcome) => {
                state.applied.mounts = outcome.mounts;
                missing_protected = outcome.missing_protected;
                private_shm = outcome.private_shm;
                state.active(Layer::Mounts);
            }
            Err(error) => state.fail(Layer::Mounts, error, needs_mounts)?,
        }
    } else if needs_mounts {
        state.miss(Layer::Mounts, "needs a user namespace", true)?;
    }
    if !missing_protected.is_empty() {
        state.active(Layer::ProtectedPaths);
    }
    state.applied.guard = MissingGuard::new(missing_protected);

    let bridge = match &policy.network {
        Network::Proxy { http, .. } => Some(Bridge::start(http.clone())?),
        Network::Off | Network::Full => None,
    };
    let mut isolated = false;
    if policy.network.is_restricted() {
        if userns {
            match netns::enter() {
                Ok(()) => isolated = state.active(Layer::NetworkNamespace),
                // Without it, seccomp (off) or Landlock's TCP rules (proxy) still hold.
                Err(error) => state.fail(Layer::NetworkNamespace, error, false)?,
            }
        } else {
            state.miss(Layer::NetworkNamespace, "needs a user namespace", false)?;
        }
    }
    if let (Some(bridge), Network::Proxy { port, .. }) = (bridge, &policy.network) {
        // Outside a namespace of its own the bridge takes any free port of the machine's
        // loopback, and Landlock lets the command connect to that port only.
        let port = bridge.listen(if isolated { *port } else { 0 })?;
        state.applied.proxy_port = Some(port);
        state.active(Layer::ProxyBridge);
    }

    landlock(&mut state, &roots, private_shm, isolated)?;

    // A root command would get every capability of the user namespace at exec (of the
    // machine's, without one); SECBIT_NOROOT gives it none. Others get none anyway.
    let no_root = CapabilitiesSecureBits::NO_ROOT | CapabilitiesSecureBits::NO_ROOT_LOCKED;
    if let Err(error) = set_capabilities_secure_bits(no_root)
        && nix::unistd::geteuid().is_root()
    {
        let error = SandboxError::os(Layer::NoNewPrivs, "cannot set SECBIT_NOROOT", error);
        state.fail(Layer::NoNewPrivs, error, false)?;
    }
    let sockets = SocketRules {
        inet: inet_rule(policy, isolated),
        unix: !policy.restricts_unix_sockets() || !policy.allow_unix_sockets.is_empty(),
    };
    match seccomp::install(sockets) {
        Ok(()) => {
            state.active(Layer::NoNewPrivs);
            state.active(Layer::Seccomp);
        }
        Err(error) => state.fail(Layer::Seccomp, error, true)?,
    }
    Ok(state.applied)
}

fn landlock(state: &mut State<'_>, roots: &[PathBuf], private_shm: bool, isolated: bool) -> Result<(), SandboxError> {
    let policy = state.policy;
    let mut writable = roots.to_vec();
    if private_shm {
        writable.push("/dev/shm".into());
    }
    let unix_sockets = (policy.restricts_unix_sockets() && !policy.allow_unix_sockets.is_empty())
        .then(|| policy.allow_unix_sockets.clone());
    // With a namespace of its own, local binding makes TCP rules pointless: only the
    // sandbox's own loopback is there.
    let tcp = (policy.network.is_restricted() && !(isolated && policy.allow_local_binding))
        .then(|| Tcp { connect: state.applied.proxy_port.into_iter().collect(), bind: policy.allow_local_binding });
    let plan = Plan { writable, unix_sockets, tcp, scope_abstract_unix: policy.restricts_unix_sockets() };
    let (abi, why_not) = ruleset::kernel_abi();
    match ruleset::restrict(&plan, abi) {
        Ok(outcome) => {
            state.applied.landlock_abi = Some(outcome.abi);
            state.active(Layer::Landlock);
            for (layer, reason) in outcome.missing {
                let required = match layer {
                    Layer::LandlockUnixSockets => true,
                    Layer::LandlockNetwork => !isolated && matches!(policy.network, Network::Proxy { .. }),
                    _ => false,
                };
                state.miss(layer, &reason, required)?;
            }
            Ok(())
        }
        Err(SandboxError::Unavailable { layer, reason }) => {
            let reason = why_not.map_or(reason, str::to_owned);
            state.miss(layer, &reason, true)
        }
        Err(error) => state.fail(Layer::Landlock, error, true),
    }
}

/// What IP sockets seccomp lets the command create.
fn inet_rule(policy: &Policy, isolated: bool) -> Inet {
    match (&policy.network, isolated) {
        (Network::Full, _) => Inet::Allow,
        (Network::Off, true) if policy.allow_local_binding => Inet::Allow,
        (Network::Off, _) => Inet::Deny,
        (Network::Proxy { .. }, true) => Inet::Allow,
        (Network::Proxy { .. }, false) => Inet::StreamOnly,
    }
}

struct State<'a> {
    policy: &'a Policy,
    applied: Applied,
}

impl State<'_> {
    fn active(&mut self, layer: Layer) -> bool {
        self.applied.layers.push(layer);
        true
    }

    /// Records `layer` as missing; an error when the policy needs it and is not best-effort.
    fn miss(&mut self, layer: Layer, reason: &str, required: bool) -> Result<(), SandboxError> {
        if required && !self.policy.best_effort {
            return Err(SandboxError::Unavailable { layer, reason: reason.to_owned() });
        }
        self.applied.missing.push(Missing { layer, reason: reason.to_owned() });
        Ok(())
    }

    /// Like [`miss`](Self::miss), with the error that made the layer fail.
    fn fail(&mut self, layer: Layer, error: SandboxError, required: bool) -> Result<(), SandboxError> {
        if required && !self.policy.best_effort {
            return Err(error);
        }
        let reason = match error {
            SandboxError::Unavailable { reason, .. } => reason,
            other => other.one_line(),
        };
        self.applied.missing.push(Missing { layer, reason });
        Ok(())
    }
}
