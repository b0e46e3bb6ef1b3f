//! spine's engine: the tool registry, the hook engine and its merge rules, the permission
//! policy, the pipeline stages and the agent runner. No processes, no sockets: those live in
//! `spine-tools`, `spine-hooks` and `spine-models`, behind the traits defined here.
//!
//! # Layout
//!
//! - [`tool`], [`registry`]: the [`Tool`](tool::Tool) contract and the frozen registry that
//!   prepares calls (`unknown_tool`, `invalid_arguments`).
//! - [`workspace`]: the workspace boundary of file tools; [`workspace::open`], the race-free
//!   opener beneath the root that enforces it (this crate opens files, never processes or
//!   sockets).
//! - [`hooks`]: the [`Hook`](hooks::Hook) contract, the registry of hooks, the engine and one
//!   module per event with its merge rules.
//! - [`permission`]: rules in Claude Code's syntax, the policy's precedence table, the approver.
//! - [`sandbox_rules`]: what the permission step knows of the command sandbox (which shell
//!   calls run in it, `dangerouslyDisableSandbox`, `autoAllowBashIfSandboxed`).
//! - [`elicitation`]: an MCP server's questions during a tool call — hooks, the approver, the
//!   answer sent back.
//! - [`model`]: the [`ModelClient`](model::ModelClient) contract; [`model_reasoning`]: the
//!   reasoning a session's flags ask of it; [`model_fallback`]: the models that take over when
//!   it is overloaded or unavailable.
//! - [`memory_files`]: the `CLAUDE.md` / `AGENTS.md` files and their `@path` imports, read once
//!   per run for the prompt's Memory Files layer, and the conditional `.claude/rules/` files
//!   shown when a tool touches a matching file.
//! - [`stages`]: `prepare_turn`, `review_tool_call`, `project_tool_result`, `finalize_output`…
//! - [`runner`]: the agent loop; [`runner`]'s `call` module is the path of one tool call.
//! - [`session`], [`trace`], [`observer`]: the transcript file, the trace, live events.
//! - [`subagents`]: the `Agent` tool's agent types and limits (the runner's `delegate` module
//!   runs the child); [`tool_names`]: former tool names (`Task`) that still name a tool;
//!   [`tool_set`]: the tool sets a run may offer (spine's, or only Claude Code's).
//! - [`config_file`]: bounded, type-checked reading of configuration files named by path
//!   (spine-protocol's, re-exported here like [`tool_names`] and [`tool_set`]).
//! - [`watch`]: what a session watches: its shell's working directory, files and settings
//!   (CwdChanged, FileChanged, ConfigChange; the OS watcher, never a process).

// Unit tests link the dev-dependencies of every other target too; the lint checks the
// library's own list (see the workspace Cargo.toml).
#![cfg_attr(test, allow(unused_crate_dependencies))]
#![warn(missing_docs)]

pub mod elicitation;
pub mod front_matter;
pub mod hooks;
pub mod memory_files;
pub mod model;
pub mod model_fallback;
pub mod model_reasoning;
pub mod observer;
pub mod permission;
pub mod registry;
pub mod reports;
pub mod runner;
pub mod sandbox_rules;
pub mod session;
pub mod skills;
pub mod stages;
pub mod subagents;
pub mod tokens;
pub mod tool;
pub mod trace;
pub mod watch;
pub mod workspace;

// Plain vocabulary that lives in spine-protocol (shared with spine-settings), at its old paths.
pub use spine_protocol::{config_file, tool_names, tool_set};
pub use tokio_util::sync::CancellationToken;
