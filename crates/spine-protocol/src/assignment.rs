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

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::report::{OutputChunk, Report, ToolErrorPayload};

/// The payload protocol this worker speaks.
pub const PROTOCOL_VERSION: &str = "spine-assignment/1";

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

/// The payload of `execution_assignment` and `agent_program_request` items: the context of
/// one turn. Unknown fields are ignored (kernels send more than a worker needs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RequestPayload {
    /// Must be [`PROTOCOL_VERSION`].
    pub protocol_version: String,
    /// The request kind (see the module table); optional for assignments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_kind: Option<RequestKind>,
    /// The conversation and turn the work belongs to.
    pub task: Task,
    /// The flow of an `execution_assignment` (required there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_payload: Option<TaskPayload>,
    /// The call of an `execute_program_tool` request (required there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program_tool_call: Option<ProgramToolCall>,
    /// The transcript: `{role, content}` with role `system`, `user` or `assistant`.
    #[serde(default)]
    pub context_messages: Vec<RoundMessage>,
    /// The tools the work may use. Absent: `agent_context.allowed_tool_names`, else every
    /// registered tool. Present: exactly these (empty = none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_tool_names: Option<Vec<String>>,
    /// Budget hints (compaction threshold).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_hints: Option<BudgetHints>,
    /// Model hints; the likely model is `likely_model` → `model_ref` → `api_model` →
    /// `provider_execution.model_ref`.
    #[serde(default)]
    pub model_context: ModelHints,
    /// Provider hints.
    #[serde(default)]
    pub provider_execution: ProviderExecution,
    /// Who the agent is.
    #[serde(default)]
    pub agent_context: AgentContext,
    /// Extra context, each added to the prompt as pretty JSON.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context_imports: Vec<Value>,
}

impl RequestPayload {
    /// The allowed tools: the payload's list, else the agent context's, else `None` (all).
    pub fn allowed_tools(&self) -> Option<&[String]> {
        self.allowed_tool_names.as_deref().or(self.agent_context.allowed_tool_names.as_deref())
    }
}

/// The conversation and turn of the work.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Task {
    /// The conversation.
    pub conversation_id: String,
    /// The turn.
    pub turn_id: String,
    /// The kind of step (`turn_step`, `subagent_step`, …).
    #[serde(default = "turn_step")]
    pub kind: String,
    /// The kernel's task run, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_task_run_id: Option<String>,
}

fn turn_step() -> String {
    "turn_step".to_owned()
}

/// A transcript message of the payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RoundMessage {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The text.
    #[serde(default)]
    pub content: String,
}

/// `budget_hints`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct BudgetHints {
    /// Advisory hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advisory_hints: Option<AdvisoryHints>,
    /// The older spelling of the compaction threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advisory_compaction_threshold_tokens: Option<u64>,
}

/// `budget_hints.advisory_hints`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct AdvisoryHints {
    /// Compact when the estimate passes this many tokens (0 = never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recommended_compaction_threshold: Option<u64>,
}

/// `model_context`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct ModelHints {
    /// The model the kernel expects to use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub likely_model: Option<String>,
    /// The kernel's model reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_ref: Option<String>,
    /// The provider's model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_model: Option<String>,
}

/// `provider_execution`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct ProviderExecution {
    /// The provider's model reference (last in the likely-model chain).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_ref: Option<String>,
}

/// `agent_context`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AgentContext {
    /// The profile; `main` (the default) gets the operator prompt layers.
    #[serde(default = "main_profile")]
    pub profile: String,
    /// Whether the agent is a subagent (no operator layers).
    #[serde(default)]
    pub is_subagent: bool,
    /// The subagent session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_session_id: Option<String>,
    /// The parent subagent session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_subagent_session_id: Option<String>,
    /// How deep the subagent is nested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_depth: Option<u32>,
    /// The tools of the agent, when the payload has no `allowed_tool_names`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_tool_names: Option<Vec<String>>,
    /// The conversation that owns the subagent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_conversation_id: Option<String>,
}

impl Default for AgentContext {
    fn default() -> Self {
        AgentContext {
            profile: main_profile(),
            is_subagent: false,
            subagent_session_id: None,
            parent_subagent_session_id: None,
            subagent_depth: None,
            allowed_tool_names: None,
            owner_conversation_id: None,
        }
    }
}

