//! A Claude Code project's `.claude/` folder through the `spine` binary: discovery and
//! precedence, `--setting-sources`, trust parity with `.spine/`, the `env` key, `defaultMode`,
//! the project directory walk, and `spine hooks check` listing what it found.
//!
//! The fixture is a realistic `.claude/` folder: a python and a shell hook (run with
//! `/usr/bin/python3` and `sh`), allow/deny/ask rules including `Read(./.env)`, `env`, and a
//! `settings.local.json`; the full fixture adds a `CLAUDE.md` with an `@import`, an `.mcp.json`
//! server and a Stop hook that reads `transcript_path`. Every effect is proven by a file a hook
//! wrote, by the trace's decision records or by the conversation.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::*;

const POST_HOOK: &str = r#"import json, os, sys
event = json.load(sys.stdin)
response = event.get("tool_response")
out = response.get("stdout", "") if isinstance(response, dict) else str(response)
with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], ".claude", "post.log"), "a") as f:
    f.write(json.dumps({"tool": event["tool_name"], "out": out.strip(), "env": os.environ.get("FIXTURE_ENV")}) + "\n")
"#;

const PRE_HOOK: &str = r#"#!/bin/sh
cat > /dev/null
echo "pre $FIXTURE_ENV" >> "$CLAUDE_PROJECT_DIR/.claude/pre.log"
"#;

/// A project with a `.git` directory and a Claude Code `.claude/` folder.
fn claude_project(s: &Sandbox) {
    std::fs::create_dir_all(s.project().join(".git")).expect(".git");
    s.write(".env", "SECRET=hunter2\n");
    s.write("README.md", "hello\n");
    s.write(".claude/hooks/post_log.py", POST_HOOK);
    let pre = s.write(".claude/hooks/pre.sh", PRE_HOOK);
    make_executable(&pre);
    s.write(
        ".claude/settings.json",
        &json!({
            "$schema": "https://json.schemastore.org/claude-code-settings.json",
            "permissions": {
                "allow": ["Bash(printenv *)", "Read"],
                "deny": ["Read(./.env)", "Read(./secrets/**)"],
                "ask": ["Write"]
            },
            "env": {"FIXTURE_ENV": "from-claude-settings"},
            "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [
                    {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/pre.sh"}]}],
                "PostToolUse": [{"matcher": "*", "hooks": [
                    {"type": "command", "command": "/usr/bin/python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/post_log.py"}]}]
            },
            "statusLine": {"type": "command", "command": "echo status"}
        })
        .to_string(),
    );
    s.write(".claude/settings.local.json", &json!({"permissions": {"deny": ["Bash(rm *)"]}}).to_string());
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// Read `.env`, read `README.md`, `printenv FIXTURE_ENV`, `rm -f README.md`, then answer.
fn four_calls(s: &Sandbox) -> PathBuf {
    s.script(json!([
        {"tool_calls": [
            {"id": "env", "name": "Read", "arguments": {"file_path": ".env"}},
            {"id": "readme", "name": "Read", "arguments": {"file_path": "README.md"}},
            {"id": "printenv", "name": "Bash", "arguments": {"command": "printenv FIXTURE_ENV"}},
            {"id": "rm", "name": "Bash", "arguments": {"command": "rm -f README.md"}}
        ]},
        {"text": "done"}
    ]))
}

/// The trace's decisions: call id → (outcome, permission source type, rule).
fn decisions(trace: &Path) -> Vec<(String, String, String, String)> {
    spine_testkit::files::read_jsonl(trace)
        .iter()
        .filter(|e| e["kind"] == "tool_decision")
        .map(|e| {
            let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
            (
                s(&e["tool_use_id"]),
                s(&e["outcome"]),
                s(&e["permission"]["source"]["type"]),
                s(&e["permission"]["source"]["rule"]),
            )
        })
        .collect()
}

fn decision<'a>(all: &'a [(String, String, String, String)], id: &str) -> (&'a str, &'a str, &'a str) {
    let d = all.iter().find(|d| d.0 == id).unwrap_or_else(|| panic!("no decision for {id}: {all:?}"));
    (d.1.as_str(), d.2.as_str(), d.3.as_str())
}

