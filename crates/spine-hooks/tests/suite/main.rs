//! spine-hooks end to end: settings → external hooks → spine-core's engine, driven through
//! `spine_core::runner::Agent` with a scripted model and the real built-in tools. Hooks are
//! real bash and `/usr/bin/python3` scripts in temporary directories, HTTP hooks a real local
//! server on 127.0.0.1. Each test pins one rule.

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

mod support;

mod answers;
mod background;
mod callback;
mod child_env;
mod config;
mod exit_codes;
mod fire;
mod http;
mod managed;
mod merge;
mod persistent;
mod wire_input;
