//! Mailbox items (docs/pipeline.md, "Items"): what a kernel puts in the worker's mailbox, and the
//! responses of agent-program requests.
//!
//! An item is an envelope — `item_id`, `item_type`, `protocol_message_id`, `logical_work_id`,
//! `attempt_no` — around a `payload` whose `protocol_version` must be [`PROTOCOL_VERSION`].
//! Three item types exist:
//!
//! | `item_type` | `payload` | `payload.request_kind` |
//! | --- | --- | --- |
//! | `execution_assignment` (also when `item_type` is missing) | [`RequestPayload`] with a `task_payload` | `execution_assignment` or absent |
//! | `agent_program_request` | [`RequestPayload`] (`program_tool_call` for `execute_program_tool`) | `prepare_round` or `execute_program_tool` |
//! | `resource_close_request` | [`ClosePayload`] | `resource_close_request` or absent |
//!
//! `task_payload.mode` picks the flow of an assignment ([`TaskPayload`]). These types are the
//! source of the committed JSON Schemas (`schemas/*.schema.json`, see [`schemas`]); the
//! worker decodes raw items step by step so that an unknown kind and a malformed item are told
//! apart (`unsupported_request_kind` vs `validation_error`).

mod payload;
mod response;
mod schema;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use payload::{
    AdvisoryHints, AgentContext, BudgetHints, ClosePayload, ModelHints, PROTOCOL_VERSION, ProgramToolCall,
    ProviderExecution, RequestPayload, ResourceType, RoundMessage, Task, TaskPayload,
};
pub use response::{ExecuteProgramToolResponse, PrepareRoundResponse, ProgramToolResult, ResponseStatus};
pub use schema::{MailboxItemSchema, example_item, schemas};

/// The kind of a mailbox item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ItemType {
    /// Run work through the pipeline and report it (the default when `item_type` is missing).
    #[default]
    ExecutionAssignment,
    /// A request of an agent program whose model runs on the kernel side.
    AgentProgramRequest,
    /// Cancel a running (or queued) execution.
    ResourceCloseRequest,
}

impl ItemType {
    /// Every item type.
    pub const ALL: [ItemType; 3] =
        [ItemType::ExecutionAssignment, ItemType::AgentProgramRequest, ItemType::ResourceCloseRequest];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ItemType::ExecutionAssignment => "execution_assignment",
            ItemType::AgentProgramRequest => "agent_program_request",
            ItemType::ResourceCloseRequest => "resource_close_request",
        }
    }

    /// The item type of a wire name.
    pub fn parse(name: &str) -> Option<ItemType> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// `payload.request_kind` of requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RequestKind {
    /// An execution assignment.
    ExecutionAssignment,
    /// Prepare the messages of the next model round (`prepare_turn` + `compact_context`).
    PrepareRound,
    /// Run one tool call for the kernel's model.
    ExecuteProgramTool,
}

impl RequestKind {
    /// Every request kind.
    pub const ALL: [RequestKind; 3] =
        [RequestKind::ExecutionAssignment, RequestKind::PrepareRound, RequestKind::ExecuteProgramTool];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            RequestKind::ExecutionAssignment => "execution_assignment",
            RequestKind::PrepareRound => "prepare_round",
            RequestKind::ExecuteProgramTool => "execute_program_tool",
        }
    }

    /// The request kind of a wire name.
    pub fn parse(name: &str) -> Option<RequestKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The request kinds valid for an item type.
    pub fn valid_for(item_type: ItemType) -> &'static [RequestKind] {
        match item_type {
            ItemType::ExecutionAssignment => &[RequestKind::ExecutionAssignment],
            ItemType::AgentProgramRequest => &[RequestKind::PrepareRound, RequestKind::ExecuteProgramTool],
            ItemType::ResourceCloseRequest => &[],
        }
    }
}

/// The longest item id accepted.
pub const ITEM_ID_MAX_LEN: usize = 256;

