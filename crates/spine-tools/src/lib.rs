//! spine's built-in tools, with Claude Code's names, input shapes and `tool_response` shapes
//! (`Read`, `Write`, `Edit`, `Glob`, `Grep`, `Bash`) plus `calculator`.
//!
//! Every tool implements [`spine_core::tool::Tool`]: a spec (JSON Schema with
//! `additionalProperties: false`), an effect, argument normalisation, the workspace paths it
//! touches, an executor and a projector. File tools never touch a path outside the workspace:
//! paths are normalised before hooks see them and resolved again (symlinks followed) before
//! any I/O, outside paths failing with `permission_denied`. File tools (and the memory tools)
//! run under [`FILE_TOOL_TIME_LIMIT`] (60 s), applied by the runner; [`TimeLimited`] sets
//! another limit on any tool.
//!
//! # Layout
//!
//! - One module per tool: [`read`], [`write`](mod@write), [`edit`], [`glob`], [`grep`], [`bash`],
//!   [`calculator`].
//! - Shared parts: `args` (typed arguments, and the model-facing schemas derived from them), `paths` (normalisation and the workspace
//!   boundary), `walk` (the gitignore-aware walk and glob rules of Glob and Grep), `output`
//!   (line cuts; capped head+tail text comes from `spine-process`, as do process groups, time
//!   limits and cancellation), `env_file` (the run's `export NAME=value` file), `shell_cwd`
//!   (where a Bash command left its shell, for the next one), `patch` (the `structuredPatch`
//!   hunks of Edit and Write).
//! - [`builtin_tools`] / [`register_builtins`]: the set, in a fixed order.
//! - Tool families, each a module with its executors and projectors: [`command_runs`]
//!   (`exec_command`, `write_stdin`, `command_run_*`), [`processes`] (`process_*`), [`memory`]
//!   (`memory_*`), [`web`] (`WebFetch`, `WebSearch`) and [`mcp`] (`mcp__<server>__<tool>`).
//!   Their shared parts: `live` (a child process that outlives one call: process group,
//!   pipes or pty, output rings, supervisor), [`LiveRegistry`] (the per-run registry of such
//!   processes, one per [`Family`]: command runs and background processes) and `ring` (the
//!   bounded output ring).
//! - [`families`]: [`register_families`] adds the families with their per-run registries and
//!   returns the [`FamilyHandles`] (operator state, shutdown); MCP tools come from
//!   [`mcp::connect_mcp_servers`] and are added with [`mcp::McpTools::register`].
//! - [`skill`]: `Skill`, which loads one of the run's skills (the catalog comes with the
//!   call's context; the assembler registers it beside `Agent`).
//! - [`sandbox`]: [`sandbox::SandboxLauncher`], the confinement (spine-sandbox's helper) a
//!   child environment puts on the commands of Bash, the families and opted-in MCP servers,
//!   and the reading of a failed command's output for sandbox denials.

// Unit tests link the dev-dependencies of every other target too; the lint checks the
// library's own list (see the workspace Cargo.toml).
#![cfg_attr(test, allow(unused_crate_dependencies))]
#![warn(missing_docs)]

use std::sync::Arc;

use spine_core::registry::ToolRegistryBuilder;
use spine_core::tool::Tool;

mod args;
pub mod bash;
pub mod calculator;
pub mod command_runs;
pub mod edit;
mod env_file;
pub mod families;
pub mod glob;
pub mod grep;
pub mod image;
mod live;
pub mod mcp;
pub mod memory;
mod output;
mod patch;
mod paths;
pub mod processes;
pub mod proxy;
pub mod read;
mod ring;
pub mod sandbox;
mod shell_cwd;
pub mod skill;
mod time_limit;
mod walk;
pub mod web;
pub mod write;

pub use bash::BashTool;
pub use calculator::CalculatorTool;
pub use edit::EditTool;
pub use families::{FamilyConfig, FamilyHandles, register_families};
pub use glob::GlobTool;
pub use grep::GrepTool;
pub use live::registry::{Family, LiveRegistry};
pub use paths::FILE_TOOL_TIME_LIMIT;
pub use read::ReadTool;
pub use skill::SkillTool;
pub use time_limit::TimeLimited;
pub use write::WriteTool;

/// The built-in tools: Read, Write, Edit, Glob, Grep, Bash, calculator (in that order).
pub fn builtin_tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(ReadTool),
        Arc::new(WriteTool),
        Arc::new(EditTool),
        Arc::new(GlobTool),
        Arc::new(GrepTool),
        Arc::new(BashTool),
        Arc::new(CalculatorTool),
    ]
}

/// Registers the built-in tools on a registry builder.
pub fn register_builtins(builder: &mut ToolRegistryBuilder) {
    for tool in builtin_tools() {
        builder.register_arc(tool);
    }
}
