//! `spine plugin marketplace add | list | remove | update`.
//!
//! Contract:
//! - `add SOURCE [--scope]`: parses SOURCE as Claude Code does (plus `file://` URLs and bare
//!   repositories, cloned), fetches it (a directory is used in place; git is cloned into
//!   `marketplaces/<name>/`), records it in `known_marketplaces.json` and declares it in the
//!   scope's settings file (`extraKnownMarketplaces.<name>.source`), as Claude Code does.
//! - `list [--json]`: recorded and declared marketplaces; JSON rows are Claude Code's (`name`,
//!   `source`, `repo`/`url`/`path`, `ref`, `installLocation`) plus `lastUpdated`, `declaredIn`
//!   and `fetched`.
//! - `remove NAME [--scope]`: the declaration goes from spine's settings files of this project
//!   (or only the scope's). When no spine file declares it any more, the record goes, a clone
//!   under `marketplaces/` is deleted, and its plugins are uninstalled: their records, their
//!   `enabledPlugins` entries (in the files of each install's scope) and their data
//!   directories. Version directories in the cache stay (running sessions may use them).
//! - `update [NAME]`: git marketplaces are fetched and reset to their ref's newest commit;
//!   directories are read again; declared ones not yet here are fetched. A failure is reported
//!   and the others still update (exit 1).

use std::path::Path;

use serde_json::{Value, json};
use spine_settings::plugins::fetch;
use spine_settings::plugins::known::MarketplaceSource;
use spine_settings::plugins::settings_file::{self, InstallScope};

use super::{Ctx, file_error, install_error};
use crate::cli::{MarketplaceAddArgs, MarketplaceRemoveArgs};
use crate::error::{config, exit};

/// `spine plugin marketplace add`.
pub(super) fn add(ctx: &Ctx, args: &MarketplaceAddArgs) -> anyhow::Result<u8> {
    let home = spine_protocol::home::user_home();
    let source = MarketplaceSource::parse_argument(&args.source, &ctx.cwd, home.as_deref())
        .map_err(|e| config(e.to_string()))?;
    let now = spine_core::session::timestamp_now();
    let fetched = fetch::fetch(&ctx.store, &ctx.git, &source, None, &now).map_err(install_error)?;
    let name = fetched.marketplace.name.clone();
    let mut recorded = ctx.recorded()?;
    recorded.insert(name.clone(), fetched.known.clone());
    ctx.write_recorded(&recorded)?;
    let scope: InstallScope = args.scope.into();
    let file = scope.file(&ctx.home, &ctx.project);
    settings_file::edit(scope, &ctx.home, &ctx.project, |settings| {
        let entries = settings_file::object(settings, "extraKnownMarketplaces", &file)?;
        let entry = json!({"source": source.to_record()});
        Ok(entries.insert(name.clone(), entry.clone()) != Some(entry))
    })
    .map_err(file_error)?;
    for warning in &fetched.warnings {
        eprintln!("warning: {}: {}: {}", fetched.marketplace.file.display(), warning.field, warning.message);
    }
    println!(
        "added marketplace {name} ({} plugins) from {}, declared in {}",
        fetched.marketplace.plugins.len(),
        source.describe(),
        file.display()
    );
    Ok(exit::OK)
}

