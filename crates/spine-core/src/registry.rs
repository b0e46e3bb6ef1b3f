//! The tool registry: built once, then frozen.
//!
//! [`ToolRegistryBuilder`] collects tools and rejects duplicate names; `build` compiles every
//! input schema. [`ToolRegistry::prepare`] turns a model's [`ToolCall`] into a
//! [`PreparedCall`] — tool found, arguments parsed and valid — or into the error the model will
//! read (`unknown_tool`, `invalid_arguments` naming the failing JSON path). Hooks never see a
//! call that did not prepare.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};
use spine_protocol::tool::{Effect, ErrorCode, ToolArguments, ToolCall, ToolError, ToolSpec};
use thiserror::Error;

use crate::tool::{Args, Tool};

/// Building the registry failed.
#[derive(Debug, Error)]
pub enum RegistryError {
    /// Two tools share a name.
    #[error("tool `{0}` is registered twice")]
    Duplicate(String),
    /// A tool's input schema does not compile.
    #[error("tool `{name}` has an invalid input schema: {reason}")]
    InvalidSchema {
        /// The tool.
        name: String,
        /// Why.
        reason: String,
    },
}

/// Collects tools before freezing them into a [`ToolRegistry`].
#[derive(Default)]
pub struct ToolRegistryBuilder {
    tools: Vec<Arc<dyn Tool>>,
}

impl ToolRegistryBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool.
    pub fn register(&mut self, tool: impl Tool) -> &mut Self {
        self.tools.push(Arc::new(tool));
        self
    }

    /// Adds a shared tool.
    pub fn register_arc(&mut self, tool: Arc<dyn Tool>) -> &mut Self {
        self.tools.push(tool);
        self
    }

    /// Freezes the registry: names must be unique and schemas must compile.
    pub fn build(self) -> Result<ToolRegistry, RegistryError> {
        let mut entries = Vec::with_capacity(self.tools.len());
        let mut by_name = HashMap::with_capacity(self.tools.len());
        for tool in self.tools {
            let spec = tool.spec();
            if by_name.contains_key(&spec.name) {
                return Err(RegistryError::Duplicate(spec.name));
            }
            by_name.insert(spec.name.clone(), entries.len());
            entries.push(Entry::new(tool, spec)?);
        }
        Ok(ToolRegistry { entries, by_name })
    }
}

#[derive(Clone)]
struct Entry {
    spec: ToolSpec,
    effect: Effect,
    validator: Arc<jsonschema::Validator>,
    tool: Arc<dyn Tool>,
}

impl Entry {
    /// `tool` with its schema compiled.
    fn new(tool: Arc<dyn Tool>, spec: ToolSpec) -> Result<Self, RegistryError> {
        let validator = jsonschema::validator_for(&spec.input_schema)
            .map_err(|e| RegistryError::InvalidSchema { name: spec.name.clone(), reason: e.to_string() })?;
        Ok(Entry { effect: tool.effect(), spec, validator: Arc::new(validator), tool })
    }
}

/// The frozen set of tools of a run.
pub struct ToolRegistry {
    entries: Vec<Entry>,
    by_name: HashMap<String, usize>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry").field("tools", &self.names().collect::<Vec<_>>()).finish()
    }
}

/// A registered tool, by position (cheap to copy, valid for its registry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolHandle(usize);

/// A call whose tool exists and whose arguments are valid.
#[derive(Debug, Clone)]
pub struct PreparedCall {
    /// The call id.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The registered tool.
    pub handle: ToolHandle,
    /// The validated arguments (frozen).
    pub args: Args,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn empty() -> Self {
        ToolRegistry { entries: Vec::new(), by_name: HashMap::new() }
    }

    /// A new frozen registry: this one's tools, then `extra` (a subagent's own tools, see
    /// [`crate::subagents::servers`]). This registry's entries are shared, only `extra`'s
    /// schemas are compiled; a name already taken is [`RegistryError::Duplicate`].
    pub fn extended(&self, extra: Vec<Arc<dyn Tool>>) -> Result<ToolRegistry, RegistryError> {
        let mut registry = ToolRegistry { entries: self.entries.clone(), by_name: self.by_name.clone() };
        for tool in extra {
            let spec = tool.spec();
            if registry.by_name.contains_key(&spec.name) {
                return Err(RegistryError::Duplicate(spec.name));
            }
            registry.by_name.insert(spec.name.clone(), registry.entries.len());
            registry.entries.push(Entry::new(tool, spec)?);
        }
        Ok(registry)
    }

