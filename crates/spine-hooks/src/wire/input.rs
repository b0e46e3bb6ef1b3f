//! The event JSON a hook receives on stdin (or as the POST body, or as one line):
//! `session_id`, `transcript_path`, `cwd`, `permission_mode`, `hook_event_name`, `prompt_id`
//! (after the first prompt), then the event's own fields. Nothing else is added.

use spine_core::hooks::HookContext;
use spine_protocol::hook::{HookEvent, WireInput};

/// The event JSON, serialised (no trailing newline; JSON escapes newlines inside strings, so
/// the text is always one line).
pub fn encode<E: HookEvent>(ctx: &HookContext, input: &E::Input) -> Vec<u8> {
    let common = ctx.common_input();
    let wire = WireInput { common: &common, event: input };
    // Serialising plain data into a Vec cannot fail; an empty object is the safe fallback.
    serde_json::to_vec(&wire).unwrap_or_else(|_| b"{}".to_vec())
}

/// The event JSON as a value (for `spine hooks test`).
pub fn to_value<E: HookEvent>(ctx: &HookContext, input: &E::Input) -> serde_json::Value {
    serde_json::from_slice(&encode::<E>(ctx, input)).unwrap_or_default()
}
