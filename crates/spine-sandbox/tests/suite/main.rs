//! Confinement on the real kernel: each test runs an attempt through the helper binary and
//! asserts it fails there, then runs it bare and asserts it succeeds (so the sandbox, not the
//! machine, is what refused). Linux only.

// Test targets link every dependency of the package (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]
#![cfg(target_os = "linux")]

mod common;
mod filesystem;
mod helper;
mod launcher;
mod network;
mod syscalls;
