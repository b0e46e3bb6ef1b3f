//! The session's private temporary directory (the confined commands' `TMPDIR`): made mode
//! 0700 under the system's temporary directory, named `spine-sandbox-PID-…`; those of
//! sessions whose process is gone are removed when a new one is made.

use std::path::{Path, PathBuf};

use super::SandboxSetupError;

/// The prefix of the sessions' temporary directories: `spine-sandbox-PID-…`.
const TMPDIR_PREFIX: &str = "spine-sandbox-";

/// A private temporary directory for the session (mode 0700, in the system's temporary
/// directory); the launcher removes it. Those of sessions that died without removing theirs
/// (their process is gone) are removed first.
pub(super) fn private_tmpdir() -> Result<PathBuf, SandboxSetupError> {
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::temp_dir();
    remove_stale_tmpdirs(&base);
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let mut attempt = 0u32;
    loop {
        let dir = base.join(format!("{TMPDIR_PREFIX}{}-{stamp:x}-{attempt}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(source) => return Err(SandboxSetupError::TempDir { dir: base, source }),
        }
    }
}

/// Removes `spine-sandbox-PID-…` directories of `base` whose process is gone (a session that
/// was killed outright); only directories this user owns are touched.
fn remove_stale_tmpdirs(base: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(base) else { return };
    // /proc/self belongs to this process's user.
    let uid = std::fs::metadata("/proc/self").ok().map(|m| m.uid());
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) =
            name.to_str().and_then(|n| n.strip_prefix(TMPDIR_PREFIX)).and_then(|rest| rest.split('-').next())
        else {
            continue;
        };
        let Ok(metadata) = entry.path().symlink_metadata() else { continue };
        let mine = uid.is_some_and(|uid| metadata.uid() == uid);
        if mine && metadata.is_dir() && pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_directories_of_dead_sessions_are_removed_and_live_ones_kept() {
        let base = tempfile::tempdir().expect("tmp");
        let dead = base.path().join(format!("{TMPDIR_PREFIX}999999999-1-0"));
        let live = base.path().join(format!("{TMPDIR_PREFIX}{}-1-0", std::process::id()));
        let other = base.path().join(format!("{TMPDIR_PREFIX}bench-x"));
        for dir in [&dead, &live, &other] {
            std::fs::create_dir_all(dir.join("inside")).expect("dir");
        }
        remove_stale_tmpdirs(base.path());
        assert!(!dead.exists(), "a dead session's directory goes");
        assert!(live.exists() && other.exists(), "a live session's, and other names, stay");
    }
}
