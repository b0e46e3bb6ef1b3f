//! spine's settings files and external hooks in Claude Code's wire format.
//!
//! External hooks plug into spine-core's hook engine: this crate turns the `hooks` key of the
//! settings into [`spine_core::hooks::HookGroup`]s whose hooks run processes or POST requests
//! and translate their answers into each event's typed action. The merge rules stay in
//! spine-core.
//!
//! # Layout
//!
//! - [`settings`]: finding, reading and merging settings files (`~/.spine/settings.json`,
//!   `.spine/settings.json`, `.spine/settings.local.json`, then each `--settings`), with errors
//!   that name the file, the JSON path and the reason.
//! - [`trust`]: project trust: what an untrusted project's own files may not set, the
//!   trusted-projects store, the one-line notice.
//! - [`model_options`]: the `model_options` key (model request timeouts).
//! - [`config`]: the `hooks` key parsed and validated ([`HookConfig`]): events, matcher groups,
//!   handlers; warnings for what Claude Code has and spine does not run.
//! - [`wire`]: the wire format: the event JSON a hook reads ([`wire::input`]), the JSON answer
//!   ([`wire::answer`]), one [`wire::WireEvent`] implementation per event ([`wire::events`]),
//!   and what exit statuses, HTTP responses and answer lines mean ([`wire::decide`]).
//! - [`command`], [`http`], [`persistent`]: the three kinds of external hooks; [`env`](mod@env): what
//!   their processes see.
//! - [`launch`]: whether a hook's program or script exists, checked before spawning.
//! - [`build`]: configuration → registry groups.
//! - [`check`]: `spine hooks check` (missing programs and scripts, header variables).
//! - [`fire`]: `spine hooks test` (fire one event against the configured hooks, no model).
//! - [`record`]: raw answers of each call, for `spine hooks test`.

#![warn(missing_docs)]

pub mod build;
pub mod check;
pub mod command;
pub mod config;
pub mod env;
pub mod fire;
pub mod http;
pub mod launch;
pub mod model_options;
pub mod persistent;
pub mod record;
pub mod settings;
pub mod trust;
pub mod wire;

pub use build::{BuildError, BuildOptions, Registered, register};
pub use config::{HookConfig, HookConfigError};
pub use settings::{Origin, Settings, SettingsError};
pub use trust::{ProjectTrust, TrustStore};
