//! `spine hooks test` ([`spine_hooks::fire::fire`]): the merged decision it prints for every
//! event and every kind of outcome (proceed, block, rewrite, failure, halt) is pinned against
//! `fire_merged.json`, so a change in how outcomes are built cannot change what users read.
//! `SPINE_BLESS=1` rewrites the file (review the diff).

use std::sync::Arc;

use serde_json::{Value, json};
use spine_core::hooks::SessionInfo;
use spine_core::registry::ToolRegistryBuilder;
use spine_core::tool::ChildEnv;
use spine_hooks::fire::{FireRequest, TranscriptFile, fire};
use spine_protocol::hook::HookEventName;
use spine_protocol::permission::PermissionMode;

use crate::support::*;

/// A command handler that fails closed.
fn closed(cmd: &str) -> Value {
    json!({"type": "command", "command": cmd, "onFailure": "closed"})
}

/// A command handler printing `answer` as its JSON answer.
fn answers(answer: Value) -> Value {
    command(&format!("printf '%s\\n' '{answer}'"))
}

fn specific(event: &str, fields: Value) -> Value {
    let mut out = json!({"hookEventName": event});
    if let (Some(o), Some(f)) = (out.as_object_mut(), fields.as_object()) {
        o.extend(f.clone());
    }
    json!({"hookSpecificOutput": out})
}

/// (case name, event, handlers, `--input`).
fn cases() -> Vec<(&'static str, HookEventName, Vec<Value>, Option<Value>)> {
    use HookEventName::*;
    let fail = || closed("echo broken >&2; exit 1");
    let block = || command("echo 'not this' >&2; exit 2");
    let halt = || answers(json!({"continue": false, "stopReason": "enough"}));
    vec![
        (
            "session_start_context",
            SessionStart,
            vec![answers(specific("SessionStart", json!({"additionalContext": "hello"})))],
            None,
        ),
        ("session_start_failed", SessionStart, vec![fail()], None),
        ("session_start_halt", SessionStart, vec![halt()], None),
        (
            "prompt_proceed",
            UserPromptSubmit,
            vec![answers(specific("UserPromptSubmit", json!({"additionalContext": "ctx"})))],
            None,
        ),
        ("prompt_block", UserPromptSubmit, vec![block()], None),
        ("prompt_failed", UserPromptSubmit, vec![fail()], None),
        ("prompt_halt", UserPromptSubmit, vec![halt()], None),
        (
            "pre_rewrite_and_allow",
            PreToolUse,
            vec![answers(specific(
                "PreToolUse",
                json!({"permissionDecision": "allow", "updatedInput": {"command": "echo safe"}, "additionalContext": "rewrote"}),
            ))],
            Some(json!({"tool_input": {"command": "echo unsafe"}})),
        ),
        ("pre_block", PreToolUse, vec![block()], None),
        ("pre_failed", PreToolUse, vec![fail()], None),
        ("pre_launch_error", PreToolUse, vec![closed("/nonexistent/guard-xyz")], None),
        (
            "pre_contract_error",
            PreToolUse,
            vec![answers(specific("PreToolUse", json!({"updatedInput": {"cmd": 1}})))],
            None,
        ),
        ("pre_fail_open", PreToolUse, vec![command("echo broken >&2; exit 1")], None),
        ("pre_halt", PreToolUse, vec![halt()], None),
        ("permission_no_decision", PermissionRequest, vec![command("true")], None),
        (
            "permission_allow_rewrite",
            PermissionRequest,
            vec![answers(specific(
                "PermissionRequest",
                json!({"decision": {"behavior": "allow", "updatedInput": {"command": "echo allowed"}}}),
            ))],
            None,
        ),
        (
            "permission_deny",
            PermissionRequest,
            vec![answers(specific("PermissionRequest", json!({"decision": {"behavior": "deny", "message": "no"}})))],
            None,
        ),
        ("permission_failed", PermissionRequest, vec![fail()], None),
        ("permission_halt", PermissionRequest, vec![halt()], None),
        ("post_proceed", PostToolUse, vec![command("true")], None),
        ("post_block", PostToolUse, vec![block(), answers(json!({"decision": "block", "reason": "second"}))], None),
        (
            "post_text",
            PostToolUse,
            vec![answers(specific("PostToolUse", json!({"updatedToolOutput": "replaced text"})))],
            None,
        ),
        (
            "post_structured",
            PostToolUse,
            vec![answers(specific(
                "PostToolUse",
                json!({"updatedToolOutput": {"stdout": "new\n", "stderr": "", "interrupted": false, "exit_code": 0}}),
            ))],
            None,
        ),
        (
            "post_structured_then_text",
            PostToolUse,
            vec![
                answers(specific(
                    "PostToolUse",
                    json!({"updatedToolOutput": {"stdout": "new\n", "stderr": "", "interrupted": false, "exit_code": 0}}),
                )),
                answers(specific("PostToolUse", json!({"updatedToolOutput": "replaced text"}))),
            ],
            None,
        ),
        ("post_failed", PostToolUse, vec![fail()], None),
        ("post_halt", PostToolUse, vec![halt()], None),
        (
            "post_rewrite_then_failed",
            PostToolUse,
            vec![answers(specific("PostToolUse", json!({"updatedToolOutput": "replaced text"}))), fail()],
            None,
        ),
        (
            "post_failure_context",
            PostToolUseFailure,
            vec![answers(specific("PostToolUseFailure", json!({"additionalContext": "try again"})))],
            None,
        ),
        ("post_failure_failed", PostToolUseFailure, vec![fail()], None),
        ("pre_compact_proceed", PreCompact, vec![command("true")], None),
        ("pre_compact_block", PreCompact, vec![block()], None),
        ("pre_compact_failed", PreCompact, vec![fail()], None),
        ("post_compact", PostCompact, vec![command("true")], None),
        ("stop_allow", Stop, vec![answers(specific("Stop", json!({"additionalContext": "fine"})))], None),
        ("stop_force_continue", Stop, vec![block()], None),
        ("stop_empty_reason", Stop, vec![command("exit 2")], None),
        ("stop_failed", Stop, vec![fail()], None),
        ("stop_halt", Stop, vec![halt()], None),
        ("session_end", SessionEnd, vec![command("true")], None),
        ("notification", Notification, vec![command("true")], None),
        (
            "elicitation_halt_declines",
            Elicitation,
            vec![answers(json!({"continue": false, "stopReason": "enough",
                "hookSpecificOutput": {"hookEventName": "Elicitation", "action": "accept", "content": {}}}))],
            None,
        ),
    ]
}

