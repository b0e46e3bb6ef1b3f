//! spine-process through its public API, with real processes: each test pins one rule of the
//! contract (stdin payload, EPIPE tolerance, caps, time limit, cancellation, drop guard, the
//! child environment, the drain of a group).

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

mod support;

mod confine;
mod group;
mod launch;
mod run;
