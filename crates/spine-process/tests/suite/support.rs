//! Helpers: process liveness and pid files written by test commands.

use std::path::Path;
use std::sync::LazyLock;

use spine_process::ChildEnv;

pub use spine_testkit::procs::eventually_dead;

/// The environment of children started without settings: nothing set, no provider key passed
/// through.
pub static NO_SETTINGS: LazyLock<ChildEnv> = LazyLock::new(ChildEnv::default);

/// Reads a pid written by a test command (panics when none appears: the test failed).
pub async fn read_pid(path: &Path) -> u32 {
    spine_testkit::procs::read_pid(path).await.unwrap_or_else(|| panic!("no pid in {}", path.display()))
}

/// `sh -c SCRIPT`.
pub fn sh(script: &str) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new("/bin/sh");
    cmd.arg("-c").arg(script);
    cmd
}
