//! Plain data shared by every spine crate: no I/O, no behaviour beyond validation — except
//! three small boundary helpers every layer needs alike: [`config_file`] (the bounded read of a
//! configuration file named by path), [`home`] (`HOME` and `SPINE_HOME`, read in one place) and
//! [`parse_memo`] (what parsing a file gave, remembered across runs while it is unchanged).
//!
//! # Layout
//!
//! - [`message`]: the provider-neutral conversation (system, user, assistant with tool calls,
//!   tool results, hook context).
//! - [`tool`]: tool calls as the model sent them, tool specs, tool results and error codes.
//! - [`pairing`]: the invariant "every tool call has exactly one result, in order, before the
//!   next model request", checked before every model request.
//! - [`hook`]: the hook events, their per-event inputs and outcomes (one module per event).
//! - [`permission`]: permission modes, hook suggestions and policy decisions.
//! - [`permission_update`]: permission updates in Claude Code's shape (PermissionRequest's
//!   `permission_suggestions` and `updatedPermissions`).
//! - [`trace`]: structured trace entries written by every stage and every hook.
//! - [`run`]: the result of a run (`success`, `error_max_turns`, …) and token usage.
//! - [`permission_store`]: the [`PermissionStore`](permission_store::PermissionStore) seam where
//!   permission updates are saved to settings files.
//! - Settings vocabulary shared by `spine-settings` and the engine: [`tool_choice`],
//!   [`tool_set`] and [`tool_names`] (tool sets, former tool names), [`skill_root`],
//!   [`compaction`].
//! - [`config_file`]: bounded, type-checked reading of configuration files named by path.
//! - [`home`]: the user's home, spine's home and `~`; [`lexical_path`]: paths made absolute and
//!   lexically normal without touching the file system.
//! - [`parse_memo`]: [`ParseMemo`](parse_memo::ParseMemo), parse results kept across runs,
//!   each valid while its file's stamp is unchanged.
//! - [`secret`]: [`Secret`](secret::Secret), a value (API key, password, token) that never
//!   prints.

#![warn(missing_docs)]

pub mod compaction;
pub mod config_file;
pub mod home;
pub mod hook;
pub mod lexical_path;
pub mod message;
pub mod pairing;
pub mod parse_memo;
pub mod permission;
pub mod permission_store;
pub mod permission_update;
pub mod run;
pub mod secret;
pub mod skill_root;
pub mod tool;
pub mod tool_choice;
pub mod tool_names;
pub mod tool_set;
pub mod trace;

pub use hook::{Action, HookEvent, HookEventName, HookOutput};
pub use message::{AssistantMessage, ContextMessage, ImageBlock, Message, ToolResultMessage};
pub use pairing::{PairingError, validate_pairing};
pub use permission::{PermissionBehavior, PermissionMode, PermissionSuggestion};
pub use tool::{ErrorCode, ToolArguments, ToolCall, ToolError, ToolSpec};
pub mod assignment;
pub mod report;
