//! spine-testkit's helpers do what other crates' tests rely on: real servers on 127.0.0.1 spoken
//! to over raw TCP, real files, real processes.

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

mod files;
mod http;
mod procs;
