//! Registration of the tool families with their per-run registries.
//!
//! [`register_families`] adds, after whatever is already on the builder:
//! `exec_command`, `write_stdin`, `command_run_wait`, `command_run_read_output`,
//! `command_run_list`, `command_run_terminate` (one shared [`CommandRuns`]); `process_exec`,
//! `process_list`, `process_read_output`, `process_stop` (one shared [`Processes`]);
//! `memory_store`, `memory_get`, `memory_list`, `memory_search`, `memory_append_daily`;
//! `WebFetch`, `WebSearch`. MCP tools are registered separately, from the handle
//! [`crate::mcp::connect_mcp_servers`] returns.
//!
//! Lifetime: the registries live as long as their last `Arc` — the tools in the frozen
//! registry, the [`FamilyHandles`], the operator-state source. When the last one goes (the
//! end of the run), every command run and background process is killed. Call
//! [`FamilyHandles::shutdown`] at the end of a run to end them gracefully and wait.

use std::sync::Arc;

use serde_json::{Map, Value};
use spine_core::registry::ToolRegistryBuilder;
use spine_core::stages::prepare_turn::OperatorStateSource;
use spine_core::tool::Tool;

use crate::command_runs::{CommandRunOptions, CommandRuns};
use crate::memory::memory_tools;
use crate::processes::{ProcessOptions, Processes};
use crate::web::{WebOptions, web_tools};

/// Settings of the tool families.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FamilyConfig {
    /// The SearXNG-compatible endpoint of `WebSearch` (settings `web.search_url`); without it
    /// `WebSearch` answers every call with a `validation_error` saying how to configure it.
    pub search_url: Option<String>,
    /// Limits of `WebFetch` and `WebSearch`.
    pub web: WebOptions,
    /// Limits of the command-run registry.
    pub command_runs: CommandRunOptions,
    /// Limits of the process registry.
    pub processes: ProcessOptions,
}

/// The per-run registries behind the family tools.
#[derive(Debug, Clone)]
pub struct FamilyHandles {
    /// The command runs of this run.
    pub command_runs: Arc<CommandRuns>,
    /// The background processes of this run.
    pub processes: Arc<Processes>,
}

impl FamilyHandles {
    /// The operator-state source listing command runs and processes (for
    /// `AgentConfig::operator_state`).
    pub fn operator_state(&self) -> Arc<dyn OperatorStateSource> {
        Arc::new(self.clone())
    }

    /// Ends every command run and background process and waits until they are gone.
    pub async fn shutdown(&self) {
        futures_util::future::join(self.command_runs.shutdown(), self.processes.shutdown()).await;
    }
}

impl OperatorStateSource for FamilyHandles {
    fn sections(&self) -> Map<String, Value> {
        let mut sections = self.command_runs.sections();
        sections.extend(self.processes.sections());
        sections
    }
}

/// The family tools, in registration order, and their registries.
pub fn family_tools(config: FamilyConfig) -> (Vec<Arc<dyn Tool>>, FamilyHandles) {
    let handles = FamilyHandles {
        command_runs: CommandRuns::new(config.command_runs),
        processes: Processes::new(config.processes),
    };
    let mut tools = handles.command_runs.tools();
    tools.extend(handles.processes.tools());
    tools.extend(memory_tools());
    tools.extend(web_tools(config.search_url, config.web));
    (tools, handles)
}

/// Registers the family tools on a builder and returns their registries.
pub fn register_families(builder: &mut ToolRegistryBuilder, config: FamilyConfig) -> FamilyHandles {
    let (tools, handles) = family_tools(config);
    for tool in tools {
        builder.register_arc(tool);
    }
    handles
}
