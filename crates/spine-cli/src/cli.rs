//! The command-line definition (clap). Names here are a public contract (`docs/cli.md`).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// spine: an agent runtime whose every tool call passes through a hook pipeline you can trust.
///
/// `spine -p "PROMPT"` (or `spine "PROMPT"`) runs the agent like `spine run`, as `claude -p` does.
#[derive(Debug, Parser)]
#[command(
    name = "spine",
    version = VERSION,
    about,
    propagate_version = true,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    /// The command; without one, the top-level flags and prompt run the agent like `spine run`.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// `spine run`'s flags, accepted at the top level.
    #[command(flatten)]
    pub run: RunArgs,
}

/// `spine --version`: the package version, the commit and the build date.
pub const VERSION: &str =
    concat!(env!("CARGO_PKG_VERSION"), " (", env!("SPINE_COMMIT"), " ", env!("SPINE_BUILD_DATE"), ")");

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the agent on one prompt (without a prompt, on a terminal: an interactive session).
    Run(Box<RunArgs>),
    /// An interactive session on the terminal (also `spine` with no prompt): prompts, slash
    /// commands, live approvals; the same flags as `run`.
    Chat(Box<RunArgs>),
    /// Inspect and test configured hooks.
    #[command(subcommand)]
    Hooks(HooksCommand),
    /// Show a run's trace.
    #[command(subcommand)]
    Trace(TraceCommand),
    /// Run items from a mailbox through the pipeline and publish their reports.
    #[cfg(feature = "sqlite")]
    Worker(WorkerArgs),
    /// Trust a project: its hooks, allow rules and MCP servers apply (see `--list`, `--revoke`).
    Trust(TrustArgs),
    /// Inspect configured MCP servers.
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Put an item in a mailbox; prints its item id.
    #[cfg(feature = "sqlite")]
    Submit(SubmitArgs),
    /// Print a mailbox's reports as JSONL.
    #[cfg(feature = "sqlite")]
    Reports(ReportsArgs),
    /// List, show and remove the sessions kept in `$SPINE_HOME/projects/`.
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// Check that this machine and this project are ready: settings, trust, model and key,
    /// hooks, rules, MCP servers, the shell, the mailbox; each with its fix.
    Doctor(DoctorArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print spine's manual page (roff) on stdout: `spine man > spine.1`.
    Man,
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
    /// The prompt. Stdin, when it is not a terminal, is appended to it (or is the prompt when
    /// none is given).
    #[arg(value_name = "PROMPT")]
    pub prompt: Option<String>,
    /// Print the result and exit (spine always does; the flag is accepted as in Claude Code, and
    /// at the top level it selects a run).
    #[arg(short = 'p', long = "print")]
    pub print: bool,
    /// The model: scripted:FILE, openai:MODEL, openai-responses:MODEL, anthropic:MODEL, a
    /// claude-*, gpt-*, o1-o4 or chatgpt-* name, or sonnet, opus, haiku.
    #[arg(long)]
    pub model: Option<String>,
    /// Replaces the built-in agent prompt (the first layer of the system prompt).
    #[arg(long = "system-prompt", value_name = "TEXT")]
    pub system_prompt: Option<String>,
    /// Appended to the agent prompt layer, after a blank line.
    #[arg(long = "append-system-prompt", value_name = "TEXT")]
    pub append_system_prompt: Option<String>,
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
    /// Add the conversation (`messages`) to the JSON result object.
    #[arg(long = "include-messages")]
    pub include_messages: bool,
    /// With stream-json: also spine's hook, permission, model-attempt and warning events.
    #[arg(long = "include-hook-events")]
    pub include_hook_events: bool,
    /// With stream-json: also the execution reports (execution_started … execution_complete).
    #[arg(long = "include-reports")]
    pub include_reports: bool,
    /// Model requests before the run ends with error_max_turns (default: the settings'
    /// maxTurns, else no limit).
    #[arg(long = "max-turns")]
    pub max_turns: Option<u32>,
    /// Working directory and workspace root (default: the current directory).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// More workspace roots for the file tools and path rules (relative to the current
    /// directory; each must exist). Repeatable, and takes every following word up to the next
    /// flag, as in Claude Code: put the prompt first.
    #[arg(long = "add-dir", value_name = "DIR", num_args = 1..)]
    pub add_dir: Vec<String>,
    /// Attaches an image (PNG, JPEG, GIF or WebP, at most 20 MiB; large ones are downscaled)
    /// to the prompt. Repeatable; relative to the directory spine was started in, and not
    /// bound to the workspace.
    #[arg(long = "image", value_name = "FILE")]
    pub image: Vec<PathBuf>,
    /// Permission rules that allow, space- or comma-separated (`"Bash(git *) Edit"`). As in
    /// Claude Code the flag takes every following word up to the next flag: put the prompt first.
    #[arg(long = "allowedTools", visible_alias = "allowed-tools", value_name = "RULES", num_args = 1..)]
    pub allowed_tools: Vec<String>,
    /// Permission rules that deny, space- or comma-separated (`"Bash(rm *) WebFetch"`); takes
    /// every following word up to the next flag.
    #[arg(long = "disallowedTools", visible_alias = "disallowed-tools", value_name = "RULES", num_args = 1..)]
    pub disallowed_tools: Vec<String>,
    /// Tools visible to the model, space- or comma-separated; `default` is all (the default).
    /// Takes every following word up to the next flag.
    #[arg(long = "tools", value_name = "TOOLS", num_args = 1..)]
    pub tools: Vec<String>,
    /// The tools the run has: spine (all, the default) or claude (Claude Code's and MCP tools only).
    #[arg(long = "tool-set", value_name = "SET")]
    pub tool_set: Option<spine_core::tool_set::ToolSetName>,
    /// Agent types for this session, as JSON: `{"NAME": {"description": "…", "prompt": "…",
    /// "tools": […], "model": "…"}}`; they take precedence over agent files of the same name.
    #[arg(long = "agents", value_name = "JSON")]
    pub agents: Option<String>,
    /// Run the main session as this agent type: its prompt appended to the system prompt, its
    /// tools narrowing the visible ones, its model unless --model is given.
    #[arg(long = "agent", value_name = "NAME")]
    pub agent: Option<String>,
    /// Permission mode: default, acceptEdits, bypassPermissions, plan, dontAsk.
    #[arg(long = "permission-mode")]
    pub permission_mode: Option<String>,
    /// The same as `--permission-mode bypassPermissions`.
    #[arg(long = "dangerously-skip-permissions", conflicts_with = "permission_mode")]
    pub dangerously_skip_permissions: bool,
    /// Write the run's trace as JSONL to this file.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Continue a session by id (as printed by spine; a UUID), in its directory and with its
    /// model unless --cwd or --model say otherwise. Without an id, on a terminal, pick one of
    /// this project's sessions from a list.
    #[arg(short = 'r', long, num_args = 0..=1, default_missing_value = "", value_name = "ID",
          conflicts_with_all = ["continue_session", "session_id"])]
    pub resume: Option<String>,
    /// Continue the most recent session of this project (as --resume).
    #[arg(short = 'c', long = "continue", conflicts_with = "session_id")]
    pub continue_session: bool,
    /// The id of the new session (a UUID; refused when that session exists).
    #[arg(long = "session-id", value_name = "UUID")]
    pub session_id: Option<String>,
    /// Write no transcript file (hooks still get the path; nothing can resume the run).
    #[arg(long = "no-session-persistence")]
    pub no_session_persistence: bool,
    /// Run the Setup hooks (trigger `init`) before the session starts.
    #[arg(long = "init", conflicts_with_all = ["init_only", "maintenance"])]
    pub init: bool,
    /// Run the Setup hooks (trigger `init`) and exit: no session, no model request.
    #[arg(long = "init-only", conflicts_with = "maintenance")]
    pub init_only: bool,
    /// Run the Setup hooks (trigger `maintenance`) before the session starts.
    #[arg(long = "maintenance")]
    pub maintenance: bool,
    /// Trust the project for this run only: its hooks, allow rules and MCP servers apply.
    #[arg(long)]
    pub trust: bool,
    /// Confine the agent's commands (over the settings' `sandbox`; see docs/sandbox.md).
    #[arg(long = "sandbox", value_enum, value_name = "MODE")]
    pub sandbox: Option<crate::sandbox::SandboxFlag>,
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
    /// The session's model, for prompt and agent hooks without a `model` of their own (as
    /// `spine run --model`; default: the model `spine run` would use).
    #[arg(long, value_name = "SPEC")]
    pub model: Option<String>,
    /// A session transcript the hooks read at `transcript_path` (e.g. a real session's, from
    /// `$SPINE_HOME/projects/`). Without it they read one written for the test: a prompt and the
    /// model turn the event follows.
    #[arg(long, value_name = "FILE")]
    pub transcript: Option<PathBuf>,
    /// Settings selection.
    #[command(flatten)]
    pub common: HooksArgs,
}

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
