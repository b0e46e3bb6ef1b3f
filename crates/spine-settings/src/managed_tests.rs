//! Unit tests of the managed tier: where it is read ([`crate::managed`]) and what it enforces
//! ([`crate::policy`]), one rule each.

use std::path::Path;

use serde_json::{Value, json};
use spine_protocol::permission::PermissionMode;

use crate::trust::{McpApproval, Scope};
use crate::{FileStatus, ManagedLocation, Origin, ProjectTrust, SettingSources, Settings, SettingsLayer};

fn layer(origin: Origin, v: Value) -> SettingsLayer {
    SettingsLayer { origin, value: v.as_object().cloned().unwrap_or_default() }
}

fn write(dir: &Path, rel: &str, v: &Value) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, v.to_string()).expect("write");
}

/// A user, a project and a managed directory in one temporary directory.
struct Tree {
    tmp: tempfile::TempDir,
}

impl Tree {
    fn new() -> Self {
        Tree { tmp: tempfile::tempdir().expect("tmp") }
    }

    fn dir(&self, name: &str) -> std::path::PathBuf {
        self.tmp.path().join(name)
    }

    fn discover(&self, sources: &str, cli: &[String], trust: ProjectTrust) -> Result<Settings, crate::SettingsError> {
        let sources: SettingSources = sources.parse().expect("sources");
        Settings::discover_with(&crate::Discovery {
            spine_home: &self.dir("spine-home"),
            home: None,
            project_dir: &self.dir("project"),
            cli,
            trust,
            sources,
            managed: ManagedLocation::Dir(self.dir("managed")),
            plugin_dirs: &[],
        })
    }
}

fn rules(entries: &[crate::RuleEntry]) -> Vec<&str> {
    entries.iter().map(|e| e.rule.as_str()).collect()
}

#[test]
fn managed_scalars_win_over_every_source_including_cli_settings_and_rule_lists_append() {
    let t = Tree::new();
    write(&t.dir("spine-home"), "settings.json", &json!({"model": "user", "permissions": {"deny": ["Read(./u)"]}}));
    write(
        &t.dir("managed"),
        "managed-settings.json",
        &json!({"model": "managed", "permissions": {"deny": ["Read(./m)"], "defaultMode": "plan"}}),
    );
    let cli = [r#"{"model": "cli", "permissions": {"defaultMode": "acceptEdits"}}"#.to_owned()];
    let s = t.discover("user,project,local", &cli, ProjectTrust::Untrusted).expect("settings");
    assert_eq!(s.model.as_deref(), Some("managed"));
    assert_eq!(s.permissions.default_mode, Some(PermissionMode::Plan), "a managed defaultMode wins");
    assert_eq!(rules(&s.permissions.deny), ["Read(./u)", "Read(./m)"]);
    let last = s.files.last().expect("files");
    assert_eq!(last.origin, Origin::Managed(t.dir("managed").join("managed-settings.json")));
    assert_eq!(last.status, FileStatus::Read);
    assert_eq!(last.origin.to_string(), format!("{} (managed)", t.dir("managed/managed-settings.json").display()));
}

#[test]
fn drop_ins_are_read_after_the_managed_file_in_sorted_order() {
    let t = Tree::new();
    write(&t.dir("managed"), "managed-settings.json", &json!({"model": "file", "maxTurns": 3}));
    write(&t.dir("managed"), "managed-settings.d/20-b.json", &json!({"model": "b"}));
    write(&t.dir("managed"), "managed-settings.d/10-a.json", &json!({"model": "a", "maxTurns": 5}));
    let s = t.discover("user,project,local", &[], ProjectTrust::Untrusted).expect("settings");
    assert_eq!(s.model.as_deref(), Some("b"));
    assert_eq!(s.max_turns, Some(5));
    let managed: Vec<&Origin> = s.files.iter().map(|f| &f.origin).filter(|o| o.is_managed()).collect();
    assert_eq!(managed.len(), 3);
}

#[test]
fn managed_files_are_never_withheld_by_trust_nor_filtered_by_setting_sources() {
    let t = Tree::new();
    write(
        &t.dir("managed"),
        "managed-settings.json",
        &json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]},
                "permissions": {"allow": ["Bash(make *)"]}, "env": {"A": "1"}}),
    );
    let s = t.discover("", &[], ProjectTrust::Untrusted).expect("settings");
    assert_eq!(rules(&s.permissions.allow), ["Bash(make *)"]);
    assert_eq!(s.all("hooks").count(), 1);
    assert_eq!(s.env.get("A").map(String::as_str), Some("1"));
    assert!(s.skipped.is_empty() && s.withheld.is_empty());
}

#[test]
fn bad_json_in_a_managed_file_is_an_error_naming_the_file() {
    let t = Tree::new();
    std::fs::create_dir_all(t.dir("managed")).expect("mkdir");
    std::fs::write(t.dir("managed").join("managed-settings.json"), "{\"model\": ").expect("write");
    let err = t.discover("user,project,local", &[], ProjectTrust::Untrusted).expect_err("bad json");
    assert!(err.origin.contains("managed-settings.json (managed)"), "{err}");
    assert!(err.reason.contains("invalid JSON"), "{err}");
}

