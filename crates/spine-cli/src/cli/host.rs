//! The flags of `spine run` that programs driving spine pass (the Agent SDKs, scripts reading
//! stream-json): the input format, the permission prompt tool, MCP configuration, prompt files,
//! budgets and structured output. Names and values are Claude Code's (`docs/sdk.md`).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// Input formats of `spine run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum InputFormat {
    /// The prompt is the argument and piped stdin.
    #[default]
    Text,
    /// JSON lines on stdin: user messages and control messages, for a multi-turn session
    /// (with `--output-format stream-json`).
    StreamJson,
}

/// Reasoning effort levels (`--effort`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EffortFlag {
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
    /// Extra high (Claude models that have it; others get their highest below it).
    Xhigh,
    /// The highest the model offers.
    Max,
}

/// Extended thinking (`--thinking`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ThinkingFlag {
    /// The model decides how much to think.
    Adaptive,
    /// Thinking on (with `--max-thinking-tokens` as its budget).
    Enabled,
    /// No thinking.
    Disabled,
}

/// The flags of a driven session.
#[derive(Debug, Clone, Default, Args)]
pub struct HostArgs {
    /// Input format: text (the prompt argument and stdin) or stream-json (JSON lines on stdin:
    /// user messages and control requests; needs --output-format stream-json).
    #[arg(long = "input-format", value_enum, default_value = "text")]
    pub input_format: InputFormat,
    /// Who answers permission questions: `stdio` (a `can_use_tool` control request to the
    /// program on stdin/stdout), or the name of an MCP tool (`mcp__server__tool`).
    #[arg(long = "permission-prompt-tool", value_name = "TOOL")]
    pub permission_prompt_tool: Option<String>,
    /// With stream-json: `stream_event` lines carrying the model's reply as it streams.
    #[arg(long = "include-partial-messages")]
    pub include_partial_messages: bool,
    /// With stream-json input: each user message read from stdin is written back on stdout.
    #[arg(long = "replay-user-messages")]
    pub replay_user_messages: bool,
    /// MCP servers from JSON files or strings (`{"mcpServers": {…}}`), repeatable.
    #[arg(long = "mcp-config", value_name = "FILE|JSON", num_args = 1..)]
    pub mcp_config: Vec<String>,
    /// Use only the MCP servers of --mcp-config, none from settings or `.mcp.json`.
    #[arg(long = "strict-mcp-config")]
    pub strict_mcp_config: bool,
    /// Replaces the built-in agent prompt with this file's text.
    #[arg(long = "system-prompt-file", value_name = "FILE", conflicts_with = "system_prompt")]
    pub system_prompt_file: Option<PathBuf>,
    /// Appends this file's text to the agent prompt layer.
    #[arg(long = "append-system-prompt-file", value_name = "FILE", conflicts_with = "append_system_prompt")]
    pub append_system_prompt_file: Option<PathBuf>,
    /// With --resume or --continue: the conversation continues under a new session id.
    #[arg(long = "fork-session")]
    pub fork_session: bool,
    /// The models (comma-separated, in order) that take over when the current one is overloaded
    /// or unavailable (HTTP 529 or 503, after the client's retries), for the rest of the run.
    #[arg(long = "fallback-model", value_name = "MODEL")]
    pub fallback_model: Option<String>,
    /// End the run with error_max_budget_usd once the session's estimated cost reaches this
    /// many US dollars (checked after each model reply).
    #[arg(long = "max-budget-usd", value_name = "USD", allow_negative_numbers = true)]
    pub max_budget_usd: Option<f64>,
    /// A JSON Schema (inline, or a file) the final answer must match: the model answers through
    /// the `StructuredOutput` tool, whose input is the result's `structured_output`.
    #[arg(long = "json-schema", value_name = "SCHEMA")]
    pub json_schema: Option<String>,
    /// Reasoning effort (Anthropic `output_config.effort` where the model has it, OpenAI
    /// `reasoning_effort`); hooks read it as `effort`.
    #[arg(long = "effort", value_enum)]
    pub effort: Option<EffortFlag>,
    /// Extended thinking (Anthropic `thinking`: adaptive where the model has it, else a budget).
    #[arg(long = "thinking", value_enum)]
    pub thinking: Option<ThinkingFlag>,
    /// The thinking budget, in tokens (0 turns thinking off).
    #[arg(long = "max-thinking-tokens", value_name = "TOKENS")]
    pub max_thinking_tokens: Option<u32>,
}
