//! The `hooks` key of the settings: errors that name the file, the JSON path and the reason;
//! warnings for what spine will not run.

use serde_json::{Value, json};
use spine_hooks::HookConfig;
use spine_hooks::config::Handler;

use crate::support::*;

fn errors(p: &Project, layer: Value) -> Vec<String> {
    match HookConfig::from_settings(&p.settings(&[layer])) {
        Ok(_) => Vec::new(),
        Err(e) => e.errors.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn a_bad_value_names_the_file_the_json_path_and_the_reason() {
    let p = Project::new();
    let layer = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [command("true"), {"type": "command", "command": "x", "timeout": "soon"}]}]}});
    let errs = errors(&p, layer);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].starts_with(&p.path("settings-1.json")), "{}", errs[0]);
    assert!(
        errs[0].contains("hooks.PreToolUse[0].hooks[1].timeout: expected a positive number of seconds"),
        "{}",
        errs[0]
    );
}

#[test]
fn near_misses_of_known_events_and_fields_are_errors_with_a_suggestion() {
    let p = Project::new();
    let errs = errors(&p, json!({"hooks": {"PreToolUsee": [{"hooks": [command("true")]}]}}));
    assert!(
        errs[0].contains("hooks.PreToolUsee: unknown hook event `PreToolUsee` (did you mean `PreToolUse`?)"),
        "{errs:?}"
    );
    let errs = errors(
        &p,
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true", "onFail": "closed"}]}]}}),
    );
    assert!(errs[0].contains("hooks.Stop[0].hooks[0].onFail: unknown field `onFail`"), "{errs:?}");
    let errs = errors(
        &p,
        json!({"hooks": {"Stop": [{"hooks": [{"type": "http", "url": "http://127.0.0.1:1/", "persistent": true}]}]}}),
    );
    assert!(errs[0].contains("`persistent` does not apply to `http` hooks"), "{errs:?}");
    let errs = errors(&p, json!({"hooks": {"Stop": [{"matchers": "x", "hooks": []}]}}));
    assert!(errs[0].contains("hooks.Stop[0].matchers: unknown field"), "{errs:?}");
}

#[test]
fn a_hooks_section_written_for_a_newer_claude_code_loads_with_warnings() {
    let p = Project::new();
    let config = p.hook_config(&[json!({"hooks": {
        "EventOfTheFuture": [{"hooks": [command("true")]}],
        "TeammateIdle": [{"hooks": [command("true")]}],
        "PreToolUse": [{"matcher": "Bash", "priority": 3, "hooks": [
            {"type": "command", "command": "true", "onFailure": "block", "shell": "bash",
             "rewakeMessage": "x", "cloud": "skip", "sandboxProfile": "strict"}]}],
    }})]);
    let warnings: Vec<String> = config.warnings.iter().map(ToString::to_string).collect();
    let all = warnings.join("\n");
    assert!(all.contains("hooks.EventOfTheFuture: unknown hook event `EventOfTheFuture` ignored"), "{all}");
    assert!(all.contains("hooks.TeammateIdle: spine does not fire the Claude Code event `TeammateIdle`"), "{all}");
    assert!(all.contains("hooks.PreToolUse[0].priority: unknown field `priority` ignored"), "{all}");
    assert!(all.contains("hooks.PreToolUse[0].hooks[0].sandboxProfile: unknown field"), "{all}");
    assert_eq!(warnings.len(), 4, "{all}");
    assert_eq!(config.handler_count(), 1, "the PreToolUse guard runs");
    assert_eq!(config.groups[0].handlers[0].on_failure, spine_core::hooks::FailurePolicy::Closed, "block is closed");
}

#[test]
fn bad_regexes_and_bad_if_rules_are_errors() {
    let p = Project::new();
    let errs = errors(&p, json!({"hooks": {"PreToolUse": [{"matcher": "Bash(", "hooks": [command("true")]}]}}));
    assert!(
        errs[0].contains("hooks.PreToolUse[0].matcher: matcher `Bash(` is not a valid regular expression"),
        "{errs:?}"
    );
    let errs = errors(
        &p,
        json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "true", "if": "Bash(git *"}]}]}}),
    );
    assert!(errs[0].contains("hooks.PreToolUse[0].hooks[0].if: invalid permission rule"), "{errs:?}");
}

#[test]
fn claude_only_events_are_skipped_with_warnings_and_all_five_handler_types_parse() {
    let p = Project::new();
    let config = p.hook_config(&[json!({"hooks": {
        "TeammateIdle": [{"hooks": [command("true")]}],
        "TaskCreated": [{"hooks": [command("true"), command("false")]}],
        "PreToolUse": [{"hooks": [
            {"type": "agent", "prompt": "is this safe?"},
            {"type": "prompt", "prompt": "is this safe? $ARGUMENTS", "continueOnBlock": false},
            {"type": "mcp_tool", "server": "guard", "tool": "check", "input": {"cmd": "${tool_input.command}"}},
            {"type": "http", "url": "http://127.0.0.1:9/hook"},
            command("true")]}],
        "Stop": [{"hooks": [{"type": "command", "command": "true", "if": "Bash(*)"}]}],
    }})]);
    let warnings: Vec<String> = config.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert!(warnings[0].contains("hooks.TeammateIdle: spine does not fire the Claude Code event `TeammateIdle`"));
    assert!(warnings[1].contains("its 2 hook(s) will not run"));
    assert!(warnings[2].contains("hooks.Stop[0].hooks[0].if: `if` only applies to tool events"));
    assert_eq!(config.handler_count(), 5, "every PreToolUse handler runs");
}

#[test]
fn lists_append_across_layers_in_settings_order_and_exec_forms_parse() {
    let p = Project::new();
    let config = p.hook_config(&[
        hooks("PreToolUse", "Bash", vec![command("first")]),
        hooks("PreToolUse", "Bash", vec![json!({"type": "command", "args": ["/usr/bin/python3", "x.py"]})]),
        hooks("PreToolUse", "Bash", vec![json!({"type": "command", "command": "/usr/bin/python3", "args": ["y.py"]})]),
    ]);
    let targets: Vec<String> = config.groups.iter().flat_map(|g| &g.handlers).map(|h| h.handler.target()).collect();
    assert_eq!(targets, ["first", "/usr/bin/python3 x.py", "/usr/bin/python3 y.py"]);
    assert!(matches!(config.groups[1].handlers[0].handler, Handler::Command { persistent: false, .. }));
}

#[test]
fn disable_all_hooks_keeps_validation_but_runs_nothing() {
    let p = Project::new();
    let config = p.hook_config(&[hooks("PreToolUse", "", vec![command("true")]), json!({"disableAllHooks": true})]);
    assert_eq!(config.groups.len(), 1);
    assert_eq!(config.handler_count(), 0);
    assert!(config.disabled_by.is_some());
}
