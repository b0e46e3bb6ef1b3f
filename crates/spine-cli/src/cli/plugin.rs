//! The arguments of `spine plugin`: marketplaces, installs, enabling, listing, validating
//! (Claude Code's `claude plugin` commands, writing spine's files).

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

/// `spine plugin`.
#[derive(Debug, Args)]
pub struct PluginArgs {
    /// The command.
    #[command(subcommand)]
    pub command: PluginCommand,
    /// The project (default: the current directory): where project and local scopes write,
    /// and whose settings decide what is enabled.
    #[arg(long, global = true)]
    pub cwd: Option<PathBuf>,
}

/// `spine plugin …`.
#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Add, list, remove and update marketplaces (catalogs of plugins).
    #[command(subcommand, visible_alias = "market")]
    Marketplace(MarketplaceCommand),
    /// Install a plugin from a marketplace: copy it into `$SPINE_HOME/plugins/cache/` and
    /// enable it in the scope's settings file.
    #[command(visible_alias = "i")]
    Install(PluginInstallArgs),
    /// Install the newest version of an installed plugin (a new version directory; the old
    /// one stays for sessions that loaded it).
    Update(PluginTargetArgs),
    /// Remove a plugin's installation of one scope (and its data, from the last scope).
    #[command(visible_aliases = ["remove", "rm"])]
    Uninstall(PluginUninstallArgs),
    /// Enable an installed plugin in a scope's settings file.
    Enable(PluginTargetArgs),
    /// Disable a plugin in a scope's settings file, without uninstalling it.
    Disable(PluginTargetArgs),
    /// The installed plugins (spine's and Claude Code's) and `--plugin-dir` ones: enabled or
    /// not, by which file, version, where.
    #[command(visible_alias = "ls")]
    List(PluginListArgs),
    /// Check a plugin (directory or plugin.json) or a marketplace (directory or
    /// marketplace.json); exits 1 on errors (and on warnings with --strict).
    Validate(PluginValidateArgs),
}

/// A settings scope of `spine plugin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScopeArg {
    /// `$SPINE_HOME/settings.json`: every project.
    User,
    /// `<project>/.spine/settings.json`: shared with the project.
    Project,
    /// `<project>/.spine/settings.local.json`: this project, not shared.
    Local,
}

/// `spine plugin marketplace …`.
#[derive(Debug, Subcommand)]
pub enum MarketplaceCommand {
    /// Add a marketplace: a local directory (used in place), a git repository (a URL,
    /// `file://…`, a bare repository's path; `#ref` for a branch or tag) or GitHub's
    /// `owner/repo[@ref]` (cloned into `$SPINE_HOME/plugins/marketplaces/NAME/`).
    Add(MarketplaceAddArgs),
    /// The known marketplaces: added ones and those settings declare (`extraKnownMarketplaces`).
    #[command(visible_alias = "ls")]
    List(JsonArgs),
    /// Remove a marketplace; from its last scope, also uninstall its plugins.
    #[command(visible_alias = "rm")]
    Remove(MarketplaceRemoveArgs),
    /// Fetch marketplaces again (git: fetch and reset; a directory: read again); a declared
    /// one not yet fetched is fetched.
    Update(MarketplaceUpdateArgs),
}

/// `spine plugin marketplace add`.
#[derive(Debug, Args)]
pub struct MarketplaceAddArgs {
    /// `owner/repo[@ref]`, a git URL (`https://…/x.git`, `git@host:x.git`, `file://…`,
    /// with `#ref`), or a local path (`./dir`, `/abs/dir`, `~/dir`, a marketplace.json).
    pub source: String,
    /// Which settings file declares it (`extraKnownMarketplaces`).
    #[arg(long, short = 's', value_enum, default_value = "user")]
    pub scope: ScopeArg,
}

/// `spine plugin marketplace remove`.
#[derive(Debug, Args)]
pub struct MarketplaceRemoveArgs {
    /// The marketplace's name (as `marketplace list` shows it).
    pub name: String,
    /// Only this scope's declaration (default: every spine settings file of this project).
    #[arg(long, short = 's', value_enum)]
    pub scope: Option<ScopeArg>,
}

/// `spine plugin marketplace update`.
#[derive(Debug, Args)]
pub struct MarketplaceUpdateArgs {
    /// The marketplace (default: all).
    pub name: Option<String>,
}

/// `--json`.
#[derive(Debug, Args)]
pub struct JsonArgs {
    /// Output as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `spine plugin install`.
#[derive(Debug, Args)]
pub struct PluginInstallArgs {
    /// `NAME@MARKETPLACE`, or `NAME` when one known marketplace has it.
    pub plugin: String,
    /// Where it is installed and enabled.
    #[arg(long, short = 's', value_enum, default_value = "user")]
    pub scope: ScopeArg,
}

/// A plugin and, optionally, a scope.
#[derive(Debug, Args)]
pub struct PluginTargetArgs {
    /// `NAME@MARKETPLACE`, or `NAME` when one installed plugin has it.
    pub plugin: String,
    /// The scope (default: the one it is installed in).
    #[arg(long, short = 's', value_enum)]
    pub scope: Option<ScopeArg>,
}

/// `spine plugin uninstall`.
#[derive(Debug, Args)]
pub struct PluginUninstallArgs {
    /// The plugin and scope.
    #[command(flatten)]
    pub target: PluginTargetArgs,
    /// Keep the plugin's data directory (`CLAUDE_PLUGIN_DATA`) when its last installation goes.
    #[arg(long = "keep-data")]
    pub keep_data: bool,
}

/// `spine plugin list`.
#[derive(Debug, Args)]
pub struct PluginListArgs {
    /// Output as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also the plugin in DIR, as `spine run --plugin-dir` loads it (repeatable).
    #[arg(long = "plugin-dir", value_name = "DIR")]
    pub plugin_dirs: Vec<PathBuf>,
}

/// `spine plugin validate`.
#[derive(Debug, Args)]
pub struct PluginValidateArgs {
    /// A plugin directory, a plugin.json, a marketplace directory or a marketplace.json.
    pub path: PathBuf,
    /// Treat warnings as errors.
    #[arg(long)]
    pub strict: bool,
}
