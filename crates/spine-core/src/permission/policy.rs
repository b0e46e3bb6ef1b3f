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

use std::path::PathBuf;

use serde_json::{Map, Value};
use spine_protocol::permission::{
    DecisionSource, PermissionBehavior, PermissionDecision, PermissionMode, PermissionSuggestion,
};
use spine_protocol::tool::Effect;

use super::protected;
use super::rule::{PermissionRule, RuleUse};
use crate::workspace::BoundaryError;

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
    /// The first workspace-boundary violation among the call's paths.
    pub boundary: Option<&'a BoundaryError>,
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

    /// The mode.
    pub fn mode(&self) -> PermissionMode {
        self.mode
    }

    /// Decides a call, given the hooks' merged suggestion and who made it.
    pub fn decide<'p>(
        &'p self,
        call: CallFacts<'_>,
        suggestion: &PermissionSuggestion,
        suggested_by: Option<&str>,
    ) -> PermissionDecision {
        use PermissionBehavior as B;
        let hook = || DecisionSource::Hook { hook_id: suggested_by.unwrap_or("hook").to_owned() };
        let project_dir = self.project_dir.as_path();
        let matching = |rules: &'p [PermissionRule], usage: RuleUse| -> Option<&'p PermissionRule> {
            rules.iter().find(|r| r.matches(call.tool_name, call.args, project_dir, usage))
        };
        let by_rule = |rule: &PermissionRule| DecisionSource::Rule { rule: rule.as_str().to_owned() };

        if let Some(violation) = call.boundary {
            return PermissionDecision::new(B::Deny, DecisionSource::Workspace, violation.to_string());
        }
        if let Some(rule) = matching(&self.rules.deny, RuleUse::Restrict) {
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
        if let Some(hit) =
            protected::unnamed_protected_write(call.tool_name, call.effect, call.args, project_dir, &self.rules.allow)
        {
            return PermissionDecision::new(B::Ask, DecisionSource::Workspace, hit.reason());
        }
        if matches!(suggestion, PermissionSuggestion::Defer) {
            return PermissionDecision::new(B::Defer, hook(), "PreToolUse hook requested defer");
        }
        if let Some(rule) = matching(&self.rules.ask, RuleUse::Restrict) {
            return PermissionDecision::new(B::Ask, by_rule(rule), format!("rule {} asks", rule.as_str()));
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
        if let Some(rule) = matching(&self.rules.allow, RuleUse::Allow) {
            return PermissionDecision::new(B::Allow, by_rule(rule), format!("allowed by rule {}", rule.as_str()));
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
        p.decide(CallFacts { tool_name: tool, effect, args: &args, boundary: None }, &s, Some("h1"))
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
        let violation = BoundaryError::Outside { path: "/etc/passwd".into(), root: "/proj".into() };
        let args = Map::new();
        let d = p.decide(
            CallFacts { tool_name: "Read", effect: Effect::Read, args: &args, boundary: Some(&violation) },
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
