//! The permission policy: one precedence table for the workspace boundary, rules, modes and
//! hook suggestions. First match wins:
//!
//! | # | condition | decision |
//! |---|---|---|
//! | 1 | a path outside the workspace | deny (workspace; no mode or hook lifts it) |
//! | 2 | a `deny` rule matches | deny (rule) |
//! | 3 | a hook suggested `deny` | deny (hook) |
//! | 4 | mode `plan` and the tool is not read-only | deny (mode) |
//! | 5 | a write into `.spine/`, `.claude/` or `.git/` that no `allow` rule names explicitly | ask (protected path) — in every mode, even after a hook `allow` (see [`super::protected`]) |
//! | 5b | a shell call that asks to leave the sandbox (`dangerouslyDisableSandbox`, see [`crate::sandbox_rules`]) | ask (the approver only) — in every mode, even after a hook `allow` or an `allow` rule |
//! | 6 | a hook suggested `defer` | defer (hook) |
//! | 7 | an `ask` rule matches | ask (rule) — even after a hook `allow`, even in bypass |
//! | 8 | a hook suggested `ask` | ask (hook) |
//! | 9 | a hook suggested `allow` | allow (hook) |
//! | 10 | an `allow` rule matches | allow (rule) |
//! | 10b | `autoAllowBashIfSandboxed` and the shell call runs in the sandbox | allow (sandboxed) |
//! | 10c | mode `default`, `acceptEdits` or `plan`, and every command of the shell call is allowed by a rule or harmless ([`super::harmless`]) | allow (read-only command) |
//! | 11 | mode `bypassPermissions` | allow (mode) |
//! | 12 | mode `acceptEdits` and the tool edits files | allow (mode) |
//! | 13 | otherwise | read tools allow, others ask (default) |
//!
//! Rows 5 and 5b come after every deny row, so a deny rule, a hook `deny` or plan mode still
//! deny a protected write or an unsandboxed command outright. Both asks carry
//! `DecisionSource::Workspace`: they go to the approver, never to PermissionRequest hooks.
//! Row 10b carries `DecisionSource::Mode` and says in its reason that the sandbox allowed it.
//! Row 10c needs the workspace ([`CallFacts::workspace`]) and a command not run on a
//! pseudo-terminal (`pty: true`: a pager would start); a harmless `git` also needs a trusted
//! project ([`PermissionPolicy::with_trusted_project`]) and a known working directory
//! ([`CallFacts::cwd`]) that holds the repository's own `.git` (`harmless_git.rs`). It carries
//! `DecisionSource::Default` (or `Rule` naming the allow rules that covered the other
//! commands), and its reason names the read-only commands. In `plan` mode a shell call whose
//! every command is harmless by itself passes row 4.
//!
//! Shell tools (`Bash`, `exec_command`, `process_exec`) are decided on the analysis of their
//! `command` ([`super::shell`], computed once per call: [`CallFacts::shell`], or here when the
//! caller passes none):
//! - rows 2 and 7: a deny/ask rule matches when it matches ANY simple command; a deny/ask
//!   file-edit rule (`Edit(...)`) matches when it matches any write target
//!   ([`CallFacts::write_paths`]); a deny/ask `Read(...)`/`Edit(...)` rule matches when it
//!   matches a file the command reads/writes ([`super::file_rules`], against
//!   [`CallFacts::cwd`]), and the reason names the file. Row 7 also asks when the command is
//!   opaque while a deny or ask rule with a command pattern, or any deny or ask file rule,
//!   applies: such a rule cannot be checked; and when a file the command reads or writes is
//!   computed at run time under a deny or ask file rule of its kind.
//! - row 10: allow rules allow only when EVERY simple command is covered by some allow rule
//!   (across the whole allow list), nothing is opaque (a bare `Bash` allow rule covers every
//!   command, opaque or not), and every write target is covered by a file-edit allow rule or
//!   the mode is `acceptEdits` or `bypassPermissions`. Otherwise the call falls through.
//!   Write targets outside the workspace never get here: the caller reports them as a
//!   boundary violation (row 1).

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};
use spine_protocol::permission::{
    DecisionSource, PermissionBehavior, PermissionDecision, PermissionMode, PermissionSuggestion,
};
use spine_protocol::tool::Effect;

