//! spine-worker against real backends: a SQLite file and a NATS JetStream server
//! (`SPINE_TEST_NATS_URL`, default `nats://127.0.0.1:4222`; start one with
//! `scripts/services.sh start`). Every behaviour runs against both backends: each test module
//! holds one shared body and a `sqlite` and a `nats` test calling it. A missing NATS server
//! fails the `nats` tests; it never skips them.

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

mod support;

mod auth;
mod batching;
mod bulk;
mod cluster;
mod delivery;
mod fencing;
mod flows;
mod pipeline;
mod schemas;
mod stream_settings;
mod urls;