fn run_traced(
    s: &Sandbox,
    script: &Path,
    extra: &[&str],
) -> (std::process::Output, Vec<(String, String, String, String)>) {
    let trace = s.dir.path().join("trace.jsonl");
    let _ = std::fs::remove_file(&trace);
    let mut args = vec!["--trace", trace.to_str().expect("utf8")];
    args.extend_from_slice(extra);
    let out = s.run(script, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let d = decisions(&trace);
    (out, d)
}

fn read_log(s: &Sandbox, name: &str) -> String {
    std::fs::read_to_string(s.project().join(".claude").join(name)).unwrap_or_default()
}

#[test]
fn an_untrusted_claude_project_applies_its_deny_and_ask_rules_but_not_its_hooks_allow_rules_or_env() {
    let s = Sandbox::new();
    claude_project(&s);
    let (out, d) = run_traced(&s, &four_calls(&s), &[]);
    assert_eq!(decision(&d, "env"), ("denied", "rule", "Read(./.env)"), "deny rules always apply");
    assert_eq!(decision(&d, "readme").0, "executed");
    assert_eq!(decision(&d, "printenv").1, "approver", "the allow rule is withheld: it asks, and nobody answers");
    assert_eq!(decision(&d, "rm"), ("denied", "rule", "Bash(rm *)"), "settings.local.json deny applies");
    assert_eq!((read_log(&s, "pre.log"), read_log(&s, "post.log")), (String::new(), String::new()), "no hook ran");
    let err = stderr(&out);
    let notice: Vec<&str> = err.lines().filter(|l| l.starts_with("spine: untrusted project")).collect();
    assert_eq!(notice.len(), 1, "{err}");
    assert!(
        notice[0].contains("skipped 2 hooks, 2 allow rules") && notice[0].contains(".claude/settings.json"),
        "{}",
        notice[0]
    );
    assert!(notice[0].contains("1 env variable"), "{}", notice[0]);
}

#[test]
fn a_trusted_claude_project_runs_its_python_and_shell_hooks_with_its_env_and_allow_rules() {
    let s = Sandbox::new();
    claude_project(&s);
    s.trust();
    let (out, d) = run_traced(&s, &four_calls(&s), &[]);
    assert_eq!(decision(&d, "env"), ("denied", "rule", "Read(./.env)"));
    assert_eq!(decision(&d, "printenv"), ("executed", "rule", "Bash(printenv *)"), "{}", stderr(&out));
    assert_eq!(decision(&d, "rm"), ("denied", "rule", "Bash(rm *)"));
    assert_eq!(
        read_log(&s, "pre.log"),
        "pre from-claude-settings\npre from-claude-settings\n",
        "the shell hook ran with env, before each Bash call"
    );
    let post: Vec<Value> =
        read_log(&s, "post.log").lines().map(|l| serde_json::from_str(l).expect("log line")).collect();
    let tools: Vec<&str> = post.iter().map(|p| p["tool"].as_str().unwrap_or_default()).collect();
    assert_eq!(tools, ["Read", "Bash"], "denied calls never reach PostToolUse");
    assert_eq!(post[1]["out"], "from-claude-settings", "Bash got the settings env");
    assert_eq!(post[1]["env"], "from-claude-settings", "the python hook got it too");
    assert!(s.project().join("README.md").exists());
}

#[test]
fn setting_sources_select_user_project_and_local_files_and_cli_settings_always_apply() {
    let s = Sandbox::new();
    claude_project(&s);
    s.trust();
    std::fs::create_dir_all(s.dir.path().join(".claude")).expect("mkdir");
    std::fs::write(
        s.dir.path().join(".claude/settings.json"),
        json!({"permissions": {"deny": ["Read(./README.md)"]}}).to_string(),
    )
    .expect("user settings");
    let script = four_calls(&s);
    let (_, d) = run_traced(&s, &script, &[]);
    assert_eq!(decision(&d, "readme"), ("denied", "rule", "Read(./README.md)"), "~/.claude/settings.json applies");
    let (_, d) = run_traced(&s, &script, &["--setting-sources", "project"]);
    assert_eq!(decision(&d, "readme").0, "executed", "user files not selected");
    assert_eq!(decision(&d, "rm").1, "approver", "local files not selected: no rm deny rule");
    assert_eq!(decision(&d, "env"), ("denied", "rule", "Read(./.env)"));
    let (_, d) = run_traced(
        &s,
        &script,
        &["--setting-sources", "local", "--settings", r#"{"permissions": {"deny": ["Read(./README.md)"]}}"#],
    );
    assert_eq!(decision(&d, "env").0, "executed", "project files not selected");
    assert_eq!(decision(&d, "rm"), ("denied", "rule", "Bash(rm *)"));
    assert_eq!(decision(&d, "readme"), ("denied", "rule", "Read(./README.md)"), "--settings always applies");
    let bad = s.run(&script, &["--setting-sources", "user,policy"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("policy"), "{}", stderr(&bad));
}

#[test]
fn the_project_dir_is_found_from_a_subdirectory_up_to_the_repository_root() {
    let s = Sandbox::new();
    claude_project(&s);
    let deep = s.project().join("src/deep");
    std::fs::create_dir_all(&deep).expect("mkdir");
    let script = four_calls(&s);
    let trace = s.dir.path().join("trace.jsonl");
    let out = s
        .spine()
        .current_dir(&deep)
        .args(["run", "-p", "go", "--model", &format!("scripted:{}", script.display()), "--trace"])
        .arg(&trace)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let d = decisions(&trace);
    assert_eq!(decision(&d, "env"), ("denied", "rule", "Read(./.env)"), "the root's .claude/ applies");
    assert_eq!(decision(&d, "readme").0, "executed", "README.md resolves against the project dir");
}

#[test]
fn model_and_dont_ask_mode_come_from_claude_settings() {
    let s = Sandbox::new();
    std::fs::create_dir_all(s.project().join(".git")).expect(".git");
    let script = s.script(json!([
        {"tool_calls": [{"id": "w", "name": "Write", "arguments": {"file_path": "x.txt", "content": "x"}}]},
        {"text": "finished"}
    ]));
    s.write(
        ".claude/settings.json",
        &json!({"model": format!("scripted:{}", script.display()), "permissions": {"defaultMode": "dontAsk"}})
            .to_string(),
    );
    let trace = s.dir.path().join("trace.jsonl");
    let out = s.spine().args(["run", "-p", "go", "--trace"]).arg(&trace).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let d = decisions(&trace);
    assert_eq!(decision(&d, "w"), ("denied", "mode", ""), "dontAsk refuses what would ask");
    assert!(!s.project().join("x.txt").exists());
}

#[test]
fn an_unsupported_default_mode_is_one_warning_line_and_the_rest_of_the_file_applies() {
    let s = Sandbox::new();
    claude_project(&s);
    s.write(
        ".claude/settings.local.json",
        &json!({"permissions": {"defaultMode": "delegate", "deny": ["Bash(rm *)"]}}).to_string(),
    );
    let (out, d) = run_traced(&s, &four_calls(&s), &[]);
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("delegate")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains(".claude/settings.local.json") && lines[0].contains("not supported"), "{}", lines[0]);
    assert_eq!(decision(&d, "rm"), ("denied", "rule", "Bash(rm *)"));
}

#[test]
fn hooks_check_lists_files_found_and_not_found_ignored_keys_and_rules_with_sources() {
    let s = Sandbox::new();
    claude_project(&s);
    let out = s.spine().args(["hooks", "check", "--output-format", "json"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let v = json(&out);
    let project = s.project().canonicalize().expect("canon");
    let files: Vec<(String, String)> = v["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| {
            (f["path"].as_str().unwrap_or_default().to_owned(), f["status"].as_str().unwrap_or_default().to_owned())
        })
        .collect();
    let status = |p: PathBuf| files.iter().find(|f| f.0 == p.display().to_string()).map(|f| f.1.clone());
    assert_eq!(status(s.dir.path().join(".claude/settings.json")).as_deref(), Some("not found"), "{files:?}");
    assert_eq!(status(s.home().join("settings.json")).as_deref(), Some("not found"));
    assert_eq!(status(project.join(".claude/settings.json")).as_deref(), Some("read"));
    assert_eq!(status(project.join(".claude/settings.local.json")).as_deref(), Some("read"));
    assert_eq!(status(project.join(".spine/settings.json")).as_deref(), Some("not found"));
    assert!(
        v["ignored"].as_array().expect("ignored").iter().any(|n| n.as_str().is_some_and(|n| n.contains("statusLine")))
    );
    let rules = v["rules"].as_array().expect("rules");
    let env_rule = rules.iter().find(|r| r["rule"] == "Read(./.env)").expect("the .env deny rule");
    assert_eq!(env_rule["behavior"], "deny");
    assert_eq!(env_rule["applied"], true);
    assert_eq!(env_rule["source"], project.join(".claude/settings.json").display().to_string());
    assert_eq!(env_rule["path"], "permissions.deny[0]");
    let allow = rules.iter().find(|r| r["rule"] == "Bash(printenv *)").expect("allow rule");
    assert_eq!(allow["applied"], false, "withheld: the project is untrusted");
    let text = s.spine().args(["hooks", "check"]).output().expect("runs");
    let text = stdout(&text);
    assert!(text.contains("permission rules:") && text.contains("deny  Read(./.env)"), "{text}");
    assert!(text.contains("not found"), "{text}");
}

#[test]
fn hooks_check_rejects_exactly_the_rules_run_rejects() {
    let s = Sandbox::new();
    s.write(".claude/settings.json", &json!({"permissions": {"deny": ["Bash(git *"]}}).to_string());
    let run = s.run(&s.script(json!([{"text": "x"}])), &[]);
    assert_eq!(run.status.code(), Some(2), "{}", stderr(&run));
    let check = s.spine().args(["hooks", "check"]).output().expect("runs");
    assert_eq!(check.status.code(), Some(2), "check must refuse what run refuses: {}", stdout(&check));
    let text = stdout(&check);
    assert!(text.contains(".claude/settings.json") && text.contains("permissions.deny[0]"), "{text}");
}

#[test]
fn hooks_test_runs_a_trusted_claude_projects_hook_with_its_env() {
    let s = Sandbox::new();
    claude_project(&s);
    let out = s
        .spine()
        .args(["hooks", "test", "PreToolUse", "--tool", "Bash", "--trust", "--input"])
        .arg(r#"{"tool_input": {"command": "ls"}}"#)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert_eq!(read_log(&s, "pre.log"), "pre from-claude-settings\n");
}

const STOP_HOOK: &str = r#"import json, os, sys
event = json.load(sys.stdin)
last = None
with open(event["transcript_path"]) as f:
    for line in f:
        entry = json.loads(line)
        if entry.get("type") == "assistant":
            texts = [b["text"] for b in entry["message"]["content"] if b.get("type") == "text"]
            if texts:
                last = "\n".join(texts)
with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], ".claude", "stop.log"), "w") as f:
    f.write(last or "")
"#;

/// [`claude_project`] plus what a real one also holds: a `CLAUDE.md` with an `@import`, an
/// `.mcp.json` server, and a Stop hook (python) that reads the last assistant message from
/// `transcript_path`, all in the project's own `.claude/` files.
fn full_claude_project(s: &Sandbox) {
    claude_project(s);
    s.write("CLAUDE.md", "# Project\n\nProject rule: answer briefly.\nSee @docs/conventions.md\n");
    s.write("docs/conventions.md", "Imported rule: name tests after the rule they pin.\n");
    let everything = spine_testkit::mcp::peer_entry("server-everything");
    s.write(
        ".mcp.json",
        &json!({"mcpServers": {"everything": {"command": "node", "args": [everything, "stdio"]}}}).to_string(),
    );
    s.write(".claude/hooks/stop_check.py", STOP_HOOK);
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(s.project().join(".claude/settings.json")).expect("settings"))
            .expect("json");
    settings["hooks"]["Stop"] = json!([{"hooks": [
        {"type": "command", "command": "/usr/bin/python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/stop_check.py"}]}]);
    settings["permissions"]["allow"].as_array_mut().expect("allow").push(json!("mcp__everything__echo"));
    settings["enableAllProjectMcpServers"] = json!(true);
    s.write(".claude/settings.json", &settings.to_string());
}

