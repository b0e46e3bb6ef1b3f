//! The host's control requests: what each asks and what spine answers.
//!
//! Contract:
//! - `initialize`: its `agents` join `--agents` (a name given by both is the host's), its
//!   `hooks` become callback hooks after the settings' ones; the answer lists the custom
//!   commands (`commands`), the model (`models`), the output style, spine's `pid`, and
//!   `hook_on_failure_supported: true` / `hooks_applied: true` (spine honours each matcher's
//!   `onFailure`). A later `initialize` (after a user message started the session, or a second
//!   one) changes nothing: it is answered with `hooks_applied: false` when it carried hooks,
//!   as Claude Code answers it (the SDKs then refuse a fail-closed hook that would never run).
//! - `interrupt`: cancels the running turn (nothing to do between turns); success either way.
//! - `set_permission_mode {mode}`: the session's mode, at once (a mode the managed settings
//!   forbid is an error naming why).
//! - `set_model {model}`: the model from the next turn on, through the PreModelSwitch hooks; a
//!   model spine cannot build, or a hook's refusal, is an error. `null` or `default` is the
//!   configured model.
//! - `mcp_status`: every MCP server with its status.
//! - Any other subtype is Claude Code's `unsupported_request` error naming it: the host learns
//!   spine does not do it.

use std::path::Path;

use serde_json::{Map, Value, json};
use spine_core::runner::Agent;
use spine_protocol::permission::PermissionMode;
use spine_protocol::permission_update::{PermissionUpdate, UpdateDestination};
use spine_settings::Settings;

use super::control::Control;
use super::wire::{self, Inbound};

/// The requests spine answers.
pub(crate) const KNOWN: &[&str] = &["initialize", "interrupt", "set_permission_mode", "set_model", "mcp_status"];

/// A request's `subtype`.
pub(crate) fn subtype(body: &Map<String, Value>) -> &str {
    body.get("subtype").and_then(Value::as_str).unwrap_or("")
}

/// Answers what is neither a request nor a user message: a malformed line gets an error (a
/// `control_response` when it carried a request id, else a `system` `error` line).
pub(crate) fn stray(control: &Control, message: Inbound) {
    match message {
        Inbound::Malformed { reason, request_id: Some(id) } => control.emit(&wire::error(&id, &reason)),
        Inbound::Malformed { reason, request_id: None } => {
            control.emit(&json!({"type": "system", "subtype": "error", "error": format!("ignored a line: {reason}")}));
        }
        Inbound::Environment => eprintln!("note: update_environment_variables is ignored by spine"),
        Inbound::KeepAlive | Inbound::Cancel | Inbound::Response { .. } => {}
        Inbound::User(_) | Inbound::Request { .. } => {}
    }
}

/// What `initialize` asks for.
#[derive(Debug, Default)]
pub(crate) struct Initialize {
    /// Subagent definitions as `--agents` JSON, the host's over the flag's.
    pub agents: Option<String>,
    /// The `hooks` object (event → matcher groups with callback ids), when any.
    pub hooks: Option<Value>,
    /// `systemPrompt` (a string, or a list of strings joined by blank lines) and
    /// `appendSystemPrompt`: the TypeScript SDK sends them here instead of as flags.
    pub system_prompt: Option<String>,
    pub append_system_prompt: Option<String>,
    /// `sdkMcpServers`: the host's in-process MCP servers, by name (the TypeScript SDK names
    /// them here instead of in `--mcp-config`).
    pub sdk_mcp_servers: Vec<String>,
}

impl Initialize {
    /// Reads the request; `flag_agents` is `--agents`. An error names the field.
    pub(crate) fn read(body: &Map<String, Value>, flag_agents: Option<&str>) -> Result<Initialize, String> {
        let agents = match body.get("agents") {
            None | Some(Value::Null) => flag_agents.map(str::to_owned),
            Some(Value::Object(host)) => {
                let mut merged = match flag_agents {
                    Some(text) => match serde_json::from_str::<Value>(text) {
                        Ok(Value::Object(map)) => map,
                        _ => return Err("--agents must be a JSON object to be merged with initialize's agents".into()),
                    },
                    None => Map::new(),
                };
                merged.extend(host.clone());
                Some(Value::Object(merged).to_string())
            }
            Some(_) => return Err("`agents` must be an object of agent definitions".to_owned()),
        };
        let hooks = match body.get("hooks") {
            None | Some(Value::Null) => None,
            Some(Value::Object(hooks)) if hooks.is_empty() => None,
            Some(hooks @ Value::Object(_)) => Some(hooks.clone()),
            Some(_) => return Err("`hooks` must be an object of events".to_owned()),
        };
        let text = |key: &str| -> Result<Option<String>, String> {
            match body.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(Value::Array(parts)) => parts
                    .iter()
                    .map(|p| p.as_str().ok_or_else(|| format!("`{key}` must be a string or a list of strings")))
                    .collect::<Result<Vec<_>, _>>()
                    .map(|parts| Some(parts.join("\n\n"))),
                Some(_) => Err(format!("`{key}` must be a string or a list of strings")),
            }
        };
        let sdk_mcp_servers = match body.get("sdkMcpServers") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(names)) => names
                .iter()
                .map(|n| n.as_str().map(str::to_owned).ok_or("`sdkMcpServers` must be a list of names"))
                .collect::<Result<_, _>>()?,
            Some(_) => return Err("`sdkMcpServers` must be a list of names".to_owned()),
        };
        Ok(Initialize {
            agents,
            hooks,
            system_prompt: text("systemPrompt")?,
            append_system_prompt: text("appendSystemPrompt")?,
            sdk_mcp_servers,
        })
    }

    /// `sdkMcpServers` as a `--mcp-config` value (`{"mcpServers": {NAME: {"type": "sdk"}}}`).
    pub(crate) fn sdk_mcp_config(&self) -> Option<String> {
        if self.sdk_mcp_servers.is_empty() {
            return None;
        }
        let servers: Map<String, Value> =
            self.sdk_mcp_servers.iter().map(|name| (name.clone(), json!({"type": "sdk", "name": name}))).collect();
        Some(json!({"mcpServers": servers}).to_string())
    }
}

