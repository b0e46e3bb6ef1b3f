//! Running the `git` program for marketplaces and plugin sources: [`Git`].
//!
//! Contract:
//! - git runs as a program with explicit arguments (never through a shell), with
//!   `GIT_TERMINAL_PROMPT=0` (a repository that needs credentials fails instead of asking) and
//!   stdin closed. `--` separates options from URLs and paths, so a URL starting with `-` is
//!   never an option.
//! - A failure is a [`GitError`] naming the source (the URL or path given) and what was being
//!   done, with git's own message; a missing `git` says so.
//! - Clones are shallow when the ref (or the default branch) is all that is needed; checking
//!   out a pinned commit fetches it by SHA and falls back to a full clone when the server does
//!   not serve commits by SHA.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A git command that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitError {
    /// The program could not be started.
    #[error("cannot fetch {url}: the `git` program is not available ({reason})")]
    Missing {
        /// The URL or path being fetched.
        url: String,
        /// Why it could not start.
        reason: String,
    },
    /// git ran and failed.
    #[error("cannot {action} {url}: {message}")]
    Failed {
        /// The URL or path being fetched.
        url: String,
        /// What was being done (`clone`, `update`, `check out … of`).
        action: String,
        /// git's message.
        message: String,
    },
}

/// The `git` program.
#[derive(Debug, Clone)]
pub struct Git {
    program: PathBuf,
}

impl Default for Git {
    fn default() -> Self {
        Git { program: PathBuf::from("git") }
    }
}

impl Git {
    /// A `Git` running `program` instead of `git` from `PATH`.
    pub fn with_program(program: impl Into<PathBuf>) -> Git {
        Git { program: program.into() }
    }

    fn run(&self, source: &str, action: &str, dir: Option<&Path>, args: &[OsString]) -> Result<String, GitError> {
        let mut command = Command::new(&self.program);
        if let Some(dir) = dir {
            command.arg("-C").arg(dir);
        }
        command
            .args(args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_ASKPASS", "")
            .env("SSH_ASKPASS", "")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let output =
            command.output().map_err(|e| GitError::Missing { url: source.to_owned(), reason: e.to_string() })?;
        if output.status.success() {
            return Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned());
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let message =
            stderr.lines().filter(|l| !l.trim().is_empty() && !l.starts_with("hint:")).collect::<Vec<_>>().join("; ");
        let message = if message.is_empty() { format!("git exited with {}", output.status) } else { message };
        Err(GitError::Failed { url: source.to_owned(), action: action.to_owned(), message })
    }

    /// Clones `url` into `dest` (which must not exist), at `git_ref` when given, shallow.
    pub fn clone(&self, url: &str, git_ref: Option<&str>, dest: &Path) -> Result<(), GitError> {
        let mut args: Vec<OsString> = vec!["clone".into(), "--quiet".into(), "--depth".into(), "1".into()];
        if let Some(r) = git_ref {
            args.extend(["--branch".into(), r.into()]);
        }
        args.extend(["--".into(), url.into(), dest.as_os_str().to_owned()]);
        self.run(url, "clone", None, &args).map(drop)
    }

    /// Clones `url` into `dest` and checks out `sha` (fetched by SHA when the server allows
    /// it, else from a full clone of `git_ref` or the default branch).
    pub fn clone_at(&self, url: &str, git_ref: Option<&str>, sha: &str, dest: &Path) -> Result<(), GitError> {
        let by_sha = (|| {
            std::fs::create_dir_all(dest).map_err(|e| GitError::Failed {
                url: url.to_owned(),
                action: "clone".into(),
                message: e.to_string(),
            })?;
            self.run(url, "clone", Some(dest), &["init".into(), "--quiet".into()])?;
            self.run(url, "clone", Some(dest), &strings(&["fetch", "--quiet", "--depth", "1", "--", url, sha]))?;
            self.run(
                url,
                &format!("check out {sha} of"),
                Some(dest),
                &strings(&["checkout", "--quiet", "--detach", sha]),
            )
        })();
        if by_sha.is_ok() {
            return Ok(());
        }
        let _ = std::fs::remove_dir_all(dest);
        let mut args: Vec<OsString> = vec!["clone".into(), "--quiet".into()];
        if let Some(r) = git_ref {
            args.extend(["--branch".into(), r.into()]);
        }
        args.extend(["--".into(), url.into(), dest.as_os_str().to_owned()]);
        self.run(url, "clone", None, &args)?;
        self.run(url, &format!("check out {sha} of"), Some(dest), &strings(&["checkout", "--quiet", "--detach", sha]))
            .map(drop)
    }

    /// Brings the clone in `dir` to the newest commit of `git_ref` (default: the remote's
    /// default branch): fetch, then a hard reset and a clean of what the fetch replaced.
    pub fn update(&self, url: &str, git_ref: Option<&str>, dir: &Path) -> Result<(), GitError> {
        let target = git_ref.unwrap_or("HEAD");
        self.run(url, "update", Some(dir), &strings(&["fetch", "--quiet", "--depth", "1", "--", url, target]))?;
        self.run(url, "update", Some(dir), &strings(&["reset", "--quiet", "--hard", "FETCH_HEAD"]))?;
        self.run(url, "update", Some(dir), &strings(&["clean", "--quiet", "-ffdx"])).map(drop)
    }

    /// The commit checked out in `dir`, if `dir` is in a git work tree.
    pub fn head(&self, dir: &Path) -> Option<String> {
        let sha = self.run(&dir.to_string_lossy(), "read", Some(dir), &strings(&["rev-parse", "HEAD"])).ok()?;
        (sha.len() == 40 && sha.chars().all(|c| c.is_ascii_hexdigit())).then_some(sha)
    }
}

fn strings(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A repository in `dir` with one commit of `files`; its HEAD.
    pub(crate) fn repository(dir: &Path, files: &[(&str, &str)]) -> String {
        for (rel, text) in files {
            let file = dir.join(rel);
            std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
            std::fs::write(file, text).expect("write");
        }
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .arg("-C")
                .arg(dir)
                .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
                .args(args)
                .output()
                .expect("git runs");
            assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8_lossy(&out.stdout).trim().to_owned()
        };
        if !dir.join(".git").exists() {
            git(&["init", "--quiet"]);
        }
        git(&["add", "-A"]);
        git(&["commit", "--quiet", "-m", "c"]);
        git(&["rev-parse", "HEAD"])
    }

