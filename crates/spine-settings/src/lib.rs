//! spine's settings files: found, read, and merged in precedence order, with project trust.
//!
//! Sources, lowest precedence first: `~/.claude/settings.json` and `$SPINE_HOME/settings.json`
//! (user, `SPINE_HOME` defaults to `~/.spine`), `<project>/.claude/settings.json`,
//! `<project>/.spine/settings.json` (project), `<project>/.claude/settings.local.json`,
//! `<project>/.spine/settings.local.json` (local), each `--settings FILE|JSON` in order, then
//! the managed files ([`managed`]: `/etc/claude-code/managed-settings.json`, its
//! `managed-settings.d/*.json`, `/etc/spine/managed-settings.json`).
//! `--setting-sources` selects among the user, project and local kinds; [`project`] defines the
//! project directory and the kinds. Hook lists are appended across sources (none
//! replaces another); scalar keys take the value of the highest-precedence source that sets
//! them; permission rule lists are appended.
//!
//! [`Settings::discover`] applies project trust (see [`trust`]): when the project is not
//! trusted, what its own files set that could run code or loosen permissions is moved out of
//! the layers into [`Settings::withheld`] and listed in [`Settings::skipped`];
//! [`Settings::from_layers`] itself only merges.
//!
//! The shape is Claude Code's, so a `.claude/settings.json` passed with `--settings` works as it
//! is: keys spine does not use are ignored with a note (shown with `-v`), never an error. A
//! malformed value is an error naming the file, the JSON path and the reason.
//!
//! The `hooks` key is kept as raw layers ([`Settings::all`]); spine-hooks parses it.
//!
//! # Layout
//!
//! - `source.rs`: where a value came from ([`Origin`]), one source's object
//!   ([`SettingsLayer`]), [`SettingsError`], and the JSON type checks.
//! - `settings.rs`: the merged [`Settings`] and [`Settings::from_layers`].
//! - `merge.rs`: the merge of `permissions`, `context`, `skills` and `env_passthrough`.
//! - `directories.rs`: `permissions.additionalDirectories` ([`AddedDirectory`]): more workspace
//!   roots, relative paths resolved against the settings file's project root.
//! - [`project`]: the project directory (the walk up to the repository root) and
//!   `--setting-sources`.
//! - `discover.rs`: finding and reading the files of a run ([`Settings::discover`]), at most
//!   4 MiB each, and withholding what an untrusted project may not set.
//! - [`managed`]: where managed settings are read (`SPINE_MANAGED_SETTINGS_DIR` moves them).
//! - [`policy`]: what managed settings enforce (`allowManagedHooksOnly`,
//!   `allowManagedPermissionRulesOnly`, `allowedHttpHookUrls`, `httpHookAllowedEnvVars`).
//! - [`trust`]: project trust: what an untrusted project's own files may not set, the
//!   trusted-projects store, the one-line notice.
//! - [`claude_keys`]: Claude Code 2.1's settings keys, and which of those spine does not apply
//!   are worth a warning.
//! - [`unknown`]: what a key spine does not know means (a warning, or an error for a near miss
//!   of a known key).
//! - [`sandbox`]: the `sandbox` key (Claude Code's sandbox settings, spine's `mode`), and
//!   what an untrusted project may not set in it.
//! - [`model_options`]: the `model_options` key (timeouts, tool choice, streaming, output
//!   limit, temperature, prices, thinking
//!   budget, reasoning effort).
//! - [`persist`]: saving permission changes to settings files (the approver's "always for this
//!   project", PermissionRequest hooks' `updatedPermissions`).

#![warn(missing_docs)]

pub mod claude_keys;
mod directories;
mod discover;
mod layers;
pub mod managed;
mod merge;
pub mod model_options;
pub mod persist;
pub mod plugins;
pub mod policy;
pub mod project;
pub mod sandbox;
mod settings;
mod source;
pub mod trust;
pub mod unknown;

pub use directories::{AddedDirectory, DirectorySource};
pub use discover::{Discovery, FileStatus, SettingsFile};
pub use layers::Layers;
pub use managed::ManagedLocation;
pub use model_options::{ModelOptionSettings, ModelPrice, ModelTimeoutSettings};
pub use persist::SettingsStore;
pub use policy::{AllowList, DroppedRules, ListEntry, ManagedPolicy};
pub use project::{SettingSource, SettingSources, find_project_dir};
pub use sandbox::{SandboxMode, SandboxPath, SandboxSettings};
pub use settings::{McpEnabled, PermissionSettings, RuleEntry, Settings, SkillRootSetting, TelemetryProtocol};
pub use source::{Origin, PluginOrigin, SettingsError, SettingsLayer, type_name};
pub use trust::{ProjectTrust, TrustStore};

#[cfg(test)]
mod managed_tests;
#[cfg(test)]
mod tests;
