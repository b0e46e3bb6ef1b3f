//! One agent definition's fields as Claude Code 2.1 writes them — a file's YAML front matter
//! (`.claude/agents/*.md`) or an `--agents` JSON entry — read into an [`AgentFile`].
//!
//! Contract, field by field:
//! - applied: `name` (a file's; the key of an `--agents` entry), `description` (required), the
//!   prompt (a file's body; an entry's `prompt`, required), `tools` and `disallowedTools` (a list
//!   or a comma-separated string: `disallowedTools` removes tools even when `tools` allows them),
//!   `model` (`inherit` or a model spec), `maxTurns` (or `max_turns`), `permissionMode` (applied
//!   only when at least as strict as the parent's mode; an unknown mode is ignored with a
//!   warning, which keeps the parent's);
//! - applied: `background` (a boolean: `true` runs every subagent of the type in the
//!   background — the `Agent` call answers at once, the answer comes as a notification);
//! - applied, resolved when the session is assembled ([`crate::agent_scope`]): `hooks` (an
//!   object of the settings' `hooks` shape, kept as written and validated there), `skills` (a
//!   list or a comma-separated string of skill names, preloaded), `mcpServers` (a list whose
//!   items are a name — a server configured for the session, whose tools the subagent gets
//!   besides `tools` — or an inline `{name: config}` object, a server of the subagent's own in
//!   the `mcpServers` shape of settings; or a `{name: config}` map of inline servers; an inline
//!   config must be an object, checked further when it starts), `effort` (`low`, `medium`,
//!   `high`; `xhigh` and `max` are sent as `high`, with a warning; an integer or an unknown level
//!   is ignored with a warning);
//! - accepted, not applied: [`NOT_APPLIED`] — one warning each naming the field and why;
//! - accepted silently: `color` (display only: spine draws no agent colors);
//! - any other key: a warning naming it, never an error (forward compatible);
//! - a missing required field or an applied field of the wrong type is a [`DefinitionError`]
//!   naming the field (a file is then skipped with a warning; `--agents` is a usage error).
//!
//! Warnings are returned without their source; the caller prefixes the file or the flag.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use spine_protocol::message::ReasoningEffort;
use spine_protocol::permission::PermissionMode;
use thiserror::Error;

/// Claude Code 2.1 fields spine accepts and does not apply, each with why.
pub const NOT_APPLIED: &[(&str, &str)] = &[
    (
        "memory",
        "spine keeps no agent memory directories (`~/.claude/agent-memory/<name>/`, `.claude/agent-memory/<name>/`)",
    ),
    ("isolation", "spine runs every subagent in the parent's workspace, never in a temporary git worktree"),
];

/// The fields every definition may hold, applied.
const APPLIED: &[&str] = &[
    "description",
    "tools",
    "disallowedTools",
    "model",
    "maxTurns",
    "max_turns",
    "permissionMode",
    "hooks",
    "skills",
    "mcpServers",
    "effort",
    "background",
];

/// A definition as its file (or `--agents` entry) gives it, before its model is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentFile {
    /// `name`.
    pub name: String,
    /// `description`.
    pub description: String,
    /// `tools`, when given.
    pub tools: Option<Vec<String>>,
    /// `disallowedTools` (empty when absent).
    pub disallowed_tools: Vec<String>,
    /// `model`: `None` for `inherit` or absent.
    pub model: Option<String>,
    /// `max_turns` (or `maxTurns`).
    pub max_turns: Option<u32>,
    /// `permissionMode`.
    pub permission_mode: Option<PermissionMode>,
    /// `hooks`, as written (an object; validated when the session is assembled).
    pub hooks: Option<Value>,
    /// `skills`: the skills preloaded into the subagent's prompt.
    pub skills: Vec<String>,
    /// `mcpServers`: the names of configured servers.
    pub mcp_servers: Vec<String>,
    /// `mcpServers`: the inline servers, by name, each config as written (an object).
    pub inline_mcp_servers: Vec<(String, Value)>,
    /// `background`.
    pub background: bool,
    /// `effort`, as spine sends it.
    pub effort: Option<ReasoningEffort>,
    /// The body (a file's) or `prompt` (an entry's).
    pub prompt: String,
    /// The file, or `--agents`.
    pub source: PathBuf,
}

/// Why a definition cannot be used; each names its field.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DefinitionError {
    /// A required field is absent or empty.
    #[error("field `{0}` is missing")]
    Missing(&'static str),
    /// A field holds a value that cannot be applied (its path: `tools[1]`).
    #[error("field `{field}`: {reason}")]
    Field {
        /// The field, with the index of a list item.
        field: String,
        /// Why.
        reason: String,
    },
}

impl DefinitionError {
    fn field(field: impl Into<String>, reason: impl Into<String>) -> Self {
        DefinitionError::Field { field: field.into(), reason: reason.into() }
    }