pub use super::call_facts::{CallFacts, resolve_write_paths, shell_analysis};
use super::file_rules::{self, FileCheck};
use super::harmless::{self, ReadOnly};
use super::protected;
use super::rule::{PermissionRule, RuleUse};
use super::session::{SessionPermissions, UpdateLimits};
use super::shell::{self, ShellAnalysis};
use crate::sandbox_rules::{Confinement, DISABLE_SANDBOX_ARG, SandboxRules};

/// The configured rules.
#[derive(Debug, Clone, Default)]
pub struct PermissionRules {
    /// `allow` rules.
    pub allow: Vec<PermissionRule>,
    /// `ask` rules.
    pub ask: Vec<PermissionRule>,
    /// `deny` rules.
    pub deny: Vec<PermissionRule>,
}

fn push_unique<'r>(used: &mut Vec<&'r PermissionRule>, rule: &'r PermissionRule) {
    if !used.iter().any(|u| std::ptr::eq(*u, rule)) {
        used.push(rule);
    }
}

/// A shell call as the rules see it.
struct ShellCall<'c> {
    command: &'c str,
    analysis: &'c ShellAnalysis,
}

/// The permission policy of a run. Copies share the session's permission updates
/// ([`super::session`]) and, but for [`PermissionPolicy::with_mode`], the mode.
#[derive(Debug, Clone)]
pub struct PermissionPolicy {
    pub(super) rules: PermissionRules,
    pub(super) mode: Arc<Mutex<PermissionMode>>,
    project_dir: PathBuf,
    pub(super) session: Arc<SessionPermissions>,
    pub(super) limits: Arc<UpdateLimits>,
    /// The session's command sandbox, when its commands run in one.
    sandbox: Option<Arc<SandboxRules>>,
    /// Whether the user trusts the project (git may then be harmless, row 10c).
    trusted_project: bool,
}

impl PermissionPolicy {
    /// A policy.
    pub fn new(rules: PermissionRules, mode: PermissionMode, project_dir: PathBuf) -> Self {
        PermissionPolicy {
            rules,
            mode: Arc::new(Mutex::new(mode)),
            project_dir,
            session: Arc::default(),
            limits: Arc::default(),
            sandbox: None,
            trusted_project: false,
        }
    }

    /// The same policy for a project the user trusts or not (`spine trust`, `--trust`; a new
    /// policy trusts none): only in a trusted project may `git` be a harmless command (row
    /// 10c), as the repository's configuration may name programs git runs.
    pub fn with_trusted_project(mut self, trusted: bool) -> Self {
        self.trusted_project = trusted;
        self
    }

    /// The same policy, for a session whose commands run in a sandbox with these rules.
    pub fn with_sandbox(mut self, rules: SandboxRules) -> Self {
        self.sandbox = Some(Arc::new(rules));
        self
    }

    /// Where a call's commands run: `None` for a session without a sandbox or a tool that
    /// starts no command.
    pub fn confinement(&self, tool_name: &str, args: &Map<String, Value>) -> Option<Confinement> {
        self.sandbox.as_ref()?.confinement(tool_name, args, None)
    }

    /// The same policy with what session updates may not do (where the rules came from, the
    /// managed limits).
    pub fn with_limits(mut self, limits: UpdateLimits) -> Self {
        self.limits = Arc::new(limits);
        self
    }

    /// The same rules and session updates under another mode of its own (a subagent's, see
    /// [`crate::subagents::narrower_mode`]).
    pub fn with_mode(&self, mode: PermissionMode) -> Self {
        PermissionPolicy { mode: Arc::new(Mutex::new(mode)), ..self.clone() }
    }

