//! The pipeline stages (docs/pipeline.md), each its own module with one job, a structured result,
//! and one trace entry `{"hook": "<stage>", …}`. They take plain inputs so that a CLI run and a
//! worker assignment go through the same code.
//!
//! Before every model request: `prepare_request` (the operator snapshot, `prepare_turn`, and
//! whether to compact) → `compact_context` when due. For every tool call: `review_tool_call` →
//! (PreToolUse, permission) → `execute` → `project_tool_result` (→ PostToolUse). At the end
//! `finalize_output`, on failure `handle_error`.

pub mod compact_context;
pub mod execute;
pub mod finalize_output;
pub mod handle_error;
pub mod prepare_request;
pub mod prepare_turn;
pub mod project_tool_result;
pub mod review_tool_call;
