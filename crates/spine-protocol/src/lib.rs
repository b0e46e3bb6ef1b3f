//! Plain data shared by every spine crate: no I/O, no behaviour beyond validation.
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

#![warn(missing_docs)]

pub mod hook;
pub mod message;
pub mod pairing;
pub mod permission;
pub mod permission_update;
pub mod run;
pub mod tool;
pub mod trace;

pub use hook::{Action, HookEvent, HookEventName, HookOutput};
pub use message::{AssistantMessage, ContextMessage, ImageBlock, Message, ToolResultMessage};
pub use pairing::{PairingError, validate_pairing};
pub use permission::{PermissionBehavior, PermissionMode, PermissionSuggestion};
pub use tool::{ErrorCode, ToolArguments, ToolCall, ToolError, ToolSpec};
pub mod assignment;
pub mod report;
