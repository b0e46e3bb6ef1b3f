//! MCP server configuration in Claude Code's shape: the value of `mcpServers`.
//!
//! ```json
//! {"fs":   {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."], "env": {"K": "v"}},
//!  "docs": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}}
//! ```
//!
//! - An entry with `command` (or `"type": "stdio"`) is a stdio server: `args` and `env` are
//!   optional. An entry with `url` (or `"type": "http"`) is a streamable-HTTP server with
//!   optional `headers`. `"type": "sse"` (the legacy transport) and other types are issues.
//! - `${VAR}` and `${VAR:-default}` are expanded in `command`, `args`, `env` values, `url` and
//!   header values, from the process environment, as Claude Code does; a variable that is
//!   unset and has no default makes that server an issue.
//! - `startupTimeoutMs` (a positive integer) gives one server its own start-up time limit,
//!   replacing [`McpOptions::startup_timeout`](super::McpOptions::startup_timeout) for it.
//! - `"sandbox": true` (spine's own field) starts a stdio server confined by the session's
//!   sandbox ([`McpOptions::sandboxed_env`](super::McpOptions::sandboxed_env)); a server
//!   without it runs unconfined, like the user's other programs. On an http server it is an
//!   issue (there is no process to confine).
//! - `"type": "sdk"` (what the Agent SDKs write for a server implemented inside the program
//!   driving spine, `{"type": "sdk", "name": "calc"}`) is reached through that program
//!   ([`McpOptions::sdk_host`](super::McpOptions::sdk_host)): spine sends it each JSON-RPC
//!   message of the server named by the entry's key. `name` is optional (the key).
//! - Problems are [`McpIssue`]s of kind [`McpIssueKind::Config`]: the server is skipped, the
//!   others go on. Servers given with `--mcp-config` are checked up front instead
//!   ([`super::flag`]): a bad entry there is an error naming the flag.
//! - [`load_mcp_json`] reads `<project>/.mcp.json` (`{"mcpServers": {...}}`): a regular file
//!   of at most 4 MiB; a FIFO, socket or device there is an error, never a hang.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};
use spine_core::config_file::{CONFIG_FILE_CAP, ConfigFileError, read_config_file};
use thiserror::Error;

use super::{McpIssue, McpIssueKind};

/// The file [`load_mcp_json`] reads, relative to the project directory.
pub const MCP_JSON: &str = ".mcp.json";

/// How to reach one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerTransport {
    /// A child process speaking JSON-RPC on stdin/stdout.
    Stdio {
        /// The program, looked up on `PATH` when it has no `/`.
        command: String,
        /// Passed to the program as they are (no shell).
        args: Vec<String>,
        /// Added to the server's environment.
        env: BTreeMap<String, String>,
        /// `"sandbox": true`: the server runs confined by the session's sandbox.
        sandbox: bool,
    },
    /// A streamable-HTTP endpoint.
    Http {
        /// The endpoint URL.
        url: String,
        /// Extra request headers.
        headers: BTreeMap<String, String>,
    },
    /// A server implemented inside the program driving spine (an Agent SDK's
    /// `create_sdk_mcp_server`), reached through [`SdkMcpHost`](super::SdkMcpHost) under the
    /// entry's key.
    Sdk {
        /// The server's own name (`name` of the entry; the key when absent).
        name: String,
    },
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The name (the `<server>` of `mcp__<server>__<tool>`).
    pub name: String,
    /// How to reach it.
    pub transport: ServerTransport,
    /// `startupTimeoutMs`: this server's start-up time limit, when it has its own.
    pub startup_timeout: Option<Duration>,
}

