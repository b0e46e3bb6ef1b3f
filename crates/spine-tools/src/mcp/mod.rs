//! MCP client: tools of Model Context Protocol servers as spine tools named
//! `mcp__<server>__<tool>`.
//!
//! # Use
//!
//! ```ignore
//! let config = spine_tools::mcp::load_mcp_json(project_dir)?.unwrap_or_default(); // or settings' mcpServers
//! let options = McpOptions::new(project_dir, child_env); // the agent's ChildEnv (settings' env)
//! let (mcp, issues) = spine_tools::mcp::connect_mcp_servers(&config, &options).await;
//! for issue in &issues { eprintln!("{issue}"); }                // the run goes on without those
//! mcp.register(&mut builder);                                    // before the registry is built
//! // … run the agent; keep `mcp` alive for the whole run …
//! mcp.shutdown().await;                                          // or drop it
//! ```
//!
//! # Contract
//!
//! - [`connect_mcp_servers`] connects every configured server **concurrently**, each within
//!   its own start-up time limit — the entry's `startupTimeoutMs`, else
//!   [`McpOptions::startup_timeout`] — covering spawn or connect, `initialize` and
//!   `tools/list`, so a slow server costs the start of a run at most its limit. A server
//!   that fails — bad entry, command not found, crash, time-out — becomes an [`McpIssue`] and
//!   its tools are absent; the others are unaffected.
//! - Stdio servers run in their own **process group** ([`spine_process::GroupChild`]) in
//!   [`McpOptions::cwd`], with the configured `env` added to spine's environment and prepared
//!   by [`McpOptions::child_env`] (the settings' `env` under the server's own, provider keys
//!   removed unless passed through or set by the server's `env`); their stderr is kept (the
//!   last 16 KiB) and quoted in start-up issues. HTTP servers use reqwest on rustls/ring.
//!   SDK servers (`"type": "sdk"`) are served by the program driving spine, through
//!   [`McpOptions::sdk_host`] ([`sdk`]); without one they are an issue.
//! - [`McpTools::statuses`]: every server given, by name in configuration order, connected or
//!   failed (what stream-json's `init` line reports).
//! - `--mcp-config` values are read by [`flag`].
//! - Each listed tool becomes an [`McpTool`] named `mcp__<server>__<tool>` (characters other
//!   than letters, digits, `_` and `-` become `_`, as Claude Code does) with the server's
//!   description and input schema, validated like any tool's by the registry. A schema that
//!   does not compile, or a name that clashes after sanitising, skips that tool with an issue.
//! - Effect: a tool annotated `readOnlyHint: true` is [`Effect::Read`](spine_protocol::tool::Effect::Read),
//!   every other one [`Effect::Execute`](spine_protocol::tool::Effect::Execute). Annotations are
//!   the server's claims: a read-only tool is allowed by the default permission policy without
//!   asking, so only configure servers you trust.
//! - Results: text content is joined for the model; the response (what PostToolUse hooks see
//!   as `tool_response`) is the MCP result `{content, structuredContent?}`; `isError: true` is a
//!   `runtime_error` carrying the server's text; protocol failures are `runtime_error`, a call
//!   past [`McpOptions::call_timeout`] is `timeout`, a canceled run cancels the request.
//! - Elicitation: the client advertises form and URL elicitation; what a server asks during a
//!   call goes to that call's [`ToolContext::elicitor`](spine_core::tool::ToolContext::elicitor)
//!   (the run's hooks and approver, [`spine_core::elicitation`]), else it is declined.
//! - Lifetime: the returned [`McpTools`] owns the connections. The tools only hold peers, so
//!   **keep the handle for the whole run**: dropping it closes every connection (stdio process
//!   groups are SIGKILLed, HTTP sessions closed in the background); [`McpTools::shutdown`] does
//!   it gracefully and waits (stdin closed, HTTP session deleted, then the group terminated).
//!   A tool whose server is gone fails with `runtime_error`.

pub mod config;
#[cfg(feature = "mcp")]
mod connect;
#[cfg(feature = "mcp")]
mod elicit;
pub mod flag;
#[cfg(not(feature = "mcp"))]
mod off;
pub mod sdk;
#[cfg(feature = "mcp")]
pub mod tool;

#[cfg(feature = "mcp")]
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use spine_core::registry::ToolRegistryBuilder;
use spine_core::tool::Tool;
use spine_process::ChildEnv;

