//! More workspace roots through the `spine` binary: `--add-dir` and the settings'
//! `permissions.additionalDirectories`. File tools work in every root, a
//! path outside every root is refused, symlinks out of an added root are refused, path rules
//! and protected paths apply in added roots, an untrusted project cannot add roots, and a
//! directory that does not exist is a configuration error naming its source.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::support::*;

/// A sandbox with an added directory `added/` (beside the project) holding `notes.md`, and a
/// file outside every root.
struct Roots {
    s: Sandbox,
}

impl Roots {
    fn new() -> Self {
        let s = Sandbox::new();
        std::fs::create_dir_all(s.dir.path().join("added")).expect("mkdir");
        std::fs::write(s.dir.path().join("added/notes.md"), "added notes\n").expect("write");
        std::fs::write(s.dir.path().join("outside.txt"), "outside secret\n").expect("write");
        Roots { s }
    }

    /// The added directory, canonical.
    fn added(&self) -> PathBuf {
        self.s.dir.path().join("added").canonicalize().expect("canon")
    }

    /// `added/<rel>` as a string.
    fn at(&self, rel: &str) -> String {
        self.added().join(rel).display().to_string()
    }

    /// Runs a script of tool calls (then `done`) with JSON output and messages.
    fn run(&self, calls: Value, args: &[&str]) -> std::process::Output {
        let script = self.s.script(json!([{"tool_calls": calls}, {"text": "done"}]));
        let mut all = vec!["--output-format", "json", "--include-messages"];
        all.extend_from_slice(args);
        self.s.run(&script, &all)
    }
}

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"id": id, "name": name, "arguments": args})
}

