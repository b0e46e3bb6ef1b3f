//! `spine plugin …`: marketplaces, installs, enabling, listing and validating plugins, as
//! Claude Code's `claude plugin` commands do, in spine's files (`$SPINE_HOME/plugins/` in
//! Claude Code 2.1's layout, `$SPINE_HOME/settings.json`, `.spine/settings*.json`).
//!
//! Contract of this module ([`Ctx`]):
//! - The store is `$SPINE_HOME/plugins` (written); Claude Code's `~/.claude/plugins` is read
//!   for what it installed (listing, enabling), never written.
//! - The known marketplaces are those recorded in the store, and those settings declare in
//!   `extraKnownMarketplaces` at any tier (an untrusted project's declarations are not used);
//!   a declared marketplace that is not on this machine is fetched when a command needs it.
//! - Errors in files name the file and the field and exit 2; a git failure names the source
//!   and exits 1.

mod install;
mod list;
mod marketplace;
mod state;
mod validate;

use std::collections::BTreeMap;
use std::path::PathBuf;

use spine_settings::Settings;
use spine_settings::plugins::fetch::{self, Fetched};
use spine_settings::plugins::git::Git;
use spine_settings::plugins::install::InstallError;
use spine_settings::plugins::known::{self, MarketplaceSource};
use spine_settings::plugins::marketplace::Marketplace;
use spine_settings::plugins::settings_file::InstallScope;
use spine_settings::plugins::{KnownMarketplace, PluginError, Store};
use spine_settings::trust::Scope;

use super::context;
use crate::cli::{MarketplaceCommand, PluginArgs, PluginCommand, ScopeArg};
use crate::error::config;

/// Runs `spine plugin`.
pub fn plugin(args: PluginArgs) -> anyhow::Result<u8> {
    let ctx = Ctx::new(args.cwd.as_ref())?;
    match args.command {
        PluginCommand::Marketplace(cmd) => match cmd {
            MarketplaceCommand::Add(a) => marketplace::add(&ctx, &a),
            MarketplaceCommand::List(a) => marketplace::list(&ctx, a.json),
            MarketplaceCommand::Remove(a) => marketplace::remove(&ctx, &a),
            MarketplaceCommand::Update(a) => marketplace::update(&ctx, a.name.as_deref()),
        },
        PluginCommand::Install(a) => install::install(&ctx, &a.plugin, a.scope.into()),
        PluginCommand::Update(a) => install::update(&ctx, &a.plugin, a.scope.map(Into::into)),
        PluginCommand::Uninstall(a) => {
            install::uninstall(&ctx, &a.target.plugin, a.target.scope.map(Into::into), a.keep_data)
        }
        PluginCommand::Enable(a) => state::set(&ctx, &a.plugin, a.scope.map(Into::into), true),
        PluginCommand::Disable(a) => state::set(&ctx, &a.plugin, a.scope.map(Into::into), false),
        PluginCommand::List(a) => list::list(&ctx, &a),
        PluginCommand::Validate(a) => validate::validate(&a),
    }
}

impl From<ScopeArg> for InstallScope {
    fn from(scope: ScopeArg) -> Self {
        match scope {
            ScopeArg::User => InstallScope::User,
            ScopeArg::Project => InstallScope::Project,
            ScopeArg::Local => InstallScope::Local,
        }
    }
}

/// What every `spine plugin` command works with.
pub(crate) struct Ctx {
    /// `SPINE_HOME`.
    home: PathBuf,
    /// The project directory.
    project: PathBuf,
    /// The directory relative sources are read from (`--cwd`, else the current directory).
    cwd: PathBuf,
    /// spine's store.
    store: Store,
    /// Claude Code's store (read only), when there is a home directory.
    claude: Option<Store>,
    git: Git,
}

/// A marketplace settings declare.
pub(crate) struct Declared {
    name: String,
    source: MarketplaceSource,
    /// The file that declares it.
    file: String,
}

impl Ctx {
    fn new(cwd: Option<&PathBuf>) -> anyhow::Result<Ctx> {
        let home = context::spine_home()?;
        let project = context::project_dir(cwd)?;
        let cwd = match cwd {
            Some(dir) => dir.canonicalize().map_err(|e| config(format!("--cwd {}: {e}", dir.display())))?,
            None => std::env::current_dir().map_err(|e| config(format!("cannot read the current directory: {e}")))?,
        };
        let claude = spine_protocol::home::user_home().map(|h| Store::claude(&h));
        Ok(Ctx { store: Store::spine(&home), home, project, cwd, claude, git: Git::default() })
    }

