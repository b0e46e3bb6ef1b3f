//! Subagents: the `Agent` tool and the agent types it may start.
//!
//! An `Agent` call (Claude Code 2.x's shape: `description`, `prompt`, optional
//! `subagent_type`; `Task` is its former name and still runs it, see [`crate::tool_names`])
//! starts a child run with a fresh context: the definition's body is its agent prompt, it runs
//! with the subagent profile (no operator layers), and its final answer is the call's result.
//! The runner does the delegation itself (`runner/delegate.rs`), so the child shares the
//! parent's hooks, permission rules and approver — a subagent cannot escape a deny rule — and
//! its usage and trace are added to the parent's.
//!
//! This module holds what the runner needs to know beforehand: the definitions
//! ([`SubagentDefinition`], read from files by `spine-agent`), the limits ([`Subagents`]), the
//! identity of a running subagent ([`AgentIdentity`], what hooks see as `agent_id` /
//! `agent_type`) and the [`AgentTool`] itself, whose `execute` only answers direct calls made
//! outside a run.
//!
//! Rules:
//! - a definition's `tools` narrows the parent's visible tools and its `disallowedTools`
//!   removes tools from them ([`SubagentDefinition::allows_tool`]); neither ever widens them;
//!   the tools of the MCP servers its `mcpServers` names join its tools even when `tools` does
//!   not list them (as in Claude Code), still within the parent's and minus `disallowedTools`;
//! - a definition's own hooks ([`SubagentDefinition::hooks`], its front matter's, a `Stop`
//!   hook already turned into `SubagentStop`) run after the session's, for its subagent's
//!   firings only ([`crate::hooks::HookRegistry::scoped`]): neither its parent nor a subagent
//!   it starts sees them;
//! - a definition's `skills` are preloaded: their `SKILL.md` is in the subagent's prompt from
//!   its first request on (the Selected Skills layer, whatever the messages reference);
//! - a definition's `effort` is the reasoning effort of its model's requests (a model whose
//!   wire takes none runs without, with a warning when the subagent starts), and the `effort`
//!   its hooks read;
//! - `Agent` is visible in a subagent only when its definition lists `Agent` (or `Task`) and
//!   the child is shallower than [`Subagents::max_depth`] (no grandchild otherwise);
//! - a call without `subagent_type` starts `general-purpose` (the argument is filled in before
//!   hooks and rules see the call, so `Agent(general-purpose)` rules hold for it);
//! - `run_in_background: true`, or a definition's `background: true`, runs the child in the
//!   background: the call answers at once ([`background::launched_response`]) and the child's
//!   end reaches the parent as a `<task-notification>` user message before its next model
//!   request ([`background::notification`]; the runner's `runner/background.rs`);
//! - a definition's own servers ([`SubagentDefinition::servers`], inline `mcpServers`) start
//!   with each of its subagents and stop when it ends; their tools are that subagent's only
//!   ([`servers`]);
//! - the optional arguments spine cannot apply (`model`, `effort`, `name`, `team_name`, `mode`,
//!   `isolation`) are accepted and ignored: the child runs with its definition's model, in the
//!   parent's workspace;
//! - a definition's `permissionMode` applies only when it is at least as strict as the parent's
//!   ([`narrower_mode`]);
//! - the `Agent` calls of one model turn run concurrently, at most
//!   [`Subagents::max_concurrent`] at a time (a background launch holds no slot once it
//!   answered); their approvals are asked one at a time ([`OneAtATime`]).

pub mod background;
pub mod servers;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use spine_protocol::message::ReasoningEffort;
use spine_protocol::permission::PermissionMode;
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};

use crate::elicitation::{ElicitationAnswer, ElicitationRequest};
use crate::hooks::HookRegistry;
use crate::model::ModelClient;
use crate::permission::{Approval, ApprovalRequest, Approver};
use crate::tool::{Projection, Tool, ToolContext};
use crate::tool_names::same_tool;
pub use servers::{NoServers, RunningServers, StartedServers, SubagentServers};

