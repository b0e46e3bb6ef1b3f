//! Subagents: the `Task` tool and the agent types it may start.
//!
//! A `Task` call (Claude Code's shape: `description`, `prompt`, `subagent_type`) starts a child
//! run with a fresh context: the definition's body is its agent prompt, it runs with the
//! subagent profile (no operator layers), and its final answer is the call's result. The
//! runner does the delegation itself (`runner/delegate.rs`), so the child shares the parent's
//! hooks, permission rules and approver — a subagent cannot escape a deny rule — and its usage
//! and trace are added to the parent's.
//!
//! This module holds what the runner needs to know beforehand: the definitions
//! ([`SubagentDefinition`], read from files by `spine-agent`), the limits ([`Subagents`]), the
//! identity of a running subagent ([`AgentIdentity`], what hooks see as `agent_id` /
//! `agent_type`) and the [`TaskTool`] itself, whose `execute` only answers direct calls made
//! outside a run.
//!
//! Rules:
//! - a definition's `tools` narrows the parent's visible tools (never widens them);
//! - `Task` is visible in a subagent only when its definition lists `Task` and the child is
//!   shallower than [`Subagents::max_depth`] (no grandchild otherwise);
//! - a definition's `permissionMode` applies only when it is at least as strict as the parent's
//!   ([`narrower_mode`]);
//! - the `Task` calls of one model turn run concurrently, at most
//!   [`Subagents::max_concurrent`] at a time; their approvals are asked one at a time
//!   ([`OneAtATime`]).

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use spine_protocol::permission::PermissionMode;
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};

use crate::model::ModelClient;
use crate::permission::{Approval, ApprovalRequest, Approver};
use crate::tool::{Projection, Tool, ToolContext};

/// The name of the delegation tool (Claude Code's).
pub const TASK_TOOL: &str = "Task";

/// The built-in agent type.
pub const GENERAL_PURPOSE: &str = "general-purpose";

/// The built-in `general-purpose` agent's prompt.
pub const GENERAL_PURPOSE_PROMPT: &str = "You are a subagent: another agent delegated one task to you. \
Work on it with the tools you have, then answer with a complete, self-contained final report: \
the agent that delegated reads only your last message.";

/// One agent type a `Task` call may start.
#[derive(Clone)]
pub struct SubagentDefinition {
    /// The type's name (`subagent_type`).
    pub name: String,
    /// When to use it (shown to the model in the `Task` tool's description).
    pub description: String,
    /// The subagent's agent prompt (the definition file's body).
    pub prompt: String,
    /// The tools it may see (`None`: the parent's); always within the parent's.
    pub tools: Option<Vec<String>>,
    /// Its model (`None`: the parent's, `model: inherit`).
    pub model: Option<Arc<dyn ModelClient>>,
    /// Its turn limit (`None`: the parent's).
    pub max_turns: Option<u32>,
    /// Its permission mode (`None`: the parent's); applied only when stricter.
    pub permission_mode: Option<PermissionMode>,
    /// Where it was defined (a file, or `built-in`).
    pub source: PathBuf,
}

impl std::fmt::Debug for SubagentDefinition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubagentDefinition")
            .field("name", &self.name)
            .field("tools", &self.tools)
            .field("model", &self.model.as_ref().map(|m| m.model().to_owned()))
            .field("max_turns", &self.max_turns)
            .field("permission_mode", &self.permission_mode)
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
            model: None,
            max_turns: None,
            permission_mode: None,
            source: PathBuf::from("built-in"),
        }
    }

    /// Whether the definition lets its subagent delegate further (its `tools` lists `Task`).
    pub fn may_delegate(&self) -> bool {
        self.tools.as_ref().is_some_and(|t| t.iter().any(|n| n == TASK_TOOL))
    }
}

/// The agent types of a run and the limits of delegation.
#[derive(Debug, Clone)]
pub struct Subagents {
    /// The types, by name (the first of a name wins).
    pub definitions: Vec<SubagentDefinition>,
    /// `Task` calls of one turn running at the same time (settings `subagents.max_concurrent`,
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

    /// The `Task` tool's description with the available agent types.
    pub fn task_description(&self) -> String {
        let mut text = TASK_DESCRIPTION.to_owned();
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
    /// A fresh id per `Task` call (16 hex digits).
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
}

const TASK_DESCRIPTION: &str = "Launch a subagent to handle a task on its own: it starts with a fresh context \
(only your prompt), works with its own tools, and its final message comes back as this call's result. \
Several Task calls in one reply run concurrently. Give a complete prompt: the subagent sees nothing else \
of this conversation.";

/// The `Task` tool. The runner runs its calls as child runs; [`Tool::execute`] is reached only
/// by a direct call outside a run, which has no parent agent, and answers an error.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskTool;

#[async_trait]
impl Tool for TaskTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: TASK_TOOL.to_owned(),
            description: TASK_DESCRIPTION.to_owned(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "description": {"type": "string", "description": "A short (3-5 word) description of the task"},
                    "prompt": {"type": "string", "description": "The task for the agent to perform"},
                    "subagent_type": {"type": "string", "description": "The type of agent to use for this task"}
                },
                "required": ["description", "prompt", "subagent_type"],
                "additionalProperties": false
            }),
        }
    }

    /// A `Task` call itself touches nothing: every call its subagent makes passes the same
    /// hooks and permission rules as the parent's own.
    fn effect(&self) -> Effect {
        Effect::Read
    }

    async fn execute(&self, _args: &Map<String, Value>, _ctx: &ToolContext) -> Result<Value, ToolError> {
        Err(ToolError::new(ErrorCode::RuntimeError, "Task starts a subagent, which needs an agent run"))
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
    fn only_a_definition_listing_task_may_delegate() {
        let mut d = SubagentDefinition::general_purpose();
        assert!(!d.may_delegate(), "no tools list: the parent's tools, but no grandchild");
        d.tools = Some(vec!["Read".into(), TASK_TOOL.into()]);
        assert!(d.may_delegate());
    }

    #[test]
    fn the_task_description_lists_every_agent_type() {
        let text = Subagents::default().task_description();
        assert!(text.contains("- general-purpose: General-purpose agent"), "{text}");
    }
}
