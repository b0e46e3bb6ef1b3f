//! `--mcp-config FILE|JSON`: MCP servers given on the command line (Claude Code's flag).
//!
//! Contract:
//! - A value whose first non-blank character is `{` is inline JSON; any other value is a file
//!   path (relative to the directory spine was started in), read like `.mcp.json`: a regular
//!   file of at most 4 MiB, so a FIFO, socket or device is an error, never a hang.
//! - Either holds `{"mcpServers": {...}}` (other top-level keys are ignored); each entry is
//!   checked as [`super::config`] parses it (`command`/`url`/`"type": "sdk"`, variables
//!   expanded). The first problem is an [`McpFlagError`] naming the flag, the value's position
//!   (from 1), its file or `inline JSON`, and the field at fault:
//!   `--mcp-config #2 (inline JSON): mcpServers.x.command: a stdio server needs a non-empty
//!   `command``. Unlike a settings file's servers, a bad entry here fails the whole command:
//!   the user just typed it.
//! - [`load_mcp_config_args`] merges the values in order; a later value's server replaces an
//!   earlier one of the same name and moves to the end.

use std::path::PathBuf;

use serde_json::{Map, Value};
use spine_core::config_file::{CONFIG_FILE_CAP, ConfigFileError, read_config_file};
use thiserror::Error;

use super::config::parse_server;

/// The flag's name, as errors spell it.
pub const MCP_CONFIG_FLAG: &str = "--mcp-config";

/// What a `--mcp-config` value was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpConfigValue {
    /// A file path.
    File(PathBuf),
    /// JSON written on the command line.
    Inline,
}

impl std::fmt::Display for McpConfigValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            McpConfigValue::File(path) => write!(f, "{}", path.display()),
            McpConfigValue::Inline => f.write_str("inline JSON"),
        }
    }
}

/// A `--mcp-config` value could not be used.
#[derive(Debug, Error)]
#[error("{MCP_CONFIG_FLAG} #{position} ({value}): {problem}")]
pub struct McpFlagError {
    /// The value's position among the flag's values, from 1.
    pub position: usize,
    /// The file it names, or inline JSON.
    pub value: McpConfigValue,
    /// What is wrong.
    #[source]
    pub problem: McpFlagProblem,
}