/// The name of the delegation tool (Claude Code 2.x's).
pub const AGENT_TOOL: &str = "Agent";

/// The delegation tool's former name (Claude Code 1.x's), still accepted wherever a tool is
/// named ([`crate::tool_names`]).
pub const TASK_TOOL: &str = "Task";

/// The built-in agent type.
pub const GENERAL_PURPOSE: &str = "general-purpose";

/// The built-in `general-purpose` agent's prompt.
pub const GENERAL_PURPOSE_PROMPT: &str = "You are a subagent: another agent delegated one task to you. \
Work on it with the tools you have, then answer with a complete, self-contained final report: \
the agent that delegated reads only your last message.";

/// One agent type an `Agent` call may start.
#[derive(Clone)]
pub struct SubagentDefinition {
    /// The type's name (`subagent_type`).
    pub name: String,
    /// When to use it (shown to the model in the `Agent` tool's description).
    pub description: String,
    /// The subagent's agent prompt (the definition file's body).
    pub prompt: String,
    /// The tools it may see (`None`: the parent's); always within the parent's.
    pub tools: Option<Vec<String>>,
    /// Tools it may not see even when `tools` allows them (`disallowedTools`).
    pub disallowed_tools: Vec<String>,
    /// Its model (`None`: the parent's, `model: inherit`).
    pub model: Option<Arc<dyn ModelClient>>,
    /// Its turn limit (`None`: the parent's).
    pub max_turns: Option<u32>,
    /// Its permission mode (`None`: the parent's); applied only when stricter.
    pub permission_mode: Option<PermissionMode>,
    /// The skills preloaded into its prompt (`skills`), by name.
    pub skills: Vec<String>,
    /// The MCP servers whose tools it gets besides its `tools` (`mcpServers`), by name.
    pub mcp_servers: Vec<String>,
    /// The reasoning effort of its model requests (`effort`; `None`: its model's own).
    pub effort: Option<ReasoningEffort>,
    /// Its own hooks (`hooks`), run after the session's while it runs; `None`: none.
    pub hooks: Option<Arc<HookRegistry>>,
    /// Whether its subagents always run in the background (`background: true`).
    pub background: bool,
    /// Its own servers (inline `mcpServers` configs), started with each of its subagents and
    /// stopped when it ends ([`servers`]); `None`: none.
    pub servers: Option<Arc<dyn SubagentServers>>,
    /// Where it was defined (a file, or `built-in`).
    pub source: PathBuf,
}

impl std::fmt::Debug for SubagentDefinition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubagentDefinition")
            .field("name", &self.name)
            .field("tools", &self.tools)
            .field("disallowed_tools", &self.disallowed_tools)
            .field("model", &self.model.as_ref().map(|m| m.model().to_owned()))
            .field("max_turns", &self.max_turns)
            .field("permission_mode", &self.permission_mode)
            .field("skills", &self.skills)
            .field("mcp_servers", &self.mcp_servers)
            .field("effort", &self.effort)
            .field("hooks", &self.hooks.is_some())
            .field("background", &self.background)
            .field("servers", &self.servers.as_ref().map(|s| s.names()))
            .field("source", &self.source)
            .finish()
    }
}

impl SubagentDefinition {
    /// The built-in `general-purpose` agent: every tool of the parent, the parent's model.
    pub fn general_purpose() -> Self {
        SubagentDefinition {
            name: GENERAL_PURPOSE.to_owned(),
            description: "General-purpose agent for researching complex questions, searching for code and \
                          executing multi-step tasks."
                .to_owned(),
            prompt: GENERAL_PURPOSE_PROMPT.to_owned(),
            tools: None,
            disallowed_tools: Vec::new(),
            model: None,
            max_turns: None,
            permission_mode: None,
            skills: Vec::new(),
            mcp_servers: Vec::new(),
            effort: None,
            hooks: None,
            background: false,
            servers: None,
            source: PathBuf::from("built-in"),
        }
    }