/// `.mcp.json` could not be used.
#[derive(Debug, Error)]
pub enum McpConfigError {
    /// The file exists but cannot be read (also: it is not a regular file of at most
    /// [`CONFIG_FILE_CAP`] bytes).
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: ConfigFileError,
    },
    /// The file is not JSON.
    #[error("{path} is not valid JSON: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// The JSON is not `{"mcpServers": {...}}`.
    #[error("{path}: expected {{\"mcpServers\": {{...}}}}, {why}")]
    Shape {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// A `--mcp-config` value could not be used.
    #[error(transparent)]
    Flag(#[from] super::flag::McpFlagError),
}

/// Why one server entry is unusable: the field at fault (`command`, `env.K`), when one is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EntryError {
    /// The field, relative to the entry.
    pub(crate) field: Option<String>,
    /// What is wrong.
    pub(crate) message: String,
}

impl From<String> for EntryError {
    fn from(message: String) -> Self {
        EntryError { field: None, message }
    }
}

/// An [`EntryError`] at `field`.
fn at(field: impl Into<String>, message: impl Into<String>) -> EntryError {
    EntryError { field: Some(field.into()), message: message.into() }
}

/// Reads `<project_dir>/.mcp.json` and returns its `mcpServers` value; `Ok(None)` when the file
/// does not exist.
pub fn load_mcp_json(project_dir: &Path) -> Result<Option<Value>, McpConfigError> {
    let path = project_dir.join(MCP_JSON);
    let text = match read_config_file(&path, CONFIG_FILE_CAP) {
        Ok(t) => t,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(source) => return Err(McpConfigError::Read { path, source }),
    };
    let value: Value =
        serde_json::from_str(&text).map_err(|source| McpConfigError::Parse { path: path.clone(), source })?;
    let Value::Object(mut top) = value else {
        return Err(McpConfigError::Shape { path, why: "the file is not a JSON object".to_owned() });
    };
    match top.remove("mcpServers") {
        None => Ok(Some(Value::Object(Map::new()))),
        Some(servers @ Value::Object(_)) => Ok(Some(servers)),
        Some(_) => Err(McpConfigError::Shape { path, why: "`mcpServers` is not an object".to_owned() }),
    }
}

/// Parses the `mcpServers` value (a whole `{"mcpServers": {...}}` document is accepted too).
/// Servers come back in configuration order; broken entries become issues.
pub fn parse_servers(config: &Value) -> (Vec<ServerConfig>, Vec<McpIssue>) {
    let mut servers = Vec::new();
    let mut issues = Vec::new();
    for entry in parse_entries(config) {
        match entry {
            Ok(server) => servers.push(server),
            Err(issue) => issues.push(issue),
        }
    }
    (servers, issues)
}

/// [`parse_servers`], each entry in configuration order: its server or its issue.
pub(crate) fn parse_entries(config: &Value) -> Vec<Result<ServerConfig, McpIssue>> {
    let map = match config {
        Value::Null => return Vec::new(),
        Value::Object(m) => match m.get("mcpServers") {
            Some(Value::Object(inner)) if m.len() == 1 => inner,
            _ => m,
        },
        _ => return vec![Err(issue("mcpServers", "the MCP configuration is not a JSON object of servers"))],
    };
    map.iter().map(|(name, entry)| parse_server(name, entry).map_err(|e| issue(name, &e.message))).collect()
}

fn issue(server: &str, message: &str) -> McpIssue {
    McpIssue { server: server.to_owned(), tool: None, kind: McpIssueKind::Config, message: message.to_owned() }
}

/// The transports an entry may ask for.
enum Kind {
    Stdio,
    Http,
    Sdk,
}

