//! Agent definitions' own `hooks` in `spine hooks check` and `spine hooks list`, through the
//! `spine` binary: checked as a subagent reads them (the file, the JSON path, the reason; an
//! error exits 2), listed under the agent they belong to, as they run in its subagent.

use serde_json::{Value, json};

use crate::support::*;

/// Writes `.claude/agents/<name>.md` with `hooks` (YAML) in its front matter.
fn project_agent(s: &Sandbox, name: &str, hooks: &str) {
    s.write(&format!(".claude/agents/{name}.md"), &agent_text(name, hooks));
}

fn agent_text(name: &str, hooks: &str) -> String {
    format!("---\nname: {name}\ndescription: Reviews diffs\nhooks:\n{hooks}---\nYou review.\n")
}

fn check_json(s: &Sandbox) -> (Option<i32>, Value) {
    let out = s.spine().args(["hooks", "check", "--output-format", "json"]).output().expect("runs");
    (out.status.code(), json(&out))
}

fn findings_of(report: &Value, severity: &str) -> Vec<Value> {
    let all = report["findings"].as_array().cloned().unwrap_or_default();
    all.into_iter().filter(|f| f["severity"] == severity).collect()
}

#[test]
fn hooks_check_names_the_agent_file_and_json_path_of_an_invalid_agent_hook_and_exits_2() {
    let s = Sandbox::new();
    s.trust();
    project_agent(&s, "reviewer", "  PreToolUse: [{hooks: [{type: command, command: \"true\", timeout: \"x\"}]}]\n");
    let (code, report) = check_json(&s);
    assert_eq!(code, Some(2), "{report}");
    let errors = findings_of(&report, "error");
    assert_eq!(errors.len(), 1, "{report}");
    let file = s.project().join(".claude/agents/reviewer.md").display().to_string();
    assert_eq!(errors[0]["source"], json!(file));
    assert_eq!(errors[0]["path"], "hooks.PreToolUse[0].hooks[0].timeout");
    assert!(errors[0]["message"].as_str().is_some_and(|m| m.contains("agent `reviewer`")), "{report}");

    let out = s.spine().args(["hooks", "check"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let text = stdout(&out);
    assert!(text.contains(&format!("error: {file}: hooks.PreToolUse[0].hooks[0].timeout: ")), "{text}");
    assert!(text.contains("FAILED:"), "{text}");
}

#[test]
fn hooks_check_runs_the_settings_hook_checks_on_agent_hooks_and_counts_them() {
    let s = Sandbox::new();
    s.trust();
    project_agent(&s, "reviewer", "  Stop: [{hooks: [{type: command, command: \"./missing-check.sh\"}]}]\n");
    let (code, report) = check_json(&s);
    assert_eq!(code, Some(2), "a missing program is an error, as in the settings: {report}");
    let errors = findings_of(&report, "error");
    assert_eq!(errors[0]["path"], "hooks.Stop[0].hooks[0].command", "{report}");
    assert!(errors[0]["message"].as_str().is_some_and(|m| m.contains("./missing-check.sh")), "{report}");

    s.write("missing-check.sh", "#!/bin/sh\nexit 0\n");
    let script = s.project().join("missing-check.sh");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let out = s.spine().args(["hooks", "check"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(text.contains("1 hook(s) of 1 agent definition(s); 0 error(s)"), "{text}");
}

#[test]
fn hooks_check_warns_that_an_untrusted_projects_agent_hooks_do_not_run() {
    let s = Sandbox::new();
    project_agent(&s, "reviewer", "  PreToolUse: [{matcher: Bash, hooks: [{type: command, command: \"true\"}]}]\n");
    let (code, report) = check_json(&s);
    assert_eq!(code, Some(0), "{report}");
    let warnings = findings_of(&report, "warning");
    assert!(
        warnings.iter().any(|w| w["message"]
            .as_str()
            .is_some_and(|m| m.contains("the project is untrusted") && m.contains("agent `reviewer`"))),
        "{report}"
    );
}

#[test]
fn hooks_list_shows_each_agents_hooks_under_its_name_as_its_subagent_runs_them() {
    let s = Sandbox::new();
    s.trust();
    s.write(".spine/settings.json", r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#);
    project_agent(
        &s,
        "reviewer",
        "  Stop: [{hooks: [{type: command, command: \"echo reviewed\"}]}]\n  PreToolUse: [{matcher: Bash, hooks: [{type: command, command: \"echo guard\"}]}]\n",
    );
    // A user's definition, and one without hooks (nothing to list).
    let user_agents = s.home().join("agents");
    std::fs::create_dir_all(&user_agents).expect("dir");
    let hooks = "  PostToolUse: [{hooks: [{type: command, command: \"echo audited\"}]}]\n";
    std::fs::write(user_agents.join("auditor.md"), agent_text("auditor", hooks)).expect("write");
    s.write(".claude/agents/plain.md", "---\nname: plain\ndescription: d\n---\nP\n");

    let out = s.spine().args(["hooks", "list"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let reviewer = text.find("hooks of agent `reviewer` (run only inside a `reviewer` subagent").expect(&text);
    let auditor = text.find("hooks of agent `auditor`").expect(&text);
    assert!(text.find("Stop ").is_some_and(|settings| settings < reviewer), "settings' hooks first: {text}");
    let reviewer_part = &text[reviewer..auditor];
    assert!(reviewer_part.contains("SubagentStop") && reviewer_part.contains("echo reviewed"), "{text}");
    assert!(reviewer_part.contains("hooks.Stop[0].hooks[0]"), "the path as written: {text}");
    assert!(reviewer_part.contains("PreToolUse") && reviewer_part.contains("echo guard"), "{text}");
    assert!(text[auditor..].contains("echo audited"), "{text}");
    assert!(!text.contains("plain"), "{text}");

    let out = s.spine().args(["hooks", "list", "--output-format", "json"]).output().expect("runs");
    let listed = json(&out);
    let rows = listed["agent_hooks"].as_array().cloned().unwrap_or_default();
    let stop = rows.iter().find(|r| r["command"] == "echo reviewed").expect("the reviewer's Stop hook");
    assert_eq!((&stop["agent"], &stop["event"]), (&json!("reviewer"), &json!("SubagentStop")));
    assert_eq!(stop["runs_in"], "subagent reviewer");
    assert_eq!(stop["not_run"], Value::Null);
    assert_eq!(listed["hooks"].as_array().map(Vec::len), Some(1), "the settings' hooks stay apart: {listed}");
}

#[test]
fn hooks_list_marks_an_untrusted_projects_agent_hooks_as_not_run() {
    let s = Sandbox::new();
    project_agent(&s, "reviewer", "  PreToolUse: [{matcher: Bash, hooks: [{type: command, command: \"true\"}]}]\n");
    let out = s.spine().args(["hooks", "list", "--output-format", "json"]).output().expect("runs");
    let listed = json(&out);
    assert_eq!(listed["agent_hooks"][0]["not_run"], "the project is untrusted", "{listed}");
    let out = s.spine().args(["hooks", "list"]).output().expect("runs");
    assert!(stdout(&out).contains("NOT RUN: the project is untrusted"), "{}", stdout(&out));
}

#[test]
fn slash_hooks_in_a_session_lists_agent_hooks_as_hooks_list_does() {
    let s = Sandbox::new();
    s.trust();
    project_agent(&s, "reviewer", "  Stop: [{hooks: [{type: command, command: \"echo reviewed\"}]}]\n");
    let tmux = chat_session(&s, &s.script(json!([])), &[], "");
    tmux.send_line("/hooks");
    let screen = tmux.wait_for("hooks of agent `reviewer`");
    assert!(screen.contains("no hooks configured in the settings"), "{screen}");
    tmux.wait_for("echo reviewed");
    tmux.send_line("/exit");
    tmux.wait_for("EXIT=0");
}
