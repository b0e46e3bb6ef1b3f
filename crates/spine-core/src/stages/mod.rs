//! The pipeline stages of seed `000`, each its own module with one job, a structured result,
//! and one trace entry `{"hook": "<stage>", …}`. They take plain inputs so that a CLI run and a
//! worker assignment go through the same code.
//!
//! `prepare_turn` → `compact_context` before every model request; `review_tool_call` → (hooks,
//! permission, execute) → `project_tool_result` for every tool call; `finalize_output` at the
//! end, `handle_error` on failure.

pub mod compact_context;
pub mod finalize_output;
pub mod handle_error;
pub mod prepare_turn;
pub mod project_tool_result;
pub mod review_tool_call;