    /// The field's path (`tools[1]`).
    pub fn path(&self) -> &str {
        match self {
            DefinitionError::Missing(field) => field,
            DefinitionError::Field { field, .. } => field,
        }
    }
}

/// Where the fields come from: a file's front matter and its body, or an `--agents` entry.
#[derive(Debug, Clone, Copy)]
pub enum Origin<'a> {
    /// A file's front matter (holding `name`) and its body (the prompt).
    File {
        /// The markdown after the front matter.
        body: &'a str,
        /// The file.
        path: &'a Path,
    },
    /// An `--agents` entry: its key is the name, its `prompt` the prompt.
    Flag {
        /// The entry's key.
        name: &'a str,
    },
}

/// Reads a definition from its fields; the warnings name each field accepted but not applied
/// and each unknown key (see the module documentation).
pub fn read_fields(
    fields: &Map<String, Value>,
    origin: Origin<'_>,
) -> Result<(AgentFile, Vec<String>), DefinitionError> {
    let mut warnings = Vec::new();
    let known: &[&str] = match origin {
        Origin::File { .. } => &["name"],
        Origin::Flag { .. } => &["prompt"],
    };
    for key in fields.keys() {
        if let Some((_, why)) = NOT_APPLIED.iter().find(|(field, _)| field == key) {
            warnings.push(format!("`{key}` is not applied: {why}"));
        } else if !(known.contains(&key.as_str()) || APPLIED.contains(&key.as_str()) || key == "color") {
            warnings.push(format!("unknown field `{key}` ignored"));
        }
    }
    let (name, prompt, source) = match origin {
        Origin::File { body, path } => (text(fields, "name")?, body.trim().to_owned(), path.to_path_buf()),
        Origin::Flag { name } => (Some(name.trim().to_owned()), required(fields, "prompt")?, PathBuf::from("--agents")),
    };
    let name = name.filter(|n| !n.is_empty()).ok_or(DefinitionError::Missing("name"))?;
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':')) {
        return Err(DefinitionError::field(
            "name",
            format!("`{name}` may hold only letters, digits, `-`, `_`, `.` and `:`"),
        ));
    }
    let description = required(fields, "description")?;
    let tools = tool_list(fields, "tools")?;
    let disallowed_tools = tool_list(fields, "disallowedTools")?.unwrap_or_default();
    if let Some(rule) = disallowed_tools.iter().find(|t| t.contains('(')) {
        return Err(DefinitionError::field(
            "disallowedTools",
            format!("`{rule}` is not a tool name (permission rules belong in settings `permissions.deny`)"),
        ));
    }
    let model = match text(fields, "model")?.as_deref() {
        None | Some("inherit") => None,
        Some("") => return Err(DefinitionError::field("model", "empty (write `inherit` or a model spec)")),
        Some(spec) => Some(spec.to_owned()),
    };
    let max_turns = max_turns(fields)?;
    let permission_mode = match text(fields, "permissionMode")? {
        None => None,
        Some(mode) => match mode.parse::<PermissionMode>() {
            Ok(mode) => Some(mode),
            Err(e) => {
                warnings.push(format!("`permissionMode` ignored ({e}); the parent's mode applies"));
                None
            }
        },
    };
    let hooks = match fields.get("hooks") {
        None | Some(Value::Null) => None,
        Some(value @ Value::Object(_)) => Some(value.clone()),
        Some(other) => {
            return Err(DefinitionError::field(
                "hooks",
                format!("expected an object of hook events, got {}", kind(other)),
            ));
        }
    };
    let skills = name_list(fields, "skills", "a skill name")?.unwrap_or_default();
    let (mcp_servers, inline_mcp_servers) = mcp_servers(fields)?;
    let effort = effort(fields, &mut warnings)?;
    let background = match fields.get("background") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(DefinitionError::field("background", format!("expected true or false, got {}", kind(other))));
        }
    };
    let file = AgentFile {
        name,
        description,
        tools,
        disallowed_tools,
        model,
        max_turns,
        permission_mode,
        hooks,
        skills,
        mcp_servers,
        inline_mcp_servers,
        background,
        effort,
        prompt,
        source,
    };
    Ok((file, warnings))
}

/// Inline MCP servers: each name with its config as written.
type InlineServers = Vec<(String, Value)>;

