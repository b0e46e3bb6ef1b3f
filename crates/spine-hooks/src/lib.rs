//! spine's external hooks in Claude Code's wire format.
//!
//! External hooks plug into spine-core's hook engine: this crate turns the `hooks` key of the
//! settings (found, read and merged by spine-settings) into [`spine_core::hooks::HookGroup`]s
//! whose hooks run processes or POST requests and translate their answers into each event's
//! typed action. The merge rules stay in spine-core.
//!
//! # Layout
//!
//! - [`config`]: the `hooks` key parsed and validated ([`HookConfig`]): events, matcher groups,
//!   handlers; warnings for what Claude Code has and spine does not run.
//! - [`wire`]: the wire format: the event JSON a hook reads ([`wire::input`]), the JSON answer
//!   ([`wire::answer`]), one [`wire::WireEvent`] implementation per event ([`wire::events`]),
//!   and what exit statuses, HTTP responses and answer lines mean ([`wire::decide`]).
//! - [`command`], [`http`], [`persistent`], [`prompt`], [`mcp_tool`], [`agent_hook`],
//!   [`callback`]: the kinds of external hooks (the last, the Agent SDK host's callbacks,
//!   declared by its `initialize` request: [`HookConfig::from_sdk`]); [`env`](mod@env): what
//!   their processes see.
//! - [`once`]: `"once": true`, a hook that runs at its first firing only.
//! - [`rewake`]: `"asyncRewake": true`, a command hook in the background whose exit 2 wakes the
//!   model; [`running`]: a command hook's process that may go on in the background (the
//!   `{"async": true}` first line).
//! - [`launch`]: whether a hook's program or script exists, checked before spawning.
//! - [`shell`]: the shell of `command` lines (bash by default); [`syntax`]: a line or shell
//!   script that does not parse is a launch error, never the exit status 2 of a block.
//! - [`policy`]: what managed settings let hooks do (`disableAllHooks`,
//!   `allowManagedHooksOnly`, `allowedHttpHookUrls`, `httpHookAllowedEnvVars`).
//! - [`build`]: configuration → registry groups.
//! - [`check`]: `spine hooks check` (missing programs and scripts, header variables).
//! - [`fire`]: `spine hooks test` (fire one event against the configured hooks, no model).
//! - [`record`]: raw answers of each call, for `spine hooks test`.

// Unit tests link the dev-dependencies of every other target too; the lint checks the
// library's own list (see the workspace Cargo.toml).
#![cfg_attr(test, allow(unused_crate_dependencies))]
#![warn(missing_docs)]

pub mod agent_hook;
pub mod build;
pub mod callback;
pub mod check;
pub mod command;
pub mod config;
pub mod env;
pub mod fire;
pub mod http;
pub mod launch;
pub mod mcp_tool;
pub mod once;
pub mod persistent;
pub mod policy;
pub mod prompt;
pub mod record;
pub mod rewake;
pub mod running;
pub mod shell;
pub mod syntax;
pub mod wire;

pub use build::{BuildError, BuildOptions, Registered, register};
pub use callback::HookCallbacks;
pub use config::{HookConfig, HookConfigError};
