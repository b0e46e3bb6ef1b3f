//! `spine plugin list [--json] [--plugin-dir DIR]`.
//!
//! Contract:
//! - One row per installation that applies to this project (user installs, and project and
//!   local installs of this project), from spine's store and from Claude Code's (read only; a
//!   spine install of the same id is the one used), then each `--plugin-dir` plugin, then
//!   each plugin a settings file enables that is not installed.
//! - Each row says what the loader made of it (the settings are discovered as `spine run`
//!   does): `enabled` (and by which file: a settings file, `installed (… scope)`,
//!   `--plugin-dir`), `disabled` (by which file), `withheld` (an untrusted project enables
//!   it), `failed` (why), `replaced` (by a `--plugin-dir` plugin or another installation),
//!   `not installed`.
//! - JSON rows are Claude Code's (`id`, `version`, `scope`, `enabled`, `installPath`,
//!   `installedAt`, `lastUpdated`, `projectPath`, `gitCommitSha`) plus `status`,
//!   `enabledBy` and `store` (`spine` or `claude`).

use std::path::Path;

use serde_json::{Map, Value, json};
use spine_settings::Settings;
use spine_settings::plugins::{Install, Installed, split_id};

use super::state::decided_by;
use super::{Ctx, file_error};
use crate::cli::PluginListArgs;
use crate::error::exit;

/// `spine plugin list`.
pub(super) fn list(ctx: &Ctx, args: &PluginListArgs) -> anyhow::Result<u8> {
    let settings = ctx.settings(&args.plugin_dirs)?;
    let spine = ctx.store.installed().map_err(file_error)?;
    let claude = match ctx.claude.as_ref().map(|s| s.installed()) {
        Some(Ok(installed)) => installed,
        Some(Err(e)) => {
            eprintln!("warning: {e}");
            Installed::default()
        }
        None => Installed::default(),
    };
    let mut rows: Vec<Map<String, Value>> = Vec::new();
    for (store, installed) in [("spine", &spine), ("claude", &claude)] {
        for (id, list) in &installed.plugins {
            for install in list.iter().filter(|i| i.scope == "user" || i.project_path.as_deref() == Some(&ctx.project))
            {
                let shadowed = store == "claude" && spine.plugins.contains_key(id);
                rows.push(row(&settings, store, id, install, shadowed));
            }
        }
    }
    for plugin in settings.plugins.iter().filter(|p| p.marketplace.is_none()) {
        let mut r = Map::new();
        r.insert("id".into(), json!(plugin.id));
        r.insert("version".into(), json!(plugin.version.clone().unwrap_or_else(|| "unknown".to_owned())));
        r.insert("scope".into(), json!("session"));
        r.insert("enabled".into(), json!(true));
        r.insert("status".into(), json!("enabled"));
        r.insert("enabledBy".into(), json!("--plugin-dir"));
        r.insert("installPath".into(), json!(plugin.root));
        r.insert("store".into(), json!("--plugin-dir"));
        rows.push(r);
    }
    let listed: Vec<String> = rows.iter().filter_map(|r| r["id"].as_str().map(str::to_owned)).collect();
    let enabled_ids = settings.layers.iter().filter_map(|l| l.value.get("enabledPlugins").and_then(Value::as_object));
    let mut missing: Vec<&String> = enabled_ids.flat_map(|m| m.keys()).filter(|id| !listed.contains(id)).collect();
    missing.sort();
    missing.dedup();
    for id in missing {
        let Some((file, true)) = decided_by(&settings, id) else { continue };
        let mut r = Map::new();
        r.insert("id".into(), json!(id));
        r.insert("enabled".into(), json!(false));
        r.insert("status".into(), json!("not installed"));
        r.insert("enabledBy".into(), json!(file));
        rows.push(r);
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows).unwrap_or_default());
        return Ok(exit::OK);
    }
    if rows.is_empty() {
        println!(
            "no plugins installed: `spine plugin marketplace add SOURCE`, then `spine plugin install NAME@MARKETPLACE`"
        );
        return Ok(exit::OK);
    }
    println!("Installed plugins:\n");
    for r in &rows {
        let text = |key: &str| r.get(key).and_then(Value::as_str).unwrap_or_default();
        println!("  {}", text("id"));
        if r.contains_key("version") {
            println!("    Version: {}", text("version"));
        }
        if r.contains_key("scope") {
            let project = r.get("projectPath").and_then(Value::as_str).map(|p| format!(" ({p})")).unwrap_or_default();
            println!("    Scope: {}{project}", text("scope"));
        }
        let by = match (text("status"), r.get("enabledBy").and_then(Value::as_str)) {
            ("enabled" | "disabled" | "not installed", Some(by)) => format!(" (by {by})"),
            (_, Some(why)) => format!(" ({why})"),
            (_, None) => String::new(),
        };
        println!("    Status: {}{by}", text("status"));
        if r.contains_key("installPath") {
            println!("    Path: {}", text("installPath"));
        }
        if text("store") == "claude" {
            println!("    Installed by: Claude Code");
        }
        println!();
    }
    Ok(exit::OK)
}

/// The row of one installation.
fn row(settings: &Settings, store: &str, id: &str, install: &Install, shadowed: bool) -> Map<String, Value> {
    let (status, by) = status(settings, id, &install.install_path, shadowed);
    let mut r = Map::new();
    r.insert("id".into(), json!(id));
    r.insert("version".into(), json!(install.version));
    r.insert("scope".into(), json!(install.scope));
    r.insert("enabled".into(), json!(status == "enabled"));
    r.insert("status".into(), json!(status));
    if let Some(by) = by {
        r.insert("enabledBy".into(), json!(by));
    }
    r.insert("installPath".into(), json!(install.install_path));
    r.insert("installedAt".into(), json!(install.installed_at));
    r.insert("lastUpdated".into(), json!(install.last_updated));
    if let Some(project) = &install.project_path {
        r.insert("projectPath".into(), json!(project));
    }
    if let Some(sha) = &install.git_commit_sha {
        r.insert("gitCommitSha".into(), json!(sha));
    }
    r.insert("store".into(), json!(store));
    r
}

/// What the loader made of the installation of `id` at `path`, and who decided.
fn status(settings: &Settings, id: &str, path: &Path, shadowed: bool) -> (String, Option<String>) {
    let root = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if let Some(plugin) = settings.plugins.iter().find(|p| p.root == root) {
        return ("enabled".into(), Some(plugin.enabled_by.clone()));
    }
    if let Some((file, _)) = settings.withheld_plugins.iter().find(|(_, w)| w == id) {
        return ("withheld".into(), Some(format!("{}: the project is not trusted (`spine trust`)", file.display())));
    }
    if let Some((file, false)) = decided_by(settings, id) {
        return ("disabled".into(), Some(file));
    }
    let name = split_id(id).0;
    if settings.plugins.iter().any(|p| p.marketplace.is_none() && p.name == name) {
        return ("replaced".into(), Some("--plugin-dir".into()));
    }
    if shadowed || settings.plugins.iter().any(|p| p.id == id) {
        return ("replaced".into(), Some("another installation of it is used".into()));
    }
    let prefix = format!("plugin {id} not loaded: ");
    if let Some(reason) = settings.warnings.iter().find_map(|w| w.strip_prefix(&prefix)) {
        return ("failed".into(), Some(reason.to_owned()));
    }
    if !root.is_dir() {
        return ("failed".into(), Some(format!("{} is missing", path.display())));
    }
    ("disabled".into(), Some("defaultEnabled: false".into()))
}
