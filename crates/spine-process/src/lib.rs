//! Child processes for spine's tools and hooks: each in its own process group, with an
//! optional stdin payload, concurrent capped reads of stdout and stderr, a time limit,
//! cancellation, and a guard that kills the group when dropped.
//!
//! # Layout
//!
//! - [`group`]: [`GroupChild`], a child leading its own process group; SIGTERM→SIGKILL of the
//!   whole group on demand, SIGKILL when dropped.
//! - [`run`](mod@run): [`run()`](run::run) a command to completion: stdin payload written
//!   EPIPE-tolerantly in its own task, output read concurrently into capped buffers, time limit
//!   and cancellation ending the group, leftovers of the group reaped. [`drain`] is its ending
//!   sequence (readers joined within [`DRAIN_GRACE`], leftovers of the group reaped), shared
//!   with callers that pump output themselves; [`join_readers`] its bounded wait for a child's
//!   output readers.
//! - [`capture`]: UTF-8 stream decoding and [`CappedText`] (bounded head+tail text).
//! - [`guard`]: a companion process that kills the groups spine started if spine dies without
//!   ending them (SIGKILL).
//! - [`orphans`]: the child subreaper, and killing descendants that left their group.
//! - [`secrets`]: [`ChildEnv`], the environment one agent gives its children (its settings'
//!   `env`, the provider keys it passes through), a value every spawn of [`GroupChild`] takes;
//!   provider keys and telemetry credentials removed from every child's environment there.
//! - [`confine`]: the [`Confine`] seam a sandbox engine implements: a confined [`ChildEnv`]
//!   starts its commands through a launcher and every spawn through the engine's guard.
//!
//! This crate knows nothing of spine's engine: it depends on tokio and nix only.

// Unit tests link the dev-dependencies of every other target too; the lint checks the
// library's own list (see the workspace Cargo.toml).
#![cfg_attr(test, allow(unused_crate_dependencies))]
#![warn(missing_docs)]

pub mod capture;
pub mod confine;
pub mod group;
pub mod guard;
pub mod launch;
mod launch_io;
pub mod orphans;
pub mod run;
pub mod secrets;

pub use capture::CappedText;
pub use confine::{Confine, ConfineError, NoGuard, OwnWrites, SpawnGuard};
pub use group::{GroupChild, ProcessError, TERM_GRACE};
pub use launch::{ChildIo, IoEnd, Launch, LaunchCommand, LaunchedChild, command_environment};
pub use run::{
    DRAIN_GRACE, Emit, Ending, Finished, Limits, RunOptions, StdinOutcome, Stream, drain, join_readers, run,
};
pub use secrets::ChildEnv;
