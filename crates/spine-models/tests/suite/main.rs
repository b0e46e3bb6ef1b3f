//! spine-models integration tests: each provider against a local server that speaks its wire
//! format byte for byte (`spine_testkit::http::TestServer`). Tests reach only 127.0.0.1.

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

mod anthropic;
mod factory;
mod images;
mod llama;
mod openai;
mod responses;
mod robustness;
mod thinking;

use std::sync::Mutex;
use std::time::Duration;

use serde_json::json;
use spine_core::model::{AttemptOutcome, AttemptReport, StreamSink};
use spine_models::retry::RetryPolicy;
use spine_protocol::hook::HookEventName;
use spine_protocol::message::{AssistantMessage, Message, ToolResultMessage};
use spine_protocol::tool::{ErrorCode, ToolArguments, ToolCall, ToolSpec};

/// The key the tests configure; it must never show up in an error.
pub const KEY: &str = "sk-test-0123456789abcdef-SECRET";

/// Collects streamed text deltas and attempt reports (`1 retry`, `2 ok`, `3 failed`).
#[derive(Default)]
pub struct Recorder(Mutex<Vec<String>>, Mutex<Vec<String>>);

impl Recorder {
    pub fn deltas(&self) -> Vec<String> {
        self.0.lock().expect("lock").clone()
    }

    pub fn attempts(&self) -> Vec<String> {
        self.1.lock().expect("lock").clone()
    }
}

impl StreamSink for Recorder {
    fn text_delta(&self, text: &str) {
        self.0.lock().expect("lock").push(text.to_owned());
    }

    fn attempt(&self, report: &AttemptReport<'_>) {
        let outcome = match report.outcome {
            AttemptOutcome::Succeeded => "ok",
            AttemptOutcome::Retrying { .. } => "retry",
            AttemptOutcome::Failed { .. } => "failed",
        };
        self.1.lock().expect("lock").push(format!("{} {outcome}", report.attempt));
    }
}

/// Retries without the production waits.
pub fn fast_retries() -> RetryPolicy {
    RetryPolicy { base_delay: Duration::from_millis(5), max_delay: Duration::from_millis(20), ..RetryPolicy::default() }
}

/// Two tools with real schemas.
pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "Read".into(),
            description: "Reads a file".into(),
            input_schema: json!({
                "type": "object",
                "properties": {"file_path": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
                "required": ["file_path"],
                "additionalProperties": false
            }),
        },
        ToolSpec {
            name: "Bash".into(),
            description: "Runs a command".into(),
            input_schema: json!({
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"]
            }),
        },
    ]
}

/// A conversation with every message kind: two leading system messages, a user prompt and its
/// context, an assistant turn with text and two calls (one with raw arguments), a context
/// given before the results (to test ordering), an ok and an error result, a post-tool
/// context, and a later system message.
pub fn full_conversation() -> Vec<Message> {
    vec![
        Message::system("You are spine."),
        Message::system("Be brief."),
        Message::user("read main.rs"),
        Message::context(HookEventName::UserPromptSubmit, "branch: main"),
        Message::Assistant(AssistantMessage {
            reasoning: Vec::new(),
            content: Some("Reading.".into()),
            tool_calls: vec![
                ToolCall {
                    id: "call_1".into(),
                    name: "Read".into(),
                    arguments: ToolArguments::Json(json!({"file_path": "src/main.rs"})),
                },
                ToolCall {
                    id: "call_2".into(),
                    name: "Bash".into(),
                    arguments: ToolArguments::Raw("{\"command\": ls".into()),
                },
            ],
        }),
        Message::context(HookEventName::PreToolUse, "careful"),
        Message::Tool(ToolResultMessage {
            tool_call_id: "call_1".into(),
            name: "Read".into(),
            content: "fn main() {}".into(),
            error_code: None,
            images: Vec::new(),
        }),
        Message::Tool(ToolResultMessage {
            tool_call_id: "call_2".into(),
            name: "Bash".into(),
            content: "Error [invalid_arguments]: not JSON".into(),
            error_code: Some(ErrorCode::InvalidArguments),
            images: Vec::new(),
        }),
        Message::context(HookEventName::PostToolUse, "lint ok"),
        Message::system("Compacted earlier turns."),
        Message::user("and now?"),
    ]
}