    /// The project's settings (trust applied), with `--plugin-dir` plugins.
    fn settings(&self, plugin_dirs: &[PathBuf]) -> anyhow::Result<Settings> {
        context::settings_with(&self.home, &self.project, &[], false, None, plugin_dirs)
    }

    /// The marketplaces recorded in spine's store.
    fn recorded(&self) -> anyhow::Result<BTreeMap<String, KnownMarketplace>> {
        self.store.marketplaces().map_err(|e| config(e.to_string()))
    }

    fn write_recorded(&self, known: &BTreeMap<String, KnownMarketplace>) -> anyhow::Result<()> {
        self.store.write_marketplaces(known).map_err(|e| config(e.to_string()))
    }

    /// The marketplaces settings declare, highest precedence last; and notes about
    /// declarations that are not used.
    fn declared(&self, settings: &Settings) -> (Vec<Declared>, Vec<String>) {
        let mut out: Vec<Declared> = Vec::new();
        let mut notes = Vec::new();
        for layer in &settings.layers {
            if layer.origin.plugin().is_some() || !layer.value.contains_key("extraKnownMarketplaces") {
                continue;
            }
            if layer.origin.scope() == Scope::Project && !settings.trust.is_trusted() {
                notes.push(format!(
                    "{}: extraKnownMarketplaces not used: the project is not trusted (`spine trust`)",
                    layer.origin
                ));
                continue;
            }
            let mut problems = Vec::new();
            for (name, source) in known::declared(&layer.value, &mut problems) {
                out.retain(|d| d.name != name);
                out.push(Declared { name, source, file: layer.origin.to_string() });
            }
            notes.extend(problems.into_iter().map(|p| format!("{}: {p}", layer.origin)));
        }
        (out, notes)
    }

    /// The marketplace `name` on this machine: recorded (fetched again when its files are
    /// gone, refreshed first when `refresh` and it is git), else declared (fetched and
    /// recorded now).
    fn marketplace(&self, name: &str, refresh: bool) -> anyhow::Result<Fetched> {
        let mut recorded = self.recorded()?;
        let now = spine_core::session::timestamp_now();
        if let Some(known) = recorded.get(name) {
            let present = known.install_location.exists();
            let cached = || {
                let (marketplace, warnings) = Marketplace::read(&known.install_location).map_err(file_error)?;
                Ok::<_, anyhow::Error>(Fetched { known: known.clone(), marketplace, warnings })
            };
            if present && !refresh {
                return cached();
            }
            let fetched = match fetch::refresh(&self.store, &self.git, name, known, &now) {
                Ok(fetched) => fetched,
                // As Claude Code: a failed refresh falls back on the copy here, saying so.
                Err(error) if present && matches!(error, InstallError::Git(_)) => {
                    eprintln!("warning: marketplace {name} not refreshed: {error}");
                    return cached();
                }
                Err(error) => return Err(install_error(error)),
            };
            recorded.insert(name.to_owned(), fetched.known.clone());
            self.write_recorded(&recorded)?;
            return Ok(fetched);
        }
        let settings = self.settings(&[])?;
        let (declared, _) = self.declared(&settings);
        let Some(declared) = declared.into_iter().find(|d| d.name == name) else {
            let mut names: Vec<String> = recorded.keys().cloned().collect();
            names.extend(self.declared(&settings).0.into_iter().map(|d| d.name));
            let known = if names.is_empty() { "none".to_owned() } else { names.join(", ") };
            return Err(config(format!(
                "unknown marketplace {name:?} (known: {known}); add it with `spine plugin marketplace add SOURCE`"
            )));
        };
        eprintln!("fetching marketplace {name} ({}), declared in {}", declared.source.describe(), declared.file);
        let fetched =
            fetch::fetch(&self.store, &self.git, &declared.source, Some(name), &now).map_err(install_error)?;
        recorded.insert(name.to_owned(), fetched.known.clone());
        self.write_recorded(&recorded)?;
        Ok(fetched)
    }
}

/// An install error as the binary reports it: git failures exit 1, the rest 2.
fn install_error(error: InstallError) -> anyhow::Error {
    match error {
        InstallError::Git(e) => anyhow::Error::new(e),
        other => config(other.to_string()),
    }
}

/// A file error as a configuration error.
fn file_error(error: PluginError) -> anyhow::Error {
    config(error.to_string())
}

/// `NAME@MARKET` as its parts.
fn split(target: &str) -> (&str, Option<&str>) {
    spine_settings::plugins::split_id(target)
}
