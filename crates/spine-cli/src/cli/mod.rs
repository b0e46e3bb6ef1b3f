//! The command-line definition (clap). Names here are a public contract (`docs/cli.md`).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

mod host;

pub use host::{EffortFlag, HostArgs, InputFormat, ThinkingFlag};

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
    /// Manage plugins: marketplaces, installs, enabling, listing, validating.
    Plugin(PluginArgs),
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
    /// Load the plugin in DIR for this session, as `NAME@inline` (repeatable); it takes the
    /// place of an installed plugin of the same name.
    #[arg(long = "plugin-dir", value_name = "DIR")]
    pub plugin_dirs: Vec<PathBuf>,
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
    /// The flags of a driven session (the Agent SDKs).
    #[command(flatten)]
    pub host: HostArgs,
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
    /// Load the plugin in DIR for this session, as `NAME@inline` (repeatable); it takes the
    /// place of an installed plugin of the same name.
    #[arg(long = "plugin-dir", value_name = "DIR")]
    pub plugin_dirs: Vec<PathBuf>,
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

mod admin;
mod plugin;
pub use admin::*;
pub use plugin::*;