pub(crate) fn parse_server(name: &str, entry: &Value) -> Result<ServerConfig, EntryError> {
    let Value::Object(e) = entry else {
        return Err("the server entry is not a JSON object".to_owned().into());
    };
    if name.trim().is_empty() {
        return Err("the server name is empty".to_owned().into());
    }
    let kind = match e.get("type") {
        None | Some(Value::Null) => None,
        Some(Value::String(t)) => Some(t.as_str()),
        Some(_) => return Err(at("type", "`type` is not a string")),
    };
    let kind = match kind {
        Some("stdio") => Kind::Stdio,
        Some("http" | "streamable-http" | "streamableHttp") => Kind::Http,
        Some("sdk") => Kind::Sdk,
        Some("sse") => {
            let why = "the legacy SSE transport is not supported; use a streamable-HTTP endpoint (\"type\": \"http\")";
            return Err(at("type", why));
        }
        Some(other) => return Err(at("type", format!("unknown transport type {other:?} (stdio, http or sdk)"))),
        None if e.contains_key("command") => Kind::Stdio,
        None if e.contains_key("url") => Kind::Http,
        None => return Err("the entry has neither `command` (stdio) nor `url` (http)".to_owned().into()),
    };
    let sandbox_set = e.get("sandbox").is_some_and(|v| v != &Value::Bool(false) && !v.is_null());
    let transport = match kind {
        Kind::Stdio => {
            let command = match e.get("command") {
                Some(Value::String(c)) if !c.trim().is_empty() => expand(c).map_err(|m| at("command", m))?,
                _ => return Err(at("command", "a stdio server needs a non-empty `command`")),
            };
            let args = match e.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(list)) => list
                    .iter()
                    .map(|a| a.as_str().ok_or_else(|| "`args` holds a non-string".to_owned()).and_then(expand))
                    .collect::<Result<_, _>>()
                    .map_err(|m| at("args", m))?,
                Some(_) => return Err(at("args", "`args` is not a list of strings")),
            };
            let sandbox = match e.get("sandbox") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(on)) => *on,
                Some(v) => return Err(at("sandbox", format!("`sandbox` is not true or false: {v}"))),
            };
            ServerTransport::Stdio { command, args, env: string_map(e.get("env"), "env")?, sandbox }
        }
        Kind::Http => {
            if sandbox_set {
                let why = "`sandbox` applies to stdio servers only (an http server has no process to confine)";
                return Err(at("sandbox", why));
            }
            let url = match e.get("url") {
                Some(Value::String(u)) if !u.trim().is_empty() => expand(u).map_err(|m| at("url", m))?,
                _ => return Err(at("url", "an http server needs a non-empty `url`")),
            };
            ServerTransport::Http { url, headers: string_map(e.get("headers"), "headers")? }
        }
        Kind::Sdk => {
            if sandbox_set {
                let why = "`sandbox` applies to stdio servers only (an sdk server runs inside its program)";
                return Err(at("sandbox", why));
            }
            let name = match e.get("name") {
                None | Some(Value::Null) => name.to_owned(),
                Some(Value::String(n)) if !n.trim().is_empty() => n.clone(),
                Some(_) => return Err(at("name", "`name` is not a non-empty string")),
            };
            ServerTransport::Sdk { name }
        }
    };
    let startup_timeout = match e.get("startupTimeoutMs") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64().filter(|ms| *ms > 0) {
            Some(ms) => Some(Duration::from_millis(ms)),
            None => {
                return Err(at("startupTimeoutMs", format!("`startupTimeoutMs` is not a positive integer: {v}")));
            }
        },
    };
    Ok(ServerConfig { name: name.to_owned(), transport, startup_timeout })
}

fn string_map(value: Option<&Value>, field: &str) -> Result<BTreeMap<String, String>, EntryError> {
    match value {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), expand(s).map_err(|m| at(format!("{field}.{k}"), m))?)),
                _ => Err(at(format!("{field}.{k}"), format!("`{field}.{k}` is not a string"))),
            })
            .collect(),
        Some(_) => Err(at(field, format!("`{field}` is not an object of strings"))),
    }
}

/// Expands `${VAR}` and `${VAR:-default}` from the environment.
pub(crate) fn expand(text: &str) -> Result<String, String> {
    expand_with(text, &|name| std::env::var(name).ok())
}