    /// The tool names, in registration order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.spec.name.as_str())
    }

    /// The specs, in registration order.
    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.entries.iter().map(|e| &e.spec)
    }

    /// Looks a tool up by name, or by a former name of it (`Task` finds `Agent`, see
    /// [`crate::tool_names`]) unless a tool is registered under that name itself.
    pub fn lookup(&self, name: &str) -> Option<ToolHandle> {
        self.by_name
            .get(name)
            .or_else(|| self.by_name.get(crate::tool_names::current_name(name)))
            .copied()
            .map(ToolHandle)
    }

    /// The tool behind a handle.
    pub fn tool(&self, handle: ToolHandle) -> &Arc<dyn Tool> {
        &self.entries[handle.0].tool
    }

    /// The spec behind a handle.
    pub fn spec(&self, handle: ToolHandle) -> &ToolSpec {
        &self.entries[handle.0].spec
    }

    /// The effect behind a handle.
    pub fn effect(&self, handle: ToolHandle) -> Effect {
        self.entries[handle.0].effect
    }

    /// Finds the tool, parses and validates the arguments, and normalises them (paths made
    /// absolute relative to `cwd`).
    pub fn prepare(&self, call: &ToolCall, cwd: &Path) -> Result<PreparedCall, ToolError> {
        let Some(handle) = self.lookup(&call.name) else {
            return Err(ToolError::new(ErrorCode::UnknownTool, format!("no tool named `{}` is available", call.name)));
        };
        let mut args = match &call.arguments {
            ToolArguments::Json(value @ Value::Object(map)) => {
                self.check_value(handle, value)?;
                map.clone()
            }
            ToolArguments::Json(other) => {
                return Err(ToolError::new(
                    ErrorCode::InvalidArguments,
                    format!("/: arguments must be a JSON object, got {}", crate::config_file::type_name(other)),
                ));
            }
            ToolArguments::Raw(raw) => {
                let why = serde_json::from_str::<Value>(raw).err().map(|e| e.to_string()).unwrap_or_default();
                return Err(ToolError::new(
                    ErrorCode::InvalidArguments,
                    format!("/: arguments are not valid JSON: {why}"),
                ));
            }
        };
        self.tool(handle).normalize(&mut args, cwd);
        Ok(PreparedCall { id: call.id.clone(), name: call.name.clone(), handle, args: Arc::new(args) })
    }

    /// Validates replacement arguments (a hook's rewrite) and freezes them.
    pub fn revalidate(&self, handle: ToolHandle, args: Map<String, Value>) -> Result<Args, ToolError> {
        let value = Value::Object(args);
        self.check_value(handle, &value)?;
        match value {
            Value::Object(map) => Ok(Arc::new(map)),
            _ => Err(ToolError::new(ErrorCode::InvalidArguments, "/: arguments must be a JSON object")),
        }
    }

    /// Validates an argument value against the tool's schema; the error names the JSON path.
    pub fn check_value(&self, handle: ToolHandle, value: &Value) -> Result<(), ToolError> {
        let entry = &self.entries[handle.0];
        if entry.validator.is_valid(value) {
            return Ok(());
        }
        let messages: Vec<String> = entry
            .validator
            .iter_errors(value)
            .map(|e| {
                let path = e.instance_path().as_str().to_owned();
                format!("{}: {}", if path.is_empty() { "/" } else { &path }, e)
            })
            .collect();
        Err(ToolError::new(ErrorCode::InvalidArguments, messages.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subagents::AgentTool;
    use crate::tool::ToolContext;
    use serde_json::json;

    struct Named(&'static str);

    #[async_trait::async_trait]
    impl Tool for Named {
        fn spec(&self) -> ToolSpec {
            ToolSpec {
                name: self.0.to_owned(),
                description: String::new(),
                input_schema: json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
            }
        }
        fn effect(&self) -> Effect {
            Effect::Read
        }
        async fn execute(&self, _args: &Map<String, Value>, _ctx: &ToolContext) -> Result<Value, ToolError> {
            Ok(Value::Null)
        }
    }

    #[test]
    fn an_extended_registry_adds_tools_after_the_frozen_ones_which_keep_theirs() {
        let mut builder = ToolRegistryBuilder::new();
        builder.register(AgentTool);
        let base = builder.build().expect("base");
        let wider = base.extended(vec![Arc::new(Named("mcp__own__ping"))]).expect("extended");
        assert_eq!(wider.names().collect::<Vec<_>>(), ["Agent", "mcp__own__ping"]);
        assert_eq!(base.names().count(), 1, "the frozen registry is unchanged");
        let call = |args: Value| ToolCall {
            id: "c".into(),
            name: "mcp__own__ping".into(),
            arguments: ToolArguments::Json(args),
        };
        assert!(wider.prepare(&call(json!({"n": 1})), Path::new("/")).is_ok());
        assert!(wider.prepare(&call(json!({"n": "x"})), Path::new("/")).is_err(), "its schema is compiled");
        assert!(wider.lookup("Task").is_some(), "former names still find the shared tools");
        let clash = base.extended(vec![Arc::new(Named("Agent"))]);
        assert!(matches!(clash, Err(RegistryError::Duplicate(name)) if name == "Agent"));
    }
}
