//! The command-line definition (clap). Names here are a public contract (`docs/cli.md`).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// spine: an agent runtime whose every tool call passes through a hook pipeline you can trust.
#[derive(Debug, Parser)]
#[command(name = "spine", version, about, propagate_version = true)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the agent on one prompt.
    Run(RunArgs),
    /// Inspect and test configured hooks.
    #[command(subcommand)]
    Hooks(HooksCommand),
    /// Show a run's trace.
    #[command(subcommand)]
    Trace(TraceCommand),
    /// Run items from a mailbox through the pipeline and publish their reports.
    Worker(WorkerArgs),
    /// Trust a project: its hooks, allow rules and MCP servers apply (see `--list`, `--revoke`).
    Trust(TrustArgs),
    /// Inspect configured MCP servers.
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Put an item in a mailbox; prints its item id.
    Submit(SubmitArgs),
    /// Print a mailbox's reports as JSONL.
    Reports(ReportsArgs),
    /// Internal: the guard process `spine run` and `spine worker` start (it kills their process
    /// groups if they die without ending them).
    #[command(name = "__guard", hide = true)]
    Guard,
}

/// Output formats of `spine run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Only the final answer on stdout.
    Text,
    /// One JSON result object on stdout.
    Json,
    /// One JSON event per line as the run goes, then the result.
    StreamJson,
}

/// `spine run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The prompt (else read from stdin when it is not a terminal).
    #[arg(short = 'p', long = "prompt")]
    pub prompt: Option<String>,
    /// The model: scripted:FILE, openai:MODEL or anthropic:MODEL.
    #[arg(long)]
    pub model: Option<String>,
    /// A settings file or inline JSON, applied after the settings files (repeatable).
    #[arg(long = "settings", value_name = "FILE|JSON")]
    pub settings: Vec<String>,
    /// Which discovered settings files apply, comma-separated: user, project, local
    /// (default: all; --settings always applies).
    #[arg(long = "setting-sources", value_name = "SOURCES")]
    pub setting_sources: Option<spine_settings::SettingSources>,
    /// Output format.
    #[arg(long = "output-format", value_enum, default_value = "text")]
    pub output_format: OutputFormat,
    /// Model requests before the run ends with error_max_turns (default 20).
    #[arg(long = "max-turns")]
    pub max_turns: Option<u32>,
    /// Working directory and workspace root (default: the current directory).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// Tools visible to the model, comma-separated (default: all).
    #[arg(long = "allowed-tools", value_delimiter = ',')]
    pub allowed_tools: Vec<String>,
    /// Permission mode: default, acceptEdits, bypassPermissions, plan.
    #[arg(long = "permission-mode")]
    pub permission_mode: Option<String>,
    /// Write the run's trace as JSONL to this file.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Continue a session by id (as printed by spine; a UUID).
    #[arg(long)]
    pub resume: Option<String>,
    /// Trust the project for this run only: its hooks, allow rules and MCP servers apply.
    #[arg(long)]
    pub trust: bool,
    /// One stderr line per lifecycle event.
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// No warnings or notes on stderr (errors still print).
    #[arg(short = 'q', long, conflicts_with = "verbose")]
    pub quiet: bool,
}

/// `spine hooks`.
#[derive(Debug, Subcommand)]
pub enum HooksCommand {
    /// List every configured hook: event, matcher, source file, type.
    List(HooksArgs),
    /// Validate settings: unknown events or fields, bad matchers, missing commands.
    Check(HooksArgs),
    /// Fire one event against the configured hooks and print each answer and the merged decision.
    Test(HooksTestArgs),
}

/// Settings selection shared by `spine hooks` commands.
#[derive(Debug, Args)]
pub struct HooksArgs {
    /// A settings file or inline JSON, applied after the settings files (repeatable).
    #[arg(long = "settings", value_name = "FILE|JSON")]
    pub settings: Vec<String>,
    /// Which discovered settings files apply, comma-separated: user, project, local
    /// (default: all; --settings always applies).
    #[arg(long = "setting-sources", value_name = "SOURCES")]
    pub setting_sources: Option<spine_settings::SettingSources>,
    /// The project directory (default: the current directory).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// Output format.
    #[arg(long = "output-format", value_enum, default_value = "text")]
    pub output_format: OutputFormat,
    /// Trust the project for this run only: its hooks, allow rules and MCP servers apply.
    #[arg(long)]
    pub trust: bool,
}

/// `spine hooks test`.
#[derive(Debug, Args)]
pub struct HooksTestArgs {
    /// The event, e.g. PreToolUse.
    pub event: String,
    /// The tool name, for tool events.
    #[arg(long)]
    pub tool: Option<String>,
    /// The event input: JSON, or a file holding it.
    #[arg(long)]
    pub input: Option<String>,
    /// Settings selection.
    #[command(flatten)]
    pub common: HooksArgs,
}

/// `spine trace`.
#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// Render a JSONL trace as a readable tree.
    Show {
        /// The trace file.
        file: PathBuf,
    },
}

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
    /// Milliseconds in-flight items may take to finish after SIGTERM/Ctrl-C before they are
    /// canceled and handed back to the mailbox.
    #[arg(long = "grace-ms", default_value_t = 10_000)]
    pub grace_ms: u64,
    /// A stderr line at start and at the end.
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// Trust the project for this run only: its hooks, allow rules and MCP servers apply.
    #[arg(long)]
    pub trust: bool,
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
