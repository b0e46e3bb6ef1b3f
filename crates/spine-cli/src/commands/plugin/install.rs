//! `spine plugin install | update | uninstall`.
//!
//! Contract:
//! - `install NAME[@MARKET] [--scope]`: finds the entry (a named git marketplace is refreshed
//!   first, as Claude Code does; without `@MARKET`, the one known marketplace that lists NAME),
//!   copies the plugin into the cache (`spine_settings::plugins::install`), records it in
//!   `installed_plugins.json` (`scope`, `installPath`, `version`, `installedAt`,
//!   `lastUpdated`, `gitCommitSha`, `projectPath` for project and local scopes) and sets
//!   `enabledPlugins["NAME@MARKET"] = true` in the scope's settings file — unless the plugin
//!   says `defaultEnabled: false`, which installs it disabled.
//! - `update NAME[@MARKET] [--scope]`: refreshes the marketplace and installs the entry's
//!   current version for each installation that applies here (or the scope's); the same
//!   version is reported as up to date. A new version is a new directory.
//! - `uninstall NAME[@MARKET] [--scope] [--keep-data]`: removes the installation of the scope
//!   (default: the one that applies here) and its `enabledPlugins` entry; from the last
//!   installation, the data directory too (unless `--keep-data`). The cached copy stays.
//!   Claude Code's installs are not changed (disable them instead).

use spine_settings::plugins::install::{self as store_install, Copied};
use spine_settings::plugins::settings_file::{self, InstallScope};
use spine_settings::plugins::{Install, Installed};

use super::{Ctx, file_error, install_error, split};
use crate::error::{config, exit};

/// `spine plugin install`.
pub(super) fn install(ctx: &Ctx, target: &str, scope: InstallScope) -> anyhow::Result<u8> {
    let (name, market) = split(target);
    // A named marketplace is refreshed first; a bare name is looked up in the catalogs here.
    let (market, refresh) = match market {
        Some(market) => (market.to_owned(), true),
        None => (marketplace_of(ctx, name)?, false),
    };
    let fetched = ctx.marketplace(&market, refresh)?;
    let catalog = &fetched.marketplace;
    let Some(entry) = catalog.entry(name) else {
        let names: Vec<&str> = catalog.plugins.iter().map(|e| e.name.as_str()).collect();
        return Err(config(format!(
            "plugin {name:?} not found in marketplace {market} ({}); it lists: {}",
            catalog.file.display(),
            if names.is_empty() { "nothing".to_owned() } else { names.join(", ") }
        )));
    };
    let id = format!("{name}@{market}");
    let copied = store_install::install(&ctx.store, &ctx.git, catalog, entry).map_err(install_error)?;
    let mut installed = ctx.store.installed().map_err(file_error)?;
    let previous = installed
        .plugins
        .get(&id)
        .and_then(|list| list.iter().find(|i| store_install::same_place(i, scope, &ctx.project)))
        .map(|i| i.version.clone());
    let now = spine_core::session::timestamp_now();
    store_install::record(&mut installed, &id, scope, &ctx.project, &copied, &now);
    ctx.store.write_installed(&installed).map_err(file_error)?;
    report(&copied);
    if !copied.fresh && previous.as_deref() != Some(copied.version.as_str()) {
        eprintln!("note: version {} was already in the cache: used as it is", copied.version);
    }
    match previous {
        Some(old) if old != copied.version => println!("updated {id} from {old} to {} ({scope} scope)", copied.version),
        _ => println!("installed {id} {} ({scope} scope) in {}", copied.version, copied.install_path.display()),
    }
    let file = scope.file(&ctx.home, &ctx.project);
    if copied.default_enabled == Some(false) {
        println!("it is installed disabled (defaultEnabled: false): `spine plugin enable {id}` turns it on");
    } else {
        settings_file::edit(scope, &ctx.home, &ctx.project, |s| settings_file::set_enabled(s, &file, &id, Some(true)))
            .map_err(file_error)?;
        println!("enabled in {}", file.display());
    }
    trust_note(ctx, scope)?;
    Ok(exit::OK)
}