pub use config::{MCP_JSON, McpConfigError, ServerConfig, ServerTransport, load_mcp_json, parse_servers};
pub use flag::{McpConfigValue, McpFlagError, McpFlagProblem, load_mcp_config_args, parse_mcp_config_arg};
#[cfg(not(feature = "mcp"))]
pub use off::McpTool;
pub use sdk::SdkMcpHost;
#[cfg(feature = "mcp")]
pub use tool::McpTool;

#[cfg(feature = "mcp")]
use connect::McpServer;
#[cfg(not(feature = "mcp"))]
use off::McpServer;

/// The default start-up time limit of one server.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// Options of [`connect_mcp_servers`].
#[derive(Clone)]
pub struct McpOptions {
    /// The working directory of stdio servers (the project directory).
    pub cwd: PathBuf,
    /// Time for one server to start, initialize and list its tools, unless its entry sets
    /// `startupTimeoutMs` (default 10 s).
    pub startup_timeout: Duration,
    /// Time limit of one tool call (default 10 min).
    pub call_timeout: Duration,
    /// Characters of a result's text given to the model at most (default 100 000).
    pub text_chars: usize,
    /// The environment stdio servers get (the agent's settings' `env`, its provider keys
    /// passed through).
    pub child_env: ChildEnv,
    /// The confined environment of servers configured with `"sandbox": true` (the session's
    /// sandbox); `None`: such a server is an issue and does not start (it asked for a sandbox
    /// this session cannot give).
    pub sandboxed_env: Option<ChildEnv>,
    /// The program driving spine, serving the servers configured `"type": "sdk"`; `None`: such
    /// a server is an issue and does not connect.
    pub sdk_host: Option<Arc<dyn SdkMcpHost>>,
}

impl std::fmt::Debug for McpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpOptions")
            .field("cwd", &self.cwd)
            .field("startup_timeout", &self.startup_timeout)
            .field("call_timeout", &self.call_timeout)
            .field("text_chars", &self.text_chars)
            .field("child_env", &self.child_env)
            .field("sandboxed_env", &self.sandboxed_env)
            .field("sdk_host", &self.sdk_host.is_some())
            .finish()
    }
}

impl McpOptions {
    /// Defaults, with stdio servers started in `cwd` with `child_env`.
    pub fn new(cwd: impl Into<PathBuf>, child_env: ChildEnv) -> Self {
        McpOptions {
            cwd: cwd.into(),
            child_env,
            sandboxed_env: None,
            sdk_host: None,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            call_timeout: Duration::from_secs(600),
            text_chars: 100_000,
        }
    }
}

/// What went wrong with one server or one of its tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpIssue {
    /// The server's configured name.
    pub server: String,
    /// The tool, for tool-level issues.
    pub tool: Option<String>,
    /// What kind of problem.
    pub kind: McpIssueKind,
    /// The explanation (with the server's stderr tail when it helps).
    pub message: String,
}

/// Kinds of [`McpIssue`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpIssueKind {
    /// The configuration entry is unusable.
    Config,
    /// The server could not be started or connected, or did not initialize in time.
    Start,
    /// Listing the server's tools failed.
    ListTools,
    /// A tool's input schema does not compile; the tool is skipped.
    InvalidSchema,
    /// A tool's spine name clashes with another's; the later one is skipped.
    NameClash,
}

impl std::fmt::Display for McpIssue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.tool {
            Some(tool) => write!(f, "MCP server `{}`, tool `{tool}`: {}", self.server, self.message),
            None => write!(f, "MCP server `{}`: {}", self.server, self.message),
        }
    }
}

/// Whether a server given to [`connect_mcp_servers`] connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum McpServerStatus {
    /// Connected, its tools listed.
    Connected,
    /// Not connected: its entry is unusable, it did not start or initialize in time, or
    /// listing its tools failed (the issue says which).
    Failed,
}

impl McpServerStatus {
    /// `connected` or `failed`, as stream-json's `init` line spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            McpServerStatus::Connected => "connected",
            McpServerStatus::Failed => "failed",
        }
    }
}

/// The connected servers and their tools. Dropping it closes every connection.
pub struct McpTools {
    servers: Vec<McpServer>,
    tools: Vec<Arc<McpTool>>,
    statuses: Vec<(String, McpServerStatus)>,
}

impl std::fmt::Debug for McpTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTools").field("servers", &self.server_names()).field("tools", &self.tool_names()).finish()
    }
}

impl McpTools {
    /// No servers, no tools.
    pub fn empty() -> Self {
        McpTools { servers: Vec::new(), tools: Vec::new(), statuses: Vec::new() }
    }

