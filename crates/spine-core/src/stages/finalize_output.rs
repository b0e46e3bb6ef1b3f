//! `finalize_output`: anchors the run's output to its conversation and turn.

use std::time::Instant;

use serde::{Deserialize, Serialize};
use spine_protocol::trace::StageName;

use crate::fields;
use crate::trace::Trace;

/// The final output of a run or an assignment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FinalOutput {
    /// The output text.
    pub output: String,
    /// The conversation.
    pub conversation_id: String,
    /// The turn.
    pub turn_id: String,
}

/// Builds the final output and records the stage.
pub fn finalize_output(output: &str, conversation_id: &str, turn_id: &str, trace: &Trace) -> FinalOutput {
    let started = Instant::now();
    trace.stage(StageName::FinalizeOutput, None, started, fields! { "output" => output });
    FinalOutput { output: output.to_owned(), conversation_id: conversation_id.to_owned(), turn_id: turn_id.to_owned() }
}
