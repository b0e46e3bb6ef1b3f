//! The arguments of the administrative commands: `trace`, `doctor`, `worker`, `trust`, `mcp`,
//! `submit`, `reports` and `sessions`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{HooksArgs, OutputFormat};

/// `spine trace`.
#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// Render a JSONL trace as a readable tree, under a header (session, model, prompt, start,
    /// totals, cost).
    Show(TraceShowArgs),
    /// Write a JSONL trace as one self-contained HTML page: a timeline of the run, details per
    /// entry, filters (no network access needed to view it).
    Html(TraceHtmlArgs),
}

/// `spine trace show`.
#[derive(Debug, Args)]
pub struct TraceShowArgs {
    /// The trace file.
    pub file: PathBuf,
    /// Only the calls of this tool (repeatable).
    #[arg(long = "tool", value_name = "NAME")]
    pub tools: Vec<String>,
    /// Only entries of this event: a hook event (`PreToolUse`), a stage (`execute`) or an entry
    /// kind (`model`, `warning`…); repeatable.
    #[arg(long = "event", value_name = "NAME")]
    pub events: Vec<String>,
    /// Only the tool calls' decision records.
    #[arg(long = "only-decisions")]
    pub only_decisions: bool,
    /// Follow a trace being written: print entries as they arrive, until the run's end record
    /// (or Ctrl-C).
    #[arg(short = 'f', long)]
    pub follow: bool,
    /// Every field of each entry (`prepare_turn`'s details, hook answers).
    #[arg(short = 'v', long)]
    pub verbose: bool,
}

/// `spine trace html`.
#[derive(Debug, Args)]
pub struct TraceHtmlArgs {
    /// The trace file.
    pub file: PathBuf,
    /// The HTML file to write (default: the trace file with the extension `.html`).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `spine doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The project (default: the current directory).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// A settings file or inline JSON, applied after the settings files (repeatable).
    #[arg(long = "settings", value_name = "FILE|JSON")]
    pub settings: Vec<String>,
    /// The model to check (default: the one `spine run` would choose).
    #[arg(long)]
    pub model: Option<String>,
    /// A mailbox to check (sqlite:PATH or nats://HOST:PORT); none: not checked.
    #[arg(long, env = "SPINE_MAILBOX", value_name = "URL")]
    pub mailbox: Option<String>,
    /// Output format.
    #[arg(long = "output-format", value_enum, default_value = "text")]
    pub output_format: OutputFormat,
}

#[cfg(feature = "sqlite")]
/// `spine worker`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The mailbox: sqlite:PATH or nats://HOST:PORT (options: ?lease_ms=N&max_deliver=N&prefix=P).
    #[arg(long, env = "SPINE_MAILBOX", default_value = "sqlite:./spine.db", value_name = "URL")]
    pub mailbox: String,
    /// Items run at once.
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    /// Process what is queued, then exit when the mailbox is drained.
    #[arg(long)]
    pub once: bool,
    /// The workspace root of assignments (default: the current directory).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// A settings file or inline JSON, applied after the settings files (repeatable).
    #[arg(long = "settings", value_name = "FILE|JSON")]
    pub settings: Vec<String>,
    /// How long in-flight items may take to finish after SIGTERM/Ctrl-C (the drain) before
    /// they are canceled and handed back to the mailbox for another worker: `30s`, `500ms`,
    /// `2m`, or seconds.
    #[arg(long = "drain-timeout", default_value = "30s", value_name = "DURATION",
          value_parser = parse_duration, conflicts_with = "grace_ms")]
    pub drain_timeout: std::time::Duration,
    /// The drain timeout in milliseconds (the older spelling of `--drain-timeout`).
    #[arg(long = "grace-ms", hide = true)]
    pub grace_ms: Option<u64>,
    /// Serve `/healthz`, `/readyz` and `/metrics` (Prometheus) over HTTP on this address
    /// (e.g. `127.0.0.1:9464`; port 0 picks one). The bound address is printed on stderr:
    /// `spine worker: listening on ADDR`.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,
    /// A stderr line at start and at the end.
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// Trust the project for this run only: its hooks, allow rules and MCP servers apply.
    #[arg(long)]
    pub trust: bool,
    /// Run commands unconfined (the worker sandboxes them, workspace-write, by default).
    #[arg(long = "no-sandbox")]
    pub no_sandbox: bool,
}