/// `spine plugin marketplace list`.
pub(super) fn list(ctx: &Ctx, as_json: bool) -> anyhow::Result<u8> {
    let recorded = ctx.recorded()?;
    let settings = ctx.settings(&[])?;
    let (declared, notes) = ctx.declared(&settings);
    let mut names: Vec<&String> = recorded.keys().chain(declared.iter().map(|d| &d.name)).collect();
    names.sort();
    names.dedup();
    let mut rows = Vec::new();
    for name in names {
        let known = recorded.get(name);
        let source = match (known, declared.iter().rev().find(|d| &d.name == name)) {
            (Some(known), _) => MarketplaceSource::from_record(&known.source).ok(),
            (None, Some(d)) => Some(d.source.clone()),
            (None, None) => None,
        };
        let mut row = source.as_ref().map(MarketplaceSource::to_record).unwrap_or_else(|| json!({"source": "unknown"}));
        if let Some(object) = row.as_object_mut() {
            object.shift_insert(0, "name".to_owned(), json!(name));
            if let Some(known) = known {
                object.insert("installLocation".to_owned(), json!(known.install_location));
                object.insert("lastUpdated".to_owned(), json!(known.last_updated));
            }
            let files: Vec<&str> = declared.iter().filter(|d| &d.name == name).map(|d| d.file.as_str()).collect();
            object.insert("declaredIn".to_owned(), json!(files));
            object.insert("fetched".to_owned(), json!(known.is_some_and(|k| k.install_location.exists())));
        }
        rows.push((source, row));
    }
    if as_json {
        let rows: Vec<&Value> = rows.iter().map(|(_, row)| row).collect();
        println!("{}", serde_json::to_string_pretty(&rows).unwrap_or_default());
        return Ok(exit::OK);
    }
    for note in notes {
        eprintln!("note: {note}");
    }
    if rows.is_empty() {
        println!("no marketplaces: add one with `spine plugin marketplace add SOURCE`");
        return Ok(exit::OK);
    }
    println!("Configured marketplaces:\n");
    for (source, row) in rows {
        println!("  {}", row["name"].as_str().unwrap_or_default());
        println!("    Source: {}", source.map(|s| s.describe()).unwrap_or_else(|| "unknown".to_owned()));
        match row.get("installLocation").and_then(Value::as_str) {
            Some(at) if row["fetched"] == true => println!("    Location: {at}"),
            _ => println!("    Location: not fetched yet (`spine plugin marketplace update`)"),
        }
        for file in row["declaredIn"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            println!("    Declared in: {file}");
        }
        println!();
    }
    Ok(exit::OK)
}

/// `spine plugin marketplace remove`.
pub(super) fn remove(ctx: &Ctx, args: &MarketplaceRemoveArgs) -> anyhow::Result<u8> {
    let name = args.name.as_str();
    let mut recorded = ctx.recorded()?;
    let settings = ctx.settings(&[])?;
    let (declared, _) = ctx.declared(&settings);
    if !recorded.contains_key(name) && !declared.iter().any(|d| d.name == name) {
        let known: Vec<String> = recorded.keys().cloned().chain(declared.into_iter().map(|d| d.name)).collect();
        return Err(config(format!("unknown marketplace {name:?} (known: {})", known.join(", "))));
    }
    let scopes: Vec<InstallScope> = match args.scope {
        Some(scope) => vec![scope.into()],
        None => vec![InstallScope::User, InstallScope::Project, InstallScope::Local],
    };
    for scope in &scopes {
        let file = scope.file(&ctx.home, &ctx.project);
        let changed = settings_file::edit(*scope, &ctx.home, &ctx.project, |s| {
            Ok(s.get_mut("extraKnownMarketplaces")
                .and_then(Value::as_object_mut)
                .is_some_and(|m| m.shift_remove(name).is_some()))
        })
        .map_err(file_error)?;
        if changed {
            println!("removed the declaration of {name} from {}", file.display());
        }
    }
    let spine_files: Vec<_> = [InstallScope::User, InstallScope::Project, InstallScope::Local]
        .iter()
        .map(|s| s.file(&ctx.home, &ctx.project).display().to_string())
        .collect();
    let still: Vec<String> =
        ctx.declared(&ctx.settings(&[])?).0.into_iter().filter(|d| d.name == name).map(|d| d.file).collect();
    if args.scope.is_some() && still.iter().any(|f| spine_files.contains(f)) {
        println!("{name} is still declared in {}; its plugins stay installed", still.join(", "));
        return Ok(exit::OK);
    }
    for file in still.iter().filter(|f| !spine_files.contains(f)) {
        eprintln!(
            "note: {file} still declares {name} (spine does not edit that file): it will be fetched again when needed"
        );
    }
    if let Some(known) = recorded.remove(name) {
        ctx.write_recorded(&recorded)?;
        // Only spine's own clone is deleted: never a directory marketplace, never a path the
        // record could point elsewhere with.
        if known.install_location == ctx.store.marketplace_dir(name) && known.install_location.is_dir() {
            std::fs::remove_dir_all(&known.install_location)
                .map_err(|e| config(format!("cannot remove {}: {e}", known.install_location.display())))?;
        }
    }
    let removed = uninstall_all(ctx, name)?;
    if !removed.is_empty() {
        println!("uninstalled its plugins: {}", removed.join(", "));
    }
    println!("removed marketplace {name}");
    Ok(exit::OK)
}