    /// The permission mode the policy decides under (hooks see it as `permission_mode`).
    pub fn mode(&self) -> PermissionMode {
        *self.mode.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The configured rules (without the session's updates).
    pub fn rules(&self) -> &PermissionRules {
        &self.rules
    }

    /// The rules the policy decides with: the configured ones with the session's updates.
    pub fn rules_in_force(&self) -> Cow<'_, PermissionRules> {
        match self.session.effective(&self.rules) {
            Some(rules) => Cow::Owned(rules),
            None => Cow::Borrowed(&self.rules),
        }
    }

    /// The same policy with `extra` allow rules after its own (a custom command's
    /// `allowed-tools`, for the prompt it sends). Deny and ask rules still win over them.
    pub fn with_allowed(&self, extra: impl IntoIterator<Item = PermissionRule>) -> Self {
        let mut policy = self.clone();
        policy.rules.allow.extend(extra);
        policy
    }

    /// The deny rule that forbids reading `path`, if one does (`Read(./.env)`), for files the
    /// user's own input brings into the conversation (`@file` references).
    pub fn read_denied_by(&self, path: &Path) -> Option<String> {
        let mut input = Map::new();
        input.insert("file_path".into(), Value::String(path.display().to_string()));
        self.rules_in_force()
            .deny
            .iter()
            .find(|r| r.matches("Read", &input, &self.project_dir, RuleUse::Restrict))
            .map(|r| r.as_str().to_owned())
    }

    /// Decides a call, given the hooks' merged suggestion and who made it. In `dontAsk` mode
    /// what would ask is refused instead.
    pub fn decide(
        &self,
        call: CallFacts<'_>,
        suggestion: &PermissionSuggestion,
        suggested_by: Option<&str>,
    ) -> PermissionDecision {
        let rules = self.rules_in_force();
        let mode = self.mode();
        let decision = self.decide_asking(&rules, mode, call, suggestion, suggested_by);
        if mode == PermissionMode::DontAsk && decision.behavior == PermissionBehavior::Ask {
            return PermissionDecision::new(
                PermissionBehavior::Deny,
                DecisionSource::Mode,
                format!("dontAsk mode refuses what would ask ({})", decision.reason),
            );
        }
        decision
    }

    fn decide_asking<'p>(
        &self,
        rules: &'p PermissionRules,
        mode: PermissionMode,
        call: CallFacts<'_>,
        suggestion: &PermissionSuggestion,
        suggested_by: Option<&str>,
    ) -> PermissionDecision {
        use PermissionBehavior as B;
        let hook = || DecisionSource::Hook { hook_id: suggested_by.unwrap_or("hook").to_owned() };
        let project_dir = self.project_dir.as_path();
        let owned_analysis;
        let command = call.args.get("command").and_then(Value::as_str);
        let shell_call = match (shell::is_shell_tool(call.tool_name), command, call.shell) {
            (true, Some(command), Some(analysis)) => Some(ShellCall { command, analysis }),
            (true, Some(command), None) => {
                owned_analysis = shell::analyze(command);
                Some(ShellCall { command, analysis: &owned_analysis })
            }
            (true, None, _) | (false, _, _) => None,
        };
        let cwd = call.cwd.unwrap_or(project_dir);
        let files: Option<FileCheck<'p>> = shell_call
            .as_ref()
            .map(|sc| file_rules::check(sc.analysis, cwd, project_dir, rules.deny.iter().chain(&rules.ask)));
        let file_hit = |rule: &PermissionRule| {
            files.as_ref().and_then(|f| f.certain(rule)).map(|hit| format!(": {}", hit.reason()))
        };
        let restricting = |rules: &'p [PermissionRule]| -> Option<&'p PermissionRule> {
            rules.iter().find(|r| match &shell_call {
                Some(sc) => {
                    r.restricts_shell(call.tool_name, sc.analysis, sc.command)
                        || call.write_paths.iter().any(|p| r.matches_write(p, project_dir))
                        || files.as_ref().is_some_and(|f| f.certain(r).is_some())
                }
                None => r.matches(call.tool_name, call.args, project_dir, RuleUse::Restrict),
            })
        };
        let by_rule = |rule: &PermissionRule| DecisionSource::Rule { rule: rule.as_str().to_owned() };

        if let Some(violation) = call.boundary {
            return PermissionDecision::new(B::Deny, DecisionSource::Workspace, violation.to_string());
        }
        if let Some(rule) = restricting(&rules.deny) {
            let why = file_hit(rule).unwrap_or_default();
            return PermissionDecision::new(B::Deny, by_rule(rule), format!("denied by rule {}{why}", rule.as_str()));
        }
        if let PermissionSuggestion::Deny { reason } = suggestion {
            let reason = reason.clone().unwrap_or_else(|| "PreToolUse hook requested deny".to_owned());
            return PermissionDecision::new(B::Deny, hook(), reason);
        }
        let read_only = |allow: &'p [PermissionRule]| -> Option<ReadOnly<'p>> {
            let (sc, workspace) = (shell_call.as_ref()?, call.workspace?);
            if call.args.get("pty").and_then(Value::as_bool) == Some(true) {
                return None; // on a terminal, `git log` starts a pager that runs commands
            }
            let restricting: Vec<&PermissionRule> = rules.deny.iter().chain(&rules.ask).collect();
            let scope = harmless::Scope {
                workspace,
                cwd,
                project_dir,
                restricting: &restricting,
                cwd_known: call.cwd.is_some(),
                trusted: self.trusted_project,
            };
            harmless::read_only(sc.analysis, &scope, call.tool_name, allow).ok()
        };
        if mode == PermissionMode::Plan && call.effect != Effect::Read && read_only(&[]).is_none() {
            return PermissionDecision::new(
                B::Deny,
                DecisionSource::Mode,
                format!("plan mode allows read-only tools only; {} is not read-only", call.tool_name),
            );
        }
        if let Some(hit) = protected::unnamed_protected_write(
            call.tool_name,
            call.effect,
            call.args,
            project_dir,
            &rules.allow,
            call.write_paths,
        ) {
            return PermissionDecision::new(B::Ask, DecisionSource::Workspace, hit.reason());
        }
        let confinement = match (&self.sandbox, &shell_call) {
            (Some(sandbox), Some(sc)) => sandbox.confinement(call.tool_name, call.args, Some(sc.analysis)),
            (None, _) | (_, None) => None,
        };
        if confinement == Some(Confinement::Disabled) {
            return PermissionDecision::new(
                B::Ask,
                DecisionSource::Workspace,
                format!(
                    "{DISABLE_SANDBOX_ARG}: the command would run outside the sandbox, with your access to files \
                     and the network; only you can approve that"
                ),
            );
        }
        if matches!(suggestion, PermissionSuggestion::Defer) {
            return PermissionDecision::new(B::Defer, hook(), "PreToolUse hook requested defer");
        }
        if let Some(rule) = restricting(&rules.ask) {
            let why = file_hit(rule).unwrap_or_default();
            return PermissionDecision::new(B::Ask, by_rule(rule), format!("rule {} asks{why}", rule.as_str()));
        }
        if let Some(sc) = &shell_call
            && sc.analysis.is_opaque()
            && let Some(rule) = self.rules.deny.iter().chain(&rules.ask).find(|r| {
                (r.has_command_pattern() && r.tool_matches(call.tool_name))
                    || r.is_file_rule(false)
                    || r.is_file_rule(true)
            })
        {
            return PermissionDecision::new(
                B::Ask,
                by_rule(rule),
                format!(
                    "cannot check rule {} because the command cannot be analysed: {}",
                    rule.as_str(),
                    sc.analysis.opaque_summary()
                ),
            );
        }
        if let Some(hit) = files.as_ref().and_then(FileCheck::uncertain) {
            return PermissionDecision::new(B::Ask, by_rule(hit.rule), hit.reason());
        }
        match suggestion {
            PermissionSuggestion::Ask { reason } => {
                let reason = reason.clone().unwrap_or_else(|| "PreToolUse hook requested ask".to_owned());
                return PermissionDecision::new(B::Ask, hook(), reason);
            }
            PermissionSuggestion::Allow { reason } => {
                let reason = reason.clone().unwrap_or_else(|| "PreToolUse hook allowed it".to_owned());
                return PermissionDecision::new(B::Allow, hook(), reason);
            }
            PermissionSuggestion::Passthrough | PermissionSuggestion::Defer | PermissionSuggestion::Deny { .. } => {}
        }
        let allowed_by = match &shell_call {
            Some(sc) => self.shell_allow(rules, mode, call.tool_name, sc.analysis, call.write_paths),
            None => rules
                .allow
                .iter()
                .find(|r| r.matches(call.tool_name, call.args, project_dir, RuleUse::Allow))
                .map(|r| vec![r]),
        };
        if let Some(rules) = allowed_by {
            let text = rules.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ");
            let reason =
                if rules.len() > 1 { format!("allowed by rules {text}") } else { format!("allowed by rule {text}") };
            return PermissionDecision::new(B::Allow, DecisionSource::Rule { rule: text }, reason);
        }
        if confinement == Some(Confinement::Sandboxed) && self.sandbox.as_ref().is_some_and(|s| s.auto_allow) {
            return PermissionDecision::new(
                B::Allow,
                DecisionSource::Mode,
                "the command runs in the sandbox (sandbox.autoAllowBashIfSandboxed)",
            );
        }
        if matches!(mode, PermissionMode::Default | PermissionMode::AcceptEdits | PermissionMode::Plan)
            && let Some(verdict) = read_only(&rules.allow)
        {
            let source = match verdict.rules.as_slice() {
                [] => DecisionSource::Default,
                used => DecisionSource::Rule { rule: used.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ") },
            };
            return PermissionDecision::new(B::Allow, source, harmless::reason(&verdict));
        }
        match (mode, call.effect) {
            (PermissionMode::BypassPermissions, _) => {
                PermissionDecision::new(B::Allow, DecisionSource::Mode, "bypassPermissions mode")
            }
            (PermissionMode::AcceptEdits, Effect::Write) => {
                PermissionDecision::new(B::Allow, DecisionSource::Mode, "acceptEdits mode allows file edits")
            }
            (_, Effect::Read) => PermissionDecision::new(B::Allow, DecisionSource::Default, "read-only tool"),
            (_, Effect::Write) => PermissionDecision::new(B::Ask, DecisionSource::Default, "tool changes files"),
            (_, Effect::Execute) => PermissionDecision::new(B::Ask, DecisionSource::Default, "tool runs commands"),
            (_, Effect::Network) => PermissionDecision::new(B::Ask, DecisionSource::Default, "tool uses the network"),
        }
    }

    /// Row 9 for a shell call: the allow rules that together cover every simple command and
    /// every write target, or `None` when something is left uncovered.
    fn shell_allow<'p>(
        &self,
        rules: &'p PermissionRules,
        mode: PermissionMode,
        tool_name: &str,
        analysis: &ShellAnalysis,
        write_paths: &[PathBuf],
    ) -> Option<Vec<&'p PermissionRule>> {
        let mut used: Vec<&'p PermissionRule> = Vec::new();
        let allow = &rules.allow;
        if let Some(bare) = allow.iter().find(|r| r.is_bare() && r.tool_matches(tool_name)) {
            push_unique(&mut used, bare);
        } else {
            if analysis.is_opaque() || analysis.commands.is_empty() {
                return None;
            }
            for command in &analysis.commands {
                push_unique(&mut used, allow.iter().find(|r| r.covers_shell_command(tool_name, command))?);
            }
        }
        let writes_allowed_by_mode = matches!(mode, PermissionMode::AcceptEdits | PermissionMode::BypassPermissions);
        if !writes_allowed_by_mode {
            for path in write_paths {
                push_unique(&mut used, allow.iter().find(|r| r.matches_write(path, self.project_dir.as_path()))?);
            }
        }
        Some(used)
    }

    /// The project root relative rule patterns are anchored at.
    pub fn project_dir(&self) -> &Path {
        &self.project_dir
    }
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