fn expand_with(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let body = &after[..end];
        let (name, default) = match body.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (body, None),
        };
        match (lookup(name), default) {
            (Some(v), _) => out.push_str(&v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => return Err(format!("environment variable {name} is not set (used as ${{{name}}})")),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn variables_expand_with_defaults_and_unset_ones_are_errors() {
        let lookup = |n: &str| (n == "HOME_DIR").then(|| "/h".to_owned());
        assert_eq!(expand_with("${HOME_DIR}/x ${NOPE:-d}", &lookup), Ok("/h/x d".to_owned()));
        assert!(expand_with("${NOPE}", &lookup).is_err());
        assert_eq!(expand_with("no vars $HOME", &lookup), Ok("no vars $HOME".to_owned()));
    }

    #[test]
    fn entries_choose_their_transport_and_bad_ones_become_issues() {
        let (servers, issues) = parse_servers(&json!({
            "a": {"command": "node", "args": ["x.js"], "env": {"K": "v"}},
            "b": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"X": "y"}},
            "c": {"type": "sse", "url": "http://h/sse"},
            "d": {"args": []},
            "e": "nope"
        }));
        assert_eq!(servers.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), vec!["a", "b"]);
        assert!(matches!(&servers[0].transport, ServerTransport::Stdio { command, .. } if command == "node"));
        assert_eq!(issues.iter().map(|i| i.server.as_str()).collect::<Vec<_>>(), vec!["c", "d", "e"]);
    }

    #[test]
    fn a_server_may_set_its_own_startup_timeout_and_a_bad_one_is_an_issue() {
        let (servers, issues) = parse_servers(&json!({
            "a": {"command": "x", "startupTimeoutMs": 1500},
            "b": {"command": "x"},
            "c": {"command": "x", "startupTimeoutMs": 0},
            "d": {"command": "x", "startupTimeoutMs": "10s"}
        }));
        assert_eq!(servers[0].startup_timeout, Some(std::time::Duration::from_millis(1500)));
        assert_eq!(servers[1].startup_timeout, None);
        assert_eq!(issues.iter().map(|i| i.server.as_str()).collect::<Vec<_>>(), vec!["c", "d"]);
    }

    #[test]
    fn an_sdk_entry_parses_to_the_sdk_transport_named_by_its_entry_or_its_key() {
        let (servers, issues) = parse_servers(&json!({
            "calc": {"type": "sdk", "name": "calculator"},
            "bare": {"type": "sdk"},
            "boxed": {"type": "sdk", "name": "x", "sandbox": true},
            "nameless": {"type": "sdk", "name": 3}
        }));
        let transports: Vec<_> = servers.iter().map(|s| (s.name.as_str(), &s.transport)).collect();
        assert_eq!(
            transports,
            vec![
                ("calc", &ServerTransport::Sdk { name: "calculator".to_owned() }),
                ("bare", &ServerTransport::Sdk { name: "bare".to_owned() }),
            ]
        );
        assert_eq!(issues.iter().map(|i| i.server.as_str()).collect::<Vec<_>>(), vec!["boxed", "nameless"]);
    }

    #[test]
    fn entry_errors_name_the_field_at_fault() {
        let field = |entry: Value| parse_server("x", &entry).map(|_| ()).map_err(|e| e.field);
        assert_eq!(field(json!({"command": ""})), Err(Some("command".to_owned())));
        assert_eq!(field(json!({"command": "x", "env": {"K": 1}})), Err(Some("env.K".to_owned())));
        assert_eq!(
            field(json!({"url": "http://h", "headers": {"A": "${SPINE_TEST_UNSET_VAR}"}})),
            Err(Some("headers.A".to_owned()))
        );
        assert_eq!(field(json!({"type": "sse", "url": "http://h"})), Err(Some("type".to_owned())));
        assert_eq!(field(json!("nope")), Err(None));
        assert_eq!(field(json!({"command": "x"})), Ok(()));
    }

    #[test]
    fn a_whole_mcp_json_document_is_accepted() {
        let (servers, issues) = parse_servers(&json!({"mcpServers": {"a": {"command": "x"}}}));
        assert_eq!(servers.len(), 1);
        assert!(issues.is_empty());
    }
}
