//! What can go wrong while assembling an agent: [`AssemblyError`], each variant naming where
//! the bad value was given (a settings file and JSON path, or a flag).

use std::path::PathBuf;

use thiserror::Error;

use crate::agent_flags;

/// A configuration problem found while assembling an agent.
#[derive(Debug, Error)]
pub enum AssemblyError {
    /// No model was given and none can be chosen from the environment.
    #[error(
        "no model configured: pass --model scripted:FILE | openai:MODEL | openai-responses:MODEL | \
         anthropic:MODEL (or a claude-*, gpt-* name or sonnet, opus, haiku), set `model` in a settings file, or set \
         ANTHROPIC_MODEL, ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or OPENAI_API_KEY"
    )]
    NoModel,
    /// The model spec does not parse; `from` says where it was given (`--model`, `<settings
    /// file>: model`).
    #[error("{from}: {source}")]
    ModelSpec {
        /// Where the spec came from.
        from: String,
        /// Why it does not parse.
        source: spine_models::spec::SpecError,
    },
    /// The model's client cannot be built (a missing key, a bad base URL…); `from` says where
    /// the spec was given (empty: chosen from the environment).
    #[error("{}{source}", prefixed(from))]
    ModelClient {
        /// Where the spec came from.
        from: String,
        /// Why the client cannot be built.
        source: spine_models::ClientError,
    },
    /// A permission rule does not parse; `at` names its file and JSON path, or its flag.
    #[error("{at}: {source}")]
    Rule {
        /// The settings file and JSON path, or the flag and the rule as written.
        at: String,
        /// Why it does not parse.
        source: spine_core::permission::RuleError,
    },
    /// The `hooks` key of the settings is invalid (names the file and JSON path).
    #[error(transparent)]
    Hooks(#[from] spine_hooks::HookConfigError),
    /// The settings' hooks cannot be registered (an HTTP client, a prompt hook's model).
    #[error(transparent)]
    HookRegistration(#[from] spine_hooks::BuildError),
    /// `bypassPermissions` was asked for (by a settings file, `--permission-mode` or
    /// `--dangerously-skip-permissions`) and a settings file disables it: a managed one names
    /// itself (`/etc/spine/managed-settings.json (managed)`).
    #[error("permission mode bypassPermissions is disabled by `permissions.disableBypassPermissionsMode` in {origin}")]
    BypassDisabled {
        /// The settings source that disables it.
        origin: String,
    },
    /// The tool registry could not be built.
    #[error("tool registry: {0}")]
    Tools(#[source] spine_core::registry::RegistryError),
    /// `allowed tools` names a tool that does not exist.
    #[error("unknown tool `{name}` in the allowed tools (known: {known})")]
    UnknownTool {
        /// The name as given.
        name: String,
        /// Every registered name, comma-separated.
        known: String,
    },
    /// `.mcp.json` could not be read.
    #[error(transparent)]
    Mcp(#[from] spine_tools::mcp::config::McpConfigError),
    /// `--agents` is malformed or `--agent` names no agent (names the flag and JSON path).
    #[error(transparent)]
    AgentFlag(#[from] agent_flags::AgentFlagError),
    /// The workspace directory is unusable.
    #[error("workspace {path}: {reason}")]
    Workspace {
        /// The project directory as given.
        path: PathBuf,
        /// Why it cannot be the workspace root (missing, not a directory, unreadable).
        reason: String,
    },
    /// An added directory (`permissions.additionalDirectories`, `--add-dir`) is unusable.
    #[error("{}: {reason}", added_source(origin, written))]
    AddedDirectory {
        /// Where it was set: a settings file and JSON path, or `--add-dir`.
        origin: spine_settings::DirectorySource,
        /// The path as written.
        written: String,
        /// Why (does not exist, not a directory).
        reason: String,
    },
    /// The session's model cannot take its flags (a fallback model that cannot be built or
    /// is the main model).
    #[error(transparent)]
    SessionModel(Box<crate::model::SessionModelError>),
    /// `--json-schema` cannot be the `StructuredOutput` tool's schema (the message names the
    /// flag).
    #[error("{0}")]
    Schema(String),
}

/// `from: ` before a message, or nothing when `from` is empty.
fn prefixed(from: &str) -> String {
    if from.is_empty() { String::new() } else { format!("{from}: ") }
}

/// The source of an added directory in an error: the flag with its value, or the settings
/// file and JSON path.
fn added_source(origin: &spine_settings::DirectorySource, written: &str) -> String {
    match origin {
        spine_settings::DirectorySource::Flag => format!("--add-dir {written}"),
        spine_settings::DirectorySource::Settings { .. } => origin.to_string(),
    }
}
