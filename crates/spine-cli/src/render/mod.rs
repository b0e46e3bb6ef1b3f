//! Terminal output: the `-v` lifecycle lines and warnings on stderr, stream-json events on
//! stdout, the JSON result object, the `--trace` JSONL writer, and the terminal approver.

pub mod approver;
mod elicit;
mod project_rules;
pub mod result;
pub mod status;
pub mod stderr;
pub mod stream_json;
pub mod trace_file;

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
