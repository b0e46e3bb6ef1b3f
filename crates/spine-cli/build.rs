//! `spine --version` says which commit and when: `SPINE_COMMIT` (the short hash of the git
//! checkout, `unknown` outside one, `+dirty` never guessed) and `SPINE_BUILD_DATE` (UTC,
//! `SOURCE_DATE_EPOCH` when set, for reproducible builds).

use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_owned());
    let now = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .and_then(|secs| time::OffsetDateTime::from_unix_timestamp(secs).ok())
        .unwrap_or_else(time::OffsetDateTime::now_utc);
    let date = format!("{:04}-{:02}-{:02}", now.year(), u8::from(now.month()), now.day());
    println!("cargo:rustc-env=SPINE_COMMIT={commit}");
    println!("cargo:rustc-env=SPINE_BUILD_DATE={date}");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    // A new commit changes the version: watch the checkout's HEAD and the ref it points to.
    if let Ok(out) = Command::new("git").args(["rev-parse", "--git-dir"]).output()
        && out.status.success()
        && let Ok(dir) = String::from_utf8(out.stdout)
    {
        let dir = std::path::PathBuf::from(dir.trim());
        let mut watched = vec![dir.join("HEAD"), dir.join("packed-refs")];
        if let Ok(head) = std::fs::read_to_string(dir.join("HEAD"))
            && let Some(reference) = head.trim().strip_prefix("ref: ")
        {
            watched.push(dir.join(reference));
        }
        // Only files that exist: cargo runs a build script every time for a missing one.
        for path in watched.into_iter().filter(|p| p.exists()) {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}