#[test]
fn allow_managed_permission_rules_only_drops_every_other_sources_rules() {
    let managed = Origin::Managed("/etc/spine/managed-settings.json".into());
    let s = Settings::from_layers(vec![
        layer(Origin::User("/h/settings.json".into()), json!({"permissions": {"deny": ["Read(./u)"]}})),
        layer(
            Origin::Project("/p/.claude/settings.json".into()),
            json!({"permissions": {"allow": ["Bash"], "ask": ["Write"]}}),
        ),
        layer(
            managed.clone(),
            json!({"allowManagedPermissionRulesOnly": true, "permissions": {"deny": ["Bash(rm *)"]}}),
        ),
    ])
    .expect("valid");
    assert_eq!(s.managed.permission_rules_only, Some(managed));
    assert_eq!(rules(&s.permissions.deny), ["Bash(rm *)"], "managed rules always apply");
    assert!(s.permissions.allow.is_empty() && s.permissions.ask.is_empty());
    let d = &s.managed.dropped_rules;
    assert_eq!((d.allow.len(), d.ask.len(), d.deny.len()), (1, 1, 1));
    let notice = s.managed.rules_notice(2).expect("something was dropped");
    assert!(
        notice.contains(
            "not applied: 1 allow rule, 1 ask rule, 1 deny rule from /p/.claude/settings.json, /h/settings.json;"
        ),
        "{notice}"
    );
    assert!(
        notice.contains("2 --allowedTools rules") && notice.contains("/etc/spine/managed-settings.json (managed)"),
        "{notice}"
    );
}

#[test]
fn managed_only_keys_outside_managed_settings_are_a_warning_and_ignored() {
    let s = Settings::from_layers(vec![layer(
        Origin::Project("/p/.claude/settings.json".into()),
        json!({"allowManagedHooksOnly": true, "allowManagedPermissionRulesOnly": true, "permissions": {"allow": ["Bash"]}}),
    )])
    .expect("valid");
    assert_eq!((&s.managed.hooks_only, &s.managed.permission_rules_only), (&None, &None));
    assert_eq!(rules(&s.permissions.allow), ["Bash"]);
    assert_eq!(s.warnings.len(), 2, "{:?}", s.warnings);
    assert!(
        s.warnings[0].contains("`allowManagedHooksOnly` is ignored here: only managed settings"),
        "{:?}",
        s.warnings
    );
    let err =
        Settings::from_layers(vec![layer(Origin::Managed("/m.json".into()), json!({"allowManagedHooksOnly": "yes"}))])
            .expect_err("not a boolean");
    assert_eq!(err.path, "allowManagedHooksOnly");
}

#[test]
fn http_hook_lists_append_across_sources_and_bind_managed_hooks_only_when_managed_sets_them() {
    let user = layer(
        Origin::User("/h/settings.json".into()),
        json!({"allowedHttpHookUrls": ["https://a/*"], "httpHookAllowedEnvVars": ["TOKEN"]}),
    );
    let s = Settings::from_layers(vec![user.clone()]).expect("valid");
    let urls = s.managed.http_hook_urls.as_ref().expect("set");
    assert!(urls.applies_to(false) && !urls.applies_to(true), "a user list does not bind managed hooks");
    let s = Settings::from_layers(vec![
        user,
        layer(Origin::Managed("/m.json".into()), json!({"allowedHttpHookUrls": ["https://b/*"]})),
    ])
    .expect("valid");
    let urls = s.managed.http_hook_urls.as_ref().expect("set");
    assert_eq!(urls.values().collect::<Vec<_>>(), ["https://a/*", "https://b/*"], "arrays merge");
    assert!(urls.applies_to(true));
    assert_eq!(urls.entries[1].path, "allowedHttpHookUrls[0]");
    assert!(!s.managed.http_hook_env_vars.as_ref().expect("set").applies_to(true));
    let empty =
        Settings::from_layers(vec![layer(Origin::Cli { index: 1, path: None }, json!({"allowedHttpHookUrls": []}))])
            .expect("valid");
    assert!(
        empty.managed.http_hook_urls.is_some_and(|l| l.entries.is_empty()),
        "an empty list is set, and allows nothing"
    );
}

#[test]
fn a_managed_disable_bypass_permissions_mode_names_the_managed_file() {
    let managed = Origin::Managed("/etc/spine/managed-settings.json".into());
    let s = Settings::from_layers(vec![
        layer(
            Origin::User("/h/settings.json".into()),
            json!({"permissions": {"disableBypassPermissionsMode": "disable"}}),
        ),
        layer(managed.clone(), json!({"permissions": {"disableBypassPermissionsMode": "disable"}})),
        layer(Origin::Cli { index: 1, path: None }, json!({"permissions": {"defaultMode": "bypassPermissions"}})),
    ])
    .expect("valid");
    assert_eq!(s.permissions.bypass_disabled_by, Some(managed));
}

#[test]
fn managed_mcp_servers_are_approved_as_managed() {
    let s = Settings::default();
    assert_eq!(s.mcp_approval(Scope::Managed, "corp"), McpApproval::Managed);
    assert!(McpApproval::Managed.starts());
    assert_eq!(Origin::Managed("/m.json".into()).scope(), Scope::Managed);
}

#[test]
fn a_plugin_managed_settings_enable_is_managed_and_one_enabled_elsewhere_is_not() {
    let plugin = |enabled_by| {
        Origin::Plugin(std::sync::Arc::new(crate::PluginOrigin {
            id: "guard@corp".into(),
            file: "/c/hooks/hooks.json".into(),
            root: "/c".into(),
            data: "/d".into(),
            enabled_by,
        }))
    };
    assert!(plugin(Scope::Managed).is_managed());
    assert!(!plugin(Scope::User).is_managed());
    assert_eq!(plugin(Scope::Managed).scope(), Scope::Managed);
}
