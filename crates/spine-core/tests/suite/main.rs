//! spine-core behaviour through its public API: the runner with in-process hooks, test tools
//! and a scripted model. Each test pins one rule of docs/hooks.md.

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

mod support;

mod agent_tool;
mod background_agents;
mod cancellation;
mod child_env;
mod engine;
mod memory;
mod permission;
mod pipeline;
mod post_tool_use;
mod pre_tool_use;
mod prompt_and_stop;
mod runner;
mod shell_rules;
mod subagents;
