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
//! - accepted, not applied: [`NOT_APPLIED`] — one warning each, naming the field;
//! - accepted silently: `color` (display only: spine draws no agent colors);
//! - any other key: a warning naming it, never an error (forward compatible);
//! - a missing required field or an applied field of the wrong type is a [`DefinitionError`]
//!   naming the field (a file is then skipped with a warning; `--agents` is a usage error).
//!
//! Warnings are returned without their source; the caller prefixes the file or the flag.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use spine_protocol::permission::PermissionMode;
use thiserror::Error;

/// Claude Code 2.1 fields spine accepts and does not apply yet.
pub const NOT_APPLIED: &[&str] = &["skills", "mcpServers", "effort", "background", "hooks", "memory", "isolation"];

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
        let common = ["description", "tools", "disallowedTools", "model", "maxTurns", "max_turns", "permissionMode"];
        if NOT_APPLIED.contains(&key.as_str()) {
            warnings.push(format!("`{key}` in agent definitions is not applied yet"));
        } else if !(known.contains(&key.as_str()) || common.contains(&key.as_str()) || key == "color") {
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
    let file =
        AgentFile { name, description, tools, disallowed_tools, model, max_turns, permission_mode, prompt, source };
    Ok((file, warnings))
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
    let names = match fields.get(key) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) => s.split(',').map(|n| n.trim().to_owned()).collect::<Vec<_>>(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(s) => Ok(s.trim().to_owned()),
                other => Err(DefinitionError::field(
                    format!("{key}[{i}]"),
                    format!("expected a tool name, got {}", kind(other)),
                )),
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(other) => {
            return Err(DefinitionError::field(
                key,
                format!("expected a list of tool names or a comma-separated string, got {}", kind(other)),
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
mod tests {
    use super::*;
    use serde_json::json;

    fn file(fields: Value) -> Result<(AgentFile, Vec<String>), DefinitionError> {
        let map = fields.as_object().cloned().unwrap_or_default();
        read_fields(&map, Origin::File { body: "Body.\n", path: Path::new("/p/a.md") })
    }

    #[test]
    fn disallowed_tools_read_as_a_list_or_a_comma_string() {
        let (a, _) = file(json!({"name": "a", "description": "d", "disallowedTools": "Bash, Write"})).expect("ok");
        assert_eq!(a.disallowed_tools, ["Bash", "Write"]);
        let (b, _) = file(json!({"name": "a", "description": "d", "disallowedTools": ["Bash"]})).expect("ok");
        assert_eq!(b.disallowed_tools, ["Bash"]);
        let err = file(json!({"name": "a", "description": "d", "disallowedTools": ["Bash", 3]})).expect_err("bad");
        assert_eq!(err.path(), "disallowedTools[1]");
        let rule = file(json!({"name": "a", "description": "d", "disallowedTools": "Bash(rm *)"})).expect_err("rule");
        assert!(rule.to_string().contains("`disallowedTools`"), "{rule}");
    }

    #[test]
    fn fields_spine_does_not_apply_are_one_warning_each_naming_the_field() {
        let fields = json!({"name": "a", "description": "d", "hooks": {}, "skills": ["x"], "mcpServers": [],
            "effort": "high", "background": true, "memory": "project", "isolation": "worktree", "color": "blue"});
        let (_, warnings) = file(fields).expect("never an error");
        assert_eq!(warnings.len(), NOT_APPLIED.len(), "{warnings:?}");
        assert!(warnings.contains(&"`hooks` in agent definitions is not applied yet".to_owned()), "{warnings:?}");
        assert!(!warnings.iter().any(|w| w.contains("color")), "color is display only");
    }

    #[test]
    fn an_unknown_key_is_a_warning_naming_it() {
        let (_, warnings) = file(json!({"name": "a", "description": "d", "futureField": 1})).expect("ok");
        assert_eq!(warnings, ["unknown field `futureField` ignored"]);
    }

    #[test]
    fn an_unknown_permission_mode_is_ignored_with_a_warning() {
        let (a, warnings) = file(json!({"name": "a", "description": "d", "permissionMode": "auto"})).expect("ok");
        assert_eq!(a.permission_mode, None, "the parent's mode applies");
        assert!(warnings[0].contains("`permissionMode`"), "{warnings:?}");
    }

    #[test]
    fn an_agents_entry_takes_its_name_from_the_key_and_needs_a_prompt() {
        let map = json!({"description": "d", "prompt": "Review.", "tools": ["Read"], "maxTurns": 2});
        let map = map.as_object().cloned().unwrap_or_default();
        let (a, warnings) = read_fields(&map, Origin::Flag { name: "reviewer" }).expect("ok");
        assert_eq!((a.name.as_str(), a.prompt.as_str(), a.max_turns), ("reviewer", "Review.", Some(2)));
        assert_eq!(a.source, PathBuf::from("--agents"));
        assert!(warnings.is_empty(), "{warnings:?}");
        let map = json!({"description": "d"}).as_object().cloned().unwrap_or_default();
        assert_eq!(read_fields(&map, Origin::Flag { name: "x" }).expect_err("no prompt").path(), "prompt");
    }
}