/// What is wrong with a `--mcp-config` value.
#[derive(Debug, Error)]
pub enum McpFlagProblem {
    /// The file cannot be read (missing, not a regular file, too large, not UTF-8).
    #[error("{0}")]
    Read(#[source] ConfigFileError),
    /// The text is not JSON.
    #[error("not valid JSON: {0}")]
    Json(#[source] serde_json::Error),
    /// The JSON is not `{"mcpServers": {...}}`.
    #[error("expected {{\"mcpServers\": {{...}}}}, {0}")]
    Shape(String),
    /// A server entry is unusable.
    #[error("{at}: {message}")]
    Entry {
        /// Where: `mcpServers.<name>[.<field>]`.
        at: String,
        /// Why.
        message: String,
    },
}

/// The servers of every `--mcp-config` value, merged in order (see the module contract).
pub fn load_mcp_config_args(values: &[String]) -> Result<Map<String, Value>, McpFlagError> {
    let mut servers = Map::new();
    for (index, value) in values.iter().enumerate() {
        for (name, entry) in parse_mcp_config_arg(index + 1, value)? {
            servers.shift_remove(&name);
            servers.insert(name, entry);
        }
    }
    Ok(servers)
}

/// The `mcpServers` of one `--mcp-config` value, the `position`-th (from 1), every entry
/// checked.
pub fn parse_mcp_config_arg(position: usize, value: &str) -> Result<Map<String, Value>, McpFlagError> {
    let (source, text) = if value.trim_start().starts_with('{') {
        (McpConfigValue::Inline, value.to_owned())
    } else {
        let path = PathBuf::from(value);
        match read_config_file(&path, CONFIG_FILE_CAP) {
            Ok(text) => (McpConfigValue::File(path), text),
            Err(e) => {
                return Err(McpFlagError {
                    position,
                    value: McpConfigValue::File(path),
                    problem: McpFlagProblem::Read(e),
                });
            }
        }
    };
    let fail = |problem: McpFlagProblem| McpFlagError { position, value: source.clone(), problem };
    let document: Value = serde_json::from_str(&text).map_err(|e| fail(McpFlagProblem::Json(e)))?;
    let Value::Object(mut top) = document else {
        return Err(fail(McpFlagProblem::Shape("the value is not a JSON object".to_owned())));
    };
    let servers = match top.remove("mcpServers") {
        Some(Value::Object(servers)) => servers,
        None => return Err(fail(McpFlagProblem::Shape("`mcpServers` is missing".to_owned()))),
        Some(_) => return Err(fail(McpFlagProblem::Shape("`mcpServers` is not an object".to_owned()))),
    };
    for (name, entry) in &servers {
        if let Err(e) = parse_server(name, entry) {
            let at = match e.field {
                Some(field) => format!("mcpServers.{name}.{field}"),
                None => format!("mcpServers.{name}"),
            };
            return Err(fail(McpFlagProblem::Entry { at, message: e.message }));
        }
    }
    Ok(servers)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn names(servers: &Map<String, Value>) -> Vec<&str> {
        servers.keys().map(String::as_str).collect()
    }

    #[test]
    fn a_value_starting_with_a_brace_is_inline_json_and_any_other_is_a_file() {
        let dir = tempfile::tempdir().expect("tmp");
        let file = dir.path().join("servers.json");
        std::fs::write(&file, json!({"mcpServers": {"fs": {"command": "node"}}}).to_string()).expect("write");
        let inline = r#"  {"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}}"#.to_owned();
        let servers = load_mcp_config_args(&[inline, file.display().to_string()]).expect("both load");
        assert_eq!(names(&servers), ["calc", "fs"]);
        assert_eq!(servers["calc"], json!({"type": "sdk", "name": "calc"}), "kept as written");
    }

    #[test]
    fn a_later_value_replaces_an_earlier_server_of_the_same_name_and_moves_it_last() {
        let first = json!({"mcpServers": {"a": {"command": "one"}, "b": {"command": "b"}}}).to_string();
        let second = json!({"mcpServers": {"a": {"command": "two"}}}).to_string();
        let servers = load_mcp_config_args(&[first, second]).expect("load");
        assert_eq!(names(&servers), ["b", "a"]);
        assert_eq!(servers["a"]["command"], "two");
    }

    #[test]
    fn an_entry_error_names_the_flag_the_values_position_and_the_field() {
        let good = json!({"mcpServers": {}}).to_string();
        let bad = json!({"mcpServers": {"x": {"command": ""}}}).to_string();
        let error = load_mcp_config_args(&[good, bad]).expect_err("the second is bad");
        assert_eq!(error.position, 2);
        assert_eq!(
            error.to_string(),
            "--mcp-config #2 (inline JSON): mcpServers.x.command: a stdio server needs a non-empty `command`"
        );
        let unset = json!({"mcpServers": {"h": {"url": "http://x", "headers": {"A": "${SPINE_FLAG_TEST_UNSET}"}}}});
        let error = parse_mcp_config_arg(1, &unset.to_string()).expect_err("unset variable");
        assert!(error.to_string().starts_with("--mcp-config #1 (inline JSON): mcpServers.h.headers.A: "), "{error}");
    }

    #[test]
    fn a_file_that_cannot_be_used_is_named_with_why() {
        let dir = tempfile::tempdir().expect("tmp");
        let missing = dir.path().join("absent.json");
        let error = parse_mcp_config_arg(1, &missing.display().to_string()).expect_err("missing");
        assert!(matches!(&error.problem, McpFlagProblem::Read(e) if e.is_not_found()), "{error:?}");
        assert!(error.to_string().starts_with(&format!("--mcp-config #1 ({}): cannot read", missing.display())));
        let error = parse_mcp_config_arg(3, &dir.path().display().to_string()).expect_err("a directory");
        assert!(error.to_string().contains("is a directory, not a regular file"), "{error}");
        let broken = dir.path().join("broken.json");
        std::fs::write(&broken, "{\"mcpServers\": ").expect("write");
        let error = parse_mcp_config_arg(2, &broken.display().to_string()).expect_err("not JSON");
        assert!(matches!(error.problem, McpFlagProblem::Json(_)), "{error:?}");
        assert_eq!(error.value, McpConfigValue::File(broken));
    }

    #[test]
    fn the_json_must_hold_an_object_of_servers_under_mcp_servers() {
        for (value, why) in [
            (r#"{"servers": {}}"#, "`mcpServers` is missing"),
            (r#"{"mcpServers": []}"#, "`mcpServers` is not an object"),
        ] {
            let error = parse_mcp_config_arg(1, value).expect_err(value);
            assert_eq!(
                error.to_string(),
                format!("--mcp-config #1 (inline JSON): expected {{\"mcpServers\": {{...}}}}, {why}")
            );
        }
        let error = parse_mcp_config_arg(1, "{not json").expect_err("broken inline");
        assert!(error.to_string().starts_with("--mcp-config #1 (inline JSON): not valid JSON: "), "{error}");
    }
}
