//! The plain inputs of `prepare_turn`, built from a CLI run or an assignment payload: the
//! model hints ([`ModelContext`], which resolve the likely model), the [`TurnSettings`] of a
//! turn and its [`AgentProfile`]. Data only: nothing here reads the workspace.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The model hints of a payload; the likely model is the first one set, in this order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelContext {
    /// `model_context.likely_model`.
    #[serde(default)]
    pub likely_model: Option<String>,
    /// `model_context.model_ref`.
    #[serde(default)]
    pub model_ref: Option<String>,
    /// `model_context.api_model`.
    #[serde(default)]
    pub api_model: Option<String>,
    /// `provider_execution.model_ref`.
    #[serde(default)]
    pub provider_model_ref: Option<String>,
}

impl ModelContext {
    /// The likely model: `likely_model` → `model_ref` → `api_model` → `provider_execution.model_ref`.
    pub fn likely_model(&self) -> Option<&str> {
        [&self.likely_model, &self.model_ref, &self.api_model, &self.provider_model_ref]
            .into_iter()
            .find_map(|m| m.as_deref().filter(|s| !s.is_empty()))
    }
}

/// Plain inputs of `prepare_turn`, built from a CLI run or an assignment payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnSettings {
    /// Replaces the built-in agent prompt.
    pub agent_prompt: Option<String>,
    /// The agent profile (`main` gets the operator layers).
    pub profile: AgentProfile,
    /// Whether this agent is a subagent.
    pub is_subagent: bool,
    /// Model hints.
    pub model_context: ModelContext,
    /// The tools visible to the turn (for the trace).
    pub allowed_tool_names: Vec<String>,
    /// The conversation (for its summary file).
    pub conversation_id: Option<String>,
    /// Context imports from the payload.
    pub context_imports: Vec<Value>,
    /// Skills in the Selected Skills layer of every turn, referenced or not (a subagent
    /// definition's `skills`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preloaded_skills: Vec<String>,
    /// The output style of the main agent's prompt (a subagent's prompt has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_style: Option<OutputStyle>,
    /// The skill listing's budget in characters (`None`: 1% of a 200,000-token context
    /// window, see `skills::listing_budget`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill_listing_chars: Option<usize>,
}

/// An output style (Claude Code's `outputStyle`): instructions added to the system prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputStyle {
    /// Its name (`Explanatory`, a file's `name` or stem).
    pub name: String,
    /// The instructions (the file's body).
    pub prompt: String,
    /// `keep-coding-instructions`: the built-in agent prompt stays; otherwise it gives way to
    /// a short one that defers to the style.
    pub keep_coding_instructions: bool,
}

impl Default for TurnSettings {
    fn default() -> Self {
        TurnSettings {
            agent_prompt: None,
            profile: AgentProfile::Main,
            is_subagent: false,
            model_context: ModelContext::default(),
            allowed_tool_names: Vec::new(),
            conversation_id: None,
            context_imports: Vec::new(),
            preloaded_skills: Vec::new(),
            output_style: None,
            skill_listing_chars: None,
        }
    }
}

impl TurnSettings {
    /// Whether the prompt gets the Operator Prompt and Operator State layers (and so whether
    /// the caller takes an operator-state snapshot): the `main` profile, not a subagent.
    pub fn operator_layers(&self) -> bool {
        self.profile == AgentProfile::Main && !self.is_subagent
    }
}

/// The agent profile of a turn, written as its name (`"main"`, `"researcher"`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum AgentProfile {
    /// `main`: the workspace's operator agent.
    #[default]
    Main,
    /// Any other profile, by name.
    Named(String),
}

impl AgentProfile {
    /// The profile's name.
    pub fn as_str(&self) -> &str {
        match self {
            AgentProfile::Main => "main",
            AgentProfile::Named(name) => name,
        }
    }
}

impl From<String> for AgentProfile {
    fn from(name: String) -> Self {
        if name == "main" { AgentProfile::Main } else { AgentProfile::Named(name) }
    }
}

impl From<&str> for AgentProfile {
    fn from(name: &str) -> Self {
        AgentProfile::from(name.to_owned())
    }
}

impl From<AgentProfile> for String {
    fn from(profile: AgentProfile) -> Self {
        match profile {
            AgentProfile::Main => "main".to_owned(),
            AgentProfile::Named(name) => name,
        }
    }
}
