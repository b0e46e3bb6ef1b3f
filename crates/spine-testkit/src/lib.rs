//! Test support shared by spine's crates (a dev-dependency only). Helpers that two crates'
//! tests would otherwise copy live here; helpers one crate needs stay in its `tests/`.
//!
//! - [`script`]: a scripted model that records requests ([`Script`]), message builders
//!   ([`text`], [`calls`], [`raw_call`]), inspectors ([`results`], [`roles`]) and the file
//!   `--model scripted:FILE` reads.
//! - [`chromium`]: headless Chromium over the DevTools protocol (a pipe, no websocket): open
//!   a page, evaluate, click, list the requests it made.
//! - [`direct`]: calling one tool the way the runner does.
//! - [`procs`]: process liveness, processes found by command line, peak memory.
//! - [`files`]: files, hook scripts and FIFOs in temporary directories, JSON lines, waiting
//!   for a file.
//! - [`http`]: local HTTP servers on 127.0.0.1 (any router, scripted replies, a request
//!   counter) and free ports.
//! - [`llama`]: an OpenAI-compatible server that behaves like llama.cpp's (strict chat
//!   template, no usage, tool calls only with `tool_choice` and never streamed).
//! - [`mcp`]: a tiny stdio MCP server in Python and the installed Node MCP peers.
//! - [`nats`]: the NATS server of the tests and fresh prefixes on it.
//! - [`nats_cluster`]: a 3-node (1–5) `nats-server` JetStream cluster on loopback: start,
//!   `kill -9` a node, restart it, find the meta and stream leaders, each node's client URL.

// Unit tests link the dev-dependencies of every other target too; the lint checks the
// library's own list (see the workspace Cargo.toml).
#![cfg_attr(test, allow(unused_crate_dependencies))]
#![warn(missing_docs)]

pub mod chromium;
pub mod direct;
pub mod files;
pub mod http;
pub mod images;
pub mod llama;
pub mod mcp;
pub mod nats;
pub mod nats_cluster;
pub mod procs;
pub mod script;

pub use mcp::write_mcp_server;
pub use script::{Script, calls, raw_call, results, roles, text};