    /// Every server given to [`connect_mcp_servers`], by name in configuration order, with
    /// whether it connected (a failed one included; its issue says why).
    pub fn statuses(&self) -> &[(String, McpServerStatus)] {
        &self.statuses
    }

    /// The connected servers' names, in configuration order.
    pub fn server_names(&self) -> Vec<&str> {
        self.servers.iter().map(|s| s.name.as_str()).collect()
    }

    /// The tools' spine names (`mcp__<server>__<tool>`).
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name()).collect()
    }

    /// The tools with their MCP-specific accessors.
    pub fn mcp_tools(&self) -> &[Arc<McpTool>] {
        &self.tools
    }

    /// The tools, to register.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.iter().map(|t| Arc::clone(t) as Arc<dyn Tool>).collect()
    }

    /// Registers every tool on a registry builder.
    pub fn register(&self, builder: &mut ToolRegistryBuilder) {
        for tool in self.tools() {
            builder.register_arc(tool);
        }
    }

    /// The process ids of the stdio servers still running (diagnostics, tests).
    pub fn server_pids(&self) -> Vec<u32> {
        self.servers.iter().filter_map(McpServer::pid).collect()
    }

    /// Closes every connection and waits: stdio servers get their input closed and a moment
    /// to exit, then their process group is terminated; HTTP sessions are deleted.
    pub async fn shutdown(mut self) {
        let servers = std::mem::take(&mut self.servers);
        futures_util::future::join_all(servers.into_iter().map(McpServer::close)).await;
    }
}

/// Without the `mcp` feature: every configured server is an issue saying spine was built
/// without MCP support.
#[cfg(not(feature = "mcp"))]
pub async fn connect_mcp_servers(config: &Value, _options: &McpOptions) -> (McpTools, Vec<McpIssue>) {
    let mut issues = Vec::new();
    let mut statuses = Vec::new();
    for entry in config::parse_entries(config) {
        let issue = match entry {
            Ok(server) => McpIssue {
                server: server.name,
                tool: None,
                kind: McpIssueKind::Start,
                message: "this spine was built without MCP support (cargo feature `mcp`)".to_owned(),
            },
            Err(issue) => issue,
        };
        statuses.push((issue.server.clone(), McpServerStatus::Failed));
        issues.push(issue);
    }
    (McpTools { servers: Vec::new(), tools: Vec::new(), statuses }, issues)
}

/// Connects every server of an `mcpServers` value (see [`config`]), concurrently, and lists
/// their tools. Never fails as a whole: each problem is an issue and the rest goes on.
#[cfg(feature = "mcp")]
pub async fn connect_mcp_servers(config: &Value, options: &McpOptions) -> (McpTools, Vec<McpIssue>) {
    let entries = config::parse_entries(config);
    let attempts = futures_util::future::join_all(entries.into_iter().map(|entry| async move {
        match entry {
            Ok(server) => connect::connect(server, options).await,
            Err(issue) => Err(issue),
        }
    }))
    .await;
    let mut issues = Vec::new();
    let mut statuses = Vec::new();
    let mut servers = Vec::new();
    let mut tools: Vec<Arc<McpTool>> = Vec::new();
    let mut names: HashSet<String> = HashSet::new();
    for attempt in attempts {
        match attempt {
            Err(issue) => {
                statuses.push((issue.server.clone(), McpServerStatus::Failed));
                issues.push(issue);
            }
            Ok((server, listed)) => {
                statuses.push((server.name.clone(), McpServerStatus::Connected));
                for listed_tool in listed {
                    match McpTool::new(&server, listed_tool, options) {
                        Err(issue) => issues.push(issue),
                        Ok(tool) if !names.insert(tool.name().to_owned()) => issues.push(McpIssue {
                            server: server.name.clone(),
                            tool: Some(tool.remote_name().to_owned()),
                            kind: McpIssueKind::NameClash,
                            message: format!("the name {} is already taken; the tool is skipped", tool.name()),
                        }),
                        Ok(tool) => tools.push(Arc::new(tool)),
                    }
                }
                servers.push(server);
            }
        }
    }
    (McpTools { servers, tools, statuses }, issues)
}

/// `mcp__<server>__<tool>`, with characters other than letters, digits, `_` and `-` made `_`.
pub fn tool_name(server: &str, tool: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
    };
    format!("mcp__{}__{}", clean(server), clean(tool))
}
