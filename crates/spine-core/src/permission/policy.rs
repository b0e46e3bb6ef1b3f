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
//! | 6 | a hook suggested `defer` | defer (hook) |
//! | 7 | an `ask` rule matches | ask (rule) — even after a hook `allow`, even in bypass |
//! | 8 | a hook suggested `ask` | ask (hook) |
//! | 9 | a hook suggested `allow` | allow (hook) |
//! | 10 | an `allow` rule matches | allow (rule) |
//! | 11 | mode `bypassPermissions` | allow (mode) |
//! | 12 | mode `acceptEdits` and the tool edits files | allow (mode) |
//! | 13 | otherwise | read tools allow, others ask (default) |
//!
//! Row 5 comes after every deny row, so a deny rule, a hook `deny` or plan mode still deny a
//! protected write outright.
//!
//! Shell tools (`Bash`, `exec_command`, `process_exec`) are decided on the analysis of their
//! `command` ([`super::shell`], computed once per call: [`CallFacts::shell`], or here when the
//! caller passes none):
//! - rows 2 and 7: a deny/ask rule matches when it matches ANY simple command; a deny/ask
//!   file-edit rule (`Edit(...)`) matches when it matches any write target
//!   ([`CallFacts::write_paths`]). Row 7 also asks when the command is opaque while a deny or
//!   ask rule with a command pattern applies to the tool: such a rule cannot be checked.
//! - row 10: allow rules allow only when EVERY simple command is covered by some allow rule
//!   (across the whole allow list), nothing is opaque (a bare `Bash` allow rule covers every
//!   command, opaque or not), and every write target is covered by a file-edit allow rule or
//!   the mode is `acceptEdits` or `bypassPermissions`. Otherwise the call falls through.
//!   Write targets outside the workspace never get here: the caller reports them as a
//!   boundary violation (row 1).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use spine_protocol::permission::{
    DecisionSource, PermissionBehavior, PermissionDecision, PermissionMode, PermissionSuggestion,
};
use spine_protocol::tool::Effect;

use super::protected;
use super::rule::{PermissionRule, RuleUse};
use super::shell::{self, ShellAnalysis};
use crate::workspace::{BoundaryError, Workspace};

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

/// The facts of one call the policy decides on.
#[derive(Debug, Clone, Copy)]
pub struct CallFacts<'a> {
    /// The tool.
    pub tool_name: &'a str,
    /// Its effect class.
    pub effect: Effect,
    /// The frozen arguments.
    pub args: &'a Map<String, Value>,
    /// The first workspace-boundary violation among the call's paths (including
    /// [`write_paths`](CallFacts::write_paths)).
    pub boundary: Option<&'a BoundaryError>,
    /// Normalized absolute paths the call writes: for shell tools the redirection and `tee`
    /// targets (against the run's cwd), for file-editing tools the file path; each followed by
    /// its symlink-resolved form when that differs (see [`resolve_write_paths`]).
    pub write_paths: &'a [PathBuf],
    /// The analysis of a shell tool's `command`, when the caller computed it (the policy
    /// computes it itself otherwise).
    pub shell: Option<&'a ShellAnalysis>,
}

impl<'a> CallFacts<'a> {
    /// Facts with no boundary violation, no write paths and no precomputed shell analysis.
    pub fn new(tool_name: &'a str, effect: Effect, args: &'a Map<String, Value>) -> Self {
        CallFacts { tool_name, effect, args, boundary: None, write_paths: &[], shell: None }
    }
}

/// The shell analysis of a call, when its tool runs a shell command.
pub fn shell_analysis(tool_name: &str, args: &Map<String, Value>) -> Option<ShellAnalysis> {
    if !shell::is_shell_tool(tool_name) {
        return None;
    }
    args.get("command").and_then(Value::as_str).map(shell::analyze)
}

fn push_unique<'r>(used: &mut Vec<&'r PermissionRule>, rule: &'r PermissionRule) {
    if !used.iter().any(|u| std::ptr::eq(*u, rule)) {
        used.push(rule);
    }
}