#[test]
fn add_dir_lets_read_write_and_edit_work_in_the_added_directory_and_refuses_paths_outside_every_root() {
    let r = Roots::new();
    let calls = json!([
        call("read", "Read", json!({"file_path": r.at("notes.md")})),
        call("write", "Write", json!({"file_path": r.at("sub/new.txt"), "content": "written\n"})),
        call("edit", "Edit", json!({"file_path": r.at("notes.md"), "old_string": "added", "new_string": "edited"})),
        call("outside", "Read", json!({"file_path": "../outside.txt"})),
    ]);
    let added = r.added().display().to_string();
    let out = r.run(calls, &["--permission-mode", "acceptEdits", "--add-dir", &added]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let res = tool_results(&v);
    assert!(res[0].contains("added notes"), "{res:?}");
    assert!(!res[1].starts_with("Error"), "{res:?}");
    assert!(!res[2].starts_with("Error"), "{res:?}");
    assert_eq!(std::fs::read_to_string(r.added().join("sub/new.txt")).expect("written"), "written\n");
    assert_eq!(std::fs::read_to_string(r.added().join("notes.md")).expect("edited"), "edited notes\n");
    assert!(res[3].starts_with("Error [permission_denied]:") && res[3].contains("outside the workspace"), "{res:?}");
    assert!(res[3].contains(&format!("added directory {added}")), "the refusal names every root: {res:?}");
    assert!(!res[3].contains("outside secret"));
}

#[test]
fn without_add_dir_the_same_directory_is_outside_the_workspace() {
    let r = Roots::new();
    let out = r.run(json!([call("read", "Read", json!({"file_path": r.at("notes.md")}))]), &[]);
    let res = tool_results(&json(&out));
    assert!(res[0].starts_with("Error [permission_denied]:") && res[0].contains("outside the workspace"), "{res:?}");
}

#[test]
fn glob_and_grep_search_an_added_directory_given_by_absolute_path() {
    let r = Roots::new();
    let calls = json!([
        call("glob", "Glob", json!({"pattern": "*.md", "path": r.added().display().to_string()})),
        call(
            "grep",
            "Grep",
            json!({"pattern": "added", "path": r.added().display().to_string(), "output_mode": "content"})
        ),
    ]);
    let added = r.added().display().to_string();
    let out = r.run(calls, &["--add-dir", &added]);
    let res = tool_results(&json(&out));
    assert!(res[0].contains("notes.md"), "{res:?}");
    assert!(res[1].contains("added notes"), "{res:?}");
}

#[test]
fn top_level_print_and_relative_add_dir_resolve_against_the_current_directory() {
    let r = Roots::new();
    let script = r.s.script(json!([
        {"tool_calls": [call("read", "Read", json!({"file_path": r.at("notes.md")}))]},
        {"text": "done"}
    ]));
    let model = format!("scripted:{}", script.display());
    let out = r
        .s
        .spine()
        .args(["-p", "go", "--model", &model, "--output-format", "json", "--include-messages", "--add-dir", "../added"])
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert!(tool_results(&v)[0].contains("added notes"), "{v}");
    let system = v["messages"][0]["content"].as_str().unwrap_or_default();
    assert!(system.contains(&r.added().display().to_string()), "the prompt names the added root: {system}");
}

#[test]
fn a_symlink_in_an_added_root_pointing_outside_every_root_is_refused() {
    let r = Roots::new();
    let outside = r.s.dir.path().join("outside.txt");
    std::os::unix::fs::symlink(&outside, r.added().join("link")).expect("link");
    let calls = json!([
        call("read", "Read", json!({"file_path": r.at("link")})),
        call("write", "Write", json!({"file_path": r.at("link"), "content": "clobbered\n"})),
    ]);
    let added = r.added().display().to_string();
    let out = r.run(calls, &["--permission-mode", "bypassPermissions", "--add-dir", &added]);
    let res = tool_results(&json(&out));
    for content in &res {
        assert!(
            content.starts_with("Error [permission_denied]:") && content.contains("outside the workspace"),
            "{res:?}"
        );
    }
    assert_eq!(std::fs::read_to_string(outside).expect("read"), "outside secret\n");
}

#[test]
fn in_an_added_root_an_allow_rule_takes_effect_a_deny_rule_wins_and_protected_paths_stay_protected() {
    let r = Roots::new();
    std::fs::write(r.added().join(".env"), "TOKEN=1\n").expect("write");
    let added = r.added().display().to_string();
    let settings = json!({"permissions": {
        "allow": [format!("Edit(/{added}/**)"), format!("Read(/{added}/**)")],
        "deny": [format!("Edit(/{added}/locked.txt)"), "Read(.env)"]
    }})
    .to_string();
    let calls = json!([
        call("allowed", "Write", json!({"file_path": r.at("allowed.txt"), "content": "ok\n"})),
        call("denied", "Write", json!({"file_path": r.at("locked.txt"), "content": "no\n"})),
        call("env", "Read", json!({"file_path": r.at(".env")})),
        call("protected", "Write", json!({"file_path": r.at(".git/config"), "content": "[core]\n"})),
    ]);
    let out = r.run(calls, &["--settings", &settings, "--add-dir", &added]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let res = tool_results(&json(&out));
    assert!(!res[0].starts_with("Error"), "the allow rule for the added root takes effect: {res:?}");
    assert!(r.added().join("allowed.txt").exists());
    assert_eq!(res[1], format!("Error [permission_denied]: denied by rule Edit(/{added}/locked.txt)"), "{res:?}");
    assert_eq!(res[2], "Error [permission_denied]: denied by rule Read(.env)", "{res:?}");
    assert!(res[3].starts_with("Error [permission_denied]:") && res[3].contains("protected directory .git"), "{res:?}");
    assert!(!r.added().join("locked.txt").exists() && !r.added().join(".git").exists());
}

/// A project whose `.claude/settings.json` adds `../added`.
fn project_adding_a_directory(r: &Roots) {
    r.s.write(".claude/settings.json", &json!({"permissions": {"additionalDirectories": ["../added"]}}).to_string());
}

#[test]
fn settings_directories_apply_from_a_trusted_project_and_are_skipped_with_a_warning_when_untrusted() {
    let r = Roots::new();
    project_adding_a_directory(&r);
    let read = json!([call("read", "Read", json!({"file_path": r.at("notes.md")}))]);
    let out = r.run(read.clone(), &[]);
    let res = tool_results(&json(&out));
    assert!(res[0].contains("outside the workspace"), "an untrusted project adds no root: {res:?}");
    let err = stderr(&out);
    assert!(
        err.lines().any(|l| l.starts_with("spine: untrusted project") && l.contains("1 additional directory")),
        "{err}"
    );
    let check = r.s.spine().args(["hooks", "check"]).output().expect("runs");
    let text = stdout(&check);
    assert!(text.contains("1 additional directory not applied: the project is untrusted"), "{text}");
    assert!(text.contains("(not applied: the project is untrusted)"), "{text}");
    r.s.trust();
    let out = r.run(read, &[]);
    assert!(tool_results(&json(&out))[0].contains("added notes"), "{}", stdout(&out));
    let check = r.s.spine().args(["hooks", "check", "--output-format", "json"]).output().expect("runs");
    let v: Value = serde_json::from_slice(&check.stdout).expect("json");
    let roots: Vec<(&str, &str, bool)> = v["roots"]
        .as_array()
        .expect("roots")
        .iter()
        .map(|r| (r["path"].as_str().unwrap_or(""), r["source"].as_str().unwrap_or(""), r["applied"] == true))
        .collect();
    let file = r.s.project().canonicalize().expect("canon").join(".claude/settings.json");
    let source = format!("{}: permissions.additionalDirectories[0]", file.display());
    assert_eq!(roots.len(), 2, "{roots:?}");
    assert_eq!(roots[0].1, "project directory");
    assert_eq!(roots[1], (&*r.added().display().to_string(), &*source, true));
}

#[test]
fn a_directory_that_does_not_exist_is_a_config_error_naming_the_flag_or_the_file_and_field() {
    let r = Roots::new();
    let script = r.s.script(json!([{"text": "done"}]));
    let out = r.s.run(&script, &["--add-dir", "../missing"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("--add-dir ../missing:") && err.contains("does not exist"), "{err}");
    r.s.write(".claude/settings.json", &json!({"permissions": {"additionalDirectories": ["gone"]}}).to_string());
    r.s.trust();
    let out = r.s.run(&script, &["--output-format", "json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let file = r.s.project().canonicalize().expect("canon").join(".claude/settings.json");
    let err = stderr(&out);
    assert!(err.contains(&format!("{}: permissions.additionalDirectories[0]:", file.display())), "{err}");
    assert!(err.contains("does not exist"), "{err}");
    assert_eq!(json(&out)["is_error"], true, "the JSON error result is printed too");
    let check = r.s.spine().args(["hooks", "check"]).output().expect("runs");
    assert_eq!(check.status.code(), Some(2), "check fails as run does: {}", stdout(&check));
    assert!(stdout(&check).contains("permissions.additionalDirectories[0]"), "{}", stdout(&check));
}

#[test]
fn a_shell_redirect_into_an_added_directory_is_inside_the_workspace() {
    let r = Roots::new();
    let target = r.at("from-bash.txt");
    let calls = json!([call("bash", "Bash", json!({"command": format!("echo hi > {target}")}))]);
    let added = r.added().display().to_string();
    let args = ["--permission-mode", "acceptEdits", "--allowedTools", "Bash", "--add-dir", &added];
    let out = r.run(calls.clone(), &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&target).expect("written by the redirect"), "hi\n");
    std::fs::remove_file(&target).expect("rm");
    let out = r.run(calls, &["--permission-mode", "acceptEdits", "--allowedTools", "Bash"]);
    let res = tool_results(&json(&out));
    assert!(res[0].contains("outside the workspace"), "without --add-dir the target is outside: {res:?}");
    assert!(!std::path::Path::new(&target).exists());
}
