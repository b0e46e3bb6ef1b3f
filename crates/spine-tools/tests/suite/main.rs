//! spine-tools behaviour through its public API: every built-in tool is prepared through a
//! real registry (schema check and path normalisation, as the runner does) and executed
//! against real files in temporary directories and real processes. Each test pins one rule.

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

mod support;

mod agent;
mod direct;

mod bash;
mod bash_cwd;
mod boundary;
mod calculator;
mod child_env;
mod command_runs;
mod families;
mod files;
mod mcp;
mod memory;
mod patches;
mod processes;
mod proxy;
mod race;
mod registry;
mod schemas;
mod sdk_mcp;
mod search;
mod web;
