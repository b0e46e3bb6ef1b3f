//! spine-settings through its public API, on real files in temporary directories: which file
//! wins, what an untrusted project loses until `spine trust`, what a bad value's error names,
//! and that a key from a newer Claude Code never stops a run.

// Test targets link every dependency of the package; each one is used by the library or here.
#![allow(unused_crate_dependencies)]

use std::fs;
use std::path::Path;

use spine_settings::{ProjectTrust, Settings, TrustStore};

fn write(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).expect("create the settings directory");
    }
    fs::write(path, text).expect("write a settings file");
}

fn discover(home: &Path, project: &Path, cli: &[String], trust: ProjectTrust) -> Settings {
    Settings::discover(home, project, cli, trust).expect("the settings merge")
}

fn rules(entries: &[spine_settings::RuleEntry]) -> Vec<&str> {
    entries.iter().map(|e| e.rule.as_str()).collect()
}

#[test]
fn a_scalar_takes_the_most_specific_file_and_rule_lists_append_across_files() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    write(&home.path().join("settings.json"), r#"{"model": "user-model", "permissions": {"allow": ["Read"]}}"#);
    write(
        &project.path().join(".claude/settings.json"),
        r#"{"model": "claude-project", "permissions": {"allow": ["Bash(ls:*)"]}}"#,
    );
    write(&project.path().join(".spine/settings.local.json"), r#"{"model": "local-model"}"#);
    let cli = vec![r#"{"permissions": {"deny": ["Bash(rm:*)"]}}"#.to_owned()];

    let settings = discover(home.path(), project.path(), &cli, ProjectTrust::Flag);

    assert_eq!(settings.model.as_deref(), Some("local-model"));
    assert_eq!(rules(&settings.permissions.allow), ["Read", "Bash(ls:*)"]);
    assert_eq!(rules(&settings.permissions.deny), ["Bash(rm:*)"]);
    let (origin, _) = settings.last("model").expect("model was set");
    assert!(origin.to_string().contains("settings.local.json"), "{origin}");
}

#[test]
fn an_untrusted_project_loses_its_hooks_and_allow_rules_until_it_is_trusted() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    write(
        &project.path().join(".claude/settings.json"),
        r#"{
            "permissions": {"allow": ["Bash(curl:*)"], "deny": ["Read(./.env)"]},
            "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}
        }"#,
    );

    let untrusted = discover(home.path(), project.path(), &[], ProjectTrust::Untrusted);
    assert!(rules(&untrusted.permissions.allow).is_empty(), "an allow rule loosens: withheld");
    assert_eq!(rules(&untrusted.permissions.deny), ["Read(./.env)"], "a deny only tightens: kept");
    assert_eq!(untrusted.all("hooks").count(), 0, "hooks run code: withheld");
    assert!(!untrusted.skipped.is_empty());
    assert!(!untrusted.withheld.is_empty());

    let store = TrustStore::new(home.path());
    store.trust(project.path()).expect("trust the project");
    let trust = store.trust_of(project.path(), false).expect("read the trust store");
    assert_eq!(trust, ProjectTrust::Recorded);
    let trusted = discover(home.path(), project.path(), &[], trust);
    assert_eq!(rules(&trusted.permissions.allow), ["Bash(curl:*)"]);
    assert_eq!(trusted.all("hooks").count(), 1);

    assert!(store.revoke(project.path()).expect("revoke"));
    assert_eq!(store.trust_of(project.path(), false).expect("read"), ProjectTrust::Untrusted);
}

#[test]
fn a_malformed_value_is_an_error_naming_the_file_and_the_json_path() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    let file = project.path().join(".spine/settings.json");
    write(&file, r#"{"permissions": {"allow": ["Read", 42]}}"#);

    let err = Settings::discover(home.path(), project.path(), &[], ProjectTrust::Flag).expect_err("42 is not a rule");

    assert!(err.origin.contains(&file.display().to_string()), "{err}");
    assert_eq!(err.path, "permissions.allow[1]", "{err}");
}

#[test]
fn a_key_from_a_newer_claude_code_is_a_note_never_an_error() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    write(
        &project.path().join(".claude/settings.json"),
        r#"{"someFeatureFromTheFuture": {"on": true}, "model": "sonnet"}"#,
    );

    let settings = discover(home.path(), project.path(), &[], ProjectTrust::Flag);

    assert_eq!(settings.model.as_deref(), Some("sonnet"));
    let said: Vec<&String> = settings.notes.iter().chain(&settings.warnings).collect();
    assert!(said.iter().any(|line| line.contains("someFeatureFromTheFuture")), "{said:?}");
}

#[test]
fn settings_env_merges_with_the_most_specific_file_winning_per_variable() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    write(&home.path().join("settings.json"), r#"{"env": {"A": "user", "B": "user"}}"#);
    write(&project.path().join(".spine/settings.json"), r#"{"env": {"B": "project"}}"#);

    let settings = discover(home.path(), project.path(), &[], ProjectTrust::Flag);

    assert_eq!(settings.env.get("A").map(String::as_str), Some("user"));
    assert_eq!(settings.env.get("B").map(String::as_str), Some("project"));
}