/// Checks an item id: 1 to [`ITEM_ID_MAX_LEN`] visible ASCII characters (`!` to `~`), so no
/// spaces, newlines or control characters. Every mailbox accepts exactly these ids, and a
/// worker refuses others with a `validation_error` report.
pub fn check_item_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("must not be empty".into());
    }
    if id.len() > ITEM_ID_MAX_LEN {
        return Err(format!("is {} bytes long; at most {ITEM_ID_MAX_LEN} are allowed", id.len()));
    }
    match id.bytes().position(|b| !(0x21..=0x7e).contains(&b)) {
        Some(at) => Err(format!(
            "may hold visible ASCII characters only (`!` to `~`): byte {at} is {:?}",
            id[at..].chars().next().unwrap_or(' ')
        )),
        None => Ok(()),
    }
}

/// The envelope of every item, with the payload kept raw (the first decoding step).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ItemEnvelope {
    /// The item's id (the idempotency key together with `attempt_no`): 1 to 256 visible ASCII
    /// characters.
    #[schemars(length(min = 1, max = 256), regex(pattern = r"^[!-~]+$"))]
    pub item_id: String,
    /// The kind of item; missing means `execution_assignment`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_type: Option<ItemType>,
    /// The kernel's message id.
    pub protocol_message_id: String,
    /// The logical unit of work (stable across attempts).
    pub logical_work_id: String,
    /// The attempt, from 1; the mailbox raises it on every redelivery.
    #[serde(default = "first_attempt")]
    #[schemars(range(min = 1))]
    pub attempt_no: u32,
    /// The payload.
    pub payload: Value,
    /// The submitter's span, as a W3C Trace Context `traceparent`
    /// (`00-<trace id>-<parent id>-<flags>`): with OpenTelemetry export on, the worker's trace
    /// of the item joins that trace as its child. An invalid value is ignored (a new trace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-.*)?$"))]
    pub traceparent: Option<String>,
    /// The submitter's W3C Trace Context `tracestate` (`vendor=value,…`), handed on with
    /// [`traceparent`](Self::traceparent) to the worker's spans. Without a `traceparent` it is
    /// ignored; an invalid one is dropped and the `traceparent` kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracestate: Option<String>,
}

fn first_attempt() -> u32 {
    1
}

/// A decoded item.
#[derive(Debug, Clone, PartialEq)]
pub struct MailboxItem {
    /// The item's id.
    pub item_id: String,
    /// The kernel's message id.
    pub protocol_message_id: String,
    /// The logical unit of work.
    pub logical_work_id: String,
    /// The attempt (the envelope's, raised by redeliveries).
    pub attempt_no: u32,
    /// The submitter's W3C `traceparent`, as given (see [`ItemEnvelope::traceparent`]).
    pub traceparent: Option<String>,
    /// The submitter's W3C `tracestate`, as given (see [`ItemEnvelope::tracestate`]).
    pub tracestate: Option<String>,
    /// What to do.
    pub request: ItemRequest,
}

/// What an item asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum ItemRequest {
    /// `execution_assignment`: the payload and its task.
    Execution {
        /// The context of the turn.
        payload: Box<RequestPayload>,
        /// The flow to run.
        task: TaskPayload,
    },
    /// `agent_program_request` / `prepare_round`.
    PrepareRound {
        /// The context of the round.
        payload: Box<RequestPayload>,
    },
    /// `agent_program_request` / `execute_program_tool`.
    ExecuteProgramTool {
        /// The context of the call.
        payload: Box<RequestPayload>,
        /// The call.
        call: ProgramToolCall,
    },
    /// `resource_close_request`.
    Close(ClosePayload),
}

impl ItemRequest {
    /// The item type of the request.
    pub fn item_type(&self) -> ItemType {
        match self {
            ItemRequest::Execution { .. } => ItemType::ExecutionAssignment,
            ItemRequest::PrepareRound { .. } | ItemRequest::ExecuteProgramTool { .. } => ItemType::AgentProgramRequest,
            ItemRequest::Close(_) => ItemType::ResourceCloseRequest,
        }
    }
}

#[cfg(test)]
mod tests;
