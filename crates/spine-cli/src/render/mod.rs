//! Terminal output: the `-v` lifecycle lines and warnings on stderr, stream-json events on
//! stdout, the JSON result object, the `--trace` JSONL writer, the terminal approver and the
//! trust question of an interactive session.

pub mod approver;
mod elicit;
pub(crate) mod project_rules;
pub mod result;
pub mod status;
pub mod stderr;
pub mod stream_json;
pub mod trace_file;
pub mod trust_question;

use std::sync::Arc;

use spine_core::observer::{RunEvent, RunObserver};

/// Sends every event to several observers.
pub struct Fanout(pub Vec<Arc<dyn RunObserver>>);

impl RunObserver for Fanout {
    fn on_event(&self, event: &RunEvent<'_>) {
        for o in &self.0 {
            o.on_event(event);
        }
    }
}
