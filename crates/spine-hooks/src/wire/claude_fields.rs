//! The fields Claude Code 2.1 defines for hook answers (recorded from 2.1.328 in
//! `crates/spine-cli/tests/fixtures/claude-code-2.1.328/hook-schema.json`; a test compares).
//!
//! An answer field spine's event does not take is a contract error — unless Claude Code defines
//! it for that event (or for every event), when it is ignored and named in a `-v` note: a hook
//! written for a newer Claude Code keeps working, and a misspelt field is still caught.

use spine_protocol::hook::HookEventName;

/// Top-level fields of every answer.
pub const UNIVERSAL: &[&str] =
    &["continue", "suppressOutput", "stopReason", "decision", "reason", "systemMessage", "terminalSequence"];

/// `hookSpecificOutput` fields per event.
const SPECIFIC: &[(&str, &[&str])] = &[
    (
        "PreToolUse",
        &["permissionDecision", "permissionDecisionReason", "updatedInput", "additionalContext", "permissionDisplay"],
    ),
    ("UserPromptSubmit", &["additionalContext", "sessionTitle", "suppressOriginalPrompt"]),
    ("UserPromptExpansion", &["additionalContext", "suppressOriginalPrompt"]),
    ("SessionStart", &["additionalContext", "initialUserMessage", "sessionTitle", "watchPaths", "reloadSkills"]),
    ("Setup", &["additionalContext"]),
    ("PreModelSwitch", &["permissionDecision", "permissionDecisionReason"]),
    ("PostModelSwitch", &["additionalContext"]),
    ("SubagentStart", &["additionalContext"]),
    ("PostToolUse", &["additionalContext", "classifierContext", "updatedToolOutput", "updatedMCPToolOutput"]),
    ("PostToolUseFailure", &["additionalContext"]),
    ("PostToolBatch", &["additionalContext"]),
    ("Stop", &["additionalContext"]),
    ("SubagentStop", &["additionalContext"]),
    ("PermissionDenied", &["retry"]),
    ("Notification", &["additionalContext"]),
    ("PermissionRequest", &["decision"]),
    ("Elicitation", &["action", "content"]),
    ("ElicitationResult", &["action", "content"]),
    ("CwdChanged", &["watchPaths"]),
    ("FileChanged", &["watchPaths"]),
    ("WorktreeCreate", &["worktreePath"]),
    ("MessageDisplay", &["displayContent"]),
];

/// Whether Claude Code defines `field` at the top level (`specific` false) or in
/// `hookSpecificOutput` (`specific` true) of `event`'s answer.
pub fn defines(event: HookEventName, field: &str, specific: bool) -> bool {
    if !specific {
        return UNIVERSAL.contains(&field);
    }
    SPECIFIC.iter().any(|(e, fields)| *e == event.as_str() && fields.contains(&field))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn the_fields_are_claude_codes_recorded_schema() {
        let path =
            concat!(env!("CARGO_MANIFEST_DIR"), "/../spine-cli/tests/fixtures/claude-code-2.1.328/hook-schema.json");
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("schema")).expect("json");
        let fields = &schema["hook_output_fields"];
        let names = |v: &Value| -> Vec<String> {
            v.as_array().map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect()).unwrap_or_default()
        };
        assert_eq!(names(&fields["universal"]["fields"]), UNIVERSAL);
        let specific = fields["hookSpecificOutput"].as_object().expect("per event");
        assert_eq!(specific.len(), SPECIFIC.len());
        for (event, listed) in SPECIFIC {
            assert_eq!(names(&specific[*event]["fields"]), *listed, "{event}");
        }
    }
}
