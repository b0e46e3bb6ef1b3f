//! The payloads of requests: the context of one turn ([`RequestPayload`]) with its task, hints
//! and agent context, the flow of an assignment ([`TaskPayload`]), one program tool call, and
//! the payload of a close request ([`ClosePayload`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::RequestKind;

/// The payload protocol this worker speaks.
pub const PROTOCOL_VERSION: &str = "spine-assignment/1";

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