/// `mcpServers`: a list of server names and inline `{name: config}` objects, or a
/// `{name: config}` map of inline servers; the names, and the inline servers in order.
fn mcp_servers(fields: &Map<String, Value>) -> Result<(Vec<String>, InlineServers), DefinitionError> {
    let mut names = Vec::new();
    let mut inline = Vec::new();
    let items = match fields.get("mcpServers") {
        None | Some(Value::Null) => return Ok((names, inline)),
        Some(Value::Array(items)) => items,
        Some(Value::Object(map)) => {
            inline_servers(map, "mcpServers", &mut inline)?;
            return Ok((names, inline));
        }
        Some(other) => {
            return Err(DefinitionError::field(
                "mcpServers",
                format!("expected a list of server names or inline server configs, got {}", kind(other)),
            ));
        }
    };
    for (i, item) in items.iter().enumerate() {
        match item {
            Value::String(name) if !name.trim().is_empty() => names.push(name.trim().to_owned()),
            Value::Object(map) => inline_servers(map, &format!("mcpServers[{i}]"), &mut inline)?,
            other => {
                return Err(DefinitionError::field(
                    format!("mcpServers[{i}]"),
                    format!("expected a server name or an inline server config, got {}", kind(other)),
                ));
            }
        }
    }
    Ok((names, inline))
}

/// The inline servers of `map` (`{name: config}`) at `path`: each config must be an object.
fn inline_servers(map: &Map<String, Value>, path: &str, out: &mut InlineServers) -> Result<(), DefinitionError> {
    for (name, config) in map {
        if !config.is_object() {
            return Err(DefinitionError::field(
                format!("{path}.{name}"),
                format!("expected a server config (an object with `command` or `url`), got {}", kind(config)),
            ));
        }
        out.push((name.clone(), config.clone()));
    }
    Ok(())
}

/// `effort`: Claude Code's levels `low`, `medium`, `high` as they are; `xhigh` and `max` as
/// `high` (the highest spine sends), with a warning; an integer or an unknown level is ignored
/// with a warning.
fn effort(fields: &Map<String, Value>, warnings: &mut Vec<String>) -> Result<Option<ReasoningEffort>, DefinitionError> {
    let level = match fields.get("effort") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(level)) => level.trim(),
        Some(Value::Number(n)) => {
            warnings.push(format!("`effort` {n} ignored: spine sends a named reasoning effort (low, medium, high)"));
            return Ok(None);
        }
        Some(other) => {
            return Err(DefinitionError::field("effort", format!("expected a level or a number, got {}", kind(other))));
        }
    };
    Ok(match level {
        "low" | "medium" | "high" => ReasoningEffort::parse(level),
        "xhigh" | "max" => {
            warnings.push(format!("`effort` {level} is sent as `high`, the highest reasoning effort spine sends"));
            Some(ReasoningEffort::High)
        }
        other => {
            warnings.push(format!("`effort` ignored: unknown level `{other}` (low, medium, high, xhigh or max)"));
            None
        }
    })
}

/// A string field, trimmed.
fn text(fields: &Map<String, Value>, key: &str) -> Result<Option<String>, DefinitionError> {
    match fields.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim().to_owned())),
        Some(other) => Err(DefinitionError::field(key, format!("expected a string, got {}", kind(other)))),
    }
}

/// A required string field, not empty.
fn required(fields: &Map<String, Value>, key: &'static str) -> Result<String, DefinitionError> {
    text(fields, key)?.filter(|t| !t.is_empty()).ok_or(DefinitionError::Missing(key))
}

/// `tools` / `disallowedTools`: a list of names or a comma-separated string.
fn tool_list(fields: &Map<String, Value>, key: &str) -> Result<Option<Vec<String>>, DefinitionError> {
    name_list(fields, key, "a tool name")
}

/// A list of names (`what` each is, for errors) or a comma-separated string.
fn name_list(fields: &Map<String, Value>, key: &str, what: &str) -> Result<Option<Vec<String>>, DefinitionError> {
    let names = match fields.get(key) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) => s.split(',').map(|n| n.trim().to_owned()).collect::<Vec<_>>(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(s) => Ok(s.trim().to_owned()),
                other => {
                    Err(DefinitionError::field(format!("{key}[{i}]"), format!("expected {what}, got {}", kind(other))))
                }
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(other) => {
            return Err(DefinitionError::field(
                key,
                format!("expected a list of names or a comma-separated string, got {}", kind(other)),
            ));
        }
    };
    Ok(Some(names.into_iter().filter(|n| !n.is_empty()).collect()))
}

/// `maxTurns` (or `max_turns`): a whole number, at least 1.
fn max_turns(fields: &Map<String, Value>) -> Result<Option<u32>, DefinitionError> {
    let Some((key, value)) = ["maxTurns", "max_turns"].iter().find_map(|k| fields.get(*k).map(|v| (*k, v))) else {
        return Ok(None);
    };
    match value.as_u64().map(u32::try_from) {
        Some(Ok(0)) => Err(DefinitionError::field(key, "must be at least 1")),
        Some(Ok(n)) => Ok(Some(n)),
        Some(Err(_)) | None => Err(DefinitionError::field(key, format!("expected a whole number, got {value}"))),
    }
}

/// A JSON value's kind, for errors.
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
#[path = "agent_def_tests.rs"]
mod tests;