    #[test]
    fn a_clone_follows_the_repository_and_an_update_brings_the_new_commit() {
        let dir = tempfile::tempdir().expect("dir");
        let origin = dir.path().join("origin");
        let first = repository(&origin, &[("a.txt", "1")]);
        let url = format!("file://{}", origin.display());
        let clone = dir.path().join("clone");
        let git = Git::default();
        git.clone(&url, None, &clone).expect("clone");
        assert_eq!(git.head(&clone).as_deref(), Some(first.as_str()));
        let second = repository(&origin, &[("a.txt", "2")]);
        git.update(&url, None, &clone).expect("update");
        assert_eq!(git.head(&clone).as_deref(), Some(second.as_str()));
        assert_eq!(std::fs::read_to_string(clone.join("a.txt")).expect("read"), "2");

        let pinned = dir.path().join("pinned");
        git.clone_at(&url, None, &first, &pinned).expect("clone at a commit");
        assert_eq!(git.head(&pinned).as_deref(), Some(first.as_str()));
        assert_eq!(git.head(dir.path()), None, "not a work tree");
    }

    #[test]
    fn failures_name_the_source_and_a_missing_git_says_so() {
        let dir = tempfile::tempdir().expect("dir");
        let url = format!("file://{}/nothing", dir.path().display());
        let error = Git::default().clone(&url, None, &dir.path().join("c")).expect_err("no repository");
        assert!(matches!(&error, GitError::Failed { url: failed, .. } if *failed == url), "{error}");
        assert!(error.to_string().starts_with(&format!("cannot clone {url}: ")), "{error}");
        let missing = Git::with_program(dir.path().join("no-git")).clone("file:///x", None, &dir.path().join("d"));
        let missing = missing.expect_err("no program");
        assert!(matches!(missing, GitError::Missing { .. }), "{missing}");
        assert!(missing.to_string().contains("`git` program is not available"), "{missing}");
    }
}