/// `spine trust`.
#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The project directory to trust (default: the current directory).
    #[arg(conflicts_with_all = ["list", "revoke"])]
    pub dir: Option<PathBuf>,
    /// List the trusted projects.
    #[arg(long, conflicts_with = "revoke")]
    pub list: bool,
    /// Stop trusting a project directory.
    #[arg(long, value_name = "DIR")]
    pub revoke: Option<PathBuf>,
}

/// `spine mcp`.
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Each configured MCP server: its source, whether it is approved, and with --connect its tools.
    List(McpListArgs),
}

/// `spine mcp list`.
#[derive(Debug, Args)]
pub struct McpListArgs {
    /// Connect the approved servers and list their tools.
    #[arg(long)]
    pub connect: bool,
    /// Settings selection.
    #[command(flatten)]
    pub common: HooksArgs,
}

#[cfg(feature = "sqlite")]
/// `spine submit`.
#[derive(Debug, Args)]
pub struct SubmitArgs {
    /// The mailbox: sqlite:PATH or nats://HOST:PORT.
    #[arg(long, env = "SPINE_MAILBOX", default_value = "sqlite:./spine.db", value_name = "URL")]
    pub mailbox: String,
    /// Enqueue the item even when it does not decode (the worker reports why).
    #[arg(long = "no-validate")]
    pub no_validate: bool,
    /// The item file (JSON; `-` reads stdin).
    #[arg(value_name = "ITEM.json")]
    pub item: PathBuf,
}

#[cfg(feature = "sqlite")]
/// `spine reports`.
#[derive(Debug, Args)]
pub struct ReportsArgs {
    /// The mailbox: sqlite:PATH or nats://HOST:PORT.
    #[arg(long, env = "SPINE_MAILBOX", default_value = "sqlite:./spine.db", value_name = "URL")]
    pub mailbox: String,
    /// Only this item's reports.
    #[arg(long, value_name = "ID")]
    pub item: Option<String>,
    /// Keep streaming new reports.
    #[arg(long)]
    pub follow: bool,
}

/// `spine sessions`.
#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// This project's sessions, newest first: id, start, model, turns, cost, how it ended and
    /// the first prompt.
    List(SessionsListArgs),
    /// A session's conversation, readable.
    Show(SessionsShowArgs),
    /// Remove a session (its transcript and its `.env` file).
    Rm(SessionsRmArgs),
    /// Remove the sessions whose last activity is older than a duration.
    Prune(SessionsPruneArgs),
}

/// `spine sessions list`.
#[derive(Debug, Args)]
pub struct SessionsListArgs {
    /// Every project's sessions, with the project directory.
    #[arg(long)]
    pub all: bool,
    /// The project directory (default: the current directory).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// Output format (text or json).
    #[arg(long = "output-format", value_enum, default_value = "text")]
    pub output_format: OutputFormat,
}

/// `spine sessions show`.
#[derive(Debug, Args)]
pub struct SessionsShowArgs {
    /// The session id (as `spine sessions list` prints it).
    pub id: String,
    /// Tool results in full (default: their first lines).
    #[arg(long)]
    pub full: bool,
    /// Output format (text, or json: the messages as `--resume` loads them).
    #[arg(long = "output-format", value_enum, default_value = "text")]
    pub output_format: OutputFormat,
}

/// `spine sessions rm`.
#[derive(Debug, Args)]
pub struct SessionsRmArgs {
    /// The session id.
    pub id: String,
}

/// `spine sessions prune`.
#[derive(Debug, Args)]
pub struct SessionsPruneArgs {
    /// The age past which a session is removed: `30d`, `12h` or `90m`.
    #[arg(long = "older-than", value_name = "DURATION")]
    pub older_than: String,
    /// Print what would be removed, remove nothing.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
    /// Every project's sessions (default: this project's).
    #[arg(long)]
    pub all: bool,
    /// The project directory (default: the current directory).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
}

/// A duration: `NUMBER` (seconds) or `NUMBER` followed by `ms`, `s`, `m` or `h`.
#[cfg(feature = "sqlite")]
fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number.parse().map_err(|_| format!("`{text}`: expected a duration such as 30s or 500ms"))?;
    let seconds = match unit.trim() {
        "" | "s" => value,
        "ms" => value / 1000.0,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        other => return Err(format!("`{text}`: unknown unit `{other}` (ms, s, m, h)")),
    };
    std::time::Duration::try_from_secs_f64(seconds).map_err(|e| format!("`{text}`: {e}"))
}
