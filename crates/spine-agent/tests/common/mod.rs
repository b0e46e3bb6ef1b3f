//! What the integration tests of spine-agent share: settings from one JSON object (as
//! `--settings` gives them) and the options of an agent working in a temporary project.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use spine_agent::{AgentOptions, CommandLine, ModelChoice, Tools};
use spine_core::hooks::HookRegistryBuilder;
use spine_core::permission::DenyApprover;
use spine_protocol::message::Message;
use spine_settings::{Origin, Settings, SettingsLayer};

/// Settings of one `--settings` layer holding `json`.
pub fn settings(json: Value) -> Settings {
    let layer = SettingsLayer {
        origin: Origin::Cli { index: 1, path: None },
        value: json.as_object().cloned().unwrap_or_default(),
    };
    Settings::from_layers(vec![layer]).expect("settings")
}

/// Options for an agent in `dir` with `model`, no code hooks, nobody to answer `ask`, no
/// sandbox.
pub fn options(dir: &Path, model: ModelChoice) -> AgentOptions {
    AgentOptions {
        project: dir.to_path_buf(),
        spine_home: dir.join("home"),
        model,
        hooks: HookRegistryBuilder::new(),
        permission_mode: None,
        max_turns: None,
        allowed_tools: vec![],
        command_line: CommandLine::default(),
        approver: Arc::new(DenyApprover),
        allow_defer: false,
        conversation_id: None,
        tools: Tools::Fresh(vec![]),
        sandbox: None,
        sdk_hooks: None,
        choices: Default::default(),
    }
}

/// The contents of a run's tool results, in order.
#[allow(dead_code)] // not every test target reads results
pub fn tool_results(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool(t) => Some(t.content.clone()),
            _ => None,
        })
        .collect()
}