/// Warnings about what the copy left out.
fn report(copied: &Copied) {
    for skipped in &copied.skipped {
        eprintln!("warning: not copied: {skipped}");
    }
}

/// A note when the project's installs would be withheld.
fn trust_note(ctx: &Ctx, scope: InstallScope) -> anyhow::Result<()> {
    if scope != InstallScope::User && !super::context::trust(&ctx.home, &ctx.project, false)?.is_trusted() {
        eprintln!(
            "note: {} is not trusted: spine loads its project and local plugins once you run `spine trust`",
            ctx.project.display()
        );
    }
    Ok(())
}

/// The one known marketplace that lists `name`.
fn marketplace_of(ctx: &Ctx, name: &str) -> anyhow::Result<String> {
    let recorded = ctx.recorded()?;
    let mut names: Vec<String> = recorded.keys().cloned().collect();
    let settings = ctx.settings(&[])?;
    names.extend(ctx.declared(&settings).0.into_iter().map(|d| d.name).filter(|n| !recorded.contains_key(n)));
    names.dedup();
    let mut found = Vec::new();
    for market in &names {
        match ctx.marketplace(market, false) {
            Ok(fetched) if fetched.marketplace.entry(name).is_some() => found.push(market.clone()),
            Ok(_) => {}
            Err(error) => eprintln!("warning: marketplace {market} not read: {error:#}"),
        }
    }
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(config(format!(
            "no known marketplace lists {name:?} (known: {}); add one with `spine plugin marketplace add SOURCE`",
            if names.is_empty() { "none".to_owned() } else { names.join(", ") }
        ))),
        many => Err(config(format!(
            "{name:?} is in several marketplaces ({}): name one, `{name}@MARKETPLACE`",
            many.join(", ")
        ))),
    }
}

