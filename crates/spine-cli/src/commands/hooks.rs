//! `spine hooks list | check | test`.

use crate::cli::HooksCommand;
use crate::error::config;

/// Runs `spine hooks`.
pub async fn hooks(_cmd: HooksCommand) -> anyhow::Result<u8> {
    Err(config("spine hooks: external hooks are not available in this build"))
}
