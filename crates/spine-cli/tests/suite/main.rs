//! The `spine` binary end to end: real processes, real files, a scripted model.

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

mod support;

mod add_dir;
mod agent_definition_hooks;
mod agent_hooks;
mod agent_tool;
mod approvals;
mod async_hooks;
mod background_agents;
mod bash_guards;
mod cancel;
mod chat;
mod chat_watch;
mod claude_flags;
mod claude_session_flags;
mod claude_settings;
mod doctor;
mod elicitation;
mod hook_events;
mod hook_inputs;
mod hook_lines;
mod hooks;
mod images;
mod load;
mod local_servers;
mod managed_settings;
mod mcp_tool_hooks;
mod memory_files;
mod otel;
mod permission_updates;
mod pipes;
mod plugin_components;
mod plugin_marketplace_session;
mod plugins_cli;
mod prompt_cache;
mod prompt_hooks;
mod providers;
mod reasoning;
mod result_json;
mod resume_picker;
mod rules_paths;
mod run;
mod sandbox;
mod sandbox_escapes;
mod sandbox_layers;
mod sandbox_network;
mod sandbox_use;
mod session_hooks;
mod sessions_cmd;
mod shell_file_rules;
mod shell_rules;
mod ship;
mod skills;
mod status_line;
mod subagent_fields;
mod subagents;
mod token_estimates;
mod tool_responses;
mod tool_set;
mod tools;
mod trace;
mod trace_html;
mod transcripts;
mod trust;
mod watch_events;
mod web;
mod worker;