/// The id of an installed plugin named `target` (`NAME` or `NAME@MARKET`) in `installed`.
pub(super) fn installed_id(installed: &Installed, target: &str) -> Option<Result<String, String>> {
    let (name, market) = split(target);
    if market.is_some() {
        return installed.plugins.contains_key(target).then(|| Ok(target.to_owned()));
    }
    let ids: Vec<&String> = installed.plugins.keys().filter(|id| split(id).0 == name).collect();
    match ids.as_slice() {
        [] => None,
        [one] => Some(Ok((*one).clone())),
        many => Some(Err(format!(
            "{name:?} is installed from several marketplaces ({}): name one",
            many.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// The installations of `id` that apply to this project, with their scopes.
pub(super) fn here<'a>(ctx: &Ctx, list: &'a [Install]) -> Vec<(InstallScope, &'a Install)> {
    list.iter()
        .filter_map(|i| InstallScope::parse(&i.scope).map(|s| (s, i)))
        .filter(|(s, i)| *s == InstallScope::User || i.project_path.as_deref() == Some(ctx.project.as_path()))
        .collect()
}

/// The scope to act on: `scope`, else the only installation that applies here.
fn chosen(ctx: &Ctx, id: &str, list: &[Install], scope: Option<InstallScope>) -> anyhow::Result<InstallScope> {
    let applying = here(ctx, list);
    if let Some(scope) = scope {
        return match applying.iter().any(|(s, _)| *s == scope) {
            true => Ok(scope),
            false => Err(config(format!(
                "{id} is not installed in the {scope} scope{}",
                describe(&applying).map(|d| format!(" (it is in: {d}; use --scope)")).unwrap_or_default()
            ))),
        };
    }
    match applying.as_slice() {
        [(one, _)] => Ok(*one),
        [] => Err(config(format!("{id} is installed for other projects only: {}", projects(list)))),
        _ => Err(config(format!(
            "{id} is installed in several scopes ({}): say which with --scope",
            describe(&applying).unwrap_or_default()
        ))),
    }
}

fn describe(applying: &[(InstallScope, &Install)]) -> Option<String> {
    (!applying.is_empty()).then(|| applying.iter().map(|(s, _)| s.as_str()).collect::<Vec<_>>().join(", "))
}

fn projects(list: &[Install]) -> String {
    list.iter().filter_map(|i| i.project_path.as_ref()).map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}

/// The id of an installed plugin of spine's store, or an error saying where it is instead.
fn spine_id(ctx: &Ctx, installed: &Installed, target: &str) -> anyhow::Result<String> {
    match installed_id(installed, target) {
        Some(Ok(id)) => Ok(id),
        Some(Err(e)) => Err(config(e)),
        None => {
            let by_claude = ctx.claude.as_ref().and_then(|s| s.installed().ok()).and_then(|i| installed_id(&i, target));
            match by_claude {
                Some(Ok(id)) => Err(config(format!(
                    "{id} was installed by Claude Code (~/.claude/plugins), which spine does not change; `spine plugin disable {id}` turns it off for spine"
                ))),
                _ => Err(config(format!("plugin {target:?} is not installed (`spine plugin list`)"))),
            }
        }
    }
}

/// `spine plugin update`.
pub(super) fn update(ctx: &Ctx, target: &str, scope: Option<InstallScope>) -> anyhow::Result<u8> {
    let installed = ctx.store.installed().map_err(file_error)?;
    let id = spine_id(ctx, &installed, target)?;
    let list = installed.plugins.get(&id).cloned().unwrap_or_default();
    let scopes: Vec<InstallScope> = match scope {
        Some(scope) => vec![chosen(ctx, &id, &list, Some(scope))?],
        None => here(ctx, &list).into_iter().map(|(s, _)| s).collect(),
    };
    if scopes.is_empty() {
        return Err(config(format!("{id} is installed for other projects only: {}", projects(&list))));
    }
    let (name, market) = split(&id);
    let fetched = ctx.marketplace(market.unwrap_or_default(), true)?;
    let Some(entry) = fetched.marketplace.entry(name) else {
        return Err(config(format!(
            "{name:?} is no longer listed by marketplace {} ({})",
            fetched.marketplace.name,
            fetched.marketplace.file.display()
        )));
    };
    let copied = store_install::install(&ctx.store, &ctx.git, &fetched.marketplace, entry).map_err(install_error)?;
    report(&copied);
    let mut installed = ctx.store.installed().map_err(file_error)?;
    let now = spine_core::session::timestamp_now();
    for scope in scopes {
        let old = installed
            .plugins
            .get(&id)
            .and_then(|l| l.iter().find(|i| store_install::same_place(i, scope, &ctx.project)));
        let old = old.map(|i| i.version.clone()).unwrap_or_default();
        if old == copied.version {
            println!("{id} is already at the latest version, {old} ({scope} scope)");
            continue;
        }
        store_install::record(&mut installed, &id, scope, &ctx.project, &copied, &now);
        println!(
            "updated {id} from {old} to {} ({scope} scope); sessions load it from their next start",
            copied.version
        );
    }
    ctx.store.write_installed(&installed).map_err(file_error)?;
    Ok(exit::OK)
}

/// `spine plugin uninstall`.
pub(super) fn uninstall(ctx: &Ctx, target: &str, scope: Option<InstallScope>, keep_data: bool) -> anyhow::Result<u8> {
    let mut installed = ctx.store.installed().map_err(file_error)?;
    let id = spine_id(ctx, &installed, target)?;
    let list = installed.plugins.get(&id).cloned().unwrap_or_default();
    let scope = chosen(ctx, &id, &list, scope)?;
    store_install::forget(&mut installed, &id, scope, &ctx.project);
    ctx.store.write_installed(&installed).map_err(file_error)?;
    let file = scope.file(&ctx.home, &ctx.project);
    settings_file::edit(scope, &ctx.home, &ctx.project, |s| settings_file::set_enabled(s, &file, &id, None))
        .map_err(file_error)?;
    println!("uninstalled {id} ({scope} scope)");
    if !installed.plugins.contains_key(&id) {
        let data = ctx.store.data_dir(&id);
        if keep_data && data.exists() {
            println!("kept its data in {}", data.display());
        } else if data.exists() {
            std::fs::remove_dir_all(&data).map_err(|e| config(format!("cannot remove {}: {e}", data.display())))?;
            println!("removed its data directory {}", data.display());
        }
    }
    Ok(exit::OK)
}