/// The answer to `initialize` (`hooks_applied` when it carried hooks, as Claude Code's).
pub(crate) fn initialized(agent: &Agent, settings: &Settings, project: &Path, home: &Path, hooks: bool) -> Value {
    let user_home = spine_protocol::home::user_home();
    let dirs = crate::chat::custom::command_dirs(project, home, user_home.as_deref());
    let (mut commands, _) = crate::chat::custom::load(&dirs, settings.trust.is_trusted());
    let _ = crate::chat::plugin_commands::add(&mut commands, &settings.plugins, project);
    let commands: Vec<Value> = commands
        .iter()
        .map(|c| {
            json!({"name": c.name, "description": c.description,
                "argumentHint": c.argument_hint.clone().unwrap_or_default(), "builtin": false})
        })
        .collect();
    let agents: Vec<Value> = agent
        .config
        .subagents
        .iter()
        .flat_map(|s| &s.definitions)
        .map(|d| json!({"name": d.name, "description": d.description}))
        .collect();
    let model = agent.model.model();
    let mut answer = json!({
        "commands": commands,
        "agents": agents,
        "output_style": "default",
        "available_output_styles": ["default"],
        "models": [{"value": model, "resolvedModel": model, "displayName": model, "description": "the session's model"}],
        "account": {},
        "pid": std::process::id(),
        "current_permission_mode": agent.policy.mode().as_str(),
        "hook_on_failure_supported": true,
        "session_state": "idle",
        "spine_version": env!("CARGO_PKG_VERSION"),
    });
    if hooks && let Some(map) = answer.as_object_mut() {
        map.insert("hooks_applied".to_owned(), json!(true));
    }
    answer
}

/// `set_permission_mode`: the mode now — answered `{"mode"}`, then Claude Code's `status` line
/// naming the new mode — or why not.
pub(crate) fn set_permission_mode(
    agent: &Agent,
    id: &str,
    body: &Map<String, Value>,
    control: &Control,
    session_id: &str,
) {
    match change_mode(agent, body) {
        Ok(mode) => {
            control.emit(&wire::success(id, json!({"mode": mode.as_str()})));
            control
                .emit(&json!({"type": "system", "subtype": "status", "status": null, "permissionMode": mode.as_str(),
                "uuid": uuid::Uuid::new_v4().to_string(), "session_id": session_id}));
        }
        Err(why) => control.emit(&wire::error(id, &why)),
    }
}

fn change_mode(agent: &Agent, body: &Map<String, Value>) -> Result<PermissionMode, String> {
    let Some(text) = body.get("mode").and_then(Value::as_str) else {
        return Err("set_permission_mode needs a string `mode`".to_owned());
    };
    let mode: PermissionMode = text.parse().map_err(|e| format!("mode `{text}`: {e}"))?;
    let update = PermissionUpdate::SetMode { mode, destination: UpdateDestination::Session };
    let applied = agent.policy.apply_updates(&[update], &agent.config.workspace, &agent.config.cwd);
    match applied.first() {
        Some(entry) if entry.applied => Ok(mode),
        Some(entry) => Err(format!("mode `{text}` refused: {}", entry.note.as_deref().unwrap_or("not allowed"))),
        None => Err("mode not applied".to_owned()),
    }
}

/// `mcp_status`: the servers and their statuses.
pub(crate) fn mcp_status(servers: &[(String, String)]) -> Value {
    let list: Vec<Value> = servers.iter().map(|(name, status)| json!({"name": name, "status": status})).collect();
    json!({"mcpServers": list})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn initialize_agents_are_merged_over_the_flags_agents() {
        let flag = r#"{"a": {"description": "flag a", "prompt": "x"}, "b": {"description": "flag b", "prompt": "y"}}"#;
        let init =
            Initialize::read(&body(json!({"agents": {"b": {"description": "host b", "prompt": "z"}}})), Some(flag));
        let agents: Value =
            serde_json::from_str(&init.ok().and_then(|i| i.agents).unwrap_or_default()).unwrap_or_default();
        assert_eq!(agents["a"]["description"], "flag a");
        assert_eq!(agents["b"]["description"], "host b");
    }

    #[test]
    fn initialize_with_hooks_of_the_wrong_shape_is_an_error_naming_the_field() {
        let e = Initialize::read(&body(json!({"hooks": [1]})), None).err().unwrap_or_default();
        assert!(e.contains("`hooks`"), "{e}");
        let none = Initialize::read(&body(json!({"hooks": null})), None).ok().and_then(|i| i.hooks);
        assert!(none.is_none());
    }
}
