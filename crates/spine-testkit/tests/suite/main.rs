//! spine-testkit's helpers do what other crates' tests rely on: real servers on 127.0.0.1 spoken
//! to over raw TCP, real files, real processes.

mod files;
mod http;
mod procs;
