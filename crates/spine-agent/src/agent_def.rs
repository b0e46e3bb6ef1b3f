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
//! - applied, resolved when the session is assembled ([`crate::agent_scope`]): `hooks` (an
//!   object of the settings' `hooks` shape, kept as written and validated there), `skills` (a
//!   list or a comma-separated string of skill names, preloaded), `mcpServers` (a list: a name
//!   is a server configured for the session, whose tools the subagent gets besides `tools`; an
//!   inline `{name: config}` object is not started — a warning naming it), `effort` (`low`,
//!   `medium`, `high`; `xhigh` and `max` are sent as `high`, with a warning; an integer or an
//!   unknown level is ignored with a warning);
//! - accepted, not applied: [`NOT_APPLIED`] — one warning each naming the field and why
//!   (`background: false` is what spine does: no warning);
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
    ("background", "spine runs every subagent in the foreground: the `Agent` call waits for its answer"),
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
    /// `mcpServers`: the names of configured servers (inline configs are warned about).
    pub mcp_servers: Vec<String>,
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
    for (key, value) in fields {
        if let Some((_, why)) = NOT_APPLIED.iter().find(|(field, _)| field == key) {
            if !(key == "background" && matches!(value, Value::Bool(false) | Value::Null)) {
                warnings.push(format!("`{key}` is not applied: {why}"));
            }
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
    let mcp_servers = mcp_servers(fields, &mut warnings)?;
    let effort = effort(fields, &mut warnings)?;
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
        effort,
        prompt,
        source,
    };
    Ok((file, warnings))
}

/// `mcpServers`: a list of server names and inline `{name: config}` objects; the names are
/// kept, each inline server is a warning (spine starts only the session's servers).
fn mcp_servers(fields: &Map<String, Value>, warnings: &mut Vec<String>) -> Result<Vec<String>, DefinitionError> {
    let items = match fields.get("mcpServers") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(DefinitionError::field(
                "mcpServers",
                format!("expected a list of server names or inline server configs, got {}", kind(other)),
            ));
        }
    };
    let mut names = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item {
            Value::String(name) if !name.trim().is_empty() => names.push(name.trim().to_owned()),
            Value::Object(inline) => {
                let servers: Vec<&str> = inline.keys().map(String::as_str).collect();
                warnings.push(format!(
                    "`mcpServers[{i}]`: inline server `{}` not started: spine starts only the servers configured \
                     for the session (.mcp.json, settings `mcpServers`); name one of them instead",
                    servers.join("`, `")
                ));
            }
            other => {
                return Err(DefinitionError::field(
                    format!("mcpServers[{i}]"),
                    format!("expected a server name or an inline server config, got {}", kind(other)),
                ));
            }
        }
    }
    Ok(names)
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
    fn fields_spine_does_not_apply_are_one_warning_each_naming_the_field_and_why() {
        let fields = json!({"name": "a", "description": "d", "background": true, "memory": "project",
            "isolation": "worktree", "color": "blue"});
        let (_, warnings) = file(fields).expect("never an error");
        assert_eq!(warnings.len(), NOT_APPLIED.len(), "{warnings:?}");
        assert!(
            warnings
                .iter()
                .any(|w| w.starts_with("`background` is not applied: spine runs every subagent in the foreground")),
            "{warnings:?}"
        );
        assert!(!warnings.iter().any(|w| w.contains("color")), "color is display only");
        let (_, quiet) = file(json!({"name": "a", "description": "d", "background": false})).expect("ok");
        assert!(quiet.is_empty(), "background: false is what spine does: {quiet:?}");
    }

    #[test]
    fn hooks_skills_mcp_servers_and_effort_are_read_as_claude_code_writes_them() {
        let fields = json!({"name": "a", "description": "d", "hooks": {"Stop": []}, "skills": "notes, deploy",
            "mcpServers": ["peer", {"inline": {"command": "x"}}], "effort": "medium"});
        let (a, warnings) = file(fields).expect("ok");
        assert_eq!(a.hooks, Some(json!({"Stop": []})));
        assert_eq!(a.skills, ["notes", "deploy"]);
        assert_eq!(a.mcp_servers, ["peer"]);
        assert_eq!(a.effort, Some(ReasoningEffort::Medium));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("`mcpServers[1]`: inline server `inline` not started"), "{warnings:?}");
        let (listed, _) = file(json!({"name": "a", "description": "d", "skills": ["x"]})).expect("ok");
        assert_eq!(listed.skills, ["x"]);
    }

    #[test]
    fn a_malformed_hooks_skills_mcp_servers_or_effort_names_its_field() {
        let err = |extra: Value| {
            let mut fields = json!({"name": "a", "description": "d"});
            if let (Some(f), Some(e)) = (fields.as_object_mut(), extra.as_object()) {
                f.extend(e.clone());
            }
            file(fields).expect_err("malformed").path().to_owned()
        };
        assert_eq!(err(json!({"hooks": ["PreToolUse"]})), "hooks");
        assert_eq!(err(json!({"skills": ["a", 1]})), "skills[1]");
        assert_eq!(err(json!({"mcpServers": "peer"})), "mcpServers");
        assert_eq!(err(json!({"mcpServers": ["peer", 2]})), "mcpServers[1]");
        assert_eq!(err(json!({"effort": true})), "effort");
    }

    #[test]
    fn effort_above_high_is_sent_as_high_and_a_number_or_unknown_level_is_ignored_with_a_warning() {
        let effort = |value: Value| {
            let (a, warnings) = file(json!({"name": "a", "description": "d", "effort": value})).expect("ok");
            (a.effort, warnings.len())
        };
        assert_eq!(effort(json!("low")), (Some(ReasoningEffort::Low), 0));
        assert_eq!(effort(json!("high")), (Some(ReasoningEffort::High), 0));
        assert_eq!(effort(json!("max")), (Some(ReasoningEffort::High), 1));
        assert_eq!(effort(json!("xhigh")), (Some(ReasoningEffort::High), 1));
        assert_eq!(effort(json!(3)), (None, 1));
        assert_eq!(effort(json!("ultra")), (None, 1));
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
