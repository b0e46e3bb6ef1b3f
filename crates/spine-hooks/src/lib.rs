//! spine's settings files and external hooks in Claude Code's wire format.
//!
//! # Layout
//!
//! - [`settings`]: finding, reading and merging settings files (`~/.spine/settings.json`,
//!   `.spine/settings.json`, `.spine/settings.local.json`, then each `--settings`), with errors
//!   that name the file, the JSON path and the reason.

pub mod settings;

pub use settings::{Origin, Settings, SettingsError};