fn main_profile() -> String {
    "main".to_owned()
}

/// The flow of an assignment, tagged by `mode`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum TaskPayload {
    /// Review, execute, project and finalize one tool call.
    DeterministicToolCall {
        /// The call.
        tool_call: ProgramToolCall,
    },
    /// List the skill catalog.
    SkillsCatalogList,
    /// Load one active skill (SKILL.md and its file list).
    SkillsLoad {
        /// The skill.
        skill_name: String,
    },
    /// Read one file of a skill.
    SkillsReadFile {
        /// The skill.
        skill_name: String,
        /// The file, relative to the skill's directory.
        relative_path: String,
    },
    /// Run a whole agent loop with a model (spine's addition).
    AgentRun {
        /// The prompt.
        prompt: String,
        /// The model spec (`scripted:FILE`, `openai:MODEL`, `anthropic:MODEL`); default: the
        /// worker's settings.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// Model requests before the run ends with `error_max_turns` (default 20).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(range(min = 1))]
        max_turns: Option<u32>,
    },
}

impl TaskPayload {
    /// Every mode.
    pub const MODES: [&'static str; 5] =
        ["deterministic_tool_call", "skills_catalog_list", "skills_load", "skills_read_file", "agent_run"];

    /// The mode's wire name.
    pub fn mode(&self) -> &'static str {
        match self {
            TaskPayload::DeterministicToolCall { .. } => "deterministic_tool_call",
            TaskPayload::SkillsCatalogList => "skills_catalog_list",
            TaskPayload::SkillsLoad { .. } => "skills_load",
            TaskPayload::SkillsReadFile { .. } => "skills_read_file",
            TaskPayload::AgentRun { .. } => "agent_run",
        }
    }
}

/// One tool call of a payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProgramToolCall {
    /// The tool.
    pub tool_name: String,
    /// The arguments (an object).
    #[serde(default = "empty_object")]
    pub arguments: Value,
    /// The call id; default `tool-call-<uuid>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// What a close request closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResourceType {
    /// The execution of a mailbox item; `resource_id` is its `item_id`.
    #[default]
    Execution,
}

/// The payload of a `resource_close_request`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClosePayload {
    /// Must be [`PROTOCOL_VERSION`].
    pub protocol_version: String,
    /// What to close (default `execution`).
    #[serde(default)]
    pub resource_type: ResourceType,
    /// The `item_id` of the execution to cancel.
    pub resource_id: String,
    /// Why (recorded in the canceled report).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `status` of agent-program responses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResponseStatus {
    /// The request succeeded.
    Ok,
    /// The request failed (the report is `agent_program_failed`).
    Failed,
}

/// The `response_payload` of a `prepare_round` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PrepareRoundResponse {
    /// Always `ok`.
    pub status: ResponseStatus,
    /// The messages of the next model request (system prompt, then the compacted transcript).
    pub messages: Vec<RoundMessage>,
    /// The tools the kernel's model may call (the allowed list; all registered when absent).
    pub visible_tool_names: Vec<String>,
    /// The resolved likely model.
    pub likely_model: Option<String>,
    /// Summaries produced (none yet).
    pub summary_artifacts: Vec<Value>,
    /// The stage trace: `prepare_turn`, `compact_context` (`{hook, duration_us, …fields}`).
    pub trace: Vec<Value>,
}

/// The `response_payload` of an `execute_program_tool` request (its `error` is also the
/// `error_payload` of the `agent_program_failed` report when it failed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExecuteProgramToolResponse {
    /// `ok` or `failed`.
    pub status: ResponseStatus,
    /// The call, with its call id.
    pub program_tool_call: ProgramToolCall,
    /// The result, when it succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<ProgramToolResult>,
    /// The error, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolErrorPayload>,
    /// The output the tool streamed.
    pub output_chunks: Vec<OutputChunk>,
    /// Summaries produced (none yet).
    pub summary_artifacts: Vec<Value>,
}

/// A tool's result: the projection and the raw structured response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProgramToolResult {
    /// What the model reads.
    pub content: String,
    /// Machine-readable fields of the projection.
    pub metadata: Map<String, Value>,
    /// The tool's structured response.
    pub response: Value,
}

