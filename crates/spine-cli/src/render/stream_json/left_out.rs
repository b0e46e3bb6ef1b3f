//! The fields Claude Code 2.1.328 writes on its stdout lines — `--output-format stream-json`
//! and the Agent SDK's control protocol — that spine does not write, one list per line kind:
//! the one source for the unit tests here and for `tests/suite/sdk_conformance.rs` (which
//! includes this file), and what docs/stream-json.md ("init", "Not printed") and docs/sdk.md
//! ("What differs from Claude Code") list. The recordings are `tests/fixtures/claude-code-2.1.328/`.
//!
//! No imports: the file is compiled into both crates.

// The binary's unit tests read `INIT` (init.rs); the conformance test reads every list.
#![allow(dead_code)]

/// `system`/`init`: fields with no meaning in spine (docs/stream-json.md, "init").
pub const INIT: [&str; 14] = [
    "claude_code_version",
    "terminal_slash_commands",
    "capabilities",
    "analytics_disabled",
    "product_feedback_disabled",
    "memory_paths",
    "original_cwd",
    "messaging_socket_path",
    "fast_mode_state",
    "fast_mode_disabled_reason",
    "per_turn_effort_active",
    "ultrathink_available",
    "ultrathink_typed_raises",
    "view_mode",
];

/// An `init` `mcp_servers` entry: its `source` (`sdk`, `dynamic`, …).
pub const INIT_MCP_SERVER: [&str; 1] = ["source"];

/// `result`: Claude Code's diagnostics, its fast mode, subagent statistics and timings.
pub const RESULT: [&str; 12] = [
    "terminal_reason",
    "fast_mode_state",
    "fast_mode_disabled_reason",
    "subagent_stats",
    "safety_stops",
    "api_error_status",
    "ttft_ms",
    "ttft_stream_ms",
    "time_to_request_ms",
    "first_content_frame_ms",
    "queued_turn_count",
    "result_index",
];

/// `result`: the per-model usage since the previous result (spine's `modelUsage` is the
/// session's, as Claude Code's).
pub const RESULT_SINCE_LAST: [&str; 1] = ["model_usage_since_last_result"];

/// A `result`'s `usage`: spine writes the four token counts only.
pub const RESULT_USAGE: [&str; 8] = [
    "output_tokens_details",
    "server_tool_use",
    "service_tier",
    "cache_creation",
    "inference_geo",
    "iterations",
    "speed",
    "fallback_credit",
];

/// A `user` line with a tool result: the tool's structured response and Claude Code's
/// metadata about the call (docs/stream-json.md, "Not printed").
pub const TOOL_RESULT_LINE: [&str; 2] = ["tool_use_result", "tool_result_meta"];

/// An `assistant` line with an MCP call: `tool_use_meta` (the MCP tool's display names).
pub const ASSISTANT: [&str; 1] = ["tool_use_meta"];

/// A `stream_event` line of `message_start`: `thinking_display`.
pub const MESSAGE_START: [&str; 1] = ["thinking_display"];

/// The answer to `initialize`: Claude Code's version, output-style folder, feedback, remote
/// control, fast mode, capabilities and hook-arbitration flags, which spine has no counterpart
/// for.
pub const INITIALIZE: [&str; 14] = [
    "user_output_styles_dir",
    "claude_code_version",
    "hooks_when_unanswered_kept",
    "other_hook_ask_outranks_host",
    "feedback_mode",
    "analytics_disabled",
    "remote_control_auto_enable",
    "remote_control_auto_connect_default",
    "remote_control_available",
    "remote_control_auto_on_by_default",
    "ide_rc_auto_enable_gate",
    "fast_mode_state",
    "fast_mode_disabled_reason",
    "capabilities",
];

/// The `control_response` envelope of the `initialize` answer: questions pending when the SDK
/// connects (spine has none at `initialize`).
pub const INITIALIZE_ENVELOPE: [&str; 2] = ["pending_permission_requests", "pending_user_dialog_requests"];

/// An `initialize` `models` entry: Claude Code's per-model feature flags.
pub const INITIALIZE_MODEL: [&str; 6] = [
    "supportsEffort",
    "supportedEffortLevels",
    "supportsAdaptiveThinking",
    "supportsFastMode",
    "supportsAutoMode",
    "supportsThinkingOff",
];

/// The `initialize` `account` (spine's is `{}`).
pub const INITIALIZE_ACCOUNT: [&str; 3] = ["tokenSource", "apiKeySource", "apiProvider"];

/// A `can_use_tool` request: Claude Code's server-policy flag (on a Write).
pub const CAN_USE_TOOL: [&str; 1] = ["server_policy_ask_only"];

/// A `hook_callback` request's `input`: the reasoning effort (spine has none to report).
pub const HOOK_INPUT: [&str; 1] = ["effort"];

/// An `mcp_status` server entry: spine gives `name` and `status` only.
pub const MCP_STATUS_SERVER: [&str; 5] = ["serverInfo", "transport", "scope", "source", "tools"];

/// The `clientInfo` of the MCP `initialize` sent to an SDK server (spine's MCP client is `spine`).
pub const MCP_CLIENT_INFO: [&str; 3] = ["title", "description", "websiteUrl"];

/// The `_meta` of an MCP `tools/call` sent to an SDK server: Claude Code's call id.
pub const MCP_CALL_META: [&str; 1] = ["claudecode/toolUseId"];