    /// Whether the definition lets its subagent see the tool `name` (given the parent sees it):
    /// `tools` absent or naming it, or `name` a tool of an MCP server `mcpServers` names, and
    /// `disallowedTools` not naming it. Former names count (`Task` names `Agent`).
    pub fn allows_tool(&self, name: &str) -> bool {
        (self.tools.as_ref().is_none_or(|list| list.iter().any(|t| same_tool(t, name)))
            || self.mcp_servers.iter().any(|server| is_mcp_tool_of(name, server)))
            && !self.disallowed_tools.iter().any(|t| same_tool(t, name))
    }

    /// Whether the definition lets its subagent delegate further: its `tools` lists `Agent`
    /// (or `Task`) and its `disallowedTools` does not.
    pub fn may_delegate(&self) -> bool {
        self.tools.is_some() && self.allows_tool(AGENT_TOOL)
    }
}

/// Whether `tool` is a tool of the MCP server `server`: `mcp__<server>__<tool>`, the server's
/// name with every character other than a letter, a digit, `_` and `-` made `_` (as
/// spine-tools names MCP tools).
pub fn is_mcp_tool_of(tool: &str, server: &str) -> bool {
    let clean: String =
        server.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
    tool.strip_prefix("mcp__").and_then(|rest| rest.strip_prefix(clean.as_str())).is_some_and(|t| t.starts_with("__"))
}

/// The agent types of a run and the limits of delegation.
#[derive(Debug, Clone)]
pub struct Subagents {
    /// The types, by name (the first of a name wins).
    pub definitions: Vec<SubagentDefinition>,
    /// `Agent` calls of one turn running at the same time (settings `subagents.max_concurrent`,
    /// default 4).
    pub max_concurrent: usize,
    /// The deepest subagent: 1 allows children only (settings `subagents.max_depth`, default 2).
    pub max_depth: u32,
}

/// Default of [`Subagents::max_concurrent`].
pub const DEFAULT_MAX_CONCURRENT: usize = 4;
/// Default of [`Subagents::max_depth`].
pub const DEFAULT_MAX_DEPTH: u32 = 2;

impl Default for Subagents {
    fn default() -> Self {
        Subagents {
            definitions: vec![SubagentDefinition::general_purpose()],
            max_concurrent: DEFAULT_MAX_CONCURRENT,
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }
}

impl Subagents {
    /// The definition of `name`.
    pub fn find(&self, name: &str) -> Option<&SubagentDefinition> {
        self.definitions.iter().find(|d| d.name == name)
    }

    /// Every type's name, comma-separated (for the unknown-type error).
    pub fn known(&self) -> String {
        self.definitions.iter().map(|d| d.name.as_str()).collect::<Vec<_>>().join(", ")
    }

    /// The `Agent` tool's description with the available agent types.
    pub fn tool_description(&self) -> String {
        let mut text = AGENT_DESCRIPTION.to_owned();
        text.push_str("\n\nAvailable agent types (subagent_type):");
        for d in &self.definitions {
            text.push_str(&format!("\n- {}: {}", d.name, d.description));
        }
        text
    }
}

/// Who a running subagent is, as its hook inputs (`agent_id`, `agent_type`), transcript lines
/// (`agentId`) and trace entries name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentIdentity {
    /// A fresh id per `Agent` call (16 hex digits).
    pub agent_id: String,
    /// The `subagent_type`.
    pub agent_type: String,
}

impl AgentIdentity {
    /// A new identity for a subagent of `agent_type`.
    pub fn new(agent_type: impl Into<String>) -> Self {
        let id = uuid::Uuid::new_v4().simple().to_string();
        AgentIdentity { agent_id: id[..16].to_owned(), agent_type: agent_type.into() }
    }
}

/// `mode` when it is at least as strict as `parent`, else `parent`: a definition narrows what
/// its parent may do, never widens it. Strictest first: `plan`, `dontAsk`, `default`,
/// `acceptEdits`, `bypassPermissions`.
pub fn narrower_mode(parent: PermissionMode, mode: PermissionMode) -> PermissionMode {
    if strictness(mode) <= strictness(parent) { mode } else { parent }
}

