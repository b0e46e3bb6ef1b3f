//! Structured output (`--json-schema`): the `StructuredOutput` tool through which the model
//! gives its final answer as JSON matching a schema, and the rule that makes it do so.
//!
//! Contract (the main agent's runs; a subagent neither sees the tool nor follows the rule):
//! - [`Agent::with_structured_output`] adds the tool. Its input schema is the given schema,
//!   which must describe an object (tool input always is one); the registry compiles it and
//!   validates every call's input against it, so a call that does not match is answered
//!   `invalid_arguments` naming the failing path and the model may call again. The tool is
//!   read-only (allowed unless a deny rule names it) and visible whatever `--tools` says.
//! - A call that passes is answered "Structured output provided successfully", and the run
//!   ends once that tool round is done, as a final answer (Claude Code's `endsTurn`): Stop
//!   hooks see it, the result text is the input as compact JSON, and
//!   [`RunOutcome::structured_output`](super::RunOutcome::structured_output) is the input. A
//!   second passing call in the same round wins over the first.
//! - A final answer (a reply without tool calls) while the run has no structured output is
//!   not final: the first time, the model is told [`REMINDER`] as a user message and the loop
//!   goes on (Stop hooks do not see that answer); the second time, the run ends with
//!   `error_during_execution`.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Map, Value};
use spine_protocol::message::Message;
use spine_protocol::tool::{Effect, ToolError, ToolSpec};
use thiserror::Error;

use super::finish::End;
use super::{Agent, Run};
use crate::registry::RegistryError;
use crate::stages::handle_error::ExecutionError;
use crate::stages::review_tool_call::Visibility;
use crate::tool::{Tool, ToolContext};

/// The tool's name (Claude Code's).
pub const STRUCTURED_OUTPUT_TOOL: &str = "StructuredOutput";

/// The tool's description (Claude Code's).
const DESCRIPTION: &str = "Use this tool to return your final response in the requested structured format. You MUST \
                           call this tool exactly once at the end of your response to provide the structured output.";

/// What a passing call is answered.
const PROVIDED: &str = "Structured output provided successfully";

/// What the model is told after a final answer without structured output (Claude Code's).
pub const REMINDER: &str = "You MUST call the StructuredOutput tool to complete this request. Call this tool now.";

/// A `--json-schema` schema the tool cannot take.
#[derive(Debug, Error)]
pub enum SchemaError {
    /// Not an object schema.
    #[error("the schema must describe a JSON object (`\"type\": \"object\"`): the answer is the input of a tool")]
    NotAnObject,
    /// The schema does not compile, or the tool's name is taken.
    #[error(transparent)]
    Registry(#[from] RegistryError),
}

/// The structured output of an agent's runs: the schema, and the last input a call gave.
#[derive(Debug)]
pub struct StructuredOutput {
    schema: Value,
    given: Mutex<Option<Value>>,
}

impl StructuredOutput {
    fn take(&self) -> Option<Value> {
        match self.given.lock() {
            Ok(mut given) => given.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        }
    }

    fn put(&self, value: Value) {
        match self.given.lock() {
            Ok(mut given) => *given = Some(value),
            Err(poisoned) => *poisoned.into_inner() = Some(value),
        }
    }
}

/// The `StructuredOutput` tool.
struct StructuredOutputTool(Arc<StructuredOutput>);

#[async_trait]
impl Tool for StructuredOutputTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: STRUCTURED_OUTPUT_TOOL.to_owned(),
            description: DESCRIPTION.to_owned(),
            input_schema: self.0.schema.clone(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    async fn execute(&self, args: &Map<String, Value>, _ctx: &ToolContext) -> Result<Value, ToolError> {
        self.0.put(Value::Object(args.clone()));
        Ok(Value::String(PROVIDED.to_owned()))
    }
}

impl Agent {
    /// This agent with the `StructuredOutput` tool taking `schema` (see the module
    /// documentation).
    pub fn with_structured_output(mut self, schema: Value) -> Result<Agent, SchemaError> {
        let is_object = match schema.as_object() {
            Some(map) => map.get("type").is_none_or(|t| t == "object"),
            None => false,
        };
        if !is_object {
            return Err(SchemaError::NotAnObject);
        }
        let structured = Arc::new(StructuredOutput { schema, given: Mutex::new(None) });
        let tool: Arc<dyn Tool> = Arc::new(StructuredOutputTool(Arc::clone(&structured)));
        self.tools = Arc::new(self.tools.extended(vec![tool])?);
        let name = STRUCTURED_OUTPUT_TOOL.to_owned();
        if let Visibility::Only(names) = &mut self.config.visibility {
            names.push(name.clone());
        }
        if !self.config.turn.allowed_tool_names.is_empty() {
            self.config.turn.allowed_tool_names.push(name.clone());
        }
        self.config.own_tools.push(name);
        self.config.structured_output = Some(structured);
        Ok(self)
    }
}

/// What the loop does with a reply under the structured-output rule.
pub(super) enum Verdict {
    /// Go on as without the rule.
    Proceed,
    /// The answer is this structured output's JSON text: the run's final answer.
    Answered(String),
    /// The reminder was sent: ask the model again.
    Reminded,
    /// The run ends.
    End(Box<End>),
}

impl Run<'_> {
    /// The rule's structured output, when this run follows it.
    fn structured(&self) -> Option<&Arc<StructuredOutput>> {
        self.agent.config.structured_output.as_ref().filter(|_| self.subagent.is_none())
    }

    /// At the run's start: nothing a previous run of the session gave counts.
    pub(super) fn reset_structured_output(&self) {
        if let Some(structured) = self.structured() {
            structured.take();
        }
    }

    /// After a tool round that goes on: the answer, when a call gave the structured output.
    pub(super) fn structured_after_round(&mut self) -> Verdict {
        let Some(value) = self.structured().and_then(|s| s.take()) else {
            return Verdict::Proceed;
        };
        let text = value.to_string();
        self.structured_output = Some(value);
        Verdict::Answered(text)
    }

    /// A reply without tool calls: final, or reminded once, or the end of the run.
    pub(super) fn structured_at_final_answer(&mut self) -> Verdict {
        if self.structured().is_none() || self.structured_output.is_some() {
            return Verdict::Proceed;
        }
        if self.structured_reminded {
            return Verdict::End(Box::new(End::failed(ExecutionError::Runtime(format!(
                "the model gave its final answer without calling {STRUCTURED_OUTPUT_TOOL} (--json-schema), \
                 after being reminded once"
            )))));
        }
        self.structured_reminded = true;
        self.push(Message::user(REMINDER));
        Verdict::Reminded
    }
}
