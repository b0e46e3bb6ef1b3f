//! Shared fixture for the confinement tests: a temporary workspace, private TMPDIR and HOME,
//! and a runner that executes a shell script either through the real helper binary
//! (`spine-sandbox-exec`, confined on this kernel) or bare, for the control run.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use spine_sandbox::{Helper, Policy};

/// The helper binary built from this package.
pub fn helper() -> Helper {
    Helper::new(env!("CARGO_BIN_EXE_spine-sandbox-exec"), Vec::<String>::new())
}

/// A workspace, a private TMPDIR and a HOME with secrets, all under one temp dir.
pub struct Fixture {
    _dir: tempfile::TempDir,
    /// The writable workspace root.
    pub ws: PathBuf,
    /// The session's private temp dir (writable).
    pub tmp: PathBuf,
    /// A home directory whose `.ssh` is denied.
    pub home: PathBuf,
    /// A path in the shared /tmp, outside every writable root, unique to this fixture.
    pub outside: PathBuf,
}

impl Fixture {
    pub fn new() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = dir.path().join("ws");
        let tmp = dir.path().join("tmp");
        let home = dir.path().join("home");
        for d in [&ws, &tmp, &home.join(".ssh")] {
            fs::create_dir_all(d).expect("mkdir");
        }
        fs::write(home.join(".ssh/id_ed25519"), "PRIVATE KEY").expect("write key");
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let outside = PathBuf::from(format!("/tmp/spine-sandbox-outside-{}-{n}", std::process::id()));
        let _ = fs::remove_file(&outside);
        Self { _dir: dir, ws, tmp, home, outside }
    }

    /// The policy spine would use: workspace and TMPDIR writable, `~/.ssh` hidden, the
    /// usual protected paths, no network.
    pub fn policy(&self) -> Policy {
        Policy {
            read_deny: vec![self.home.join(".ssh")],
            write_allow: vec![self.ws.clone(), self.tmp.clone()],
            write_deny: [
                ".claude/settings.json",
                ".claude/settings.local.json",
                ".claude/hooks",
                ".spine",
                ".mcp.json",
                ".git/hooks",
            ]
            .iter()
            .map(|p| self.ws.join(p))
            .collect(),
            ..Policy::default()
        }
    }

    /// Runs `program args…` in the workspace, confined by `policy` when there is one.
    pub fn run_program(&self, policy: Option<&Policy>, program: &str, args: &[&str]) -> Output {
        let mut command = match policy {
            Some(policy) => helper().command(policy, program, args),
            None => {
                let mut bare = Command::new(program);
                bare.args(args);
                bare
            }
        };
        command
            .current_dir(&self.ws)
            .env("TMPDIR", &self.tmp)
            .env("HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("start")
    }

    /// Runs `sh -c script` in the workspace, confined by `policy` when there is one.
    pub fn sh(&self, policy: Option<&Policy>, script: &str) -> Output {
        self.run_program(policy, "sh", &["-c", script])
    }

    /// Runs `script` confined then bare, asserting that it fails confined (with a stderr
    /// containing `denial`) and succeeds bare: the rule under test is the cause.
    pub fn denied_then_allowed(&self, policy: &Policy, script: &str, denial: &str) {
        let confined = self.sh(Some(policy), script);
        assert!(!confined.status.success(), "{script} succeeded confined: {}", describe(&confined));
        let stderr = String::from_utf8_lossy(&confined.stderr);
        assert!(stderr.contains(denial), "{script}: expected {denial:?} in stderr: {}", describe(&confined));
        let bare = self.sh(None, script);
        assert!(bare.status.success(), "{script} failed bare: {}", describe(&bare));
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.outside);
    }
}

/// Exit status, stdout and stderr, for assertion messages.
pub fn describe(output: &Output) -> String {
    format!(
        "{}\nstdout: {}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The system Python (the one on PATH may be a slow pyenv shim), or `None` with a note.
pub fn python() -> Option<&'static str> {
    tool("/usr/bin/python3")
}

/// `path` when it exists, else `None` after printing why the test is skipped.
pub fn tool(path: &'static str) -> Option<&'static str> {
    if Path::new(path).exists() {
        Some(path)
    } else {
        eprintln!("skipped: {path} is not installed");
        None
    }
}

/// Whether `name` is on PATH.
pub fn on_path(name: impl AsRef<OsStr>) -> bool {
    let name = name.as_ref();
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()))
}
