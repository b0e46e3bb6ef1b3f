//! What `spine hooks check` says about the settings before its findings: every settings file
//! looked for and its status, the keys ignored or unsupported, the workspace roots and the
//! effective permission rules with their sources (as text, or as JSON rows).

use serde_json::{Value, json};
use spine_settings::FileStatus;

/// Every settings file looked for: path, kind (`user`, `project`, `local`, `cli`, `managed`) and status
/// (`read`, `not found`, `not selected`, `same file as PATH`).
pub(super) fn file_rows(settings: &spine_settings::Settings) -> Vec<Value> {
    settings
        .files
        .iter()
        .map(|f| {
            let kind = match &f.origin {
                spine_settings::Origin::Cli { .. } => "cli",
                spine_settings::Origin::Managed(_) => "managed",
                other => other.source().as_str(),
            };
            let status = match &f.status {
                FileStatus::Read => "read".to_owned(),
                FileStatus::NotFound => "not found".to_owned(),
                FileStatus::NotSelected => "not selected".to_owned(),
                FileStatus::SameAs(first) => format!("same file as {}", first.display()),
            };
            let path = f.origin.path().map(|p| p.display().to_string()).unwrap_or_default();
            json!({"path": path, "kind": kind, "status": status})
        })
        .collect()
}

/// Why a rule or directory is not applied: the project is untrusted.
const UNTRUSTED: &str = "the project is untrusted";

/// The permission rules of the applied and the withheld settings, with their sources; one not
/// applied says why (`not_applied`): an untrusted project's allow rule, or a rule
/// `allowManagedPermissionRulesOnly` keeps from applying.
pub(super) fn rule_rows(settings: &spine_settings::Settings, all: &spine_settings::Settings) -> Vec<Value> {
    let applied = &settings.permissions;
    let dropped = &all.managed.dropped_rules;
    let managed_only =
        all.managed.permission_rules_only.as_ref().map(|by| format!("allowManagedPermissionRulesOnly in {by}"));
    let mut rows = Vec::new();
    for (behavior, entries, kept, not_managed) in [
        ("deny", &all.permissions.deny, &applied.deny, &dropped.deny),
        ("ask", &all.permissions.ask, &applied.ask, &dropped.ask),
        ("allow", &all.permissions.allow, &applied.allow, &dropped.allow),
    ] {
        let reasons = entries
            .iter()
            .map(|e| (e, (!kept.contains(e)).then(|| UNTRUSTED.to_owned())))
            .chain(not_managed.iter().map(|e| (e, managed_only.clone())));
        for (e, not_applied) in reasons {
            rows.push(json!({
                "behavior": behavior,
                "rule": e.rule,
                "source": e.origin.to_string(),
                "path": e.path,
                "applied": not_applied.is_none(),
                "not_applied": not_applied,
            }));
        }
    }
    rows
}

/// The workspace roots: the project directory, then each added directory of the applied and
/// the withheld settings (`permissions.additionalDirectories`) with its source; a withheld one
/// (an untrusted project's) says so. Paths are as resolved, not checked (`check` reports a
/// missing one as an error).
pub(super) fn root_rows(
    settings: &spine_settings::Settings,
    all: &spine_settings::Settings,
    project: &std::path::Path,
) -> Vec<Value> {
    let mut rows = vec![json!({"path": project.display().to_string(), "source": "project directory", "applied": true})];
    for dir in &all.permissions.additional_directories {
        rows.push(json!({
            "path": dir.resolve(project).display().to_string(),
            "source": dir.source.to_string(),
            "applied": settings.permissions.additional_directories.contains(dir),
        }));
    }
    rows
}

/// The text part of `check` before the findings: files, ignored and unsupported keys, the
/// workspace roots, the effective permission rules.
pub(super) fn settings_report(
    settings: &spine_settings::Settings,
    all: &spine_settings::Settings,
    project: &std::path::Path,
) -> String {
    let mut text = format!("settings files (sources: {}):\n", settings.sources);
    for f in file_rows(settings) {
        let s = |k: &str| f[k].as_str().unwrap_or_default().to_owned();
        text.push_str(&format!("  {:<12} {:<7} {}\n", s("status"), s("kind"), s("path")));
    }
    for note in &settings.notes {
        text.push_str(&format!("ignored: {note}\n"));
    }
    for warning in &settings.warnings {
        text.push_str(&format!("unsupported: {warning}\n"));
    }
    text.push_str("workspace roots:\n");
    for r in root_rows(settings, all, project) {
        let s = |k: &str| r[k].as_str().unwrap_or_default().to_owned();
        let withheld =
            if r["applied"] == json!(true) { String::new() } else { format!("  (not applied: {UNTRUSTED})") };
        text.push_str(&format!("  {}  ({}){withheld}\n", s("path"), s("source")));
    }
    let rules = rule_rows(settings, all);
    if rules.is_empty() {
        text.push_str("permission rules: none\n");
    } else {
        text.push_str("permission rules:\n");
        for r in rules {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_owned();
            let withheld = match r["not_applied"].as_str() {
                Some(why) => format!("  (not applied: {why})"),
                None => String::new(),
            };
            text.push_str(&format!("  {:<5} {}  {} {}{withheld}\n", s("behavior"), s("rule"), s("source"), s("path")));
        }
    }
    text
}
