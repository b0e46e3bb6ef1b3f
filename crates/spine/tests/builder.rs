//! The builder through its public API, on the scripted model: a Rust hook behind a matcher
//! governs the calls it matches, a deny rule wins over a hook's allow, the settings' hooks run
//! after the Rust ones (a block of theirs stops the chain before the settings' hooks, with a model
//! given as a spec or as a client), and a matcher that does not parse is a build error naming it.

// A test target links every dependency of its package; the lint checks the library's own list.
#![allow(unused_crate_dependencies)]

use serde_json::json;
use spine::hooks::{HookOutput, PermissionSuggestion, PreToolUse, PreToolUseAction, PreToolUseInput};
use spine::{AgentBuilder, BuildError, HookContext, RunRequest, Transcript, hook_fn};

fn scripted(dir: &std::path::Path, turns: serde_json::Value) -> String {
    let path = dir.join("script.json");
    spine_testkit::script::write_script_file(&path, turns).expect("script");
    format!("scripted:{}", path.display())
}

fn run_request(prompt: &str) -> RunRequest {
    RunRequest::new("s1", Transcript::discard("s1.jsonl")).prompt(Some(prompt.to_owned()))
}

fn results(outcome: &spine::RunOutcome) -> Vec<String> {
    outcome
        .messages
        .iter()
        .filter_map(|m| match m {
            spine::Message::Tool(t) => Some(t.content.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_rust_hook_behind_a_matcher_blocks_the_calls_it_matches_and_a_deny_rule_wins_over_an_allow() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = scripted(
        dir.path(),
        json!([
            {"tool_calls": [
                {"id": "c1", "name": "Bash", "arguments": {"command": "echo blocked-by-hook"}},
                {"id": "c2", "name": "Read", "arguments": {"file_path": "secret.txt"}},
                {"id": "c3", "name": "Glob", "arguments": {"pattern": "*.txt"}}
            ]},
            {"text": "done"}
        ]),
    );
    std::fs::write(dir.path().join("secret.txt"), "s3cret").expect("file");
    let built = AgentBuilder::new(dir.path())
        .model(model)
        .on_matching::<PreToolUse>(
            "Bash",
            "no-bash",
            hook_fn(|_: &HookContext, _: &PreToolUseInput| {
                Ok(HookOutput::new(PreToolUseAction::Block {
                    reason: "no shell here".into(),
                    additional_context: None,
                }))
            }),
        )
        .on::<PreToolUse>(
            "allow-everything",
            hook_fn(|_: &HookContext, _: &PreToolUseInput| {
                Ok(HookOutput::new(PreToolUseAction::Proceed {
                    permission: PermissionSuggestion::Allow { reason: None },
                    updated_input: None,
                    additional_context: None,
                }))
            }),
        )
        .deny("Read(./secret.txt)")
        .spine_home(dir.path().join("home"))
        .build()
        .expect("builds");
    let outcome = built.agent.run(run_request("go")).await;
    let results = results(&outcome);
    assert_eq!(outcome.result, "done");
    assert!(results[0].starts_with("Error [hook_blocked]") && results[0].contains("no shell here"), "{results:?}");
    assert!(results[1].starts_with("Error [permission_denied]"), "a deny rule wins over a hook's allow: {results:?}");
    assert!(results[2].contains("secret.txt"), "the hook's allow lets Glob run: {results:?}");
    built.shutdown().await;
}

#[test]
fn a_matcher_that_does_not_parse_is_a_build_error_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let result = AgentBuilder::new(dir.path())
        .model(scripted(dir.path(), json!([{"text": "x"}])))
        .on_matching::<PreToolUse>(
            "Bash(",
            "bad",
            hook_fn(|_: &HookContext, _: &PreToolUseInput| Ok(HookOutput::new(PreToolUseAction::default()))),
        )
        .build();
    match result {
        Err(BuildError::Matcher { matcher, .. }) => assert_eq!(matcher, "Bash("),
        Err(other) => panic!("another error: {other}"),
        Ok(_) => panic!("built with a bad matcher"),
    }
}

/// Settings whose PreToolUse command hook on Bash appends the command it sees to `hook.log`.
fn logging_settings() -> spine::Settings {
    let value = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "jq -r .tool_input.command >> \"$CLAUDE_PROJECT_DIR/hook.log\""}
    ]}]}});
    let layer = spine_settings::SettingsLayer {
        origin: spine_settings::Origin::Cli { index: 1, path: None },
        value: value.as_object().cloned().expect("settings object"),
    };
    spine::Settings::from_layers(vec![layer]).expect("settings")
}

#[tokio::test]
async fn rust_hooks_run_before_the_settings_hooks_whether_the_model_is_a_spec_or_a_client() {
    let replies = json!([
        {"tool_calls": [
            {"id": "c1", "name": "Bash", "arguments": {"command": "echo forbidden"}},
            {"id": "c2", "name": "Bash", "arguments": {"command": "echo fine"}}
        ]},
        {"text": "done"}
    ]);
    for with_client in [false, true] {
        let dir = tempfile::tempdir().expect("tempdir");
        let builder = AgentBuilder::new(dir.path());
        let builder = if with_client {
            use spine_testkit::script::{Script, calls, text};
            let call = |command: &str| json!({"command": command});
            let turns =
                vec![calls(&[("c1", "Bash", call("echo forbidden")), ("c2", "Bash", call("echo fine"))]), text("done")];
            builder.model_client(Script::new(turns))
        } else {
            builder.model(scripted(dir.path(), replies.clone()))
        };
        let built = builder
            .settings(logging_settings())
            .on_matching::<PreToolUse>(
                "Bash",
                "no-forbidden",
                hook_fn(|_: &HookContext, input: &PreToolUseInput| {
                    let forbidden = input.tool_input["command"].as_str().unwrap_or_default().contains("forbidden");
                    Ok(HookOutput::new(if forbidden {
                        PreToolUseAction::Block { reason: "forbidden".into(), additional_context: None }
                    } else {
                        PreToolUseAction::default()
                    }))
                }),
            )
            .allow("Bash")
            .spine_home(dir.path().join("home"))
            .build()
            .expect("builds");
        let outcome = built.agent.run(run_request("go")).await;
        let results = results(&outcome);
        assert!(results[0].starts_with("Error [hook_blocked]"), "{results:?}");
        assert!(results[1].contains("fine"), "{results:?}");
        let log = std::fs::read_to_string(dir.path().join("hook.log")).unwrap_or_default();
        assert_eq!(
            log, "echo fine\n",
            "the Rust hook's block stops the chain before the settings' hook (client: {with_client})"
        );
        built.shutdown().await;
    }
}
