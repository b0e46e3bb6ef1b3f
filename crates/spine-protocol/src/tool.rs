//! Tool calls, tool specs, and tool errors.
//!
//! A [`ToolCall`] is what the model sent: an id, a name, and arguments that either parsed as a
//! JSON object or stayed a raw string (bad model output is kept, never guessed at). A
//! [`ToolError`] carries an [`ErrorCode`]; the model reads it as `Error [<code>]: <message>`.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One tool call as the model emitted it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's call id; the result is paired to it.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The arguments: parsed JSON, or the raw string when it did not parse.
    #[serde(flatten)]
    pub arguments: ToolArguments,
}

/// Tool-call arguments as received.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ToolArguments {
    /// Arguments that parsed as JSON (any JSON value; tools expect an object).
    #[serde(rename = "arguments")]
    Json(Value),
    /// Arguments that did not parse, kept verbatim.
    #[serde(rename = "arguments_raw")]
    Raw(String),
}

impl ToolArguments {
    /// Parses a provider's argument string: JSON when it parses, raw otherwise. An empty string
    /// means "no arguments" (`{}`), as OpenAI-compatible servers send for argument-less tools.
    pub fn from_wire(raw: &str) -> Self {
        if raw.trim().is_empty() {
            return ToolArguments::Json(Value::Object(Map::new()));
        }
        match serde_json::from_str::<Value>(raw) {
            Ok(v) => ToolArguments::Json(v),
            Err(_) => ToolArguments::Raw(raw.to_owned()),
        }
    }

    /// The arguments as the wire string a provider expects back in the history.
    pub fn to_wire(&self) -> String {
        match self {
            ToolArguments::Json(v) => v.to_string(),
            ToolArguments::Raw(s) => s.clone(),
        }
    }
}

/// What a tool does to the world; the permission policy and `plan` mode decide by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Reads the workspace or runtime state only.
    Read,
    /// Changes files or stored state.
    Write,
    /// Runs programs.
    Execute,
    /// Talks to the network.
    Network,
}

/// A tool as the model sees it: name, description, JSON Schema of its input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool name (Claude Code's names for built-ins; `mcp__<server>__<tool>` for MCP).
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the argument object.
    pub input_schema: Value,
}

/// Error codes of tool results. The model reads `Error [<code>]: <message>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The model called a tool that is not registered.
    UnknownTool,
    /// The worker was asked for a tool it does not support (review stage).
    UnsupportedTool,
    /// Arguments were not JSON or violated the tool's schema.
    InvalidArguments,
    /// The tool exists but is not visible to this run.
    ToolNotAllowed,
    /// A PreToolUse hook blocked the call.
    HookBlocked,
    /// A hook returned something its event does not allow (e.g. an invalid rewrite).
    HookContractError,
    /// A hook failed to decide (crashed, timed out, returned garbage) and fails closed.
    HookExecutionError,
    /// A hook could not be started at all and fails closed.
    HookLaunchError,
    /// Skipped because a hook stopped the run earlier in this batch.
    HookStoppedContinuation,
    /// The permission policy, the approver or the workspace boundary refused the call.
    PermissionDenied,
    /// The run was canceled before or during the call.
    Canceled,
    /// The tool gave up after its time limit.
    Timeout,
    /// The tool rejected its input on a rule its schema cannot express.
    ValidationError,
    /// A file, run or record the call names does not exist.
    NotFound,
    /// A command ran and exited with a non-zero status.
    CommandFailed,
    /// The tool failed while running.
    RuntimeError,
}