#[test]
fn a_full_claude_project_runs_as_in_claude_code_once_trusted() {
    let s = Sandbox::new();
    full_claude_project(&s);
    let script = s.script(json!([
        {"tool_calls": [
            {"id": "echo", "name": "mcp__everything__echo", "arguments": {"message": "hi from the project"}},
            {"id": "printenv", "name": "Bash", "arguments": {"command": "printenv FIXTURE_ENV"}}
        ]},
        {"text": "Both ran."}
    ]));
    let untrusted = s.run(&script, &["--output-format", "json", "--include-messages"]);
    let v = json(&untrusted);
    assert!(
        v["messages"][3]["content"].as_str().is_some_and(|t| t.starts_with("Error [")),
        "untrusted: the project's MCP server is not started: {}",
        v["messages"][3]
    );
    assert_eq!(read_log(&s, "stop.log"), "", "untrusted: no project hook ran");

    s.trust();
    let out = s.run(&script, &["--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let system = v["messages"][0]["content"].as_str().expect("system prompt");
    assert!(
        system.contains("Project rule: answer briefly.") && system.contains("Imported rule: name tests"),
        "{system}"
    );
    let results = tool_results(&v);
    assert!(results[0].contains("Echo: hi from the project"), "{results:?}");
    assert!(results[1].ends_with("from-claude-settings"), "the allow rule and env applied: {results:?}");
    assert_eq!(read_log(&s, "stop.log"), "Both ran.", "the Stop hook read the last assistant message");
    for field in crate::result_json::CLAUDE_FIELDS {
        assert!(v.get(field).is_some(), "JSON result field {field}: {v}");
    }
}

/// A settings file using Claude Code 2.1's newer keys and answers: none of them stops spine.
const CLAUDE_2_1_SETTINGS: &str = r#"{
    "permissions": {"allow": ["Bash(echo *)"], "disableAutoMode": "disable", "defaultMode": "manual"},
    "statusLine": {"type": "command", "command": "echo status"},
    "aFutureSetting": {"enabled": true},
    "hooks": {
        "WorktreeCreate": [{"hooks": [{"type": "command", "command": "true"}]}],
        "TeammateIdle": [{"hooks": [{"type": "command", "command": "true"}]}],
        "SessionStart": [{"hooks": [{"type": "command", "command": "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"SessionStart\", \"additionalContext\": \"ctx\", \"initialUserMessage\": \"hi\", \"sessionTitle\": \"t\"}}'"}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"Notification\", \"additionalContext\": \"seen\"}}'"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "exit 0", "onFailure": "block", "rewakeMessage": "x", "cloud": "skip"}]}]
    }
}"#;

