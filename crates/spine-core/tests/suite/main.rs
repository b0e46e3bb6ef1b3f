//! spine-core behaviour through its public API: the runner with in-process hooks, test tools
//! and a scripted model. Each test pins one rule of docs/hooks.md.

mod support;

mod cancellation;
mod engine;
mod memory;
mod permission;
mod pipeline;
mod post_tool_use;
mod pre_tool_use;
mod prompt_and_stop;
mod runner;
mod shell_rules;