#[tokio::test]
async fn hooks_test_prints_the_same_merged_decision_for_every_event_and_outcome() {
    let p = Project::new();
    let mut tools = ToolRegistryBuilder::new();
    spine_tools::register_builtins(&mut tools);
    let tools = Arc::new(tools.build().expect("tools"));
    let mut got = serde_json::Map::new();
    for (name, event, handlers, input) in cases() {
        // One sequential group: the hooks run as a chain, in order.
        let layer = json!({"hooks": {event.as_str(): [{"hooks": handlers, "sequential": true}]}});
        let config = p.hook_config(&[layer]);
        let session = SessionInfo {
            session_id: "s1".into(),
            transcript_path: p.transcript(),
            cwd: p.root.clone(),
            hook_dir: p.root.clone(),
            project_dir: p.root.clone(),
            permission_mode: PermissionMode::Default,
            effort: None,
            env_file: None,
        };
        let request = FireRequest {
            event,
            tool: None,
            input,
            session,
            tools: Arc::clone(&tools),
            transcript: TranscriptFile::Existing,
            models: None,
            agents: None,
            child_env: ChildEnv::default(),
        };
        let report = fire(&config, request).await.expect("fired");
        got.insert(name.to_owned(), json!({"merged": report.merged, "warnings": report.warnings}));
    }
    let got = Value::Object(got);
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/fire_merged.json");
    if std::env::var_os("SPINE_BLESS").is_some() {
        std::fs::write(&golden, serde_json::to_string_pretty(&got).expect("json") + "\n").expect("write golden");
    }
    let want: Value = serde_json::from_str(&std::fs::read_to_string(&golden).expect("golden file")).expect("json");
    for (name, value) in want.as_object().expect("object") {
        assert_eq!(got.get(name), Some(value), "{name}");
    }
    assert_eq!(got, want);
}
