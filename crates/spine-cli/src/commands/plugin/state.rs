//! `spine plugin enable | disable NAME[@MARKET] [--scope]`.
//!
//! Contract:
//! - The plugin must be installed (by spine, or by Claude Code: its installs are read) or
//!   named by some settings file's `enabledPlugins`.
//! - The scope is `--scope`, else the one its installation that applies here has (`user`
//!   when none does); `enabledPlugins["NAME@MARKET"]` is set to true or false in spine's
//!   settings file of that scope (the rest of the file is kept).
//! - When a file of higher precedence still decides otherwise, a warning names it.

use serde_json::Value;
use spine_settings::Settings;
use spine_settings::plugins::settings_file::{self, InstallScope};

use super::install::{here, installed_id};
use super::{Ctx, file_error};
use crate::error::{config, exit};

/// `spine plugin enable` (`on`) and `spine plugin disable`.
pub(super) fn set(ctx: &Ctx, target: &str, scope: Option<InstallScope>, on: bool) -> anyhow::Result<u8> {
    let spine = ctx.store.installed().map_err(file_error)?;
    let claude = ctx.claude.as_ref().and_then(|s| s.installed().ok()).unwrap_or_default();
    let settings = ctx.settings(&[])?;
    let found = installed_id(&spine, target)
        .map(|r| r.map(|id| (id, &spine)))
        .or_else(|| installed_id(&claude, target).map(|r| r.map(|id| (id, &claude))));
    let (id, list) = match found {
        Some(Ok((id, installed))) => {
            let list = installed.plugins.get(&id).cloned().unwrap_or_default();
            (id, list)
        }
        Some(Err(e)) => return Err(config(e)),
        None => match named_in_settings(&settings, target) {
            Some(id) => (id, Vec::new()),
            None => return Err(config(format!("plugin {target:?} is not installed (`spine plugin list`)"))),
        },
    };
    let scope = match scope {
        Some(scope) => scope,
        None => {
            let applying = here(ctx, &list);
            match applying.as_slice() {
                [] => InstallScope::User,
                [(one, _)] => *one,
                _ => {
                    let scopes: Vec<&str> = applying.iter().map(|(s, _)| s.as_str()).collect();
                    return Err(config(format!(
                        "{id} is installed in several scopes ({}): say which with --scope",
                        scopes.join(", ")
                    )));
                }
            }
        }
    };
    let file = scope.file(&ctx.home, &ctx.project);
    let changed =
        settings_file::edit(scope, &ctx.home, &ctx.project, |s| settings_file::set_enabled(s, &file, &id, Some(on)))
            .map_err(file_error)?;
    let word = if on { "enabled" } else { "disabled" };
    match changed {
        true => println!("{word} {id} ({scope} scope: {})", file.display()),
        false => println!("{id} is already {word} in {}", file.display()),
    }
    let after = ctx.settings(&[])?;
    if let Some((decider, value)) = decided_by(&after, &id)
        && value != on
    {
        eprintln!("warning: {decider} (of higher precedence) sets {id} to {value}: that decides");
    }
    if on && scope != InstallScope::User && !after.trust.is_trusted() {
        eprintln!("note: {} is not trusted: spine loads this plugin once you run `spine trust`", ctx.project.display());
    }
    Ok(exit::OK)
}

/// The id a settings file's `enabledPlugins` gives `target` (`NAME` matches `NAME@…`).
fn named_in_settings(settings: &Settings, target: &str) -> Option<String> {
    let layers = settings.layers.iter().chain(&settings.withheld);
    let ids = layers.filter_map(|l| l.value.get("enabledPlugins").and_then(Value::as_object)).flat_map(|m| m.keys());
    ids.into_iter().find(|id| *id == target || spine_settings::plugins::split_id(id).0 == target).cloned()
}

/// The file of highest precedence whose `enabledPlugins` names `id`, and its value.
pub(super) fn decided_by(settings: &Settings, id: &str) -> Option<(String, bool)> {
    settings.layers.iter().rev().filter(|l| l.origin.plugin().is_none()).find_map(|layer| {
        let on = layer.value.get("enabledPlugins")?.get(id)?.as_bool()?;
        Some((layer.origin.to_string(), on))
    })
}
