//! [`confine`]: the helper confines itself, layer by layer, in the one order that works.
//!
//! Contract: called once by the single-threaded helper before it starts the command. The
//! order is forced by the kernel: the user namespace first (it needs a single thread and
//! gives the capabilities the mounts need), the mounts, the proxy bridge's connector thread
//! (it must stay in the machine's network namespace), the network namespace, the bridge's
//! listener (inside it), then Landlock, the end of root's capabilities at exec, and seccomp
//! last (it forbids `mount` and `unshare`). When seccomp alone can keep the command off the
//! network (network off, no local binding, no unix socket allowed), Landlock comes before
//! the network namespace, which is made only if Landlock could not scope abstract unix
//! sockets (or, best effort, if seccomp then fails to install); seccomp then refuses `bind`
//! and netlink as well. A layer the policy cannot be
//! honoured without fails the call with [`SandboxError::Unavailable`] naming it, unless the
//! policy is best-effort; hardening layers (Landlock scopes) are only ever reported as
//! missing. Each step is marked on the [`Timing`] it is given.

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
use crate::timing::Timing;

/// Confines the calling process (and what it starts afterwards) to `policy`.
///
/// Must be called while the process has a single thread (before any runtime or thread is
/// started), and only once. See the crate documentation for each layer.
pub(crate) fn confine(policy: &Policy, timing: &mut Timing) -> Result<Applied, SandboxError> {
    let mut state = State { policy, applied: Applied::new(policy) };
    let roots: Vec<PathBuf> = policy.write_allow.iter().filter_map(|root| root.canonicalize().ok()).collect();
    let needs_mounts = !policy.read_deny.is_empty() || policy.write_deny.iter().any(|p| p.symlink_metadata().is_ok());
    timing.mark("paths");

    let userns = match userns::enter(timing) {
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
        match mounts::apply(policy, &roots, timing) {
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
    timing.mark("mounts");

    let bridge = match &policy.network {
        Network::Proxy { http, .. } => Some(Bridge::start(http.clone())?),
        Network::Off | Network::Full => None,
    };
    // A command that can open no socket but a `socketpair` (network off, no local binding, no
    // unix socket allowed) needs no namespace of its own once Landlock scopes abstract unix
    // sockets: seccomp refuses every socket family, `bind` and netlink. Landlock goes first
    // then (its rules do not depend on the namespace in this case), and the namespace only
    // comes when the scope is not in force.
    let sealed = seccomp_alone_isolates(policy);
    let mut isolated = false;
    if policy.network.is_restricted() && !sealed {
        isolated = network_namespace(&mut state, userns, timing)?;
    }
    if let (Some(bridge), Network::Proxy { port, .. }) = (bridge, &policy.network) {
        // Outside a namespace of its own the bridge takes any free port of the machine's
        // loopback, and Landlock lets the command connect to that port only.
        let port = bridge.listen(if isolated { *port } else { 0 })?;
        state.applied.proxy_port = Some(port);
        state.active(Layer::ProxyBridge);
    }

    let scoped = landlock(&mut state, &roots, private_shm, isolated, timing)?;
    if sealed && !scoped {
        isolated = network_namespace(&mut state, userns, timing)?;
    }

    // A root command would get every capability of the user namespace at exec (of the
    // machine's, without one); SECBIT_NOROOT gives it none. Others get none anyway.
    let no_root = CapabilitiesSecureBits::NO_ROOT | CapabilitiesSecureBits::NO_ROOT_LOCKED;
    if let Err(error) = set_capabilities_secure_bits(no_root)
        && nix::unistd::geteuid().is_root()
    {
        let error = SandboxError::os(Layer::NoNewPrivs, "cannot set SECBIT_NOROOT", error);
        state.fail(Layer::NoNewPrivs, error, false)?;
    }
    timing.mark("secbits");
    let inet = inet_rule(policy, isolated);
    let unix = !policy.restricts_unix_sockets() || !policy.allow_unix_sockets.is_empty();
    // No namespace between the command and the machine's network, and no socket to make but
    // a pair: nothing may bind (a pair's socket could take an abstract unix name of the
    // machine) and netlink would show the machine's interfaces.
    let closed = !isolated && inet == Inet::Deny && !unix;
    let sockets = SocketRules { inet, unix, netlink: !closed, bind: !closed };
    match seccomp::install(sockets, timing) {
        Ok(()) => {
            state.active(Layer::NoNewPrivs);
            state.active(Layer::Seccomp);
        }
        Err(error) => {
            state.fail(Layer::Seccomp, error, true)?;
            // Best effort without seccomp (no filter was installed, so `unshare` still
            // works): only a namespace keeps the command's sockets off the network now.
            if sealed && !isolated {
                network_namespace(&mut state, userns, timing)?;
            }
        }
    }
    Ok(state.applied)
}

/// Whether seccomp alone keeps the command off every network: it may open no IP socket, no
/// unix socket (only `socketpair`) and needs no loopback of its own. Abstract unix sockets
/// are then the one thing a network namespace would still hide: Landlock's scope must.
fn seccomp_alone_isolates(policy: &Policy) -> bool {
    policy.network == Network::Off
        && !policy.allow_local_binding
        && policy.restricts_unix_sockets()
        && policy.allow_unix_sockets.is_empty()
}

/// Enters the network namespace (with its loopback up when the command may use IP); whether
/// it is in force.
fn network_namespace(state: &mut State<'_>, userns: bool, timing: &mut Timing) -> Result<bool, SandboxError> {
    if !userns {
        state.miss(Layer::NetworkNamespace, "needs a user namespace", false)?;
        return Ok(false);
    }
    let policy = state.policy;
    let loopback = policy.allow_local_binding || matches!(policy.network, Network::Proxy { .. });
    match netns::enter(loopback, timing) {
        Ok(()) => Ok(state.active(Layer::NetworkNamespace)),
        // Without it, seccomp (off) or Landlock's TCP rules (proxy) still hold.
        Err(error) => {
            state.fail(Layer::NetworkNamespace, error, false)?;
            Ok(false)
        }
    }
}

/// Applies Landlock; whether abstract unix sockets are scoped to the sandbox.
fn landlock(
    state: &mut State<'_>,
    roots: &[PathBuf],
    private_shm: bool,
    isolated: bool,
    timing: &mut Timing,
) -> Result<bool, SandboxError> {
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
    timing.mark("landlock.abi");
    let restricted = ruleset::restrict(&plan, abi);
    timing.mark("landlock.restrict");
    match restricted {
        Ok(outcome) => {
            state.applied.landlock_abi = Some(outcome.abi);
            state.active(Layer::Landlock);
            let scoped = plan.scope_abstract_unix && !outcome.missing.iter().any(|(l, _)| *l == Layer::LandlockScopes);
            for (layer, reason) in outcome.missing {
                let required = match layer {
                    Layer::LandlockUnixSockets => true,
                    Layer::LandlockNetwork => !isolated && matches!(policy.network, Network::Proxy { .. }),
                    _ => false,
                };
                state.miss(layer, &reason, required)?;
            }
            Ok(scoped)
        }
        Err(SandboxError::Unavailable { layer, reason }) => {
            let reason = why_not.map_or(reason, str::to_owned);
            state.miss(layer, &reason, true).map(|()| false)
        }
        Err(error) => state.fail(Layer::Landlock, error, true).map(|()| false),
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