/// The write paths of a call as the policy sees them, and the first boundary violation among
/// them. `targets` are absolute and lexically normal (against the run's cwd); each is resolved
/// through existing symlinks, and the resolved form is added when it differs, so a rule about
/// `secrets/**` also sees a write through a link into `secrets/`.
pub fn resolve_write_paths(
    workspace: &Workspace,
    cwd: &Path,
    targets: Vec<PathBuf>,
) -> (Vec<PathBuf>, Option<BoundaryError>) {
    let mut paths = Vec::with_capacity(targets.len());
    let mut violation = None;
    for target in targets {
        match workspace.resolve(&target.to_string_lossy(), cwd) {
            Ok(resolved) if resolved != target => {
                paths.push(target);
                paths.push(resolved);
            }
            Ok(_) => paths.push(target),
            Err(e) => {
                violation.get_or_insert(e);
                paths.push(target);
            }
        }
    }
    (paths, violation)
}

/// A shell call as the rules see it.
struct ShellCall<'c> {
    command: &'c str,
    analysis: &'c ShellAnalysis,
}

/// The permission policy of a run.
#[derive(Debug, Clone)]
pub struct PermissionPolicy {
    rules: PermissionRules,
    mode: PermissionMode,
    project_dir: PathBuf,
}

impl PermissionPolicy {
    /// A policy.
    pub fn new(rules: PermissionRules, mode: PermissionMode, project_dir: PathBuf) -> Self {
        PermissionPolicy { rules, mode, project_dir }
    }

    /// The same rules under another mode (a subagent's, see [`crate::subagents::narrower_mode`]).
    pub fn with_mode(&self, mode: PermissionMode) -> Self {
        PermissionPolicy { mode, ..self.clone() }
    }

    /// The permission mode the policy decides under (hooks see it as `permission_mode`).
    pub fn mode(&self) -> PermissionMode {
        self.mode
    }

