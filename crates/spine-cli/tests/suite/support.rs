//! A sandbox per test: a project directory, a private SPINE_HOME, and helpers to run `spine`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("project")).expect("project");
        std::fs::create_dir_all(dir.path().join("home")).expect("home");
        Sandbox { dir }
    }

    pub fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// Writes a file under the project (parents created) and returns its path.
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        spine_testkit::files::write_file(&self.project(), rel, text)
    }

    /// Writes a scripted-model file and returns its path.
    pub fn script(&self, turns: Value) -> PathBuf {
        let path = self.dir.path().join("script.json");
        spine_testkit::script::write_script_file(&path, turns).expect("script");
        path
    }

    /// `spine` with the sandbox's environment, as an `assert_cmd` command.
    pub fn spine(&self) -> Command {
        Command::from_std(self.spine_process())
    }

    /// `spine trust` on the project: its own settings files (hooks, allow rules, MCP servers)
    /// apply from now on.
    pub fn trust(&self) {
        let out = self.spine().arg("trust").output().expect("spine trust runs");
        assert_eq!(out.status.code(), Some(0), "spine trust: {}", stderr(&out));
    }

    /// `spine` as a plain process (for signals and custom stdio), with the sandbox's
    /// environment.
    pub fn spine_process(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("spine"));
        cmd.current_dir(self.project())
            .env("SPINE_HOME", self.home())
            .env("HOME", self.dir.path())
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_AUTH_TOKEN")
            .env_remove("ANTHROPIC_MODEL")
            .env_remove("ANTHROPIC_CUSTOM_HEADERS");
        cmd
    }

    /// `spine run -p PROMPT --resume ID --model scripted:SCRIPT`.
    pub fn resume(&self, id: &str, prompt: &str, script: &Path) -> Output {
        self.spine()
            .args(["run", "-p", prompt, "--resume", id, "--model", &format!("scripted:{}", script.display())])
            .output()
            .expect("spine runs")
    }

    /// `spine run -p PROMPT --model scripted:SCRIPT ARGS…`.
    pub fn run(&self, script: &Path, args: &[&str]) -> Output {
        let mut cmd = self.spine();
        cmd.arg("run").arg("-p").arg("go").arg("--model").arg(format!("scripted:{}", script.display()));
        cmd.args(args);
        cmd.output().expect("spine runs")
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("stdout is one JSON object ({e}): {}", stdout(o)))
}
