//! Several hooks on one event: concurrency with configuration-order merge, chains, dedup,
//! matchers and `if` rules.

use serde_json::{Value, json};

use crate::support::*;

fn context_after(delay: f64, text: &str) -> Value {
    command(&format!(
        "cat > /dev/null; sleep {delay}; echo {text} >> \"$SPINE_PROJECT_DIR/finished.log\"; \
         echo '{{\"hookSpecificOutput\": {{\"hookEventName\": \"PreToolUse\", \
         \"additionalContext\": \"{text}\", \"updatedInput\": {{\"command\": \"echo {text}\"}}}}}}'"
    ))
}

#[tokio::test]
async fn concurrent_hooks_finishing_in_reverse_order_merge_in_configuration_order() {
    let p = Project::new();
    let layers = vec![hooks("PreToolUse", "Bash", vec![context_after(0.6, "first"), context_after(0.0, "second")])];
    let ran = run(&p, Setup { layers, ..Setup::default() }, vec![bash("c1", "echo original"), text("ok")]).await;
    let finished = std::fs::read_to_string(p.root.join("finished.log")).expect("hooks ran");
    assert_eq!(finished, "second\nfirst\n", "they ran at the same time: the second finished first");
    assert_eq!(ran.contexts(), vec!["PreToolUse: first", "PreToolUse: second"]);
    assert_eq!(ran.results()[0].content, "Command exited with status 0.\nsecond", "the later rewrite in order wins");
}

#[tokio::test]
async fn a_sequential_group_is_a_chain_each_hook_seeing_the_previous_rewrite() {
    let p = Project::new();
    let seen = p.path("seen.jsonl");
    let layers = vec![json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "sequential": true, "hooks": [
        context_after(0.0, "rewritten"),
        command(&format!("cat >> {seen}; echo >> {seen}")),
    ]}]}})];
    run(&p, Setup { layers, ..Setup::default() }, vec![bash("c1", "echo original"), text("ok")]).await;
    let lines = json_lines(std::path::Path::new(&seen));
    assert_eq!(lines[0]["tool_input"]["command"], "echo rewritten");
}

#[tokio::test]
async fn the_same_command_declared_in_two_settings_files_runs_once() {
    let p = Project::new();
    let log = p.path("count.log");
    let same = command(&format!("cat > /dev/null; echo x >> {log}"));
    let layers = vec![
        hooks("PreToolUse", "Bash", vec![same.clone()]),
        hooks("PreToolUse", "*", vec![same.clone(), command("cat > /dev/null")]),
    ];
    run(&p, Setup { layers, ..Setup::default() }, vec![bash("c1", "true"), bash("c2", "true"), text("ok")]).await;
    assert_eq!(p.read("count.log").lines().count(), 2, "once per call");
}

#[tokio::test]
async fn regex_exact_and_mcp_matchers_select_hooks_by_tool_name() {
    let p = Project::new();
    let log = p.path("matched.log");
    let tag = |name: &str| command(&format!("cat > /dev/null; echo {name} >> {log}"));
    let layers = vec![json!({"hooks": {"PreToolUse": [
        {"matcher": "^Ba.*h$", "hooks": [tag("regex")]},
        {"matcher": "Read|Write", "hooks": [tag("list")]},
        {"matcher": "mcp__memory__.*", "hooks": [tag("mcp")]},
        {"matcher": "mcp__memory", "hooks": [tag("exact-server-name")]},
    ]}})];
    let replies = vec![bash("c1", "true"), calls(&[("c2", "mcp__memory__store", json!({"key": "k"}))]), text("ok")];
    run(&p, Setup { layers, ..Setup::default() }, replies).await;
    assert_eq!(p.read("matched.log"), "regex\nmcp\n");
}

#[tokio::test]
async fn if_rules_run_a_hook_only_for_matching_calls() {
    let p = Project::new();
    let log = p.path("if.log");
    let hook =
        json!({"type": "command", "command": format!("cat > /dev/null; echo hit >> {log}"), "if": "Bash(git *)"});
    let layers = vec![hooks("PreToolUse", "", vec![hook])];
    let replies = vec![bash("c1", "ls"), bash("c2", "git status || true"), bash("c3", "echo hi"), text("ok")];
    run(&p, Setup { layers, ..Setup::default() }, replies).await;
    assert_eq!(p.read("if.log"), "hit\n");
}