#[test]
fn a_claude_code_2_1_settings_file_runs_and_hooks_check_names_what_is_not_applied() {
    let s = Sandbox::new();
    s.trust();
    s.write(".claude/settings.json", CLAUDE_2_1_SETTINGS);
    let out = s.run(&s.script(bash_then_answer("echo hi")), &["--output-format", "json", "--include-messages", "-v"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(tool_results(&json(&out))[0].contains("hi"), "the call ran");
    let err = stderr(&out);
    assert!(err.contains("aFutureSetting: unknown field `aFutureSetting` ignored"), "{err}");
    assert!(err.contains("`WorktreeCreate`"), "{err}");
    assert!(err.contains("initialUserMessage") && err.contains("not applied by spine"), "a -v note: {err}");
    let check = s.spine().args(["hooks", "check"]).output().expect("runs");
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
    let report = format!("{}{}", stdout(&check), stderr(&check));
    assert!(report.contains("aFutureSetting") && report.contains("permissions.disableAutoMode"), "{report}");
    assert!(report.contains("hooks.TeammateIdle"), "{report}");

    s.write(".claude/settings.json", &CLAUDE_2_1_SETTINGS.replace("\"onFailure\"", "\"onFailur\""));
    let out = s.run(&s.script(bash_then_answer("echo hi")), &[]);
    assert_eq!(out.status.code(), Some(2), "a near miss stops the run");
    assert!(stderr(&out).contains("did you mean `onFailure`?"), "{}", stderr(&out));
}
