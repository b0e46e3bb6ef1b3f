//! spine-agent's public API: one `assemble` call gives an agent whose model is the one chosen
//! (settings, spec, client or none), whose code hooks run before the settings' hooks, whose
//! run defaults and child environment come from the settings, and whose errors keep their
//! sources; `validate` reports what a run would refuse.

// Test targets link every dependency of the package; each one is used by the library or here.
#![allow(unused_crate_dependencies)]

mod common;

use std::error::Error as _;

use common::{options, settings, tool_results};
use serde_json::json;
use spine_agent::{AssemblyError, ModelChoice, RunDefaults, assemble, validate};
use spine_core::hooks::{HookContext, hook_fn};
use spine_core::runner::RunRequest;
use spine_core::session::Transcript;
use spine_protocol::compaction::{CompactStrategy, TokenEstimatorKind};
use spine_protocol::hook::{HookOutput, PreToolUse, PreToolUseAction, PreToolUseInput};
use spine_settings::Settings;
use spine_testkit::script::{Script, calls, text};

#[tokio::test]
async fn a_client_given_by_the_caller_runs_with_code_hooks_first_and_the_settings_env_in_bash() {
    let dir = tempfile::tempdir().expect("dir");
    let s = settings(json!({
        "env": {"SPINE_T_AGENT": "from-settings"},
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "jq -r .tool_input.command >> \"$CLAUDE_PROJECT_DIR/settings-hook.log\""}
        ]}]}
    }));
    let script = Script::new(vec![
        calls(&[
            ("c1", "Bash", json!({"command": "echo blocked-by-code"})),
            ("c2", "Bash", json!({"command": "echo \"env=$SPINE_T_AGENT\""})),
        ]),
        text("done"),
    ]);
    let mut o = options(dir.path(), ModelChoice::Client(script));
    o.hooks.on::<PreToolUse>(
        "code-guard",
        hook_fn(|_: &HookContext, input: &PreToolUseInput| {
            let blocked = input.tool_input["command"].as_str().unwrap_or_default().contains("blocked-by-code");
            Ok(HookOutput::new(if blocked {
                PreToolUseAction::Block { reason: "code hook".into(), additional_context: None }
            } else {
                PreToolUseAction::default()
            }))
        }),
    );

    let assembled = assemble(&s, o).expect("assembled");
    assert_eq!(assembled.agent.model.model(), "script", "the testkit client the caller gave");
    let outcome =
        assembled.agent.run(RunRequest::new("s1", Transcript::discard("s1.jsonl")).prompt(Some("go".to_owned()))).await;

    let results = tool_results(&outcome.messages);
    assert!(results[0].contains("code hook"), "{results:?}");
    assert!(results[1].contains("env=from-settings"), "{results:?}");
    let log = std::fs::read_to_string(dir.path().join("settings-hook.log")).unwrap_or_default();
    assert_eq!(log, "echo \"env=$SPINE_T_AGENT\"\n", "the code hook's block came first");
    assembled.tools.families.shutdown().await;
}

#[test]
fn the_context_key_is_read_once_into_the_run_defaults_the_agent_gets() {
    let dir = tempfile::tempdir().expect("dir");
    let s = settings(json!({"context": {
        "compaction_threshold_tokens": 1234,
        "compaction_strategy": "summarize",
        "token_estimator": "words"
    }}));
    let defaults = RunDefaults::of(&s);
    assert_eq!(defaults.token_estimator, TokenEstimatorKind::Words);

    let assembled = assemble(&s, options(dir.path(), ModelChoice::ToolCallsOnly)).expect("assembled");
    let config = &assembled.agent.config;
    assert_eq!(config.compaction_threshold, Some(1234));
    assert_eq!(config.compaction_strategy, CompactStrategy::Summarize);
    assert!(config.estimator.is_some(), "the words estimator");
}

#[test]
fn a_bad_model_spec_names_where_it_was_given_and_keeps_the_parse_error_as_its_source() {
    let dir = tempfile::tempdir().expect("dir");
    let err = assemble(&Settings::default(), options(dir.path(), ModelChoice::Spec("nope".into())))
        .err()
        .expect("a bad spec");
    assert!(matches!(err, AssemblyError::ModelSpec { .. }), "{err:?}");
    assert!(err.to_string().starts_with("--model: "), "{err}");
    assert!(err.source().is_some(), "the parse error is kept");
}

#[test]
fn a_bad_rule_is_an_error_naming_its_file_and_path_with_the_rule_error_as_source() {
    let dir = tempfile::tempdir().expect("dir");
    let s = settings(json!({"permissions": {"deny": ["Read", "Bash(rm"]}}));
    let err = assemble(&s, options(dir.path(), ModelChoice::ToolCallsOnly)).err().expect("a bad rule");
    assert!(matches!(err, AssemblyError::Rule { .. }), "{err:?}");
    assert!(err.to_string().contains("permissions.deny[1]"), "{err}");
    assert!(err.source().is_some());

    let invalid = validate(&s, dir.path(), &dir.path().join("home"));
    assert_eq!(invalid.len(), 1, "{invalid:?}");
    assert_eq!(invalid[0].path.as_deref(), Some("permissions.deny[1]"));
}