    /// The rules the policy decides with.
    pub fn rules(&self) -> &PermissionRules {
        &self.rules
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
    pub fn read_denied_by(&self, path: &Path) -> Option<&str> {
        let mut input = Map::new();
        input.insert("file_path".into(), Value::String(path.display().to_string()));
        self.rules
            .deny
            .iter()
            .find(|r| r.matches("Read", &input, &self.project_dir, RuleUse::Restrict))
            .map(PermissionRule::as_str)
    }

    /// Decides a call, given the hooks' merged suggestion and who made it. In `dontAsk` mode
    /// what would ask is refused instead.
    pub fn decide(
        &self,
        call: CallFacts<'_>,
        suggestion: &PermissionSuggestion,
        suggested_by: Option<&str>,
    ) -> PermissionDecision {
        let decision = self.decide_asking(call, suggestion, suggested_by);
        if self.mode == PermissionMode::DontAsk && decision.behavior == PermissionBehavior::Ask {
            return PermissionDecision::new(
                PermissionBehavior::Deny,
                DecisionSource::Mode,
                format!("dontAsk mode refuses what would ask ({})", decision.reason),
            );
        }
        decision
    }

    fn decide_asking<'p>(
        &'p self,
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
        let restricting = |rules: &'p [PermissionRule]| -> Option<&'p PermissionRule> {
            rules.iter().find(|r| match &shell_call {
                Some(sc) => {
                    r.restricts_shell(call.tool_name, sc.analysis, sc.command)
                        || call.write_paths.iter().any(|p| r.matches_write(p, project_dir))
                }
                None => r.matches(call.tool_name, call.args, project_dir, RuleUse::Restrict),
            })
        };
        let by_rule = |rule: &PermissionRule| DecisionSource::Rule { rule: rule.as_str().to_owned() };

        if let Some(violation) = call.boundary {
            return PermissionDecision::new(B::Deny, DecisionSource::Workspace, violation.to_string());
        }
        if let Some(rule) = restricting(&self.rules.deny) {
            return PermissionDecision::new(B::Deny, by_rule(rule), format!("denied by rule {}", rule.as_str()));
        }
        if let PermissionSuggestion::Deny { reason } = suggestion {
            let reason = reason.clone().unwrap_or_else(|| "PreToolUse hook requested deny".to_owned());
            return PermissionDecision::new(B::Deny, hook(), reason);
        }
        if self.mode == PermissionMode::Plan && call.effect != Effect::Read {
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
            &self.rules.allow,
            call.write_paths,
        ) {
            return PermissionDecision::new(B::Ask, DecisionSource::Workspace, hit.reason());
        }
        if matches!(suggestion, PermissionSuggestion::Defer) {
            return PermissionDecision::new(B::Defer, hook(), "PreToolUse hook requested defer");
        }
        if let Some(rule) = restricting(&self.rules.ask) {
            return PermissionDecision::new(B::Ask, by_rule(rule), format!("rule {} asks", rule.as_str()));
        }
        if let Some(sc) = &shell_call
            && sc.analysis.is_opaque()
            && let Some(rule) = self
                .rules
                .deny
                .iter()
                .chain(&self.rules.ask)
                .find(|r| r.has_command_pattern() && r.tool_matches(call.tool_name))
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
            Some(sc) => self.shell_allow(call.tool_name, sc.analysis, call.write_paths),
            None => self
                .rules
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
        match (self.mode, call.effect) {
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
    fn shell_allow(
        &self,
        tool_name: &str,
        analysis: &ShellAnalysis,
        write_paths: &[PathBuf],
    ) -> Option<Vec<&PermissionRule>> {
        let mut used: Vec<&PermissionRule> = Vec::new();
        let allow = &self.rules.allow;
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
        let writes_allowed_by_mode =
            matches!(self.mode, PermissionMode::AcceptEdits | PermissionMode::BypassPermissions);
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
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    fn policy(allow: &[&str], ask: &[&str], deny: &[&str], mode: PermissionMode) -> PermissionPolicy {
        let parse = |v: &[&str]| v.iter().map(|r| PermissionRule::parse(r).expect("rule")).collect();
        PermissionPolicy::new(
            PermissionRules { allow: parse(allow), ask: parse(ask), deny: parse(deny) },
            mode,
            Path::new("/proj").to_path_buf(),
        )
    }

    fn decide(
        p: &PermissionPolicy,
        tool: &str,
        effect: Effect,
        args: Value,
        s: PermissionSuggestion,
    ) -> PermissionDecision {
        let args = args.as_object().cloned().unwrap_or_default();
        p.decide(CallFacts::new(tool, effect, &args), &s, Some("h1"))
    }

    const ALLOW: PermissionSuggestion = PermissionSuggestion::Allow { reason: None };

    #[test]
    fn defaults_allow_reads_and_ask_for_writes_and_commands() {
        let p = policy(&[], &[], &[], PermissionMode::Default);
        let pass = PermissionSuggestion::Passthrough;
        assert_eq!(decide(&p, "Read", Effect::Read, json!({}), pass.clone()).behavior, PermissionBehavior::Allow);
        assert_eq!(decide(&p, "Write", Effect::Write, json!({}), pass.clone()).behavior, PermissionBehavior::Ask);
        assert_eq!(
            decide(&p, "Bash", Effect::Execute, json!({"command": "ls"}), pass).behavior,
            PermissionBehavior::Ask
        );
    }

    #[test]
    fn dont_ask_mode_refuses_what_would_ask_and_keeps_allows() {
        let p = policy(&["Bash(ls)"], &["Read(./secret)"], &[], PermissionMode::DontAsk);
        let pass = PermissionSuggestion::Passthrough;
        let write = decide(&p, "Write", Effect::Write, json!({}), pass.clone());
        assert_eq!((write.behavior, &write.source), (PermissionBehavior::Deny, &DecisionSource::Mode));
        assert!(write.reason.contains("dontAsk"), "{}", write.reason);
        let asked = decide(&p, "Read", Effect::Read, json!({"file_path": "/proj/secret"}), pass.clone());
        assert_eq!(asked.behavior, PermissionBehavior::Deny, "an ask rule is refused too");
        assert_eq!(
            decide(&p, "Bash", Effect::Execute, json!({"command": "ls"}), pass.clone()).behavior,
            PermissionBehavior::Allow
        );
        assert_eq!(decide(&p, "Read", Effect::Read, json!({}), pass).behavior, PermissionBehavior::Allow);
    }

    #[test]
    fn policy_deny_beats_hook_allow() {
        let p = policy(&[], &[], &["Bash(rm *)"], PermissionMode::Default);
        let d = decide(&p, "Bash", Effect::Execute, json!({"command": "rm -rf x"}), ALLOW);
        assert_eq!(d.behavior, PermissionBehavior::Deny);
        assert_eq!(d.source, DecisionSource::Rule { rule: "Bash(rm *)".into() });
    }

    #[test]
    fn ask_rule_still_asks_after_hook_allow_even_in_bypass() {
        for mode in [PermissionMode::Default, PermissionMode::BypassPermissions] {
            let p = policy(&[], &["Bash(git push *)"], &[], mode);
            let d = decide(&p, "Bash", Effect::Execute, json!({"command": "git push origin"}), ALLOW);
            assert_eq!(d.behavior, PermissionBehavior::Ask, "{mode}");
        }
    }

    #[test]
    fn hook_allow_skips_the_default_ask_and_hook_deny_beats_allow_rules() {
        let p = policy(&["Bash"], &[], &[], PermissionMode::Default);
        let d = decide(&p, "Write", Effect::Write, json!({}), ALLOW);
        assert_eq!((d.behavior, d.source), (PermissionBehavior::Allow, DecisionSource::Hook { hook_id: "h1".into() }));
        let d = decide(
            &p,
            "Bash",
            Effect::Execute,
            json!({"command": "ls"}),
            PermissionSuggestion::Deny { reason: Some("no".into()) },
        );
        assert_eq!((d.behavior, d.reason.as_str()), (PermissionBehavior::Deny, "no"));
    }

    #[test]
    fn plan_mode_denies_everything_but_reads_and_bypass_allows_the_rest() {
        let plan = policy(&["Bash"], &[], &[], PermissionMode::Plan);
        assert_eq!(
            decide(&plan, "Bash", Effect::Execute, json!({"command": "ls"}), ALLOW).behavior,
            PermissionBehavior::Deny
        );
        assert_eq!(
            decide(&plan, "Read", Effect::Read, json!({}), PermissionSuggestion::Passthrough).behavior,
            PermissionBehavior::Allow
        );
        let bypass = policy(&[], &[], &[], PermissionMode::BypassPermissions);
        assert_eq!(
            decide(&bypass, "Bash", Effect::Execute, json!({"command": "ls"}), PermissionSuggestion::Passthrough)
                .behavior,
            PermissionBehavior::Allow
        );
        let edits = policy(&[], &[], &[], PermissionMode::AcceptEdits);
        assert_eq!(
            decide(&edits, "Edit", Effect::Write, json!({}), PermissionSuggestion::Passthrough).behavior,
            PermissionBehavior::Allow
        );
        assert_eq!(
            decide(&edits, "Bash", Effect::Execute, json!({"command": "ls"}), PermissionSuggestion::Passthrough)
                .behavior,
            PermissionBehavior::Ask
        );
    }

    #[test]
    fn workspace_boundary_is_a_hard_deny_even_in_bypass_with_hook_allow() {
        let p = policy(&["Read"], &[], &[], PermissionMode::BypassPermissions);
        let violation = BoundaryError::Outside { path: "/etc/passwd".into(), roots: vec!["/proj".into()] };
        let args = Map::new();
        let d = p.decide(
            CallFacts { boundary: Some(&violation), ..CallFacts::new("Read", Effect::Read, &args) },
            &ALLOW,
            Some("h"),
        );
        assert_eq!((d.behavior, d.source), (PermissionBehavior::Deny, DecisionSource::Workspace));
    }

    #[test]
    fn protected_write_asks_in_every_mode_even_after_hook_allow_unless_an_allow_rule_names_it() {
        let write = json!({"file_path": ".spine/settings.local.json", "content": "{}"});
        for mode in [PermissionMode::Default, PermissionMode::AcceptEdits, PermissionMode::BypassPermissions] {
            let p = policy(&["Edit", "Edit(**)"], &[], &[], mode);
            let d = decide(&p, "Write", Effect::Write, write.clone(), ALLOW);
            assert_eq!((d.behavior, d.source), (PermissionBehavior::Ask, DecisionSource::Workspace), "{mode}");
            assert!(d.reason.contains(".spine/"), "{}", d.reason);
        }
        let p = policy(&["Edit(.spine/settings.local.json)"], &[], &[], PermissionMode::AcceptEdits);
        let d = decide(&p, "Write", Effect::Write, write.clone(), PermissionSuggestion::Passthrough);
        assert_eq!(d.behavior, PermissionBehavior::Allow);
        let p = policy(&[], &[], &["Write"], PermissionMode::BypassPermissions);
        assert_eq!(decide(&p, "Write", Effect::Write, write, ALLOW).behavior, PermissionBehavior::Deny);
    }

    #[test]
    fn hook_defer_defers_unless_a_deny_applies() {
        let p = policy(&[], &[], &[], PermissionMode::Default);
        assert_eq!(
            decide(&p, "Bash", Effect::Execute, json!({"command": "ls"}), PermissionSuggestion::Defer).behavior,
            PermissionBehavior::Defer
        );
    }
}
