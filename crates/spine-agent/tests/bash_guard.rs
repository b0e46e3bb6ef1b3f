//! No tool that runs a program is reachable without passing the hooks a `Bash` guard sees.
//!
//! The registry an agent is assembled with is enumerated: every tool whose effect is
//! `Execute` either declares the argument holding its command line (and then a PreToolUse
//! hook on matcher `Bash` blocks a call of it, through the same pipeline a run uses), or is one
//! of the tools named here that start no program.

#![allow(unused_crate_dependencies)]

mod common;

use std::sync::Arc;

use common::{options, settings};
use serde_json::{Map, Value, json};
use spine_agent::{ModelChoice, assemble};
use spine_core::CancellationToken;
use spine_core::observer::NullObserver;
use spine_core::runner::SingleCall;
use spine_core::trace::Trace;
use spine_protocol::tool::{Effect, ErrorCode, ToolArguments, ToolCall};

/// `Execute` tools that start no program: they signal or stop one a command tool started
/// (and that start passed the hooks).
const STARTS_NO_PROGRAM: &[&str] = &["command_run_terminate", "process_stop"];

/// Arguments that satisfy `schema`, with `command_line` in the command argument.
fn sample_args(schema: &Value, command_key: &str, command_line: &str) -> Map<String, Value> {
    let mut args = Map::new();
    let required = schema["required"].as_array().cloned().unwrap_or_default();
    for name in required.iter().filter_map(Value::as_str) {
        let value = match schema["properties"][name]["type"].as_str() {
            Some("integer" | "number") => json!(1),
            Some("boolean") => json!(false),
            _ => json!("r1"),
        };
        args.insert(name.to_owned(), value);
    }
    args.insert(command_key.to_owned(), json!(command_line));
    args
}

#[test]
fn every_tool_that_runs_a_program_is_seen_by_a_bash_guard() {
    let dir = tempfile::tempdir().expect("dir");
    let guard = json!({
        "permissions": {"allow": ["Bash", "exec_command", "process_exec", "write_stdin"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
            "command": "cmd=$(jq -r .tool_input.command); [[ \"$cmd\" == *\"rm -rf\"* ]] && { echo \"refused: $cmd\" >&2; exit 2; }; exit 0"}]}]}
    });
    let assembled = assemble(&settings(guard), options(dir.path(), ModelChoice::ToolCallsOnly)).expect("assembled");
    let registry = Arc::clone(&assembled.agent.tools);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let mut guarded = Vec::new();
    for name in registry.names().map(str::to_owned).collect::<Vec<_>>() {
        let handle = registry.lookup(&name).expect("registered");
        if registry.effect(handle) != Effect::Execute {
            continue;
        }
        let Some(key) = registry.tool(handle).command_argument() else {
            assert!(
                STARTS_NO_PROGRAM.contains(&name.as_str()),
                "`{name}` runs programs but declares no command argument: a Bash guard would not see it"
            );
            continue;
        };
        let args = sample_args(&registry.spec(handle).input_schema, key, "rm -rf victim");
        let outcome = runtime.block_on(assembled.agent.run_tool_call(SingleCall {
            call: ToolCall {
                id: format!("c-{name}"),
                name: name.clone(),
                arguments: ToolArguments::Json(Value::Object(args)),
            },
            session_id: "s".into(),
            transcript_path: dir.path().join("t.jsonl"),
            visibility: None,
            cancel: CancellationToken::new(),
            observer: Arc::new(NullObserver),
            trace: Trace::default(),
            progress: None,
            reports: None,
        }));
        let error = outcome.error.expect("blocked");
        assert_eq!(error.code, ErrorCode::HookBlocked, "{name}: {}", error.message);
        assert!(error.message.contains("refused: rm -rf victim"), "{name}: {}", error.message);
        guarded.push(name);
    }
    guarded.sort();
    assert_eq!(guarded, ["Bash", "exec_command", "process_exec", "write_stdin"]);
}
