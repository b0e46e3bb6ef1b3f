//! The settings' `env` through the public builder: every agent gives its children — Bash and
//! the settings' command hooks — the `env` of its own settings, whether it was built with a
//! model spec or with `.model_client(...)`, and two agents of one process with different
//! settings never see each other's.

// A test target links every dependency of its package; the lint checks the library's own list.
#![allow(unused_crate_dependencies)]

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use spine::{AgentBuilder, Built, RunRequest, Settings, Transcript};
use spine_settings::{Origin, SettingsLayer};
use spine_testkit::script::{Script, calls, text};

/// `--settings` with `env: {SPINE_T_MARK: mark}` and a PreToolUse command hook on Bash that
/// appends the value it sees to `hook.log` in the project.
fn settings(mark: &str) -> Settings {
    let value = json!({
        "env": {"SPINE_T_MARK": mark},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "echo \"hook saw $SPINE_T_MARK\" >> \"$CLAUDE_PROJECT_DIR/hook.log\""}
        ]}]},
    });
    let layer = SettingsLayer {
        origin: Origin::Cli { index: 1, path: None },
        value: value.as_object().cloned().expect("settings object"),
    };
    Settings::from_layers(vec![layer]).expect("settings")
}

/// The replies of a run that calls Bash once, then answers.
fn bash_then_done() -> serde_json::Value {
    json!([
        {"tool_calls": [{"id": "c1", "name": "Bash", "arguments": {"command": "echo \"bash saw $SPINE_T_MARK\""}}]},
        {"text": "done"}
    ])
}

/// A `scripted:FILE` model spec answering with `bash_then_done`.
fn scripted_spec(dir: &Path) -> String {
    let path = dir.join("script.json");
    spine_testkit::script::write_script_file(&path, bash_then_done()).expect("script");
    format!("scripted:{}", path.display())
}

/// The same replies as a client built in code.
fn scripted_client() -> Arc<Script> {
    Script::new(vec![calls(&[("c1", "Bash", json!({"command": "echo \"bash saw $SPINE_T_MARK\""}))]), text("done")])
}

fn builder(project: &Path, mark: &str) -> AgentBuilder {
    AgentBuilder::new(project).settings(settings(mark)).allow("Bash").spine_home(project.join("home"))
}

/// Runs one prompt; the tool results, and what the hook wrote.
async fn run(built: &Built, project: &Path) -> (Vec<String>, String) {
    let request = RunRequest::new("s1", Transcript::discard("s1.jsonl")).prompt(Some("go".to_owned()));
    let outcome = built.agent.run(request).await;
    assert_eq!(outcome.result, "done");
    let results = outcome
        .messages
        .iter()
        .filter_map(|m| match m {
            spine::Message::Tool(t) => Some(t.content.clone()),
            _ => None,
        })
        .collect();
    (results, std::fs::read_to_string(project.join("hook.log")).unwrap_or_default())
}

#[tokio::test]
async fn two_agents_of_one_process_each_give_their_own_settings_env_to_bash_and_hooks() {
    let (one_dir, two_dir) = (tempfile::tempdir().expect("tmp"), tempfile::tempdir().expect("tmp"));
    // Both are built before either runs: building the second changes nothing of the first.
    let one = builder(one_dir.path(), "one").model(scripted_spec(one_dir.path())).build().expect("builds");
    let two = builder(two_dir.path(), "two").model_client(scripted_client()).build().expect("builds");
    let ((one_results, one_hook), (two_results, two_hook)) =
        tokio::join!(run(&one, one_dir.path()), run(&two, two_dir.path()));
    assert_eq!(one_results.len(), 1, "{one_results:?}");
    assert!(one_results[0].contains("bash saw one"), "{one_results:?}");
    assert_eq!(one_hook, "hook saw one\n");
    assert_eq!(two_results.len(), 1, "{two_results:?}");
    assert!(two_results[0].contains("bash saw two"), "{two_results:?}");
    assert_eq!(two_hook, "hook saw two\n");
    one.shutdown().await;
    two.shutdown().await;
}

#[tokio::test]
async fn an_agent_built_with_a_model_client_gives_its_settings_env_to_bash_and_hooks() {
    let dir = tempfile::tempdir().expect("tmp");
    let built = builder(dir.path(), "client").model_client(scripted_client()).build().expect("builds");
    let (results, hook) = run(&built, dir.path()).await;
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].contains("bash saw client"), "{results:?}");
    assert_eq!(hook, "hook saw client\n");
    built.shutdown().await;
}
