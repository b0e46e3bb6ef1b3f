//! Unit tests of [`super`]: one per rule of its contract.

use std::sync::Arc;

use serde_json::json;
use spine_protocol::permission::{PermissionBehavior, PermissionMode, PermissionSuggestion};
use spine_protocol::permission_update::{PermissionUpdate, RuleBehavior, RuleValue, UpdateDestination};
use spine_protocol::tool::Effect;

use super::*;
use crate::permission::policy::CallFacts;

const LOCAL: UpdateDestination = UpdateDestination::LocalSettings;

fn parse(rules: &[&str]) -> Vec<PermissionRule> {
    rules.iter().map(|r| PermissionRule::parse(r).expect("rule")).collect()
}

fn update(kind: &str, behavior: RuleBehavior, destination: UpdateDestination, rules: &[&str]) -> PermissionUpdate {
    let rules: Vec<RuleValue> = rules.iter().map(|r| RuleValue::from_rule(r)).collect();
    match kind {
        "add" => PermissionUpdate::AddRules { rules, behavior, destination },
        "replace" => PermissionUpdate::ReplaceRules { rules, behavior, destination },
        _ => PermissionUpdate::RemoveRules { rules, behavior, destination },
    }
}

fn bash(policy: &PermissionPolicy, command: &str) -> PermissionBehavior {
    let args = json!({"command": command}).as_object().cloned().unwrap_or_default();
    policy.decide(CallFacts::new("Bash", Effect::Execute, &args), &PermissionSuggestion::Passthrough, None).behavior
}

fn workspace() -> (tempfile::TempDir, Arc<Workspace>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = Arc::new(Workspace::new(dir.path()).expect("workspace"));
    (dir, ws)
}

#[test]
fn add_rules_apply_for_the_session_to_every_copy_of_the_policy() {
    let (_dir, ws) = workspace();
    let policy = PermissionPolicy::new(PermissionRules::default(), PermissionMode::Default, ws.root().into());
    let copy = policy.clone();
    let child = policy.with_mode(PermissionMode::Default);
    assert_eq!(bash(&copy, "npm test"), PermissionBehavior::Ask);
    let applied =
        policy.apply_updates(&[update("add", RuleBehavior::Allow, LOCAL, &["Bash(npm test:*)"])], &ws, ws.root());
    assert!(applied[0].applied, "{applied:?}");
    for p in [&policy, &copy, &child] {
        assert_eq!(bash(p, "npm test --watch"), PermissionBehavior::Allow);
    }
    let deny = update("add", RuleBehavior::Deny, UpdateDestination::Session, &["Bash(npm test:*)"]);
    policy.apply_updates(&[deny], &ws, ws.root());
    assert_eq!(bash(&copy, "npm test"), PermissionBehavior::Deny, "a deny rule added later still wins");
}

#[test]
fn replace_and_remove_rules_touch_only_what_the_destination_holds() {
    let (_dir, ws) = workspace();
    let origins =
        RuleOrigins { allow: vec![Some(LOCAL), Some(UpdateDestination::UserSettings), None], ..RuleOrigins::default() };
    let rules =
        PermissionRules { allow: parse(&["Bash(ls:*)", "Bash(git status:*)", "Bash(pwd)"]), ..Default::default() };
    let policy = PermissionPolicy::new(rules, PermissionMode::Default, ws.root().into())
        .with_limits(UpdateLimits { origins, ..UpdateLimits::default() });
    let applied =
        policy.apply_updates(&[update("replace", RuleBehavior::Allow, LOCAL, &["Bash(make:*)"])], &ws, ws.root());
    assert_eq!(applied[0].note.as_deref(), Some("1 rule(s) removed"));
    assert_eq!(bash(&policy, "ls"), PermissionBehavior::Ask, "the local rule was replaced");
    assert_eq!(bash(&policy, "make all"), PermissionBehavior::Allow);
    assert_eq!(bash(&policy, "git status"), PermissionBehavior::Allow, "the user's rule stays");
    assert_eq!(bash(&policy, "pwd"), PermissionBehavior::Allow, "a rule of no destination stays");
    let remove = update("remove", RuleBehavior::Allow, LOCAL, &["Bash(git status:*)", "Bash(make:*)"]);
    policy.apply_updates(&[remove], &ws, ws.root());
    assert_eq!(bash(&policy, "make all"), PermissionBehavior::Ask);
    assert_eq!(bash(&policy, "git status"), PermissionBehavior::Allow, "held by userSettings, not localSettings");
}

#[test]
fn no_update_loosens_a_managed_deny() {
    let (_dir, ws) = workspace();
    // The deny rule came from managed settings: it has no destination.
    let origins = RuleOrigins { deny: vec![None], ..RuleOrigins::default() };
    let rules = PermissionRules { deny: parse(&["Bash(rm:*)"]), ..Default::default() };
    let policy = PermissionPolicy::new(rules, PermissionMode::Default, ws.root().into())
        .with_limits(UpdateLimits { origins, ..UpdateLimits::default() });
    let updates = [
        update("remove", RuleBehavior::Deny, LOCAL, &["Bash(rm:*)"]),
        update("replace", RuleBehavior::Deny, UpdateDestination::UserSettings, &[]),
        update("add", RuleBehavior::Allow, UpdateDestination::Session, &["Bash(rm:*)", "Bash"]),
    ];
    policy.apply_updates(&updates, &ws, ws.root());
    assert_eq!(bash(&policy, "rm -rf x"), PermissionBehavior::Deny);
}