/// A schema: the mailbox item (an envelope whose `payload` depends on `item_type`).
pub struct MailboxItemSchema;

impl JsonSchema for MailboxItemSchema {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "MailboxItem".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let request = generator.subschema_for::<RequestPayload>();
        let close = generator.subschema_for::<ClosePayload>();
        let envelope = generator.root_schema_for::<ItemEnvelope>();
        let mut properties = envelope.get("properties").cloned().unwrap_or_else(|| Value::Object(Map::new()));
        if let Some(map) = properties.as_object_mut() {
            map.insert(
                "item_type".into(),
                serde_json::json!({
                    "description": "The kind of item; missing means `execution_assignment`.",
                    "type": "string",
                    "enum": ItemType::ALL.iter().map(|t| t.as_str()).collect::<Vec<_>>(),
                }),
            );
            map.insert(
                "payload".into(),
                serde_json::json!({"description": "The payload; its shape depends on `item_type`.", "type": "object"}),
            );
        }
        let kind_is = |kinds: &[&str]| serde_json::json!({"properties": {"request_kind": {"enum": kinds}}});
        json_schema!({
            "description": "One mailbox item (docs/pipeline.md, Items).",
            "type": "object",
            "required": ["item_id", "protocol_message_id", "logical_work_id", "payload"],
            "properties": properties,
            "allOf": [
                {
                    "if": {"anyOf": [
                        {"not": {"required": ["item_type"]}},
                        {"properties": {"item_type": {"const": "execution_assignment"}}}
                    ]},
                    "then": {"properties": {"payload": {"allOf": [
                        request,
                        {"required": ["task_payload"]},
                        kind_is(&["execution_assignment"])
                    ]}}}
                },
                {
                    "if": {"required": ["item_type"], "properties": {"item_type": {"const": "agent_program_request"}}},
                    "then": {"properties": {"payload": {"allOf": [
                        request,
                        {"required": ["request_kind"]},
                        kind_is(&["prepare_round", "execute_program_tool"]),
                        {
                            "if": {"properties": {"request_kind": {"const": "execute_program_tool"}}},
                            "then": {"required": ["program_tool_call"]}
                        }
                    ]}}}
                },
                {
                    "if": {"required": ["item_type"], "properties": {"item_type": {"const": "resource_close_request"}}},
                    "then": {"properties": {"payload": close}}
                }
            ]
        })
    }
}

/// The committed JSON Schemas, by file name under `schemas/`: the mailbox item, the report,
/// and the two agent-program responses.
pub fn schemas() -> Vec<(&'static str, Value)> {
    fn gen_for<T: JsonSchema>() -> Value {
        schemars::generate::SchemaSettings::draft2020_12().into_generator().into_root_schema_for::<T>().to_value()
    }
    vec![
        ("item.schema.json", gen_for::<MailboxItemSchema>()),
        ("report.schema.json", gen_for::<Report>()),
        ("prepare_round_response.schema.json", gen_for::<PrepareRoundResponse>()),
        ("execute_program_tool_response.schema.json", gen_for::<ExecuteProgramToolResponse>()),
    ]
}

