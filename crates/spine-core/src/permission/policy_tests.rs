//! Unit tests of the precedence table of [`super`] (one test per row or rule).

use super::*;
use crate::workspace::BoundaryError;
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
    assert_eq!(decide(&p, "Bash", Effect::Execute, json!({"command": "ls"}), pass).behavior, PermissionBehavior::Ask);
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
        decide(&bypass, "Bash", Effect::Execute, json!({"command": "ls"}), PermissionSuggestion::Passthrough).behavior,
        PermissionBehavior::Allow
    );
    let edits = policy(&[], &[], &[], PermissionMode::AcceptEdits);
    assert_eq!(
        decide(&edits, "Edit", Effect::Write, json!({}), PermissionSuggestion::Passthrough).behavior,
        PermissionBehavior::Allow
    );
    assert_eq!(
        decide(&edits, "Bash", Effect::Execute, json!({"command": "ls"}), PermissionSuggestion::Passthrough).behavior,
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

fn sandboxed(p: PermissionPolicy, auto_allow: bool, allow_unsandboxed: bool) -> PermissionPolicy {
    p.with_sandbox(SandboxRules { auto_allow, allow_unsandboxed, excluded: Vec::new() })
}

#[test]
fn row_5b_leaving_the_sandbox_asks_the_approver_past_allow_rules_hooks_and_bypass() {
    let out = json!({"command": "curl example.com", "dangerouslyDisableSandbox": true});
    for mode in [PermissionMode::Default, PermissionMode::BypassPermissions] {
        let p = sandboxed(policy(&["Bash"], &[], &[], mode), true, true);
        let d = decide(&p, "Bash", Effect::Execute, out.clone(), ALLOW);
        assert_eq!((d.behavior, &d.source), (PermissionBehavior::Ask, &DecisionSource::Workspace), "{mode:?}");
        assert!(d.reason.contains("dangerouslyDisableSandbox"), "{}", d.reason);
    }
    let denied = sandboxed(policy(&[], &[], &["Bash(curl *)"], PermissionMode::Default), true, true);
    let d = decide(&denied, "Bash", Effect::Execute, out.clone(), PermissionSuggestion::Passthrough);
    assert_eq!(d.behavior, PermissionBehavior::Deny, "never past a deny rule");
    let ignored = sandboxed(policy(&["Bash"], &[], &[], PermissionMode::Default), false, false);
    let d = decide(&ignored, "Bash", Effect::Execute, out, PermissionSuggestion::Passthrough);
    assert_eq!(d.behavior, PermissionBehavior::Allow, "allowUnsandboxedCommands off: the parameter is ignored");
}

#[test]
fn row_10b_auto_allow_lets_a_sandboxed_command_skip_the_question_and_nothing_more() {
    let pass = PermissionSuggestion::Passthrough;
    let p = sandboxed(policy(&[], &["Bash(git push *)"], &[], PermissionMode::Default), true, true);
    let d = decide(&p, "Bash", Effect::Execute, json!({"command": "make test"}), pass.clone());
    assert_eq!((d.behavior, &d.source), (PermissionBehavior::Allow, &DecisionSource::Mode));
    assert!(d.reason.contains("autoAllowBashIfSandboxed"), "{}", d.reason);
    let asked = decide(&p, "Bash", Effect::Execute, json!({"command": "git push origin"}), pass.clone());
    assert_eq!(asked.behavior, PermissionBehavior::Ask, "an ask rule still asks");
    let hook = PermissionSuggestion::Ask { reason: None };
    assert_eq!(decide(&p, "Bash", Effect::Execute, json!({"command": "ls"}), hook).behavior, PermissionBehavior::Ask);
    let write = decide(&p, "Write", Effect::Write, json!({"file_path": "/proj/x"}), pass.clone());
    assert_eq!(write.behavior, PermissionBehavior::Ask, "only shell calls");
    let off = sandboxed(policy(&[], &[], &[], PermissionMode::Default), false, true);
    assert_eq!(decide(&off, "Bash", Effect::Execute, json!({"command": "ls"}), pass).behavior, PermissionBehavior::Ask);
}