/// Uninstalls every plugin of marketplace `name` from spine's store; the ids.
fn uninstall_all(ctx: &Ctx, name: &str) -> anyhow::Result<Vec<String>> {
    let mut installed = ctx.store.installed().map_err(file_error)?;
    let suffix = format!("@{name}");
    let ids: Vec<String> = installed.plugins.keys().filter(|id| id.ends_with(&suffix)).cloned().collect();
    for id in &ids {
        for install in installed.plugins.remove(id).unwrap_or_default() {
            let scope = InstallScope::parse(&install.scope).unwrap_or(InstallScope::User);
            let project = install.project_path.clone().unwrap_or_else(|| ctx.project.clone());
            disable_in(ctx, scope, &project, id)?;
        }
        let data = ctx.store.data_dir(id);
        if data.exists() {
            std::fs::remove_dir_all(&data).map_err(|e| config(format!("cannot remove {}: {e}", data.display())))?;
        }
    }
    ctx.store.write_installed(&installed).map_err(file_error)?;
    Ok(ids)
}

/// Removes `enabledPlugins[id]` from the scope's settings file of `project`.
fn disable_in(ctx: &Ctx, scope: InstallScope, project: &Path, id: &str) -> anyhow::Result<()> {
    let file = scope.file(&ctx.home, project);
    match settings_file::edit(scope, &ctx.home, project, |s| settings_file::set_enabled(s, &file, id, None)) {
        Ok(_) => Ok(()),
        // Another project's file that cannot be edited is reported, not fatal.
        Err(e) if project != ctx.project => {
            eprintln!("warning: {e}");
            Ok(())
        }
        Err(e) => Err(file_error(e)),
    }
}

/// `spine plugin marketplace update`.
pub(super) fn update(ctx: &Ctx, name: Option<&str>) -> anyhow::Result<u8> {
    let recorded = ctx.recorded()?;
    let settings = ctx.settings(&[])?;
    let (declared, _) = ctx.declared(&settings);
    let mut names: Vec<String> = recorded.keys().cloned().chain(declared.into_iter().map(|d| d.name)).collect();
    names.sort();
    names.dedup();
    if let Some(name) = name {
        if !names.iter().any(|n| n == name) {
            return Err(config(format!("unknown marketplace {name:?} (known: {})", names.join(", "))));
        }
        names = vec![name.to_owned()];
    }
    if names.is_empty() {
        println!("no marketplaces to update");
        return Ok(exit::OK);
    }
    let mut failed = false;
    for name in &names {
        match ctx.marketplace(name, true) {
            Ok(fetched) => {
                let at = ctx
                    .git
                    .head(&fetched.marketplace.root)
                    .map(|sha| format!(" at {}", &sha[..12]))
                    .unwrap_or_default();
                println!("updated marketplace {name} ({} plugins){at}", fetched.marketplace.plugins.len());
            }
            Err(error) if names.len() == 1 => return Err(error),
            Err(error) => {
                failed = true;
                eprintln!("error: marketplace {name} not updated: {error:#}");
            }
        }
    }
    Ok(if failed { exit::FAILED } else { exit::OK })
}