#[test]
fn managed_rules_only_refuses_added_allow_rules_and_keeps_restrictions() {
    let (_dir, ws) = workspace();
    let limits =
        UpdateLimits { managed_rules_only: Some("/etc/spine/managed-settings.json".into()), ..Default::default() };
    let policy = PermissionPolicy::new(PermissionRules::default(), PermissionMode::BypassPermissions, ws.root().into())
        .with_limits(limits);
    let applied = policy.apply_updates(
        &[
            update("add", RuleBehavior::Allow, LOCAL, &["Bash(npm test:*)"]),
            update("replace", RuleBehavior::Allow, UpdateDestination::Session, &["Bash"]),
            update("add", RuleBehavior::Deny, LOCAL, &["Bash(curl:*)"]),
        ],
        &ws,
        ws.root(),
    );
    let applied: Vec<bool> = applied.iter().map(|a| a.applied).collect();
    assert_eq!(applied, [false, false, true]);
    assert_eq!(bash(&policy, "curl x"), PermissionBehavior::Deny);
    assert!(policy.rules_in_force().allow.is_empty());
}

#[test]
fn set_mode_changes_the_mode_of_the_agent_and_bypass_is_refused_when_disabled() {
    let (_dir, ws) = workspace();
    let limits =
        UpdateLimits { bypass_disabled_by: Some("/p/.spine/settings.json (project)".into()), ..Default::default() };
    let policy = PermissionPolicy::new(PermissionRules::default(), PermissionMode::Default, ws.root().into())
        .with_limits(limits);
    let child = policy.with_mode(PermissionMode::Plan);
    let set = |mode| PermissionUpdate::SetMode { mode, destination: UpdateDestination::Session };
    let applied = policy.apply_updates(&[set(PermissionMode::BypassPermissions)], &ws, ws.root());
    assert!(!applied[0].applied);
    assert!(applied[0].note.as_deref().is_some_and(|n| n.contains("disableBypassPermissionsMode")), "{applied:?}");
    assert_eq!(policy.mode(), PermissionMode::Default);
    policy.apply_updates(&[set(PermissionMode::AcceptEdits)], &ws, ws.root());
    assert_eq!((policy.clone().mode(), child.mode()), (PermissionMode::AcceptEdits, PermissionMode::Plan));
}

#[test]
fn directory_updates_change_the_workspace_roots_but_never_the_project() {
    let (_dir, ws) = workspace();
    let extra = tempfile::tempdir().expect("tempdir");
    let extra_path = extra.path().canonicalize().expect("canonical");
    let policy = PermissionPolicy::new(PermissionRules::default(), PermissionMode::Default, ws.root().into());
    let dirs = |v: &[&Path]| v.iter().map(|p| p.display().to_string()).collect::<Vec<_>>();
    let add = PermissionUpdate::AddDirectories { directories: dirs(&[&extra_path]), destination: LOCAL };
    policy.apply_updates(&[add], &ws, ws.root());
    let now = policy.workspace(&ws);
    assert_eq!(now.added_roots().collect::<Vec<_>>(), [extra_path.as_path()]);
    assert!(now.resolve(&extra_path.join("f").display().to_string(), ws.root()).is_ok());
    let remove = PermissionUpdate::RemoveDirectories {
        directories: dirs(&[&extra_path, ws.root()]),
        destination: UpdateDestination::Session,
    };
    let applied = policy.apply_updates(&[remove], &ws, ws.root());
    assert!(applied[0].note.as_deref().is_some_and(|n| n.contains("project directory")), "{applied:?}");
    assert_eq!(policy.workspace(&ws).roots().collect::<Vec<_>>(), [ws.root()]);
}

#[test]
fn an_invalid_update_names_its_field() {
    let cwd = Path::new("/");
    let bad_rule = update("add", RuleBehavior::Allow, LOCAL, &["Bash(ls)", "Bash(unclosed"]);
    let err = check_update(&bad_rule, cwd).expect_err("bad rule");
    assert!(err.starts_with("rules[1]: "), "{err}");
    let empty_tool = PermissionUpdate::AddRules {
        rules: vec![RuleValue { tool_name: " ".into(), rule_content: None }],
        behavior: RuleBehavior::Deny,
        destination: LOCAL,
    };
    assert!(check_update(&empty_tool, cwd).is_err());
    let missing = PermissionUpdate::AddDirectories {
        directories: vec!["/".into(), "/no/such/dir/here".into()],
        destination: LOCAL,
    };
    let err = check_update(&missing, cwd).expect_err("missing dir");
    assert!(err.starts_with("directories[1]: /no/such/dir/here is not an existing directory"), "{err}");
    let remove_missing =
        PermissionUpdate::RemoveDirectories { directories: vec!["/no/such/dir".into()], destination: LOCAL };
    assert_eq!(check_update(&remove_missing, cwd), Ok(()));
}