/// The example item of docs/pipeline.md (`examples/items/calculator.json`): a deterministic
/// `calculator` call on `2 + 2`, with `item_id` set and `protocol_message_id` and
/// `logical_work_id` derived from it. Handy for `spine submit` experiments and tests.
pub fn example_item(item_id: &str) -> Value {
    let mut item: Value =
        serde_json::from_str(include_str!("../../../examples/items/calculator.json")).unwrap_or(Value::Null);
    if let Some(map) = item.as_object_mut() {
        map.insert("item_id".into(), Value::String(item_id.to_owned()));
        map.insert("protocol_message_id".into(), Value::String(format!("kernel-msg-{item_id}")));
        map.insert("logical_work_id".into(), Value::String(format!("work-{item_id}")));
    }
    item
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn schemas_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../schemas")
    }

    fn render(schema: &Value) -> String {
        let mut text = serde_json::to_string_pretty(schema).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Regenerate with `SPINE_UPDATE_SCHEMAS=1 cargo test -p spine-protocol schemas`.
    #[test]
    fn committed_schemas_match_the_types() {
        let update = std::env::var_os("SPINE_UPDATE_SCHEMAS").is_some_and(|v| v == "1");
        let dir = schemas_dir();
        let mut drift = Vec::new();
        for (name, schema) in schemas() {
            let path = dir.join(name);
            let fresh = render(&schema);
            if update {
                std::fs::create_dir_all(&dir).expect("schemas dir");
                std::fs::write(&path, &fresh).expect("write schema");
                continue;
            }
            match std::fs::read_to_string(&path) {
                Ok(committed) if committed == fresh => {}
                Ok(_) => drift.push(format!("{name} differs from the types")),
                Err(e) => drift.push(format!("{name} cannot be read ({e})")),
            }
        }
        assert!(
            drift.is_empty(),
            "JSON Schemas under schemas/ are out of date: {}.\nRegenerate them with \
             `SPINE_UPDATE_SCHEMAS=1 cargo test -p spine-protocol schemas` and commit the result.",
            drift.join("; ")
        );
    }

    #[test]
    fn item_ids_are_one_to_256_visible_ascii_characters() {
        assert!(check_item_id("item-0001").is_ok());
        assert!(check_item_id("a/b:c@d.e+f=g~").is_ok());
        assert!(check_item_id(&"x".repeat(ITEM_ID_MAX_LEN)).is_ok());
        assert!(check_item_id(&"x".repeat(ITEM_ID_MAX_LEN + 1)).is_err());
        assert!(check_item_id("").is_err());
        for bad in ["a b", "a\nb", "tab\there", "caf\u{e9}", "nul\u{0}"] {
            assert!(check_item_id(bad).is_err(), "{bad:?} is refused");
        }
    }

    #[test]
    fn the_pipeline_example_item_round_trips_through_the_typed_payload() {
        let item = example_item("item-0001");
        assert_eq!(item["protocol_message_id"], "kernel-msg-item-0001");
        let envelope: ItemEnvelope = serde_json::from_value(item).expect("envelope");
        let payload: RequestPayload = serde_json::from_value(envelope.payload).expect("payload");
        assert_eq!(payload.protocol_version, PROTOCOL_VERSION);
        assert_eq!(payload.task.kind, "turn_step");
        assert_eq!(
            payload.task_payload,
            Some(TaskPayload::DeterministicToolCall {
                tool_call: ProgramToolCall {
                    tool_name: "calculator".into(),
                    arguments: serde_json::json!({"expression": "2 + 2"}),
                    call_id: None
                }
            })
        );
        assert_eq!(
            payload
                .budget_hints
                .clone()
                .and_then(|b| b.advisory_hints)
                .and_then(|a| a.recommended_compaction_threshold),
            Some(900_000)
        );
        assert_eq!(payload.allowed_tools(), Some(&["calculator".to_owned()][..]));
    }

    #[test]
    fn kinds_and_modes_have_one_wire_name_each() {
        for t in ItemType::ALL {
            assert_eq!(ItemType::parse(t.as_str()), Some(t));
            assert_eq!(serde_json::to_value(t).ok(), Some(Value::String(t.as_str().into())));
        }
        for k in RequestKind::ALL {
            assert_eq!(RequestKind::parse(k.as_str()), Some(k));
            assert_eq!(serde_json::to_value(k).ok(), Some(Value::String(k.as_str().into())));
        }
        let modes = [
            TaskPayload::DeterministicToolCall {
                tool_call: ProgramToolCall { tool_name: "x".into(), arguments: empty_object(), call_id: None },
            },
            TaskPayload::SkillsCatalogList,
            TaskPayload::SkillsLoad { skill_name: "s".into() },
            TaskPayload::SkillsReadFile { skill_name: "s".into(), relative_path: "f".into() },
            TaskPayload::AgentRun { prompt: "p".into(), model: None, max_turns: None },
        ];
        for (mode, name) in modes.iter().zip(TaskPayload::MODES) {
            assert_eq!(mode.mode(), name);
            assert_eq!(serde_json::to_value(mode).ok().and_then(|v| v.get("mode").cloned()), Some(Value::from(name)));
        }
    }
}
