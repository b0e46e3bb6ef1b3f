//! Claude Code's agent flags: `--agents JSON` defines agent types for the session, `--agent
//! NAME` runs the main session as one of them.
//!
//! Contract:
//! - `--agents` is a JSON object `{"NAME": {"description", "prompt", "tools", "model", …}}`; an
//!   entry takes the fields of a definition file ([`crate::agent_def`]) and replaces a file
//!   defining the same name. JSON that does not parse, an entry that is not an object, or a
//!   field that cannot be applied is an [`AgentFlagError`] naming the flag and the JSON path
//!   (`--agents: reviewer.tools[1]: …`); fields not applied and unknown keys are warnings
//!   naming the path.
//! - `--agent NAME` ([`run_as`]): the definition's prompt is appended to the agent prompt layer
//!   (after a blank line, so after `--append-system-prompt`); its `tools` / `disallowedTools`
//!   narrow the visible tools (never widen `--tools`); its `model` replaces the session's
//!   unless the caller chose one (`--model`, or a resumed session's model); its `effort` is
//!   the model's reasoning effort when the model takes one; its `skills` are preloaded; the
//!   tools of its `mcpServers` stay visible beside its `tools`; its `permissionMode` applies
//!   when at least as strict as the session's; its `hooks` run after the session's, as written
//!   (`Stop` stays `Stop`; built by [`crate::agent_scope`]). Its `maxTurns` does not apply to
//!   the main session. An unknown name is an error listing the known agent types.

use std::sync::Arc;

use serde_json::Value;
use spine_core::model::ModelClient;
use spine_core::registry::ToolRegistry;
use spine_core::runner::AgentConfig;
use spine_core::stages::review_tool_call::Visibility;
use spine_core::subagents::{Subagents, narrower_mode};
use spine_protocol::permission::PermissionMode;
use thiserror::Error;

use crate::agent_def::{AgentFile, DefinitionError, Origin, kind, read_fields};

/// A bad `--agents` value or an unknown `--agent` name: a usage error.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AgentFlagError {
    /// `--agents` is not JSON.
    #[error("--agents: not valid JSON: {0}")]
    Json(String),
    /// A value of `--agents` is not an object (`path` is `$` for the whole value).
    #[error("--agents: {path}: expected an object, got {got}")]
    NotAnObject {
        /// The JSON path.
        path: String,
        /// What it is.
        got: &'static str,
    },
    /// An entry's field cannot be applied.
    #[error("--agents: {agent}.{}: {}", .error.path(), reason(.error))]
    Field {
        /// The entry's key.
        agent: String,
        /// The field and why.
        error: DefinitionError,
    },
    /// `--agent` names no agent type.
    #[error("--agent {name}: no such agent; the known agents are: {known}")]
    UnknownAgent {
        /// The name given.
        name: String,
        /// Every known type, comma-separated.
        known: String,
    },
}

fn reason(error: &DefinitionError) -> &str {
    match error {
        DefinitionError::Missing(_) => "missing",
        DefinitionError::Field { reason, .. } => reason,
    }
}

/// Parses `--agents`: its definitions in the object's order, and warnings naming each field
/// not applied or unknown (`--agents: reviewer: …`).
pub fn parse_agents_flag(json: &str) -> Result<(Vec<AgentFile>, Vec<String>), AgentFlagError> {
    let value: Value = serde_json::from_str(json).map_err(|e| AgentFlagError::Json(e.to_string()))?;
    let Value::Object(entries) = value else {
        return Err(AgentFlagError::NotAnObject { path: "$".to_owned(), got: kind(&value) });
    };
    let mut files = Vec::with_capacity(entries.len());
    let mut warnings = Vec::new();
    for (name, entry) in &entries {
        let Value::Object(fields) = entry else {
            return Err(AgentFlagError::NotAnObject { path: name.clone(), got: kind(entry) });
        };
        let (file, notes) = read_fields(fields, Origin::Flag { name })
            .map_err(|error| AgentFlagError::Field { agent: name.clone(), error })?;
        warnings.extend(notes.into_iter().map(|n| format!("--agents: {name}: {n}")));
        files.push(file);
    }
    Ok((files, warnings))
}

/// The main session's model and permission mode, which `--agent` may change.
pub struct MainSession {
    /// The model.
    pub model: Arc<dyn ModelClient>,
    /// The permission mode.
    pub mode: PermissionMode,
    /// Whether the caller chose the model (`--model`): the agent's does not replace it.
    pub model_chosen: bool,
}

