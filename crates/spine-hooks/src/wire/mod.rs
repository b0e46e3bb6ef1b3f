//! Claude Code's wire format: what a hook receives and what its answer means, per event.
//!
//! - [`input`]: the event JSON a hook receives (common fields, then the event's own).
//! - [`answer`]: the JSON answer, its universal fields, and [`Answer`], from which each event
//!   takes the fields it owns; whatever is left is a contract error naming the fields.
//! - [`events`]: [`WireEvent`] for every event spine fires: one `read` function per event
//!   (the JSON answer), what exit status 2 means, what plain stdout means; the events around
//!   the session rather than a tool call are in [`session_events`].
//! - [`claude_fields`]: the answer fields Claude Code defines per event: one spine does not
//!   take is ignored with a note, not a contract error.
//! - [`async_form`]: `{"async": true}`, a hook that goes on in the background.
//! - [`permission_updates`]: a PermissionRequest allow's `updatedPermissions`.
//! - [`decide`]: from what a hook returned (exit status and output, an HTTP response, a line)
//!   to its answer or a [`HookError`](spine_core::hooks::HookError).

pub mod answer;
pub mod async_form;
pub mod claude_fields;
pub mod decide;
pub mod events;
pub mod input;
pub mod permission_updates;
pub mod session_events;

pub use answer::Answer;
pub use events::{WireEvent, WireVisitor, visit_wire_event};