impl ErrorCode {
    /// The code as it appears in `Error [<code>]`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::UnknownTool => "unknown_tool",
            ErrorCode::UnsupportedTool => "unsupported_tool",
            ErrorCode::InvalidArguments => "invalid_arguments",
            ErrorCode::ToolNotAllowed => "tool_not_allowed",
            ErrorCode::HookBlocked => "hook_blocked",
            ErrorCode::HookContractError => "hook_contract_error",
            ErrorCode::HookExecutionError => "hook_execution_error",
            ErrorCode::HookLaunchError => "hook_launch_error",
            ErrorCode::HookStoppedContinuation => "hook_stopped_continuation",
            ErrorCode::PermissionDenied => "permission_denied",
            ErrorCode::Canceled => "canceled",
            ErrorCode::Timeout => "timeout",
            ErrorCode::ValidationError => "validation_error",
            ErrorCode::NotFound => "not_found",
            ErrorCode::CommandFailed => "command_failed",
            ErrorCode::RuntimeError => "runtime_error",
        }
    }

    /// The failure classification of the execution protocol
    /// (`authorization`, `semantic` or `runtime`).
    pub fn classification(self) -> Classification {
        match self {
            ErrorCode::ToolNotAllowed | ErrorCode::PermissionDenied | ErrorCode::HookBlocked => {
                Classification::Authorization
            }
            ErrorCode::UnknownTool
            | ErrorCode::UnsupportedTool
            | ErrorCode::InvalidArguments
            | ErrorCode::ValidationError
            | ErrorCode::NotFound
            | ErrorCode::HookContractError => Classification::Semantic,
            ErrorCode::HookExecutionError
            | ErrorCode::HookLaunchError
            | ErrorCode::HookStoppedContinuation
            | ErrorCode::Canceled
            | ErrorCode::Timeout
            | ErrorCode::CommandFailed
            | ErrorCode::RuntimeError => Classification::Runtime,
        }
    }

    /// Whether retrying the same call may succeed: time-outs and transient runtime failures
    /// are retryable; validation and authorization failures are not.
    pub fn retryable(self) -> bool {
        match self {
            ErrorCode::Timeout
            | ErrorCode::HookExecutionError
            | ErrorCode::HookLaunchError
            | ErrorCode::RuntimeError => true,
            ErrorCode::UnknownTool
            | ErrorCode::UnsupportedTool
            | ErrorCode::InvalidArguments
            | ErrorCode::ToolNotAllowed
            | ErrorCode::HookBlocked
            | ErrorCode::HookContractError
            | ErrorCode::HookStoppedContinuation
            | ErrorCode::PermissionDenied
            | ErrorCode::Canceled
            | ErrorCode::ValidationError
            | ErrorCode::NotFound
            | ErrorCode::CommandFailed => false,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error classification of the execution protocol's tool error payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Classification {
    /// Not allowed for this run.
    Authorization,
    /// The request itself is wrong (unknown tool, bad input).
    Semantic,
    /// Something failed while running.
    Runtime,
}

/// A tool error: the code, the message for the model, and (when the tool produced one) the
/// structured response, e.g. Bash's `{stdout, stderr, interrupted, exit_code}` on a non-zero
/// exit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolError {
    /// The error code.
    pub code: ErrorCode,
    /// The message (after `Error [<code>]: `).
    pub message: String,
    /// The tool's structured response, when it got far enough to have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Value>,
}

impl ToolError {
    /// A tool error with a code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ToolError { code, message: message.into(), response: None }
    }

    /// Attaches the tool's structured response.
    pub fn with_response(mut self, response: Value) -> Self {
        self.response = Some(response);
        self
    }

    /// The text the model reads: `Error [<code>]: <message>`.
    pub fn render(&self) -> String {
        format!("Error [{}]: {}", self.code, self.message)
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Error [{}]: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn error_renders_code_in_brackets() {
        let e = ToolError::new(ErrorCode::HookBlocked, "no rm");
        assert_eq!(e.render(), "Error [hook_blocked]: no rm");
    }

    #[test]
    fn tool_call_serialises_parsed_and_raw_arguments_under_distinct_keys() {
        let parsed = ToolCall {
            id: "c1".into(),
            name: "Read".into(),
            arguments: ToolArguments::Json(json!({"file_path": "a"})),
        };
        assert_eq!(
            serde_json::to_value(&parsed).expect("serialise"),
            json!({"id": "c1", "name": "Read", "arguments": {"file_path": "a"}})
        );
        let raw: ToolCall = serde_json::from_value(json!({"id": "c2", "name": "Bash", "arguments_raw": "{not json"}))
            .expect("deserialise");
        assert_eq!(raw.arguments, ToolArguments::Raw("{not json".into()));
    }

    #[test]
    fn wire_arguments_keep_unparsable_text_verbatim() {
        assert_eq!(ToolArguments::from_wire("{x"), ToolArguments::Raw("{x".into()));
        assert_eq!(ToolArguments::from_wire(""), ToolArguments::Json(json!({})));
        assert_eq!(ToolArguments::from_wire("{\"a\":1}"), ToolArguments::Json(json!({"a": 1})));
    }

    #[test]
    fn error_codes_serialise_as_their_rendered_names() {
        for code in [ErrorCode::UnknownTool, ErrorCode::HookStoppedContinuation, ErrorCode::Canceled] {
            assert_eq!(serde_json::to_value(code).expect("ser"), json!(code.as_str()));
        }
    }
}
