//! What [`confine`](crate::confine) put in place: [`Applied`], its profile string for the
//! trace, and what the helper does with it after confining (proxy variables, undoing
//! protected paths).
//!
//! Contract: `layers` lists exactly the layers in force, `missing` the ones the policy asked
//! for that the kernel did not give (only ever non-empty for a best-effort policy, or for
//! hardening layers). The profile string is stable: `FS,net=NET,LAYER…[,missing=LAYER+…]`.

use crate::error::Layer;
use crate::policy::Policy;

use crate::protected::MissingGuard;

/// A layer the policy asked for that is not in force, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Missing {
    /// The layer.
    pub layer: Layer,
    /// Why, in words.
    pub reason: String,
}

/// The confinement in force after [`confine`](crate::confine).
#[derive(Debug)]
#[non_exhaustive]
pub struct Applied {
    /// `workspace-write` or `read-only`.
    pub fs_mode: &'static str,
    /// `off`, `proxy` or `full`.
    pub network: &'static str,
    /// The layers in force, in the order they were applied.
    pub layers: Vec<Layer>,
    /// The layers asked for and not in force.
    pub missing: Vec<Missing>,
    /// The kernel's Landlock ABI, when Landlock is in force.
    pub landlock_abi: Option<i32>,
    /// The loopback port of the proxy bridge the command must use.
    pub proxy_port: Option<u16>,
    /// How many mounts the mount layer made.
    pub mounts: usize,
    /// Protected paths that did not exist: their creation is undone after the command.
    pub guard: MissingGuard,
}

/// The proxy variables a command behind the bridge gets (both spellings: tools differ).
pub const PROXY_VARIABLES: &[&str] =
    &["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"];

/// The proxy exceptions a command behind the bridge loses: it can reach nothing directly.
pub const NO_PROXY_VARIABLES: &[&str] = &["NO_PROXY", "no_proxy"];

impl Applied {
    pub(crate) fn new(policy: &Policy) -> Self {
        Self {
            fs_mode: policy.fs_mode(),
            network: policy.network.label(),
            layers: Vec::new(),
            missing: Vec::new(),
            landlock_abi: None,
            proxy_port: None,
            mounts: 0,
            guard: MissingGuard::default(),
        }
    }

    /// Whether `layer` is in force.
    pub fn has(&self, layer: Layer) -> bool {
        self.layers.contains(&layer)
    }

    /// The one-line profile for the trace, e.g.
    /// `workspace-write,net=off,landlock-v7,seccomp,userns`.
    pub fn profile(&self) -> String {
        let mut parts = vec![self.fs_mode.to_owned(), format!("net={}", self.network)];
        if let (true, Some(abi)) = (self.has(Layer::Landlock), self.landlock_abi) {
            parts.push(format!("landlock-v{abi}"));
        }
        for (layer, name) in [(Layer::Seccomp, "seccomp"), (Layer::UserNamespace, "userns")] {
            if self.has(layer) {
                parts.push(name.to_owned());
            }
        }
        if !self.missing.is_empty() {
            let names: Vec<&str> = self.missing.iter().map(|missing| missing.layer.name()).collect();
            parts.push(format!("missing={}", names.join("+")));
        }
        parts.join(",")
    }

    /// `HTTP_PROXY=http://127.0.0.1:PORT` and its siblings, when the command is behind the
    /// proxy bridge.
    pub fn proxy_env(&self) -> Vec<(&'static str, String)> {
        let Some(port) = self.proxy_port else { return Vec::new() };
        PROXY_VARIABLES.iter().map(|name| (*name, format!("http://127.0.0.1:{port}"))).collect()
    }

    /// One line per missing layer, for a best-effort caller's warning.
    pub fn warnings(&self) -> Vec<String> {
        self.missing
            .iter()
            .map(|missing| format!("sandbox layer {} is not in force: {}", missing.layer, missing.reason))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{Network, ProxyUpstream};

    #[test]
    fn the_profile_lists_layers_then_what_is_missing() {
        let mut applied = Applied::new(&Policy::workspace_write(["/w".into()]));
        applied.layers = vec![Layer::UserNamespace, Layer::Mounts, Layer::Landlock, Layer::Seccomp];
        applied.landlock_abi = Some(7);
        assert_eq!(applied.profile(), "workspace-write,net=off,landlock-v7,seccomp,userns");
        applied.missing.push(Missing { layer: Layer::LandlockScopes, reason: "old kernel".into() });
        assert_eq!(applied.profile(), "workspace-write,net=off,landlock-v7,seccomp,userns,missing=landlock-scopes");
        assert_eq!(applied.warnings(), vec!["sandbox layer landlock-scopes is not in force: old kernel".to_owned()]);
    }

    #[test]
    fn proxy_variables_point_at_the_bridge() {
        let policy = Policy {
            network: Network::Proxy { http: ProxyUpstream::Unix("/s".into()), port: 3128 },
            ..Policy::default()
        };
        let mut applied = Applied::new(&policy);
        assert!(applied.proxy_env().is_empty());
        applied.proxy_port = Some(3128);
        let env = applied.proxy_env();
        assert_eq!(env.len(), 6);
        assert!(env.iter().all(|(_, value)| value == "http://127.0.0.1:3128"));
        assert_eq!(applied.profile(), "read-only,net=proxy");
    }
}
