//! One module per command. Each resolves its raw arguments into a validated configuration
//! before anything runs, then calls into the library crates.

pub mod completions;
pub mod context;
pub mod doctor;
pub mod hooks;
mod hooks_agents;
mod hooks_test;
pub mod mcp;
pub mod plugin;
#[cfg(feature = "sqlite")]
pub mod reports;
pub mod run;
pub mod sessions;
mod settings_report;
pub mod setup;
#[cfg(feature = "sqlite")]
pub mod submit;
pub mod trace;
pub mod trust;
#[cfg(feature = "sqlite")]
pub mod worker;