/// `--agent NAME`: applies the agent type `name` to the main session (see the module
/// documentation); without a name, `session` unchanged.
pub fn run_as(
    name: Option<&str>,
    subagents: &Subagents,
    tools: &ToolRegistry,
    config: &mut AgentConfig,
    session: MainSession,
) -> Result<MainSession, AgentFlagError> {
    let Some(name) = name else { return Ok(session) };
    let definition = subagents
        .find(name)
        .ok_or_else(|| AgentFlagError::UnknownAgent { name: name.to_owned(), known: subagents.known() })?;
    let prompt = definition.prompt.trim();
    if !prompt.is_empty() {
        let base =
            config.turn.agent_prompt.as_deref().unwrap_or(spine_core::stages::prepare_turn::DEFAULT_AGENT_PROMPT);
        config.turn.agent_prompt = Some(format!("{base}\n\n{prompt}"));
    }
    if definition.tools.is_some() || !definition.disallowed_tools.is_empty() {
        let names: Vec<String> = tools
            .names()
            .filter(|n| config.visibility.allows(n) && definition.allows_tool(n))
            .map(str::to_owned)
            .collect();
        config.turn.allowed_tool_names = names.clone();
        config.visibility = Visibility::Only(names);
    }
    let model = match (&definition.model, session.model_chosen) {
        (Some(own), false) => Arc::clone(own),
        (Some(_) | None, _) => session.model,
    };
    let model = match definition.effort.and_then(|effort| model.with_reasoning_effort(effort)) {
        Some(with_effort) => {
            config.effort = definition.effort;
            with_effort
        }
        None => model,
    };
    config.turn.preloaded_skills = definition.skills.clone();
    config.turn.model_context.likely_model = Some(model.model().to_owned());
    let mode = definition.permission_mode.map_or(session.mode, |m| narrower_mode(session.mode, m));
    Ok(MainSession { model, mode, model_chosen: session.model_chosen })
}

#[cfg(test)]
mod tests {
    use super::*;
    use spine_core::subagents::{AgentTool, SubagentDefinition};
    use spine_core::workspace::Workspace;

    #[test]
    fn a_malformed_agents_value_names_the_flag_and_the_json_path() {
        let err = |json: &str| parse_agents_flag(json).expect_err("malformed").to_string();
        assert!(err("{not json").starts_with("--agents: not valid JSON"), "{}", err("{not json"));
        assert_eq!(err("[1]"), "--agents: $: expected an object, got a list");
        assert_eq!(err(r#"{"r": "x"}"#), "--agents: r: expected an object, got a string");
        assert_eq!(err(r#"{"r": {"prompt": "p"}}"#), "--agents: r.description: missing");
        assert_eq!(
            err(r#"{"r": {"description": "d", "prompt": "p", "tools": ["Read", 1]}}"#),
            "--agents: r.tools[1]: expected a tool name, got a number"
        );
    }

    #[test]
    fn agents_entries_keep_their_order_and_warn_about_fields_not_applied() {
        let (files, warnings) = parse_agents_flag(
            r#"{"b": {"description": "d", "prompt": "p", "memory": "user"}, "a": {"description": "d", "prompt": "q"}}"#,
        )
        .expect("ok");
        let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("--agents: b: `memory` is not applied: "), "{warnings:?}");
    }

    fn config_and_tools() -> (AgentConfig, ToolRegistry, tempfile::TempDir) {
        let dir = tempfile::tempdir().expect("tmp");
        let workspace = Arc::new(Workspace::new(dir.path()).expect("workspace"));
        let mut builder = spine_core::registry::ToolRegistryBuilder::new();
        spine_tools::register_builtins(&mut builder);
        builder.register(AgentTool);
        (AgentConfig::new(workspace), builder.build().expect("tools"), dir)
    }

    fn session() -> MainSession {
        MainSession { model: Arc::new(spine_core::model::NoModel), mode: PermissionMode::Default, model_chosen: false }
    }

    #[test]
    fn running_as_an_agent_appends_its_prompt_narrows_the_tools_preloads_its_skills_and_keeps_a_wider_mode_out() {
        let (mut config, tools, _dir) = config_and_tools();
        config.visibility = Visibility::Only(vec!["Read".into(), "Grep".into(), "Bash".into(), "Agent".into()]);
        let mut reviewer = SubagentDefinition::general_purpose();
        reviewer.name = "reviewer".into();
        reviewer.prompt = "You review.".into();
        reviewer.tools = Some(vec!["Read".into(), "Grep".into(), "Write".into(), "Task".into()]);
        reviewer.disallowed_tools = vec!["Grep".into()];
        reviewer.permission_mode = Some(PermissionMode::BypassPermissions);
        reviewer.skills = vec!["notes".into()];
        let subagents = Subagents { definitions: vec![reviewer], ..Subagents::default() };
        let main = run_as(Some("reviewer"), &subagents, &tools, &mut config, session()).expect("known");
        let prompt = config.turn.agent_prompt.clone().unwrap_or_default();
        assert!(prompt.ends_with("\n\nYou review.") && prompt.len() > "You review.".len() + 2, "{prompt}");
        assert_eq!(config.visibility, Visibility::Only(vec!["Read".into(), "Agent".into()]), "never Write");
        assert_eq!(main.mode, PermissionMode::Default, "a wider mode does not apply");
        assert_eq!(config.turn.preloaded_skills, ["notes"], "its skills are preloaded");
    }

    #[test]
    fn an_unknown_agent_lists_the_known_ones_and_no_agent_changes_nothing() {
        let (mut config, tools, _dir) = config_and_tools();
        let err = run_as(Some("nobody"), &Subagents::default(), &tools, &mut config, session()).err();
        assert_eq!(
            err.map(|e| e.to_string()).as_deref(),
            Some("--agent nobody: no such agent; the known agents are: general-purpose")
        );
        let main = run_as(None, &Subagents::default(), &tools, &mut config, session()).expect("none");
        assert_eq!(
            (main.mode, config.visibility.clone(), config.turn.agent_prompt.clone()),
            (PermissionMode::Default, Visibility::All, None)
        );
    }
}