fn strictness(mode: PermissionMode) -> u8 {
    match mode {
        PermissionMode::Plan => 0,
        PermissionMode::DontAsk => 1,
        PermissionMode::Default => 2,
        PermissionMode::AcceptEdits => 3,
        PermissionMode::BypassPermissions => 4,
    }
}

/// The approver of concurrent subagents: the parent's, asked one request at a time (a
/// terminal prompt is not interleaved with another). Nested subagents wrap their parent's
/// wrapper, so the outermost lock orders every ask of the tree.
pub struct OneAtATime {
    inner: Arc<dyn Approver>,
    lock: Arc<tokio::sync::Mutex<()>>,
}

impl OneAtATime {
    /// `inner`, asked under `lock`.
    pub fn new(inner: Arc<dyn Approver>, lock: Arc<tokio::sync::Mutex<()>>) -> Self {
        OneAtATime { inner, lock }
    }
}

#[async_trait]
impl Approver for OneAtATime {
    async fn approve(&self, request: &ApprovalRequest<'_>) -> Approval {
        let _turn = self.lock.lock().await;
        self.inner.approve(request).await
    }

    async fn elicit(&self, request: &ElicitationRequest) -> Option<ElicitationAnswer> {
        let _turn = self.lock.lock().await;
        self.inner.elicit(request).await
    }

    fn asks_elicitations(&self) -> bool {
        self.inner.asks_elicitations()
    }
}

const AGENT_DESCRIPTION: &str = "Launch a subagent to handle a task on its own: it starts with a fresh context \
(only your prompt), works with its own tools, and its final message comes back as this call's result. \
Several Agent calls in one reply run concurrently. Give a complete prompt: the subagent sees nothing else \
of this conversation. With run_in_background: true the call returns at once and the agent's result arrives \
later as a <task-notification> message; never predict it before then.";

/// The `Agent` tool, with Claude Code 2.1's input schema. The runner runs its calls as child
/// runs; [`Tool::execute`] is reached only by a direct call outside a run, which has no parent
/// agent, and answers an error.
#[derive(Debug, Clone, Copy, Default)]
pub struct AgentTool;

/// The `Agent` tool under its former name, for code written against it.
pub type TaskTool = AgentTool;

