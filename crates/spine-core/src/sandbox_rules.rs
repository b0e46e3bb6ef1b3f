//! What the permission step knows of the session's command sandbox: [`SandboxRules`] — which
//! shell calls run confined, which run outside it and why ([`Confinement`]), and whether a
//! confined call may skip the question (`autoAllowBashIfSandboxed`).
//!
//! Contract:
//! - Only shell tools (`Bash`, `exec_command`, `process_exec`) are confined; rules exist only
//!   when the session's commands run in a sandbox (spine-agent builds them with it).
//! - A call runs outside the sandbox when every simple command of it is covered by an
//!   `excludedCommands` pattern (Bash rule syntax: `docker *`) and nothing in it is opaque,
//!   writes through a redirection or changes directory ([`Confinement::Excluded`]) — as in
//!   Claude Code, a convenience, not a boundary: the call still goes through the permission
//!   flow; or when `Bash`'s `dangerouslyDisableSandbox` is true and `allowUnsandboxedCommands`
//!   is on ([`Confinement::Disabled`]): the policy then asks the approver, whatever the rules
//!   and hooks said (see `permission::policy`). With `allowUnsandboxedCommands` off the
//!   parameter is ignored and the call runs confined.
//! - Every other shell call is [`Confinement::Sandboxed`]; with `auto_allow` the policy allows
//!   it where it would otherwise ask (never past a deny or ask rule, a hook, or a protected
//!   path).

use serde_json::{Map, Value};

use crate::permission::PermissionRule;
use crate::permission::shell::{self, ShellAnalysis};

/// Bash's parameter that asks to run a command outside the sandbox.
pub const DISABLE_SANDBOX_ARG: &str = "dangerouslyDisableSandbox";

/// The session's command sandbox, as the permission step sees it.
#[derive(Debug, Clone, Default)]
pub struct SandboxRules {
    /// `autoAllowBashIfSandboxed`: a confined shell call that would be asked is allowed.
    pub auto_allow: bool,
    /// `allowUnsandboxedCommands`: `dangerouslyDisableSandbox: true` takes a call out of the
    /// sandbox (after the approver agrees).
    pub allow_unsandboxed: bool,
    /// `excludedCommands`, as `Bash(PATTERN)` rules.
    pub excluded: Vec<PermissionRule>,
}

/// Where one shell call's commands run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confinement {
    /// In the sandbox.
    Sandboxed,
    /// Outside it: every command matches these `excludedCommands` patterns.
    Excluded(String),
    /// Outside it: `dangerouslyDisableSandbox: true`, allowed by `allowUnsandboxedCommands`.
    Disabled,
}

impl Confinement {
    /// Why the call runs outside the sandbox (for the trace), `None` when it runs inside.
    pub fn exemption(&self) -> Option<String> {
        match self {
            Confinement::Sandboxed => None,
            Confinement::Excluded(patterns) => Some(format!("excludedCommands: {patterns}")),
            Confinement::Disabled => Some(format!("{DISABLE_SANDBOX_ARG}, approved")),
        }
    }
}

impl SandboxRules {
    /// Parses `excludedCommands` entries: `PATTERN` is read as `Bash(PATTERN)`, an entry
    /// already written as a rule (`Bash(docker *)`) as itself.
    pub fn excluded_rules(patterns: &[String]) -> Result<Vec<PermissionRule>, crate::permission::RuleError> {
        patterns
            .iter()
            .map(|p| {
                let p = p.trim();
                if p.starts_with("Bash(") {
                    PermissionRule::parse(p)
                } else {
                    PermissionRule::parse(&format!("Bash({p})"))
                }
            })
            .collect()
    }

    /// Where a call of `tool_name` with `args` runs; `analysis` is its shell analysis when the
    /// caller has it. `None` for a tool that is not a shell tool (it starts no command).
    pub fn confinement(
        &self,
        tool_name: &str,
        args: &Map<String, Value>,
        analysis: Option<&ShellAnalysis>,
    ) -> Option<Confinement> {
        if !shell::is_shell_tool(tool_name) {
            return None;
        }
        if self.allow_unsandboxed && args.get(DISABLE_SANDBOX_ARG) == Some(&Value::Bool(true)) {
            return Some(Confinement::Disabled);
        }
        let command = args.get("command").and_then(Value::as_str)?;
        let owned;
        let analysis = match analysis {
            Some(analysis) => analysis,
            None => {
                owned = shell::analyze(command);
                &owned
            }
        };
        Some(match self.excluded_by(tool_name, analysis) {
            Some(patterns) => Confinement::Excluded(patterns),
            None => Confinement::Sandboxed,
        })
    }

    /// The patterns that cover every command of the call, when they all are covered and the
    /// call is plain enough to leave the sandbox.
    fn excluded_by(&self, tool_name: &str, analysis: &ShellAnalysis) -> Option<String> {
        if self.excluded.is_empty()
            || analysis.is_opaque()
            || analysis.commands.is_empty()
            || !analysis.writes.is_empty()
            || analysis.commands.iter().any(|c| matches!(c.program(), "cd" | "pushd" | "popd"))
        {
            return None;
        }
        let mut used: Vec<&str> = Vec::new();
        for command in &analysis.commands {
            let rule = self.excluded.iter().find(|r| r.covers_shell_command(tool_name, command))?;
            if !used.contains(&rule.as_str()) {
                used.push(rule.as_str());
            }
        }
        Some(used.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    fn rules(excluded: &[&str], allow_unsandboxed: bool) -> SandboxRules {
        let patterns: Vec<String> = excluded.iter().map(|s| (*s).to_owned()).collect();
        SandboxRules {
            auto_allow: false,
            allow_unsandboxed,
            excluded: SandboxRules::excluded_rules(&patterns).expect("rules"),
        }
    }

    #[test]
    fn excluded_commands_leave_the_sandbox_only_when_every_command_matches_plainly() {
        let r = rules(&["docker *", "Bash(git status)"], true);
        let of = |command: &str| r.confinement("Bash", &args(json!({"command": command})), None);
        assert_eq!(of("docker ps"), Some(Confinement::Excluded("Bash(docker *)".into())));
        assert_eq!(
            of("docker ps && git status"),
            Some(Confinement::Excluded("Bash(docker *), Bash(git status)".into()))
        );
        assert_eq!(of("docker ps && rm -rf x"), Some(Confinement::Sandboxed), "every command must match");
        assert_eq!(of("docker ps > out.txt"), Some(Confinement::Sandboxed), "a redirect stays in");
        assert_eq!(of("cd /tmp && docker ps"), Some(Confinement::Sandboxed), "a cd stays in");
        assert_eq!(of("docker $(cat x)"), Some(Confinement::Sandboxed), "opaque stays in");
        assert_eq!(r.confinement("Read", &args(json!({"file_path": "x"})), None), None);
    }

    #[test]
    fn dangerously_disable_sandbox_counts_only_when_unsandboxed_commands_are_allowed() {
        let call = args(json!({"command": "ls", DISABLE_SANDBOX_ARG: true}));
        assert_eq!(rules(&[], true).confinement("Bash", &call, None), Some(Confinement::Disabled));
        assert_eq!(rules(&[], false).confinement("Bash", &call, None), Some(Confinement::Sandboxed));
        assert_eq!(Confinement::Disabled.exemption().as_deref(), Some("dangerouslyDisableSandbox, approved"));
        assert_eq!(Confinement::Sandboxed.exemption(), None);
    }
}
