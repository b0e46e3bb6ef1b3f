//! `spine sessions rm ID` and `spine sessions prune --older-than DURATION`.
//!
//! Contract: `rm` removes the session [`Folder::holding`] finds; `prune` the sessions of the
//! project (every project with `--all`) whose last activity, as `list` orders them, is older
//! than `DURATION` (`30d`, `12h`, `90m`; anything else is exit 2), or with `--dry-run` only
//! prints them. A session is `<id>.jsonl`, `<id>.env`, `<id>/subagents/` and `<id>/` when then
//! empty, removed by [`Folder::remove_session`] relative to its folder's descriptor: nothing
//! reached through a symbolic link is removed (links are skipped with a warning and stay).
//! Each path removed is printed.

use std::path::Path;
use std::time::{Duration, SystemTime};

use super::folders::Folder;
use super::list::summaries_in;
use super::summary::epoch_ms;
use crate::cli::{SessionsPruneArgs, SessionsRmArgs};
use crate::commands::context;
use crate::error::{config, exit};
use crate::out;

/// Runs `spine sessions rm ID`.
pub(super) fn rm(home: &Path, args: SessionsRmArgs) -> anyhow::Result<u8> {
    let folder = Folder::holding(home, &args.id)?;
    for removed in folder.remove_session(&args.id)? {
        let _ = out::line(format!("removed {}", removed.display()));
    }
    Ok(exit::OK)
}

/// Runs `spine sessions prune`.
pub(super) fn prune(home: &Path, args: SessionsPruneArgs) -> anyhow::Result<u8> {
    let age = parse_duration(&args.older_than).ok_or_else(|| {
        config(format!("--older-than {:?}: expected a number and d, h or m (30d, 12h, 90m)", args.older_than))
    })?;
    let cutoff = epoch_ms(SystemTime::now().checked_sub(age).unwrap_or(SystemTime::UNIX_EPOCH));
    let folders = if args.all {
        Folder::all(home)?.into_iter().map(|f| (f, None)).collect::<Vec<_>>()
    } else {
        let project = context::project_dir(args.cwd.as_ref())?;
        Folder::of_project(home, &project)?.into_iter().map(|f| (f, Some(project.clone()))).collect()
    };
    let mut count = 0usize;
    for (folder, project) in &folders {
        for summary in summaries_in(folder, project.as_deref()) {
            if summary.last_ms >= cutoff {
                continue;
            }
            count += 1;
            if args.dry_run {
                let _ = out::line(format!("would remove {} ({})", summary.path.display(), summary.last_text()));
            } else {
                for removed in folder.remove_session(&summary.id)? {
                    let _ = out::line(format!("removed {}", removed.display()));
                }
            }
        }
    }
    if count == 0 {
        let _ = out::line(format!("no session older than {}", args.older_than));
    }
    Ok(exit::OK)
}

/// `30d`, `12h`, `90m` as a duration.
fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let unit = text.chars().last()?;
    let number: u64 = text[..text.len() - unit.len_utf8()].parse().ok()?;
    let seconds = match unit {
        'd' => number.checked_mul(86_400)?,
        'h' => number.checked_mul(3_600)?,
        'm' => number.checked_mul(60)?,
        _ => return None,
    };
    Some(Duration::from_secs(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_days_hours_and_minutes_only() {
        assert_eq!(parse_duration("30d"), Some(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_duration("12h"), Some(Duration::from_secs(12 * 3_600)));
        assert_eq!(parse_duration("90m"), Some(Duration::from_secs(90 * 60)));
        for bad in ["", "d", "30", "30s", "-1d", "1.5d", "30dd"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }
}