#[async_trait]
impl Tool for AgentTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: AGENT_TOOL.to_owned(),
            description: AGENT_DESCRIPTION.to_owned(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "description": {"type": "string", "description": "A short (3-5 word) description of the task"},
                    "prompt": {"type": "string", "description": "The task for the agent to perform"},
                    "subagent_type": {
                        "type": "string",
                        "description": "The type of specialized agent to use for this task (default: general-purpose)"
                    },
                    "model": {
                        "type": "string",
                        "enum": ["sonnet", "opus", "haiku", "fable"],
                        "description": "Accepted and ignored: the agent runs on its definition's model"
                    },
                    "effort": {
                        "type": "string",
                        "enum": ["low", "medium", "high", "xhigh", "max"],
                        "description": "Accepted and ignored"
                    },
                    "run_in_background": {
                        "type": "boolean",
                        "description": "Set to true to run this agent in the background. The call returns at once; \
                                        you will be notified when the agent completes"
                    },
                    "name": {"type": "string", "description": "Accepted and ignored"},
                    "team_name": {"type": "string", "description": "Deprecated; ignored"},
                    "mode": {
                        "type": "string",
                        "enum": ["acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"],
                        "description": "Deprecated; ignored"
                    },
                    "isolation": {
                        "type": "string",
                        "enum": ["worktree", "remote"],
                        "description": "Accepted and ignored: the agent works in this workspace"
                    }
                },
                "required": ["description", "prompt"],
                "additionalProperties": false
            }),
        }
    }

    /// An `Agent` call itself touches nothing: every call its subagent makes passes the same
    /// hooks and permission rules as the parent's own.
    fn effect(&self) -> Effect {
        Effect::Read
    }

    /// A call without `subagent_type` is a call of `general-purpose`, before hooks and rules
    /// see it.
    fn normalize(&self, args: &mut Map<String, Value>, _cwd: &Path) {
        args.entry("subagent_type").or_insert_with(|| Value::String(GENERAL_PURPOSE.to_owned()));
    }

    async fn execute(&self, _args: &Map<String, Value>, _ctx: &ToolContext) -> Result<Value, ToolError> {
        Err(ToolError::new(ErrorCode::RuntimeError, "Agent starts a subagent, which needs an agent run"))
    }

    fn project(&self, response: &Value) -> Projection {
        let text = response["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let mut projection = Projection::plain(text);
        for key in ["agentId", "agentType", "totalDurationMs", "totalToolUseCount", "totalTokens"] {
            if let Some(v) = response.get(key) {
                projection = projection.with(key, v.clone());
            }
        }
        projection
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_definition_mode_applies_only_when_stricter_than_the_parent() {
        use PermissionMode::*;
        assert_eq!(narrower_mode(Default, Plan), Plan);
        assert_eq!(narrower_mode(Default, BypassPermissions), Default);
        assert_eq!(narrower_mode(AcceptEdits, Default), Default);
        assert_eq!(narrower_mode(Plan, AcceptEdits), Plan);
        assert_eq!(narrower_mode(Default, DontAsk), DontAsk);
    }

    #[test]
    fn only_a_definition_listing_agent_or_task_may_delegate() {
        let mut d = SubagentDefinition::general_purpose();
        assert!(!d.may_delegate(), "no tools list: the parent's tools, but no grandchild");
        d.tools = Some(vec!["Read".into(), TASK_TOOL.into()]);
        assert!(d.may_delegate(), "the former name");
        d.tools = Some(vec!["Read".into(), AGENT_TOOL.into()]);
        assert!(d.may_delegate());
        d.disallowed_tools = vec![TASK_TOOL.into()];
        assert!(!d.may_delegate(), "disallowedTools wins");
    }

    #[test]
    fn disallowed_tools_narrow_tools_and_never_widen_them() {
        let mut d = SubagentDefinition::general_purpose();
        d.disallowed_tools = vec!["Bash".into()];
        assert!(d.allows_tool("Read") && !d.allows_tool("Bash"), "no tools list: all but the disallowed");
        d.tools = Some(vec!["Read".into(), "Bash".into()]);
        assert!(d.allows_tool("Read") && !d.allows_tool("Bash") && !d.allows_tool("Write"));
    }

    #[test]
    fn mcp_servers_add_their_tools_beside_the_tools_list_and_disallowed_tools_still_remove_them() {
        let mut d = SubagentDefinition::general_purpose();
        d.tools = Some(vec!["Read".into()]);
        d.mcp_servers = vec!["peer.one".into()];
        assert!(d.allows_tool("Read") && d.allows_tool("mcp__peer_one__ping"));
        assert!(!d.allows_tool("mcp__other__ping") && !d.allows_tool("mcp__peer_one_x__ping"));
        d.disallowed_tools = vec!["mcp__peer_one__ping".into()];
        assert!(!d.allows_tool("mcp__peer_one__ping"), "disallowedTools wins");
    }

    #[test]
    fn the_agent_description_lists_every_agent_type() {
        let text = Subagents::default().tool_description();
        assert!(text.contains("- general-purpose: General-purpose agent"), "{text}");
    }

    #[test]
    fn a_call_without_subagent_type_is_general_purpose_and_optional_fields_validate() {
        let mut args = Map::new();
        AgentTool.normalize(&mut args, Path::new("/"));
        assert_eq!(args["subagent_type"], GENERAL_PURPOSE);
        let schema = AgentTool.spec().input_schema;
        let validator = jsonschema::validator_for(&schema).expect("schema compiles");
        let full = json!({"description": "d", "prompt": "p", "model": "haiku", "effort": "high",
            "run_in_background": true, "name": "n", "team_name": "t", "mode": "plan", "isolation": "worktree"});
        assert!(validator.is_valid(&full));
        assert!(validator.is_valid(&json!({"description": "d", "prompt": "p"})));
        assert!(!validator.is_valid(&json!({"description": "d"})), "prompt is required");
    }
}
