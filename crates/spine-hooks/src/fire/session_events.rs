//! How `spine hooks test` fires the events around the session rather than a tool call:
//! UserPromptExpansion, PreModelSwitch, PostModelSwitch, Setup, ConfigChange, CwdChanged,
//! FileChanged, Elicitation and ElicitationResult. Same contract as [`super::events`].

use serde_json::{Map, Value, json};
use spine_core::hooks::events::{
    ElicitationOutcome, GateOutcome, Merged, PreModelSwitchOutcome, UserPromptSubmitOutcome, WatchOutcome,
};
use spine_core::hooks::{HookContext, HookRuntime};
use spine_protocol::hook::{
    ConfigChange, ConfigChangeInput, CwdChanged, CwdChangedInput, Elicitation, ElicitationInput, ElicitationResult,
    ElicitationResultInput, FileChanged, FileChangedInput, ModelSwitchInput, PostModelSwitch, PreModelSwitch, Setup,
    SetupInput, UserPromptExpansion, UserPromptExpansionInput,
};

use super::events::{Fire, context_json};
use super::{FireError, FireRequest, shown, typed, with};

fn model_switch_defaults() -> Value {
    json!({"from_model": "claude-sonnet-4-5", "to_model": "claude-opus-4-1", "requested_model": "opus",
        "source": "command", "context_tokens": 0, "prompt_cache_warm": false, "cache_ttl": "5m",
        "estimated_cache_write_usd": 0.0, "pricing": "catalog"})
}

fire_with! {
    UserPromptExpansion: UserPromptExpansionInput = json!({"expansion_type": "slash_command",
        "command_name": "review", "command_args": "", "command_source": "project",
        "prompt": "Review the change."}) => user_prompt_expansion, prompt_json;
    PreModelSwitch: ModelSwitchInput = model_switch_defaults() => pre_model_switch, model_switch_json;
    PostModelSwitch: ModelSwitchInput = model_switch_defaults() => post_model_switch, context_json;
    Setup: SetupInput = json!({"trigger": "init"}) => setup, context_json;
    ConfigChange: ConfigChangeInput = json!({"source": "project_settings"}) => config_change, gate_json;
    CwdChanged: CwdChangedInput = json!({"old_cwd": "/", "new_cwd": "/tmp"}) => cwd_changed, watch_json;
    FileChanged: FileChangedInput = json!({"file_path": "/tmp/.envrc", "event": "change"}) => file_changed, watch_json;
    Elicitation: ElicitationInput = json!({"mcp_server_name": "server", "message": "hooks test",
        "mode": "form", "requested_schema": {"type": "object", "properties": {}}}) => elicitation, elicitation_json;
    ElicitationResult: ElicitationResultInput = json!({"mcp_server_name": "server", "mode": "form",
        "action": "accept", "content": {}}) => elicitation_result, elicitation_json;
}

/// The decision of UserPromptSubmit and UserPromptExpansion.
pub(super) fn prompt_json(merged: &Merged<UserPromptSubmitOutcome>) -> Value {
    let decision = match &merged.outcome {
        UserPromptSubmitOutcome::Proceed => json!({"decision": "proceed"}),
        UserPromptSubmitOutcome::Blocked { reason, hook_id } => {
            json!({"decision": "block", "reason": reason, "hook_id": hook_id})
        }
        UserPromptSubmitOutcome::Failed(f) => {
            json!({"decision": "failed", "hook_id": f.hook_id, "detail": f.to_string()})
        }
    };
    with(decision, &merged.contexts, merged.halt.as_ref())
}

fn model_switch_json(merged: &Merged<PreModelSwitchOutcome>) -> Value {
    let decision = match &merged.outcome {
        PreModelSwitchOutcome::Proceed => json!({"decision": "proceed"}),
        PreModelSwitchOutcome::Allow => json!({"decision": "allow"}),
        PreModelSwitchOutcome::Ask { reason, hook_id } => {
            json!({"decision": "ask", "reason": reason, "hook_id": hook_id})
        }
        PreModelSwitchOutcome::Denied { reason, hook_id } => {
            json!({"decision": "deny", "reason": reason, "hook_id": hook_id})
        }
        PreModelSwitchOutcome::Failed(f) => {
            json!({"decision": "failed", "hook_id": f.hook_id, "detail": f.to_string()})
        }
    };
    with(decision, &[], merged.halt.as_ref())
}

fn gate_json(merged: &Merged<GateOutcome>) -> Value {
    let decision = match &merged.outcome {
        GateOutcome::Proceed => json!({"decision": "proceed"}),
        GateOutcome::Blocked { reason, hook_id } => json!({"decision": "block", "reason": reason, "hook_id": hook_id}),
        GateOutcome::Failed(f) => json!({"decision": "failed", "hook_id": f.hook_id, "detail": f.to_string()}),
    };
    with(decision, &[], merged.halt.as_ref())
}

fn watch_json(merged: &Merged<WatchOutcome>) -> Value {
    let decision = match &merged.outcome {
        None => json!({"decision": "observe"}),
        Some(paths) => json!({"decision": "watch", "watch_paths": paths}),
    };
    with(decision, &[], merged.halt.as_ref())
}

/// A hook's `continue: false` declines, whatever was answered (as in a run).
fn elicitation_json(merged: &Merged<ElicitationOutcome>) -> Value {
    let decision = match (&merged.halt, &merged.outcome) {
        (Some(halt), _) => json!({"decision": "decline", "hook_id": halt.hook_id}),
        (None, ElicitationOutcome::Proceed) => json!({"decision": "proceed"}),
        (None, ElicitationOutcome::Respond { action, content, hook_id }) => {
            json!({"decision": action, "content": content, "hook_id": hook_id})
        }
        (None, ElicitationOutcome::Failed(f)) => {
            json!({"decision": "failed", "hook_id": f.hook_id, "detail": f.to_string()})
        }
    };
    with(decision, &[], merged.halt.as_ref())
}
