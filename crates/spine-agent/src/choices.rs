//! What a session's flags choose beyond the settings — the reasoning flags (`--effort`,
//! `--thinking`, `--max-thinking-tokens`), fallback models (`--fallback-model`), a budget
//! (`--max-budget-usd`) and structured output (`--json-schema`) — applied by [`crate::assemble`]
//! as its last step, so a front end never patches an assembled agent.
//!
//! Contract of [`SessionChoices::apply`]: the model gets the reasoning flags as its wire takes
//! them and the fallbacks in order ([`crate::model::session_model`]); hooks read `effort` as the
//! flag's word; the budget covers the whole session; the schema (already checked to compile by
//! the front end) becomes the `StructuredOutput` tool. Errors name the flag.

use std::sync::Arc;

use serde_json::Value;
use spine_core::model_reasoning::ReasoningFlags;
use spine_core::registry::RegistryError;
use spine_core::runner::structured::SchemaError;
use spine_core::runner::{Agent, Budget};
use spine_settings::Settings;

use crate::AssemblyError;

/// The flags' choices; the default chooses nothing.
#[derive(Debug, Clone, Default)]
pub struct SessionChoices {
    /// `--effort`, `--thinking`, `--max-thinking-tokens`.
    pub reasoning: ReasoningFlags,
    /// `--fallback-model`: model specs, in order.
    pub fallbacks: Vec<String>,
    /// `--max-budget-usd`: a number greater than 0.
    pub budget_usd: Option<f64>,
    /// `--json-schema`: the schema of the final answer.
    pub schema: Option<Value>,
}

impl SessionChoices {
    /// `agent` with these choices (see the module contract).
    pub(crate) fn apply(self, mut agent: Agent, settings: &Settings) -> Result<Agent, AssemblyError> {
        agent.model = crate::model::session_model(agent.model, &self.reasoning, &self.fallbacks, settings)
            .map_err(|e| AssemblyError::SessionModel(Box::new(e)))?;
        if self.reasoning.effort.is_some() {
            agent.config.effort_flag = self.reasoning.effort;
        }
        agent.config.budget = self.budget_usd.map(|usd| Arc::new(Budget::new(usd)));
        match self.schema {
            Some(schema) => agent.with_structured_output(schema).map_err(|e| AssemblyError::Schema(schema_error(&e))),
            None => Ok(agent),
        }
    }
}

/// A schema the `StructuredOutput` tool cannot take, as `--json-schema`'s error.
fn schema_error(error: &SchemaError) -> String {
    match error {
        SchemaError::NotAnObject => format!("--json-schema: {error}"),
        SchemaError::Registry(RegistryError::InvalidSchema { reason, .. }) => {
            format!("--json-schema: not a valid JSON Schema: {reason}")
        }
        SchemaError::Registry(RegistryError::Duplicate(name)) => {
            format!("--json-schema: a tool named {name} is already registered (an MCP server's?)")
        }
    }
}
